"""docs: documentation checkpoints (SPEC §4.4).

Each rule of ``docs.rules`` is judged per commit, against its first parent (a root commit
against the empty tree), merges excluded, or on the staged change. The changed paths come from
the range's one ``git log`` pass; the added lines that ``when_added_line`` needs are read in
one more ``diff-tree --stdin`` pass over only the commits and paths that could still fire.

``docs.spec_now``: a lifecycle move on a row of a matrix file (a backticked state token that
changes, or a row that appears carrying one) requires the row's linked spec to change in the
same commit with a non-empty ``Now`` section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tools import markdown, mdlinks
from tools.context import RANGE_EMPTY, Context
from tools.git import Change, Commit, decode
from tools.globs import Globs
from tools.report import GateResult, Rule, declare

NAME = "docs"
RULES = declare(
    NAME,
    [
        Rule(
            "checkpoint-missed",
            "error",
            "a commit changed a path of a docs rule without changing a path the rule requires",
        ),
        Rule(
            "spec-now-missing",
            "error",
            "a lifecycle move on a matrix row without its spec, with a non-empty Now section, "
            "in the same commit",
        ),
        Rule(
            "docs-absent",
            "info",
            "nothing to judge: no rule configured, or a matrix that exists neither at the base "
            "nor now",
        ),
        RANGE_EMPTY,
    ],
)

_SHOWN_PATHS = 20  # triggering paths named in one finding; the rest are counted


@dataclass
class _Step:
    """One change judged: a commit against its parent, or the index against HEAD."""

    commit: str | None  # None: the staged change
    parent: str | None  # None: the empty tree
    changes: list[Change]

    @property
    def where(self) -> str:
        return "the staged change" if self.commit is None else "the same commit"


@dataclass
class _DocsRule:
    name: str
    when: Globs
    require: Globs
    added: re.Pattern[str] | None
    renames: bool
    message: str | None

    @classmethod
    def of(cls, cfg: dict[str, Any]) -> _DocsRule:
        pattern = cfg.get("when_added_line")
        return cls(
            name=cfg["name"],
            when=Globs(cfg["when_changed"]),
            require=Globs(cfg["require_changed"]),
            added=re.compile(pattern) if pattern is not None else None,
            renames=bool(cfg.get("renames", False)),
            message=cfg.get("message"),
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
        return [c for c in changes if self.counts(c) and self._touches(self.when, c)]

    def satisfied(self, changes: list[Change]) -> bool:
        return any(self.counts(c) and self._touches(self.require, c) for c in changes)


class _Reader:
    """Blobs at a step's two sides: the commit and its parent, or the index and HEAD."""

    def __init__(self, ctx: Context):
        self.git = ctx.git

    def new(self, step: _Step, path: str) -> bytes | None:
        if step.commit is None:
            return self.git.staged_blob(path)
        return self.git.blob(step.commit, path)

    def old(self, step: _Step, path: str) -> bytes | None:
        return self.git.blob(step.parent, path) if step.parent else None


# -- docs.rules --------------------------------------------------------------------------------
def _fire(result: GateResult, rule: _DocsRule, step: _Step, paths: list[str]) -> None:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    if len(paths) > _SHOWN_PATHS:
        shown += f" and {len(paths) - _SHOWN_PATHS} more"
    requires = ", ".join(rule.require.patterns)
    message = f"rule {rule.name!r}: {shown} changed"
    if rule.added is not None:
        message += f" (adding a line that matches when_added_line: {rule.added.pattern})"
    message += f" without a change to any of {requires} in {step.where}"
    if rule.message:
        message += f": {rule.message}"
    result.add("checkpoint-missed", message, commit=step.commit, path=paths[0])


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
    ctx: Context, result: GateResult, rules: list[_DocsRule], steps: list[_Step]
) -> None:
    # (rule, step, triggering changes) that fire only if a triggering path adds a matching line
    pending: list[tuple[_DocsRule, _Step, list[Change]]] = []
    for step in steps:
        for rule in rules:
            triggered = rule.triggered(step.changes)
            if not triggered or rule.satisfied(step.changes):
                continue
            if rule.added is None:
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


# -- docs.spec_now -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MatrixRow:
    line: int  # 1-based
    key: str  # the first cell, stripped
    text: str  # the whole line
    states: tuple[str, ...]  # the backticked tokens of `states` on the line, in order


def table_rows(doc: markdown.Document) -> list[tuple[int, str, str, list[str]]]:
    r"""(1-based line, first cell, line, code spans) of each row of each GFM table of a
    matrix file (the header row included, the delimiter row not): a table ends at a blank
    line, a row needs no trailing pipe, and ``\|`` is an escaped pipe inside a cell (kept in
    the first cell)."""
    return [
        (row.line, row.cells[0] if row.cells else "", doc.lines[row.line - 1], row.codes)
        for table in doc.tables
        for row in table.rows
    ]


def _row_lines(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, first cell, line) of each table row of a matrix file."""
    return [(n, key, line) for n, key, line, _ in table_rows(markdown.parse(text))]


def _states(line: str, states: frozenset[str], codes: list[str] | None = None) -> tuple[str, ...]:
    """The state tokens of a row line, in order (``codes``: its code spans, when known)."""
    found = markdown.code_texts(line) if codes is None else [c.strip(" \t\n") for c in codes]
    return tuple(tok for tok in found if tok in states)


def matrix_rows(text: str, states: frozenset[str]) -> list[MatrixRow]:
    """The table rows of a matrix file, each with its state tokens."""
    return [
        MatrixRow(n, key, line, _states(line, states, codes))
        for n, key, line, codes in table_rows(markdown.parse(text))
    ]


def matrix_moves(
    old: str | None, new: str, states: frozenset[str]
) -> list[tuple[MatrixRow, tuple[str, ...] | None]]:
    """Rows of ``new`` whose state tokens differ from the same row (same first cell, the
    n-th of that key matched to the n-th) in ``old``, or that appear carrying one; each with
    its old tokens (None: the row is new)."""
    before: dict[str, list[str]] = {}
    for _, key, line in _row_lines(old or ""):
        before.setdefault(key, []).append(line)
    seen: dict[str, int] = {}
    moves: list[tuple[MatrixRow, tuple[str, ...] | None]] = []
    for number, key, line in _row_lines(new):
        n = seen.get(key, 0)
        seen[key] = n + 1
        prev = before.get(key, [])
        if n < len(prev) and prev[n] == line:
            continue  # the same line: the same states (most rows of most changes)
        now = _states(line, states)
        row = MatrixRow(number, key, line, now)
        if n < len(prev):
            was = _states(prev[n], states)
            if was != now:
                moves.append((row, was))
        elif now:
            moves.append((row, None))
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


def _fmt_states(states: tuple[str, ...] | None) -> str:
    if not states:
        return "(none)" if states is not None else "(new row)"
    return " ".join(f"`{s}`" for s in states)


def _spec_target(entry: dict[str, Any], row: MatrixRow) -> tuple[str | None, str]:
    """(repo-relative spec path, or None with the reason)."""
    pattern = re.compile(entry["spec_link"])
    m = pattern.search(row.text)
    raw = (m.group("spec") or "").strip(" \t") if m else ""
    if raw.startswith("<") and raw.endswith(">"):
        raw = raw[1:-1]
    if not raw:
        return None, f"the row links no spec (spec_link {entry['spec_link']!r} finds none)"
    if mdlinks.is_external(raw):
        return None, f"the row's spec link {raw!r} is not a file of the repository"
    try:
        target = mdlinks.resolve(entry["matrix"], raw)
    except mdlinks.Escapes:
        return None, f"the row's spec link {raw!r} climbs out of the repository"
    if not target.path:
        return None, f"the row's spec link {raw!r} names no file"
    return target.path, ""


def _judge_moves(
    result: GateResult,
    reader: _Reader,
    entry: dict[str, Any],
    step: _Step,
    change: Change,
) -> None:
    matrix = entry["matrix"]
    states = frozenset(entry["states"])
    new_raw = reader.new(step, matrix)
    if new_raw is None:
        return
    old_raw = reader.old(step, change.old_path or matrix)
    old_text = decode(old_raw) if old_raw is not None else None
    for row, before in matrix_moves(old_text, decode(new_raw), states):
        move = f"row {row.key!r} moved {_fmt_states(before)} -> {_fmt_states(row.states)}"
        spec, why = _spec_target(entry, row)
        if spec is not None:
            changed = any(c.path == spec and c.status != "D" for c in step.changes)
            raw = reader.new(step, spec)
            if raw is None:
                why = f"its spec {spec} does not exist"
            elif not changed:
                why = f"its spec {spec} did not change in {step.where}"
            else:
                filled = now_is_filled(decode(raw))
                if filled is None:
                    why = f"its spec {spec} has no Now section (`## Now` or `## 6. Now`)"
                elif not filled:
                    why = f"its spec {spec} has an empty Now section"
        if why:
            result.add(
                "spec-now-missing",
                f"{move}: {why}",
                commit=step.commit,
                path=matrix,
                line=row.line,
            )


def _judge_spec_now(
    ctx: Context,
    result: GateResult,
    steps: list[_Step],
    ends: tuple[str | None, str | None],
) -> None:
    """``ends``: the revisions "at the base" and "now" (None: absent; "" : the index)."""
    reader = _Reader(ctx)
    for k, entry in enumerate(ctx.config["docs"]["spec_now"]):
        matrix = entry["matrix"]
        touched = False
        for step in steps:
            change = next((c for c in step.changes if c.path == matrix), None)
            if change is None or change.status == "D":
                continue
            touched = True
            _judge_moves(result, reader, entry, step, change)
        if touched or any(_exists(ctx, rev, matrix) for rev in ends):
            continue
        result.add(
            "docs-absent",
            f"docs.spec_now[{k}].matrix: {matrix} exists neither at the base nor now; "
            "nothing to judge",
            path=matrix,
        )


def _exists(ctx: Context, rev: str | None, path: str) -> bool:
    if rev is None:
        return False
    if rev == "":
        return ctx.git.staged_blob(path) is not None
    return ctx.git.blob_header(rev, path) is not None


# -- the gate ----------------------------------------------------------------------------------
def _steps(ctx: Context, commits: list[Commit]) -> tuple[list[_Step], int]:
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


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config["docs"]
    rules = [_DocsRule.of(r) for r in cfg["rules"]]
    if not rules and not cfg["spec_now"]:
        result.add("docs-absent", "no docs.rules and no docs.spec_now configured")
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
        commits = ctx.range_commits(result)
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
    if rules:
        _judge_rules(ctx, result, rules, steps)
    if cfg["spec_now"]:
        _judge_spec_now(ctx, result, steps, ends)
    return result
