"""docs: documentation checkpoints (SPEC §4.4).

Each rule of ``docs.rules`` is judged per commit, against its first parent (a root commit
against the empty tree), merges excluded, or on the staged change. The changed paths come from
the range's one ``git log`` pass; the added lines that ``when_added_line`` needs are read in
one more ``diff-tree --stdin`` pass over only the commits and paths that could still fire, and
the rows of the matrices from their patches in another, over the commits that change one
(:mod:`tools.gates.docs_rows`: each version of a matrix is parsed whole at most once).

``docs.spec_now``: a lifecycle move on a row of a matrix file requires the row's linked spec
to change in the same commit with a non-empty ``Now`` section. A row is identified by its
table (the header line's text and the table's ordinal among tables with that header) and its
key cell; its state is the state token of its state cell, or the last backticked state token
on the row; it moves when that state changes (an appearing row with a state moves from none).
A ``docs.rules`` entry may be triggered by a row of a matrix moving into given states
(``when_row_moves``), as well as by changed paths.
"""

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from tools import markdown, mdlinks
from tools.background import Background
from tools.bounded import ConfigPattern, config_pattern
from tools.commit_messages import config_where
from tools.config_model import CheckpointRule, StatusMatrix
from tools.gates.commit_range import RANGE_EMPTY, range_commits
from tools.gates.docs_rows import MatrixRow as MatrixRow
from tools.gates.docs_rows import Move as Move
from tools.gates.docs_rows import RowSpec as RowSpec
from tools.gates.docs_rows import Version, parse_version, spliced, version_moves
from tools.gates.docs_rows import matrix_rows as matrix_rows
from tools.gates.docs_rows import read_rows as read_rows
from tools.gates.docs_rows import row_moves as row_moves
from tools.gates.docs_rows import table_rows as table_rows
from tools.git import Change, Commit, PathPatch, decode
from tools.globs import Globs
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


class _Reader:
    """Blobs at a step's two sides: the commit and its parent, or the index and HEAD."""

    def __init__(self, ctx: "Context"):
        self.git = ctx.git

    def new(self, step: _Step, path: str) -> bytes | None:
        if step.commit is None:
            return self.git.staged_blob(path)
        return self._at(step.commit, path)

    def old(self, step: _Step, path: str) -> bytes | None:
        return self._at(step.parent, path) if step.parent else None

    def _at(self, rev: str, path: str) -> bytes | None:
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


# -- matrix rows (§4.4 "Rows, precisely": tools.gates.docs_rows) ------------------------
def now_is_filled(text: str) -> bool | None:
    """Whether a ``Now`` section (any level, numbered or not) holds anything but headings
    and blank lines; None when the file has no Now section."""
    # Only headings and lines are read: the light pass finds the same headings as a whole
    # parse (its heading reader is the whole parse's), for two thirds of the time.
    doc = markdown.parse_links(text)
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


def _patched(steps: list[_Step], matrices: set[str]) -> tuple[list[str], list[str]]:
    """The commits whose patches are read (those that modify or rename a matrix), and the
    paths they are read for (the matrices and the old names of those renamed)."""
    commits: list[str] = []
    paths: dict[str, None] = dict.fromkeys(sorted(matrices))
    for step in steps:
        changes = [c for c in step.changes if c.path in matrices and c.status in ("M", "R")]
        if step.commit is None or step.parent is None or not changes:
            continue
        commits.append(step.commit)
        paths.update((c.old_path, None) for c in changes if c.old_path is not None)
    return commits, list(paths)


def _matrix_change(step: _Step, matrix: str) -> Change | None:
    """The change of ``matrix`` in ``step`` whose rows are read (a deletion has none)."""
    change = next((c for c in step.changes if c.path == matrix), None)
    return None if change is None or change.status == "D" else change


class _Moves:
    """The row moves of a matrix in a step, read once per (step, matrix, row spec).

    The moves of a matrix are read for every commit of the range at once, oldest first, so
    that a commit's parent version is most often the one the commit before it made: each
    version is parsed whole at most once (kept by blob id), and a commit whose patch only
    rewrites rows inside tables makes its version from its parent's
    (:func:`tools.gates.docs_rows.spliced`). The patches are read on a thread from the
    start: git diffs while :meth:`warm` parses the versions the range starts from."""

    def __init__(self, reader: _Reader, steps: list[_Step], matrices: set[str]):
        self.reader = reader
        self.steps = steps
        self._memo: dict[tuple[str | None, str, RowSpec], list[Move]] = {}
        self._versions: dict[tuple[str, RowSpec], Version] = {}
        self._patches: dict[tuple[str, str], PathPatch] | None = None
        commits, paths = _patched(steps, matrices)
        self._pending: Background[list[PathPatch]] | None = None
        if commits:
            read = functools.partial(reader.git.commit_patches, commits, paths)
            self._pending = Background(read)

    def warm(self, wanted: Iterable[tuple[str, RowSpec]]) -> None:
        """Parse the version each of the ``wanted`` matrices is first read against in the
        range (its first commit's parent's), while git reads the patches."""
        with markdown.uncollected():
            for matrix, spec in dict.fromkeys(wanted):
                for step in self.steps:
                    change = _matrix_change(step, matrix)
                    if change is not None and step.commit is not None:
                        break
                else:
                    continue
                old_path = change.old_path or matrix
                found = self.reader.git.blob_header(step.parent, old_path) if step.parent else None
                if found is not None:
                    read = functools.partial(self.reader.old, step, old_path)
                    self._version(found[0], spec, read)

    def of(self, step: _Step, matrix: str, spec: RowSpec) -> list[Move]:
        change = _matrix_change(step, matrix)
        if change is None:
            return []
        key = (step.commit, matrix, spec)
        if key not in self._memo:
            with markdown.uncollected():  # a row per table row of each version read whole
                if step.commit is None:
                    self._memo[key] = self._moves(step, change, spec, None)
                else:
                    self._walk(matrix, spec)
        return self._memo[key]

    def _walk(self, matrix: str, spec: RowSpec) -> None:
        """The moves of ``matrix`` in every commit of the range that changes it."""
        patches = self._read_patches()
        for step in self.steps:
            change = _matrix_change(step, matrix)
            if change is None or step.commit is None:
                continue
            key = (step.commit, matrix, spec)
            if key not in self._memo:
                patch = patches.get((step.commit, matrix))
                self._memo[key] = self._moves(step, change, spec, patch)

    def _read_patches(self) -> dict[tuple[str, str], PathPatch]:
        """The patch of each matrix in each commit that modifies or renames one, read in one
        pass: (commit, matrix) -> its patch."""
        if self._patches is None:
            found = self._pending.result() if self._pending is not None else []
            self._patches = {}
            for patch in found:
                if patch.commit is not None and patch.new_path is not None:
                    self._patches.setdefault((patch.commit, patch.new_path), patch)
        return self._patches

    def _moves(
        self, step: _Step, change: Change, spec: RowSpec, patch: PathPatch | None
    ) -> list[Move]:
        matrix, old_path = change.path, change.old_path or change.path
        ids = None
        if patch is not None and patch.old_path == old_path and not patch.patch.binary:
            ids = patch.ids  # the blobs the patch was read between: the step's two sides
        if step.parent is None:
            old = None
        else:
            old = self._version(ids and ids[0], spec, lambda: self.reader.old(step, old_path))
        if ids is not None and old is not None:
            made = spliced(old, patch.patch.hunks) if patch is not None else None
            if made is not None:
                self._versions[(ids[1], spec)] = made.version
                return version_moves(old, made.version, made.touched)
        new = self._version(ids and ids[1], spec, lambda: self.reader.new(step, matrix))
        return [] if new is None else version_moves(old, new)

    def _version(
        self, blob: str | None, spec: RowSpec, read: Callable[[], bytes | None]
    ) -> Version | None:
        """The version of blob ``blob`` (None: not known), read by ``read`` and parsed whole
        the first time it is asked for."""
        if blob is not None and (blob, spec) in self._versions:
            return self._versions[(blob, spec)]
        raw = read()
        if raw is None:
            return None
        version = parse_version(decode(raw), spec)
        if blob is not None:
            self._versions[(blob, spec)] = version
        return version


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
        spec_row = _row_spec(entry)
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


def _row_spec(entry: StatusMatrix) -> RowSpec:
    return RowSpec(frozenset(entry.states), entry.key_column, entry.state_column)


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
    moves = _Moves(reader, steps, matrices)
    wanted = [(r.rows.matrix, r.rows.spec) for r in rules if r.rows is not None]
    for entry in cfg.spec_now:
        wanted.append((entry.matrix, _row_spec(entry)))
    moves.warm(wanted)
    if rules:
        _judge_rules(ctx, result, rules, steps, moves)
    if cfg.spec_now:
        _judge_spec_now(ctx, result, steps, ends, moves)
    return result
