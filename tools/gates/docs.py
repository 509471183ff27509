"""docs: documentation checkpoints (SPEC §4.4).

Each rule of ``docs.rules`` is judged per commit, against its first parent (a root commit
against the empty tree), merges excluded, or on the staged change. The changed paths come from
the range's one ``git log`` pass; the added lines that ``when_added_line`` needs are read in
one more ``diff-tree --stdin`` pass over only the commits and paths that could still fire.

``docs.spec_now``: a lifecycle move on a row of a matrix file requires the row's linked spec
to change in the same commit with a non-empty ``Now`` section. A row is identified by its
table (the header line's text and the table's ordinal among tables with that header) and its
key cell; its state is the state token of its state cell, or the last backticked state token
on the row; it moves when that state changes (an appearing row with a state moves from none).
A ``docs.rules`` entry may be triggered by a row of a matrix moving into given states
(``when_row_moves``), as well as by changed paths.
"""

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from tools import markdown, mdlinks
from tools.bounded import ConfigPattern, config_pattern
from tools.commit_messages import config_where
from tools.config_model import CheckpointRule, StatusMatrix
from tools.gates.commit_range import RANGE_EMPTY, range_commits
from tools.git import Change, Commit, decode
from tools.globs import Globs
from tools.lazy_regex import LazyRegex
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "docs"
CHECKPOINT_MISSED = Rule(
    "checkpoint-missed",
    "error",
    "a commit changed a path of a docs rule without changing a path the rule requires",
    example=(
        "rule 'calc-docs': src/calc.c changed without a change to any of docs/** in "
        "the same commit: a change to src/ explains itself in docs/\n"
        "rule 'status-page': in docs/roadmap.md, row '2a' of the table at line 13 "
        "('| # | Item | State | Spec |') moved `OPEN` -> `CLAIMED` (into `CLAIMED`, "
        "`GATING`), without a change to any of docs/STATUS.md in the same commit"
    ),
    fix=(
        "Change one of the rule's `require_changed` paths in the same commit: amend "
        "the commit, or squash the docs commit into it (`git rebase -i`). A later "
        "commit does not discharge the obligation. A rule that fires on changes that "
        "need no docs is narrowed with `when_added_line`."
    ),
)

SPEC_NOW_MISSING = Rule(
    "spec-now-missing",
    "error",
    (
        "a lifecycle move on a matrix row without its spec, with a non-empty Now "
        "section, in the same commit"
    ),
    example=(
        "row 'attn' moved `planned` -> `done`: its spec specs/attn.md did not change "
        "in the same commit"
    ),
    fix=(
        "Change the row's spec in the same commit, with a `Now` section that says "
        "what the move rests on; or make the row link its spec so `spec_link` finds "
        "it. Amend or squash: a later commit does not discharge it."
    ),
)

SPEC_LINK_MISSING = Rule(
    "spec-link-missing",
    "warning",
    "a lifecycle move on a matrix row that links no spec",
    example=(
        "row 'norm' moved `planned` -> `done`: the row links no spec (spec_link "
        "'\\\\]\\\\((?P<spec>[^)\\\\s]+)\\\\)' finds none), so no spec records the "
        "move"
    ),
    fix=(
        "Give the row a link to its spec (what `spec_link` finds), so the next move "
        "has a spec to record its evidence in. Where every row must have one, make "
        "the rule an error with `rules: {spec-link-missing: error}`."
    ),
)

DOCS_ABSENT = Rule(
    "docs-absent",
    "info",
    ("nothing to judge: no rule configured, or a matrix that exists neither at the base nor now"),
    example="no docs.rules and no docs.spec_now configured",
    fix=(
        "Nothing to fix (an info finding). Configure `docs.rules` or `docs.spec_now` "
        "to use the gate; a matrix named in the config that exists nowhere is "
        "reported here until it is written or the key is corrected."
    ),
)

RULES = declare(
    NAME, [CHECKPOINT_MISSED, SPEC_NOW_MISSING, SPEC_LINK_MISSING, DOCS_ABSENT, RANGE_EMPTY]
)

_SHOWN_PATHS = 20  # triggering paths named in one finding; the rest are counted
_ONE_CODE = LazyRegex(r"`([^`]+)`")  # a cell that is one single-backtick code span


class _Step(NamedTuple):
    """One change judged: a commit against its parent, or the index against HEAD."""

    commit: str | None  # None: the staged change
    parent: str | None  # None: the empty tree
    changes: list[Change]

    @property
    def where(self) -> str:
        return "the staged change" if self.commit is None else "the same commit"


class _RowTrigger(NamedTuple):
    """``when_row_moves``: a row of ``matrix`` moving into one of the states ``to``."""

    matrix: str
    to: frozenset[str]
    spec: "RowSpec"


class _DocsRule(NamedTuple):
    name: str
    when: Globs
    require: Globs
    added: ConfigPattern | None
    renames: bool
    message: str | None
    rows: _RowTrigger | None = None

    @classmethod
    def of(cls, cfg: CheckpointRule, spec_now: tuple[StatusMatrix, ...], where: str) -> "_DocsRule":
        pattern = cfg.when_added_line
        rows = None
        trigger = cfg.when_row_moves
        if trigger is not None:
            # A row's state is read among every state its matrix knows (the rule's own
            # `states`, else those of spec_now entries on the same matrix), so that evidence
            # citing another state after the row's own is not taken for it.
            states = set(trigger.states)
            if not states:
                for entry in spec_now:
                    if entry.matrix == trigger.matrix:
                        states.update(entry.states)
            states.update(trigger.to)
            spec = RowSpec(frozenset(states), trigger.key_column, trigger.state_column)
            rows = _RowTrigger(trigger.matrix, frozenset(trigger.to), spec)
        return cls(
            name=cfg.name,
            when=Globs(cfg.when_changed),
            require=Globs(cfg.require_changed),
            added=None if pattern is None else config_pattern(pattern, f"{where}.when_added_line"),
            renames=cfg.renames,
            message=cfg.message,
            rows=rows,
        )

    def counts(self, change: Change) -> bool:
        """Whether ``change`` is a change for this rule: a pure rename is none unless
        ``renames: true`` (it neither triggers nor discharges the rule)."""
        return self.renames or not change.is_pure_rename

    @staticmethod
    def _touches(globs: Globs, change: Change) -> bool:
        # A rename changes both of its paths: moving a file out of a folder changes it.
        return globs.match(change.path) or (
            change.old_path is not None and globs.match(change.old_path)
        )

    def triggered(self, changes: list[Change]) -> list[Change]:
        if not self.when.patterns:
            return []
        return [c for c in changes if self.counts(c) and self._touches(self.when, c)]

    def satisfied(self, changes: list[Change]) -> bool:
        return any(self.counts(c) and self._touches(self.require, c) for c in changes)


# Matrix versions read ahead in one batch each, and the most held in memory at once.
_PREFETCH_BATCH = 128
_PREFETCH_BYTES = 64 << 20


class _Reader:
    """Blobs at a step's two sides: the commit and its parent, or the index and HEAD."""

    def __init__(self, ctx: "Context"):
        self.git = ctx.git
        self._read: dict[tuple[str, str], bytes | None] = {}  # what prefetch read

    def prefetch(self, steps: list[_Step], paths: set[str]) -> None:
        """Read both sides of every change of ``paths`` in the commits of ``steps`` in
        batches (a round trip per blob was most of a 300-commit run's git time), up to
        :data:`_PREFETCH_BYTES`; what is past it is read when it is judged."""
        wanted: list[tuple[str, str]] = []
        for step in steps:
            if step.commit is None:
                continue
            for change in step.changes:
                if change.path in paths and change.status != "D":
                    wanted.append((step.commit, change.path))
                    if step.parent:
                        wanted.append((step.parent, change.old_path or change.path))
        held = 0
        for at in range(0, len(wanted), _PREFETCH_BATCH):
            read = self.git.blobs_at(wanted[at : at + _PREFETCH_BATCH])
            self._read.update(read)
            held += sum(len(blob) for blob in read.values() if blob is not None)
            if held > _PREFETCH_BYTES:
                break

    def new(self, step: _Step, path: str) -> bytes | None:
        if step.commit is None:
            return self.git.staged_blob(path)
        return self._at(step.commit, path)

    def old(self, step: _Step, path: str) -> bytes | None:
        return self._at(step.parent, path) if step.parent else None

    def _at(self, rev: str, path: str) -> bytes | None:
        if (rev, path) in self._read:
            return self._read[(rev, path)]
        return self.git.blob(rev, path)


# -- docs.rules --------------------------------------------------------------------------------
def _fire(
    result: GateResult,
    rule: _DocsRule,
    step: _Step,
    paths: list[str],
    moved: "list[Move] | None" = None,
) -> None:
    requires = ", ".join(rule.require.patterns)
    if moved:
        assert rule.rows is not None
        shown = "; ".join(m.what for m in moved[:_SHOWN_PATHS])
        if len(moved) > _SHOWN_PATHS:
            shown += f" and {len(moved) - _SHOWN_PATHS} more"
        into = ", ".join(f"`{s}`" for s in sorted(rule.rows.to))
        message = f"rule {rule.name!r}: in {rule.rows.matrix}, {shown} (into {into})"
        if paths:
            message += f"; and {', '.join(paths[:_SHOWN_PATHS])} changed"
        message += f", without a change to any of {requires} in {step.where}"
        if rule.message:
            message += f": {rule.message}"
        result.add(
            CHECKPOINT_MISSED.id,
            message,
            commit=step.commit,
            path=rule.rows.matrix,
            line=moved[0].row.line,
        )
        return
    shown = ", ".join(paths[:_SHOWN_PATHS])
    if len(paths) > _SHOWN_PATHS:
        shown += f" and {len(paths) - _SHOWN_PATHS} more"
    message = f"rule {rule.name!r}: {shown} changed"
    if rule.added is not None:
        message += f" (adding a line that matches when_added_line: {rule.added.pattern})"
    message += f" without a change to any of {requires} in {step.where}"
    if rule.message:
        message += f": {rule.message}"
    result.add(CHECKPOINT_MISSED.id, message, commit=step.commit, path=paths[0])


def _added_matches(rule: _DocsRule, lines: list[bytes]) -> bool:
    assert rule.added is not None
    for raw in lines:
        text = decode(raw)
        if text.endswith("\r"):
            text = text[:-1]  # a CRLF file's line is judged without its CR
        if rule.added.search(text):
            return True
    return False


def _judge_rules(
    ctx: "Context",
    result: GateResult,
    rules: list[_DocsRule],
    steps: list[_Step],
    moves: "_Moves",
) -> None:
    # (rule, step, triggering changes) that fire only if a triggering path adds a matching line
    pending: list[tuple[_DocsRule, _Step, list[Change]]] = []
    for step in steps:
        for rule in rules:
            triggered = rule.triggered(step.changes)
            moved: list[Move] = []
            if rule.rows is not None:
                rows = rule.rows
                moved = [
                    m for m in moves.of(step, rows.matrix, rows.spec) if m.row.state in rows.to
                ]
            if not (triggered or moved) or rule.satisfied(step.changes):
                continue
            if moved:
                # A row move fires the rule whatever when_added_line says of the paths.
                _fire(result, rule, step, [c.path for c in triggered], moved)
            elif rule.added is None:
                _fire(result, rule, step, [c.path for c in triggered])
            else:
                pending.append((rule, step, triggered))
    if not pending:
        return
    paths: dict[str, None] = {}
    commits: dict[str, None] = {}
    for _, step, triggered in pending:
        if step.commit is not None:
            commits[step.commit] = None
        for change in triggered:
            paths[change.path] = None
            if change.old_path is not None:
                paths[change.old_path] = None  # so that git still pairs the rename
    staged = any(step.commit is None for _, step, _ in pending)
    added: dict[str | None, dict[str, list[bytes]]] = {}
    if staged:
        added[None] = ctx.git.staged_added_lines(list(paths))
    else:
        added.update(ctx.git.added_lines(list(commits), list(paths)))
    result.stats["diffs_read"] = len(commits) + int(staged)
    for rule, step, triggered in pending:
        per_path = added.get(step.commit, {})
        hits = [c.path for c in triggered if _added_matches(rule, per_path.get(c.path, []))]
        if hits:
            _fire(result, rule, step, hits)


# -- matrix rows (§4.4 "Rows, precisely") ----------------------------------------------------
class RowSpec(NamedTuple):
    """How rows of a matrix are read: their state tokens, the key column (1-based) and the
    state column (a header name or a 1-based index; None: the last state token on the row)."""

    states: frozenset[str]
    key_column: int = 1
    state_column: str | int | None = None


class MatrixRow(NamedTuple):
    line: int  # 1-based
    key: str  # the key cell (the first by default), stripped
    text: str  # the whole line
    states: tuple[str, ...]  # the backticked tokens of `states` on the line, in order
    table: tuple[str, int] = ("", 0)  # the header line's text and its ordinal among its kind
    state: str | None = None  # the row's state (§4.4): its state cell's, or the last token
    header: bool = False
    table_line: int = 0  # the table's header line


def table_rows(doc: markdown.Document) -> list[tuple[int, str, str, tuple[str, ...]]]:
    r"""(1-based line, first cell, line, code spans) of each row of each GFM table of a
    matrix file (the header row included, the delimiter row not): a table ends at a blank
    line, a row needs no trailing pipe, and ``\|`` is an escaped pipe inside a cell (kept in
    the first cell)."""
    return [
        (row.line, row.cells[0] if row.cells else "", doc.lines[row.line - 1], row.codes)
        for table in doc.tables
        for row in table.rows
    ]


def _states(
    line: str, states: frozenset[str], codes: Sequence[str] | None = None
) -> tuple[str, ...]:
    """The state tokens of a row line, in order (``codes``: its code spans, when known)."""
    found = markdown.code_texts(line) if codes is None else [c.strip(" \t\n") for c in codes]
    return tuple(tok for tok in found if tok in states)


def _column(header: markdown.Row, column: str | int) -> int | None:
    """The 0-based index of the state column in a table with ``header`` (None: it has none)."""
    if isinstance(column, int):
        return column - 1
    wanted = column.strip().casefold()
    for k, (cell, plain) in enumerate(zip(header.cells, header.plain, strict=False)):
        if wanted in (cell.strip().casefold(), plain.strip().casefold()):
            return k
    return None


def _cell_state(row: markdown.Row, index: int | None, states: frozenset[str]) -> str | None:
    """The state in the row's state cell: its last backticked state token, else the cell's
    whole text when that is a state token."""
    if index is None or index >= len(row.cells):
        return None
    cell = row.cells[index]
    if "`" not in cell:
        found: list[str] = []
    else:
        one = _ONE_CODE.compiled.fullmatch(cell.strip())
        # The common cell, one code span and nothing else, is read without a parse.
        texts = [one.group(1).strip(" \t")] if one else markdown.code_texts(cell)
        found = [tok for tok in texts if tok in states]
    if found:
        return found[-1]
    plain = row.plain[index].strip() if index < len(row.plain) else row.cells[index].strip()
    return plain if plain in states else None


def read_rows(text: str, spec: RowSpec, *, headers: bool = False) -> list[MatrixRow]:
    """The rows of every table of a matrix file, each with its table, key and state (the
    header rows only when ``headers``)."""
    doc = markdown.parse(text)
    seen: dict[str, int] = {}
    out: list[MatrixRow] = []
    for table in doc.tables:
        if not table.rows:
            continue
        head = table.rows[0]
        head_text = doc.lines[head.line - 1].strip(" \t\r")
        ordinal = seen.get(head_text, 0)
        seen[head_text] = ordinal + 1
        ident = (head_text, ordinal)
        index = _column(head, spec.state_column) if spec.state_column is not None else None
        k = spec.key_column - 1
        for row in table.rows:
            if row.header and not headers:
                continue
            line = doc.lines[row.line - 1]
            key = row.cells[k].strip() if k < len(row.cells) else ""
            tokens = _states(line, spec.states, row.codes)
            if row.header:
                state = None
            elif spec.state_column is None:
                state = tokens[-1] if tokens else None
            else:
                state = _cell_state(row, index, spec.states)
            out.append(MatrixRow(row.line, key, line, tokens, ident, state, row.header, table.line))
    return out


def matrix_rows(text: str, states: frozenset[str]) -> list[MatrixRow]:
    """The table rows of a matrix file (header rows included), each with its state tokens."""
    return read_rows(text, RowSpec(states), headers=True)


class Move(NamedTuple):
    row: MatrixRow
    before: str | None  # the state it had (None: none, or the row is new)
    new: bool  # the row appeared (no row of its table and key before it)
    tables: int  # tables in the file (a row is named by its table when there are several)

    @property
    def what(self) -> str:
        was = "(new row)" if self.new else (f"`{self.before}`" if self.before else "(none)")
        now = f"`{self.row.state}`" if self.row.state else "(none)"
        return f"{self.name} moved {was} -> {now}"

    @property
    def name(self) -> str:
        row = self.row
        if self.tables <= 1:
            return f"row {row.key!r}"
        header, ordinal = row.table
        nth = f" (#{ordinal + 1} of that header)" if ordinal else ""
        return f"row {row.key!r} of the table at line {row.table_line} ({header!r}{nth})"


def row_moves(old: str | None, new: str, spec: RowSpec) -> list[Move]:
    """The rows of ``new`` whose state differs from the same row of ``old`` (same table,
    same key, the n-th of that key matched to the n-th), or that appear with a state.
    A change of anything else on a row (evidence citing states included) is no move."""
    with markdown.uncollected():  # a row and a move per table row: 100,000 of each
        return _row_moves(old, new, spec)


def _row_moves(old: str | None, new: str, spec: RowSpec) -> list[Move]:
    before: dict[tuple[tuple[str, int], str], list[MatrixRow]] = {}
    for row in read_rows(old or "", spec):
        before.setdefault((row.table, row.key), []).append(row)
    rows = read_rows(new, spec)
    tables = len({r.table for r in rows})
    seen: dict[tuple[tuple[str, int], str], int] = {}
    moves: list[Move] = []
    for row in rows:
        ident = (row.table, row.key)
        n = seen.get(ident, 0)
        seen[ident] = n + 1
        prev = before.get(ident, [])
        if n < len(prev):
            if prev[n].state != row.state:
                moves.append(Move(row, prev[n].state, False, tables))
        elif row.state is not None:
            moves.append(Move(row, None, True, tables))
    return moves


def now_is_filled(text: str) -> bool | None:
    """Whether a ``Now`` section (any level, numbered or not) holds anything but headings
    and blank lines; None when the file has no Now section."""
    doc = markdown.parse(text)
    lines = doc.lines
    nows = [s for s in doc.sections() if s.heading.title == "now"]
    if not nows:
        return None
    heading_lines = {h.line for h in doc.headings}
    for section in nows:
        for line_no in range(section.start, section.end + 1):
            body = lines[line_no - 1].strip(" \t")
            if not body or line_no in heading_lines or not body.strip("=-"):
                continue  # blank, a subheading, or a setext underline / thematic break
            return True
    return False


def _spec_target(
    entry: StatusMatrix, row: MatrixRow, link: ConfigPattern
) -> tuple[str | None, str, bool]:
    """(repo-relative spec path, or None with the reason, and whether the row links no
    spec at all); ``link``: ``entry.spec_link`` compiled."""
    m = link.search(row.text)
    raw = (m.group("spec") or "").strip(" \t") if m else ""
    if raw.startswith("<") and raw.endswith(">"):
        raw = raw[1:-1]
    if not raw:
        return None, f"the row links no spec (spec_link {entry.spec_link!r} finds none)", True
    path, why = _link_target(entry.matrix, raw)
    return path, why, False


@functools.lru_cache(maxsize=1024)
def _link_target(matrix: str, raw: str) -> tuple[str | None, str]:
    """The repo-relative file a row's spec link ``raw`` names, or None with the reason (the
    rows of a matrix link few specs: each link is resolved once)."""
    if mdlinks.is_external(raw):
        return None, f"the row's spec link {raw!r} is not a file of the repository"
    try:
        target = mdlinks.resolve(matrix, raw)
    except mdlinks.Escapes:
        return None, f"the row's spec link {raw!r} climbs out of the repository"
    if not target.path:
        return None, f"the row's spec link {raw!r} names no file"
    return target.path, ""


class _Moves:
    """The row moves of a matrix in a step, read once per (step, matrix, row spec)."""

    def __init__(self, reader: _Reader):
        self.reader = reader
        self._memo: dict[tuple[str | None, str, RowSpec], list[Move]] = {}

    def of(self, step: _Step, matrix: str, spec: RowSpec) -> list[Move]:
        change = next((c for c in step.changes if c.path == matrix), None)
        if change is None or change.status == "D":
            return []
        key = (step.commit, matrix, spec)
        if key not in self._memo:
            new_raw = self.reader.new(step, matrix)
            moves: list[Move] = []
            if new_raw is not None:
                old_raw = self.reader.old(step, change.old_path or matrix)
                old = decode(old_raw) if old_raw is not None else None
                moves = row_moves(old, decode(new_raw), spec)
            self._memo[key] = moves
        return self._memo[key]


def _judge_moves(
    result: GateResult,
    reader: _Reader,
    entry: StatusMatrix,
    step: _Step,
    moves: list[Move],
    link: ConfigPattern,
) -> None:
    def add(rule: str, message: str, row: MatrixRow) -> None:
        result.add(rule, message, commit=step.commit, path=entry.matrix, line=row.line)

    # Each spec is judged once per step, however many rows link it: a table of 100,000 rows
    # moving at once reads its spec once, not once per row.
    changed = {c.path for c in step.changes if c.status != "D"}
    verdicts: dict[str, str] = {}
    for move in moves:
        row = move.row
        spec, why, unlinked = _spec_target(entry, row, link)
        if unlinked:
            add("spec-link-missing", f"{move.what}: {why}, so no spec records the move", row)
            continue
        if spec is not None:
            if spec not in verdicts:
                verdicts[spec] = _spec_verdict(reader, step, spec, spec in changed)
            why = verdicts[spec]
        if why:
            add("spec-now-missing", f"{move.what}: {why}", row)


def _spec_verdict(reader: _Reader, step: _Step, spec: str, changed: bool) -> str:
    """Why a move into ``spec`` is not recorded there in ``step`` ("" when it is)."""
    raw = reader.new(step, spec)
    if raw is None:
        return f"its spec {spec} does not exist"
    if not changed:
        return f"its spec {spec} did not change in {step.where}"
    filled = now_is_filled(decode(raw))
    if filled is None:
        return f"its spec {spec} has no Now section (`## Now` or `## 6. Now`)"
    if not filled:
        return f"its spec {spec} has an empty Now section"
    return ""


def _judge_spec_now(
    ctx: "Context",
    result: GateResult,
    steps: list[_Step],
    ends: tuple[str | None, str | None],
    moves: _Moves,
) -> None:
    """``ends``: the revisions "at the base" and "now" (None: absent; "" : the index)."""
    reader = moves.reader
    for k, entry in enumerate(ctx.config.docs.spec_now):
        matrix = entry.matrix
        spec_row = RowSpec(frozenset(entry.states), entry.key_column, entry.state_column)
        link = config_pattern(entry.spec_link, config_where(ctx, f"docs.spec_now[{k}].spec_link"))
        touched = False
        for step in steps:
            change = next((c for c in step.changes if c.path == matrix), None)
            if change is None or change.status == "D":
                continue
            touched = True
            _judge_moves(result, reader, entry, step, moves.of(step, matrix, spec_row), link)
        if touched or any(_exists(ctx, rev, matrix) for rev in ends):
            continue
        result.add(
            DOCS_ABSENT.id,
            f"docs.spec_now[{k}].matrix: {matrix} exists neither at the base nor now; "
            "nothing to judge",
            path=matrix,
        )


def _exists(ctx: "Context", rev: str | None, path: str) -> bool:
    if rev is None:
        return False
    if rev == "":
        return ctx.git.staged_blob(path) is not None
    return ctx.git.blob_header(rev, path) is not None


# -- the gate ----------------------------------------------------------------------------------
def _steps(ctx: "Context", commits: list[Commit]) -> tuple[list[_Step], int]:
    steps: list[_Step] = []
    merges = 0
    for commit in commits:
        if commit.is_merge:
            merges += 1
            continue
        if commit.is_root:
            # Read against the empty tree here: git log may hide a root's files (log.showRoot).
            changes = ctx.git.diff_tree(ctx.git.empty_tree(), commit.sha)
            steps.append(_Step(commit.sha, None, changes))
        else:
            steps.append(_Step(commit.sha, commit.parents[0], commit.changes))
    return steps, merges


def run(ctx: "Context") -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config.docs
    rules = [
        _DocsRule.of(r, cfg.spec_now, config_where(ctx, f"docs.rules[{i}]"))
        for i, r in enumerate(cfg.rules)
    ]
    if not rules and not cfg.spec_now:
        result.add(DOCS_ABSENT.id, "no docs.rules and no docs.spec_now configured")
        return result
    if ctx.opts.staged:
        if ctx.git.in_merge():
            # The commit about to be made is a merge, and merges are not judged.
            result.stats["merges_skipped"] = 1
            return result
        head = ctx.git.head()
        steps = [_Step(None, head, ctx.staged_changes)]
        ends: tuple[str | None, str | None] = (head, "")
    else:
        commits = range_commits(ctx, result)
        if commits is None:
            return result
        steps, merges = _steps(ctx, commits)
        if merges:
            result.stats["merges_skipped"] = merges
        sel = ctx.range
        if sel.mode == "commit":
            first = commits[0].parents[0] if commits and commits[0].parents else None
            ends = (first, sel.head)
        else:
            ends = (sel.merge_base, sel.head)
    result.stats["rules"] = len(rules)
    reader = _Reader(ctx)
    matrices = {e.matrix for e in cfg.spec_now} | {r.rows.matrix for r in rules if r.rows}
    reader.prefetch(steps, matrices)
    moves = _Moves(reader)
    if rules:
        _judge_rules(ctx, result, rules, steps, moves)
    if cfg.spec_now:
        _judge_spec_now(ctx, result, steps, ends, moves)
    return result
