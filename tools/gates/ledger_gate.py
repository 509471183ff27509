"""ledger: the evidence ledger verifies and only grows (SPEC §5).

Streams the current ledger once: every line parses as a record (``ledger-malformed``, a torn
final line included), every id recomputes (``ledger-record-tampered``), no id twice
(``ledger-duplicate``); and against the base (the merge base, or HEAD with --staged) no
record is removed or altered (``ledger-record-removed``), by the append-only check the
issue index uses too. Only ids and content hashes are kept, never whole records.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tools import ledger
from tools.appendonly import AppendOnly, Entry, blob_starts, read_now, worktree_file
from tools.gates.commit_range import RANGE_EMPTY, range_commits
from tools.git import Commit
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "ledger"
LEDGER_MALFORMED = Rule(
    ledger.RULE_MALFORMED,
    "error",
    "a line that is not a record (or a torn final line)",
    example=(
        "torn final line (71 bytes without a trailing newline): a writer stopped "
        "mid-append; the next append moves it aside"
    ),
    fix=(
        "A torn final line is moved to `<ledger>.torn` by the next append of any "
        "`tools` command, or delete the partial line by hand. Any other malformed "
        "line was written by hand: restore the ledger from git. Records are written "
        "by `tools`, never typed."
    ),
)

LEDGER_RECORD_TAMPERED = Rule(
    ledger.RULE_TAMPERED,
    "error",
    "a record whose id does not recompute",
    example=(
        "record 7125e0a86e65… (attribution) does not recompute: its content hashes to 70eff035b004…"
    ),
    fix=(
        "Someone edited a record: restore it as it was written (from git). Its id is "
        "the sha256 of its content, so any edit shows; a correction is a new record."
    ),
)

LEDGER_DUPLICATE = Rule(
    "ledger-duplicate",
    "error",
    "the same record id twice",
    example="record 7125e0a86e65… (attribution) appears again (first at line 1)",
    fix=(
        "Remove the second copy of the record (the line this branch added). Append "
        "records with `tools ledger merge` or the commands that write them: they "
        "skip records already present."
    ),
)

LEDGER_RECORD_REMOVED = Rule(
    "ledger-record-removed",
    "error",
    "a record of the base is gone or altered",
    example=(
        "record 9b5a18f08053… (attribution) (line 2 at the merge base) was altered: "
        "its content no longer hashes to what it did there"
    ),
    fix=(
        "Restore the base's records unchanged and in their order (`git show "
        "BASE:.agents/ledger.jsonl`), then append this branch's records after them. "
        "The ledger only grows at its end; a correction is a new record."
    ),
)

LEDGER_MERGE_LOST = Rule(
    "ledger-merge-lost",
    "error",
    "a merge commit's ledger lacks, or altered, a record one of its parents had",
    example=(
        "the merge lacks record 5d1c0e9a2b7f… (attribution) that parent 8e41a09c33d2 "
        "had (line 3 there)"
    ),
    fix=(
        "The merge was resolved by taking one side's ledger (`git checkout --ours`, "
        "or a merge without the union driver): put the lost records back (the union "
        "of both sides' lines, in order) in a commit on top, or redo the merge with "
        "`merge=union` for the ledger in `.gitattributes`. This rule cannot be "
        "turned off."
    ),
)

LEDGER_ABSENT = Rule(
    "ledger-absent",
    "info",
    "no ledger at the base nor now: nothing to judge",
    example=".agents/ledger.jsonl exists neither at the merge base nor now",
    fix=(
        "Nothing to fix (an info finding): the first `tools mutate run`, `tools "
        "attribute` or `tools ledger merge` creates the ledger."
    ),
)

RULES = declare(
    NAME,
    [
        LEDGER_MALFORMED,
        LEDGER_RECORD_TAMPERED,
        LEDGER_DUPLICATE,
        LEDGER_RECORD_REMOVED,
        LEDGER_MERGE_LOST,
        LEDGER_ABSENT,
        RANGE_EMPTY,
    ],
)


def _label(item: ledger.Scanned) -> str:
    assert item.id is not None
    return f"{item.id[:12]}… ({item.kind})" if item.kind else f"{item.id[:12]}…"


class Base:
    """The ledger at the base point, read lazily: whether it starts the current file is
    proved from its blob id (git's hash of the current file's first bytes), so its content
    is read only when a keyed comparison is needed."""

    def __init__(self, ctx: Context, rev: str | None, path: str):
        self._ctx = ctx
        self.header = ctx.git.blob_header(rev, path) if rev else None
        self._data: bytes | None = None

    @property
    def exists(self) -> bool:
        return self.header is not None

    def data(self) -> bytes:
        if self._data is None:
            self._data = self._ctx.git.object(self.header[0]) if self.header else b""
        return self._data

    def starts(self, read: Callable[[int, int], bytes], size: int) -> bool:
        """Whether the base's bytes are a line-aligned prefix of the ``size`` bytes that
        ``read(a, b)`` returns."""
        if self.header is None:
            return True
        return blob_starts(self.header[0], self.header[1], read, size)


def _entries(data: bytes) -> Iterator[Entry]:
    """The base's keyed entries: claimed id -> content hash (malformed lines have no key)."""
    for item in ledger.scan_bytes(data, records=False):
        if item.id is not None:
            yield Entry(item.id, item.computed, item.line, _label(item))


def judge(
    result: GateResult,
    path: str,
    items: Iterable[ledger.Scanned],
    base: Base | None,
    where: str,
    *,
    prefix: Callable[[], bool],
    known: Sequence[str] = (),
) -> list[str] | None:
    """Every rule on the scanned lines ``items``, against ``base`` (None: base-free checks
    only); ``prefix()`` says whether the base's bytes start the current file. ``known`` are
    the ids of the lines before ``items``, verified by an earlier run. Returns the ids of
    ``items`` line by line when every line was a verifying record and none repeated (here or
    with ``known``), else None."""
    has_base = base is not None and base.exists
    check = AppendOnly((lambda: _entries(base.data())) if has_base and base else None)
    check.preload_content_keys(known)
    records, bad = len(known), 0
    ids: list[str] | None = []
    for item in items:
        if item.error is not None:
            bad += 1
            ids = None
            result.add(item.error.rule, item.error.message, path=path, line=item.line)
        if item.id is None:
            continue
        records += 1
        if ids is not None:
            ids.append(item.id)
        first = check.feed(Entry(item.id, item.computed, item.line))
        if first is not None:
            ids = None
            result.add(
                LEDGER_DUPLICATE.id,
                f"record {_label(item)} appears again (first at line {first.line})",
                path=path,
                line=item.line,
            )
    result.stats["records"] = records
    result.stats["bad_lines"] = bad
    if has_base and prefix():
        check.prefix = True  # the base's bytes start the file: nothing removed or altered
    for loss in check.losses():
        at = f"line {loss.base.line} at {where}"
        if loss.kind == "removed":
            msg, line = f"record {loss.base.label} ({at}) is gone", None
        elif loss.kind == "altered":
            assert loss.now is not None
            msg = (
                f"record {loss.base.label} ({at}) was altered: its content no longer hashes "
                "to what it did there"
            )
            line = loss.now.line
        else:
            assert loss.now is not None
            msg = (
                f"record {loss.base.label} ({at}) was moved out of the base's order: the "
                "ledger only grows at its end"
            )
            line = loss.now.line
        result.add(LEDGER_RECORD_REMOVED.id, msg, path=path, line=line)
    return ids


def _cache_file(ctx: Context, path: str) -> Path | None:
    """Where the verified prefix of ``path`` is remembered: inside the git directory (never
    the working tree), one file per ledger path."""
    name = hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return ctx.git.tools_dir() / f"ledger-verified-{name}"


class _Source(NamedTuple):
    """The ledger's bytes as judged now: ``size`` bytes, read by ``read(a, b)``, scanned into
    lines from a byte offset and a line number by ``scan_from``."""

    size: int
    read: Callable[[int, int], bytes]
    scan_from: Callable[[int, int], Iterable[ledger.Scanned]]


def _file_source(full: Path, fd: int, size: int) -> _Source:
    return _Source(
        size,
        lambda a, b: os.pread(fd, b - a, a),
        lambda s, n: ledger.scan_file(full, start=s, end=size, first_line=n, records=False),
    )


def _bytes_source(data: bytes) -> _Source:
    return _Source(
        len(data),
        lambda a, b: data[a:b],
        lambda s, n: ledger.scan_bytes(data, start=s, first_line=n, records=False),
    )


def _judge_source(
    ctx: Context, result: GateResult, path: str, base: Base | None, where: str, source: _Source
) -> None:
    """Judge ``source``; a prefix verified by an earlier run (same bytes, by sha256) is not
    re-verified, and a clean result is remembered for the next."""
    size, read = source.size, source.read
    cache = _cache_file(ctx, path)
    known = ledger.load_verified(cache, read, size) if cache else None
    start, ids_before = (known.size, known.ids) if known else (0, [])
    items = source.scan_from(start, len(ids_before) + 1)

    def prefix() -> bool:
        return base is not None and base.starts(read, size)

    ids = judge(result, path, items, base, where, prefix=prefix, known=ids_before)
    result.stats["cached_bytes"] = start
    if cache is None or ids is None or (known is not None and known.size == size):
        return
    digest = known.digest if known else hashlib.sha256()
    for at in range(start, size, 1 << 22):
        digest.update(read(at, min(size, at + (1 << 22))))
    raw = (known.raw_ids if known else b"") + b"".join(bytes.fromhex(i) for i in ids)
    ledger.store_verified(cache, size, digest.hexdigest(), raw)


def _run_on(
    ctx: Context, result: GateResult, path: str, base: Base | None, where: str, *, absent: str
) -> GateResult:
    """Judge the current ledger; ``absent`` is the message when there is nothing to judge."""
    full = worktree_file(ctx, path)
    if full is not None:
        # A shared lock: appenders wait until the bytes judged here have been read.
        with ledger.read_locked(full) as (fd, size):
            _judge_source(ctx, result, path, base, where, _file_source(full, fd, size))
        return result
    data = read_now(ctx, path)
    if data is None:
        if base is None or not base.exists:
            result.add(LEDGER_ABSENT.id, absent, path=path)
            return result
        data = b""  # gone since the base: judged as emptied
    _judge_source(ctx, result, path, base, where, _bytes_source(data))
    return result


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    path = ctx.config.ledger.path
    if ctx.opts.staged:
        base = Base(ctx, ctx.git.head(), path)
        absent = f"{path} exists neither at HEAD nor in the index"
        return _run_on(ctx, result, path, base, "HEAD", absent=absent)
    commits = range_commits(ctx, result)
    if commits is None:  # no base to compare with: the base-free checks still run
        absent = f"{path} does not exist now (and the base could not be read)"
        return _run_on(ctx, result, path, None, "", absent=absent)
    sel = ctx.range
    base = Base(ctx, sel.merge_base, path)
    absent = f"{path} exists neither at the merge base nor now"
    _merges(ctx, result, path, commits)
    return _run_on(ctx, result, path, base, "the merge base", absent=absent)


def _merges(ctx: Context, result: GateResult, path: str, commits: Sequence[Commit]) -> None:
    """ledger-merge-lost: every record of every parent of a merge in the range is in the
    merge's ledger, unchanged (a merge resolved with ``--ours`` drops the other side's)."""
    git = ctx.git
    for commit in commits:
        if not commit.is_merge:
            continue
        mine = git.blob_header(commit.sha, path)
        kept: dict[str, str | None] | None = None
        for parent in commit.parents:
            theirs = git.blob_header(parent, path)
            if theirs is None or theirs == mine:
                continue
            if kept is None:
                data = git.object(mine[0]) if mine else b""
                kept = {i.id: i.computed for i in ledger.scan_bytes(data) if i.id is not None}
            for item in ledger.scan_bytes(git.object(theirs[0])):
                if item.id is None:
                    continue
                if item.id not in kept:
                    what = "lacks"
                elif kept[item.id] != item.computed:
                    what = "altered"
                else:
                    continue
                result.add(
                    LEDGER_MERGE_LOST.id,
                    f"the merge {what} record {_label(item)} that parent {parent[:12]} had "
                    f"(line {item.line} there)",
                    commit=commit.sha,
                    path=path,
                )
