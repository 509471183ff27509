"""index: the append-only issue index, safe under union merges (SPEC §4.1).

Compares the merge base M, the base tip B and the current file (the working tree, the
index with --staged, or the blob at --head), and walks the range's commits: ordinary commits
must append at the tail, merges must keep every row of every parent (a union merge
interleaves, so merges are judged by preservation, not by position).
"""

from __future__ import annotations

import os
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from tools import index_compare, index_table
from tools.appendonly import (
    AppendOnly,
    Entry,
    Loss,
    blob_starts,
    is_prefix,
    losses,
    read_now,
)
from tools.background import Background
from tools.gates.commit_range import RANGE_EMPTY, range_commits
from tools.git import Commit, decode
from tools.index_table import Row, Table
from tools.lines import split_lines
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "index"
ROW_REMOVED = Rule(
    "row-removed",
    "error",
    "a row of the merge base is missing now",
    example="row #2 (line 8 at the merge base) is missing",
    fix="Restore the row: the index is append-only, and a row of the base stays.",
)

ROW_EDITED = Rule(
    "row-edited",
    "error",
    "a row of the merge base has different text now",
    example="row #2 changed since the merge base (line 8 there); rows are append-only",
    fix=(
        "Restore the row as it is at the merge base. The index is append-only: a "
        "change of status or title is a new row at the end."
    ),
)

ROW_INSERTED = Rule(
    "row-inserted",
    "error",
    "an ordinary commit adds a row above its parent's last row",
    example=(
        "the commit adds row #9 above row #3 (line 10), which was already there: "
        "append new rows at the tail"
    ),
    fix=(
        "Move the new row to the end of the table (`tools index append` writes it "
        "there), so that two branches' appends merge without a conflict."
    ),
)

MERGE_LOST_ROW = Rule(
    "merge-lost-row",
    "error",
    "a merge (committed, or being concluded) lacks or changed a row one parent had",
    example="the merge lacks row #5 that parent d943333d2336 had (line 9 there)",
    fix=(
        "Redo the merge so that it keeps every row of both parents: register the "
        "`agent-index` merge driver (`tools init`) or use git's `merge=union` for "
        "the index, and resolve a conflict by keeping both rows."
    ),
)

ROW_DUPLICATE = Rule(
    "row-duplicate",
    "error",
    "an issue number appears twice",
    example="issue #3 appears twice (first at line 9)",
    fix=(
        "Keep one row per issue number: if two branches added the same issue, keep "
        "the first row; if they are different issues, give this branch's row a new "
        "number."
    ),
)

ROW_MALFORMED = Rule(
    "row-malformed",
    "error",
    "a table line that is not a row",
    example="3 cells, expected 4 (Issue | Row | Title | Kind); escape a pipe as \\|",
    fix=(
        "Write the line as `| #N | ROW | Title | Kind |` (`ROW` a row id or `—`; a "
        "pipe inside a cell escaped as `\\|`), with no blank line inside the table. "
        "`tools index append` writes well-formed rows."
    ),
)

UNION_DUPLICATE = Rule(
    "union-duplicate",
    "error",
    "the same issue number was added on both sides since M",
    example=(
        "issue #3 was added since the merge base both here and on main (line 9 "
        "there, a different row): merging would carry it twice"
    ),
    fix=(
        "Both sides added a row for the same issue number: if it is another issue, "
        "give this branch's row a new number; if it is the same issue, drop this "
        "branch's row."
    ),
)

HEADER_CHANGED = Rule(
    "header-changed",
    "error",
    "the preamble or the table header differs from the base",
    example="the preamble or table header differs from the merge base (first at line 3)",
    fix=(
        "Restore the index's preamble and header as they are at the merge base (`git "
        "show BASE:.agents/issue-index.md`); change them in a change of their own, "
        "on the base branch, not in a branch that appends rows."
    ),
)

INDEX_ABSENT = Rule(
    "index-absent",
    "info",
    "no index file at the base nor now: nothing to judge",
    example=".agents/issue-index.md exists neither at the merge base nor now",
    fix=(
        "Nothing to fix (an info finding). `tools init` writes the index's header "
        "when `index` is among the preflight gates; `tools index append` creates the "
        "file with its first row."
    ),
)

RULES = declare(
    NAME,
    [
        ROW_REMOVED,
        ROW_EDITED,
        ROW_INSERTED,
        MERGE_LOST_ROW,
        ROW_DUPLICATE,
        ROW_MALFORMED,
        UNION_DUPLICATE,
        HEADER_CHANGED,
        INDEX_ABSENT,
        RANGE_EMPTY,
    ],
)

_CACHE = 16  # blobs kept while walking: a linear walk and its merges' parents hit it
_AHEAD_FROM = 1 << 20  # bytes of the file judged now from which its proofs run on a thread


# Tables by the bytes object they read: the same file at several points (the working tree and
# HEAD, the merge base and a walked commit's parent) is one object (the blob reader hands out
# the copy already held) and is parsed once while any snapshot holds it. Keyed by identity, not
# by content (hashing a 42 MB file costs more than the lookup saves); a table holds its bytes,
# so an id in here is never reused while its entry lives.
_TABLES: weakref.WeakValueDictionary[int, Table] = weakref.WeakValueDictionary()


class Snapshot:
    """The index file at one point, read when a check needs its bytes (``load``) and parsed
    only when a slow path needs the table. ``oid``: its blob id, when known (the same id is
    the same bytes)."""

    def __init__(
        self,
        raw: bytes | None,
        load: Callable[[], bytes] | None = None,
        oid: str | None = None,
    ):
        self._raw = raw
        self._load = load
        self.oid = oid
        self._table: Table | None = None

    @property
    def exists(self) -> bool:
        return self._raw is not None or self._load is not None

    @property
    def raw(self) -> bytes | None:
        if self._load is not None:
            self._raw, self._load = self._load(), None
        return self._raw

    def same(self, other: Snapshot) -> bool:
        """Whether both hold the same bytes (by blob id when both are known)."""
        if self.oid is not None and other.oid is not None:
            return self.oid == other.oid
        return self.raw == other.raw

    @property
    def table(self) -> Table:
        if self._table is None:
            raw = self.raw or b""
            table = _TABLES.get(id(raw))
            if table is None or table.raw is not raw:
                table = index_table.parse_bytes(raw)
                _TABLES[id(raw)] = table
            self._table = table
        return self._table


class _Prefixes:
    """Which blobs are line-aligned prefixes of ``data`` (the whole of it included), proved
    by hashing ``data``'s start the way git names blobs, never by reading the blob."""

    def __init__(self, data: bytes | None):
        self.data = data
        self._view = memoryview(data) if data is not None else None
        self._known: dict[str, bool] = {}

    def holds(self, head: tuple[str, int]) -> bool:
        oid, size = head
        if oid not in self._known:
            view = self._view
            self._known[oid] = view is not None and blob_starts(
                oid, size, lambda a, b: view[a:b], len(view)
            )
        return self._known[oid]

    def proved(self, oid: str) -> bool:
        """Whether :meth:`holds` already answered for ``oid``."""
        return oid in self._known

    def whole(self, head: tuple[str, int] | None) -> bool:
        """Whether the blob of ``head`` is ``data`` itself."""
        data = self.data
        return head is not None and data is not None and head[1] == len(data) and self.holds(head)


class _Blobs:
    """The index at commits through the git layer's persistent cat-file processes.

    Commits map to (blob id, size) by a header lookup that reads no content; contents are
    read once per distinct blob and kept in a small LRU. ``appended`` proves an ordinary
    commit a pure append without reading its blobs when both are prefixes of the head's
    file: git's own object hash of the head's first ``size`` bytes names the blob. A blob
    proved a prefix of the file judged now is never read: its bytes are that file's start.
    """

    def __init__(self, ctx: Context, path: str, now: bytes | None = None):
        self.ctx, self.path = ctx, path
        self._headers: dict[str, tuple[str, int] | None] = {}
        self._content: OrderedDict[str, Snapshot] = OrderedDict()
        self.now = _Prefixes(now)
        self._ref = _Prefixes(None)
        self._ahead: Background[None] | None = None
        self.known: list[bytes] = [now] if now is not None else []

    def header(self, sha: str | None) -> tuple[str, int] | None:
        if sha is None:
            return None
        if sha not in self._headers:
            self._headers[sha] = self.ctx.git.blob_header(sha, self.path)
        return self._headers[sha]

    def prove_now(self, shas: list[str | None]) -> None:
        """Look up the blobs of ``shas`` and prove which are prefixes of the file judged now,
        on a thread: hashing releases the interpreter, which reads the table meanwhile."""

        def work() -> None:
            for sha in shas:
                head = self.header(sha)
                if head is not None:
                    self.now.holds(head)

        if self.now.data is not None and len(self.now.data) >= _AHEAD_FROM:
            self._ahead = Background(work)

    def settle(self) -> None:
        """Wait for :meth:`prove_now`'s thread (its caches are then this thread's alone)."""
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            ahead.result()

    def prefix_of_now(self, sha: str | None) -> bool:
        """Whether ``sha``'s file is a line-aligned prefix of the file judged now."""
        self.settle()
        head = self.header(sha)
        return head is not None and self.now.holds(head)

    def is_now(self, sha: str | None) -> bool:
        """Whether ``sha``'s file is the file judged now, byte for byte."""
        self.settle()
        return self.now.whole(self.header(sha))

    def at(self, sha: str | None) -> Snapshot:
        self.settle()
        head = self.header(sha)
        if head is None:
            return Snapshot(None)
        snap = self._content.get(head[0])
        if snap is None:
            oid, size = head
            snap = Snapshot(None, lambda: self._read(oid, size), oid)
            self._content[oid] = snap
            if len(self._content) > _CACHE:
                self._content.popitem(last=False)
        else:
            self._content.move_to_end(head[0])
        return snap

    def _read(self, oid: str, size: int) -> bytes:
        now = self.now.data
        if now is not None and self.now.holds((oid, size)):
            return now if size == len(now) else now[:size]  # proved: no read from git
        data = self.ctx.git.object(oid)
        # Keep one copy of a content already held: a large index is read more than once.
        return next((k for k in self.known if k == data), data)

    def use_reference(self, sha: str | None) -> None:
        """The commit whose file the prefix proofs compare against (the range's head)."""
        if self.is_now(sha):
            self._ref = self.now  # the same bytes: the proofs already made hold for it
        else:
            self._ref = _Prefixes(self.at(sha).raw if sha else None)

    def prove_ahead(self, pairs: list[tuple[str, str]]) -> None:
        """Hash the candidates of :meth:`appended` for ``pairs`` up front, on every core:
        hashlib releases the GIL, and a long range of appends is mostly hashing."""
        todo: dict[str, tuple[str, int]] = {}
        for parent, child in pairs:
            hp, hc = self.header(parent), self.header(child)
            if hp is None or hc is None or hp[0] == hc[0] or hp[1] > hc[1]:
                continue
            for head in (hp, hc):
                if not self._ref.proved(head[0]):
                    todo[head[0]] = head
        if len(todo) < 8 or self._ref.data is None:
            return
        from concurrent.futures import ThreadPoolExecutor

        workers = min(len(todo), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(self._ref.holds, todo.values()))

    def appended(self, parent: str, child: str) -> bool:
        """Whether ``child``'s file is ``parent``'s with lines added at the end (proved
        without reading either when both are line-aligned prefixes of the reference)."""
        hp, hc = self.header(parent), self.header(child)
        if hp is None or hc is None:
            return False
        if hp[0] == hc[0]:
            return True
        return hp[1] <= hc[1] and self._ref.holds(hp) and self._ref.holds(hc)


def _row_ref(row: Row) -> str:
    return f"#{row.key}"


# -- base-free checks ---------------------------------------------------------------------------
def _base_free(result: GateResult, path: str, now: Snapshot) -> None:
    """row-malformed and row-duplicate on the current file."""
    if not now.exists:
        return
    table = now.table
    result.stats["rows"] = table.row_count
    for line, why in table.malformed:
        result.add(ROW_MALFORMED.id, why, path=path, line=line)
    for key, first, line in table.duplicates():
        result.add(
            ROW_DUPLICATE.id,
            f"issue #{key} appears twice (first at line {first})",
            path=path,
            line=line,
        )


def _losses(old: Table, new: Table) -> list[Loss]:
    """Rows of ``old`` removed, altered or moved in ``new``: walked in step where the tables
    allow it, else by keying every row."""
    found = index_compare.base_losses(old, new)
    if found is not None:
        return found
    return losses(old.entries(), new.entries())


# -- against the base ---------------------------------------------------------------------------
def _against_base(
    result: GateResult,
    path: str,
    base: Snapshot,
    now: Snapshot,
    where: str,
    appended: bool = False,
) -> None:
    """row-removed, row-edited, header-changed: ``now`` against ``base`` (named ``where``);
    ``appended``: ``base`` is already proved a line-aligned prefix of ``now``."""
    if not base.exists:
        return
    if not now.exists:
        now = Snapshot(b"")  # a file gone since the base is judged as emptied
    elif appended or is_prefix(base.raw or b"", now.raw or b""):
        return  # appended to: every base row is there, unaltered
    for loss in _losses(base.table, now.table):
        if loss.kind == "removed":
            result.add(
                ROW_REMOVED.id,
                f"row #{loss.base.key} (line {loss.base.line} at {where}) is missing",
                path=path,
            )
            continue
        assert loss.now is not None
        if loss.kind == "altered":
            msg = (
                f"row #{loss.base.key} changed since {where} (line {loss.base.line} there); "
                "rows are append-only"
            )
        else:
            msg = (
                f"row #{loss.base.key} moved: line {loss.base.line} at {where}, out of the "
                "base's order now; rows keep their place"
            )
        result.add(ROW_EDITED.id, msg, path=path, line=loss.now.line)
    old, new = base.table.frame, now.table.frame
    if old != new:
        pairs = zip(old, new, strict=False)
        diff = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(old), len(new)))
        result.add(
            HEADER_CHANGED.id,
            f"the preamble or table header differs from {where} (first at line {diff + 1})",
            path=path,
            line=diff + 1,
        )


def _rows_after(old: Snapshot, new: Snapshot) -> list[Row]:
    """Rows of ``new``; when ``old`` is a prefix of it, only those of the appended part are
    parsed (the rest are ``old``'s)."""
    if not is_prefix(old.raw or b"", new.raw or b""):
        return new.table.rows
    start = (old.raw or b"").count(b"\n")
    tail = split_lines(decode((new.raw or b"")[len(old.raw or b"") :]))
    parsed = (index_table.parse_row(line, start + i + 1) for i, line in enumerate(tail))
    return [r for r in parsed if isinstance(r, Row)]


def _union_duplicates(
    result: GateResult, path: str, merge_base: Snapshot, tip: Snapshot, now: Snapshot, ref: str
) -> None:
    """Issue numbers added since M both on the base tip and here: a union carries both."""
    if not tip.exists or not now.exists or tip.same(merge_base):
        return
    old = index_table.quick_keys(decode(merge_base.raw or b""))
    theirs = {r.key: r for r in _rows_after(merge_base, tip) if r.key not in old}
    if not theirs:
        return
    table = now.table
    for i, key in enumerate(table.row_keys):
        if key in old or key not in theirs:
            continue
        row = table.row_at(i)
        other = theirs.pop(row.key)
        same = "the same row" if other.identity == row.identity else "a different row"
        result.add(
            UNION_DUPLICATE.id,
            f"issue #{row.key} was added since the merge base both here and on {ref} "
            f"(line {other.line} there, {same}): merging would carry it twice",
            path=path,
            line=row.line,
        )


# -- commits ------------------------------------------------------------------------------------
def _ordinary(
    result: GateResult,
    path: str,
    parent: Snapshot,
    child: Snapshot,
    commit: str | None,
    what: str,
) -> None:
    """row-inserted: every row new in ``child`` must come after the parent's last row."""
    if not parent.exists or not child.exists:
        return
    if is_prefix(parent.raw or b"", child.raw or b""):
        return  # a pure append
    for row, anchor in _inserted(parent.table, child.table):
        result.add(
            ROW_INSERTED.id,
            f"{what} adds row #{row.key} above row {_row_ref(anchor)} (line {anchor.line}), "
            "which was already there: append new rows at the tail",
            commit=commit,
            path=path,
            line=row.line,
        )


def _inserted(parent: Table, child: Table) -> list[tuple[Row, Row]]:
    """(row, anchor) per row of ``child`` new since ``parent`` that comes before ``anchor``,
    the last row of ``child`` that ``parent`` had already."""
    found = index_compare.inserted(parent, child)
    if found is not None:
        return found
    old = parent.keys()
    rows = child.rows
    last_old = max((i for i, r in enumerate(rows) if r.key in old), default=-1)
    if last_old < 0:
        return []
    anchor = rows[last_old]
    return [(row, anchor) for row in rows[:last_old] if row.key not in old]


def _merge(
    result: GateResult,
    path: str,
    parent: Snapshot,
    child: Snapshot,
    merge: str | None,
    parent_sha: str,
) -> None:
    """merge-lost-row: every row of ``parent`` is in the merge (None: the merge being
    concluded), unchanged."""
    if not parent.exists or child.raw == parent.raw:
        return
    short = parent_sha[:12]
    if not child.exists:
        child = Snapshot(b"")  # the merge deleted the file: every row of the parent is lost
    child_lines = set((child.raw or b"").split(b"\n"))
    missing = [ln for ln in (parent.raw or b"").split(b"\n") if ln not in child_lines]
    if not missing:
        return  # every line of the parent is there verbatim
    # Only the missing lines need parsing; the merge's table only when one is a row.
    parent_rows: list[Entry] = []
    for raw in missing:
        row = index_table.parse_row(decode(raw), 0)
        if isinstance(row, Row):
            parent_rows.append(row.entry())
    if not parent_rows:
        return
    lines = {e.key: e.line for e in parent.table.entries()}
    lost = AppendOnly(lambda: parent_rows)
    lost.feed_all(child.table.entries())
    for loss in lost.losses():
        if loss.kind == "moved":
            continue  # a union merge interleaves: merges are judged by preservation only
        at = lines.get(loss.base.key)
        there = f" (line {at} there)" if at else ""
        if loss.removed:
            msg = f"the merge lacks row #{loss.base.key} that parent {short} had{there}"
            line = None
        else:
            msg = f"the merge changed row #{loss.base.key} of parent {short}{there}"
            line = loss.now.line if loss.now else None
        result.add(MERGE_LOST_ROW.id, msg, commit=merge, path=path, line=line)


def _touches(commit: Commit, path: str, paths_read: bool) -> bool:
    """Whether ``commit`` changes ``path``; without the range's changed paths, assume so (the
    blob headers then settle it cheaply)."""
    if not paths_read:
        return True
    return any(c.path == path or c.old_path == path for c in commit.changes)


def _walk(
    ctx: Context, result: GateResult, path: str, commits: list[Commit], blobs: _Blobs
) -> None:
    paths_read = getattr(ctx.opts, "range_paths", True)
    pairs = []
    for commit in commits:
        if commit.is_merge:
            pairs += [(parent, commit.sha) for parent in commit.parents]
        elif commit.parents and _touches(commit, path, paths_read):
            pairs.append((commit.parents[0], commit.sha))
    blobs.prove_ahead(pairs)
    for commit in commits:
        if commit.is_merge:
            mine = blobs.header(commit.sha)
            for parent in commit.parents:
                if blobs.header(parent) == mine or blobs.appended(parent, commit.sha):
                    continue  # the merge's file is this parent's, or extends it
                _merge(result, path, blobs.at(parent), blobs.at(commit.sha), commit.sha, parent)
        elif _touches(commit, path, paths_read):
            first = commit.parents[0] if commit.parents else None
            if first is not None and blobs.appended(first, commit.sha):
                continue
            child = blobs.at(commit.sha)
            _ordinary(result, path, blobs.at(first), child, commit.sha, "the commit")


# -- the gate -----------------------------------------------------------------------------------
def _absent(result: GateResult, path: str, where: str) -> GateResult:
    result.add(INDEX_ABSENT.id, f"{path} exists neither at {where} nor now", path=path)
    return result


def _staged(ctx: Context, result: GateResult, path: str) -> GateResult:
    head = ctx.git.head()
    parent = Snapshot(ctx.git.blob(head, path) if head else None)
    child = Snapshot(ctx.git.staged_blob(path))
    if not parent.exists and not child.exists:
        return _absent(result, path, "HEAD")
    _base_free(result, path, child)
    _against_base(result, path, parent, child, "HEAD")
    _ordinary(result, path, parent, child, None, "the staged change")
    theirs = ctx.git.resolve("MERGE_HEAD") if ctx.git.in_merge() else None
    if theirs is not None:  # a merge being concluded keeps every row of the merged side too
        _merge(result, path, Snapshot(ctx.git.blob(theirs, path)), child, None, theirs)
    return result


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    path = ctx.config.index.path
    if ctx.opts.staged:
        return _staged(ctx, result, path)
    now = Snapshot(read_now(ctx, path))
    # One reader for every commit's file: the merge base is often a walked commit's parent.
    blobs = _Blobs(ctx, path, now.raw)
    sel = ctx.range
    if sel.skip_reason is None:
        blobs.prove_now([sel.merge_base, sel.head])
    _base_free(result, path, now)
    commits = range_commits(ctx, result)
    if commits is None:  # no base: the base-free checks stand, the rest is a skip
        if not now.exists:
            result.add(INDEX_ABSENT.id, f"{path} does not exist now", path=path)
        return result
    base = blobs.at(sel.merge_base)
    if not base.exists and not now.exists:
        return _absent(result, path, "the merge base")
    appended = blobs.prefix_of_now(sel.merge_base)
    _against_base(result, path, base, now, "the merge base", appended)
    tip = blobs.at(sel.base)
    _union_duplicates(result, path, base, tip, now, sel.base_ref or "the base")
    blobs.use_reference(sel.head)
    _walk(ctx, result, path, commits, blobs)
    if sel.head and not ctx.opts.head and not blobs.is_now(sel.head):
        # The working tree is judged; an uncommitted edit is one more ordinary change.
        head = blobs.at(sel.head)
        if head.raw != now.raw:
            _ordinary(result, path, head, now, None, "the uncommitted change")
    return result
