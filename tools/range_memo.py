"""The range memo of the message gates (SPEC §12): a whole range's result kept, so that a
re-check of a branch after more commits reads and judges those commits only.

The verdict cache (:mod:`tools.verdict_cache`) keeps each commit's verdict, but a range run
still reads every commit of the range: on a 20,000-commit branch that read alone is more than
the 1.3x of a single-commit run that SPEC §12 allows. This memo keeps, for a message gate
(``trailers``, ``style``), the result of the range of a base ``B`` and a head ``H``:
its findings and stats as the gate filed them, before ``rules:`` severities and the findings
baseline, which a run applies afterwards either way.

A later run over the base ``B`` and a head ``H2`` looks for a memo of ``B`` and ``P``,
``P`` being ``H2`` or one of its last :data:`LOOKBACK` ancestors, reached from ``H2`` through
commits of one parent each (``git rev-list --parents``, which stops after that many without a
negative revision). Then the range is exactly the memo's plus that chain, with the memo's
merge base (:func:`find` says why), and git's walk lists the chain before the rest (one
commit of the range is waiting in the walk at a time along it), so the full run would judge
the chain's commits last: the run reads and judges the chain (``git log P..H2``) and puts its
result after the memo's. Anything else (a merge on the way, the base reached, no memo) is a
miss: the range is read whole, as without the memo.

What a memo's key names: the tool's version, the source of the modules whose code makes the
result, the gate, the effective config (all of it), ``--filled``, the repository's ``i18n.*``
settings, the base's sha and the head's. Not used (the range is read whole): a config with
``trailers.exceptions`` (an entry's commit prefix is resolved against every judged commit),
``--no-cache``/``TOOLS_NO_CACHE``, commands other than ``trailers check`` and ``style check``.
A range that holds no commit is not kept.

Where, and how. ``<git common dir>/tools/cache/range-<gate>/<key>``, one file per range: a
header line, then ``<checksum> <payload>``, the checksum the sha256 of ``<key> <payload>``;
written to a temp file under ``<git common dir>/tools/tmp/`` and renamed into place; read
only when whole, its checksum right and its payload a result of the gate's declared rules.
At most :data:`MAX_ENTRIES` files, and the verdict cache's byte bound, per gate: the oldest
are removed. A link on the way turns the memo off; every failure to read or write is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools import verdict_cache
from tools.message_reading import READING_MODULES
from tools.report import Finding, GateResult, Rule
from tools.report.registry import SEVERITIES, declared

if TYPE_CHECKING:
    from tools.context import Context, RangeSelection

HEADER = b"tools-range/1\n"
# How far back from the head a memo is looked for: the commits one re-check may add.
LOOKBACK = 256
MAX_ENTRIES = 64
# The stats a message gate files, in the order it files them; each but ``commits`` is a count
# of some of the range's commits, so a range's is the sum of its parts'. ``before_cutover`` is
# there whenever a cutover is set, the others only when not 0.
STATS = ("commits", "side_commits", "fixups", "merges_skipped", "before_cutover")
# The modules whose code makes a range's result: both message gates' judging modules (a test
# holds this to their ``JUDGING_MODULES``) and what reads and joins a range.
MODULES = (
    "tools.gates.trailers",
    "tools.gates.style",
    *READING_MODULES,
    "tools.gates.commit_range",
    "tools.context",
    "tools.git.parsers",
    __name__,
)


@dataclass
class Earlier:
    """A memo found for a run: the range ``merge_base..head`` judged before, by gate."""

    merge_base: str
    head: str
    results: dict[str, GateResult] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return int(next(iter(self.results.values())).stats["commits"])


def wanted(ctx: Context) -> tuple[str, ...]:
    """The gates of this run that keep a memo: none when the memo is off for it."""
    gates = ctx.opts.range_memo
    if not gates or ctx.opts.staged or verdict_cache.off(ctx.opts.no_cache):
        return ()
    if ctx.config.trailers.exceptions:
        return ()
    return gates


def _folder(ctx: Context, gate: str) -> Path | None:
    tools_dir = verdict_cache.common_dir(ctx.git.git_dir) / "tools"
    folder = tools_dir / "cache" / f"range-{gate}"
    for path in (tools_dir, tools_dir / "cache", folder):
        if path.is_symlink():
            return None
    return folder


def _prefix(ctx: Context, gate: str) -> bytes:
    from tools import __version__

    inputs = {
        "config": ctx.config_data,
        "filled": ctx.opts.filled,
        "git": verdict_cache.message_encoding(ctx.git),
    }
    parts = [
        "tools-range/1",
        __version__,
        verdict_cache.code_digest(MODULES),
        gate,
        verdict_cache.digest(inputs),
        "",
    ]
    return "\0".join(parts).encode()


def _key(prefix: bytes, base: str, head: str) -> str:
    return hashlib.sha256(prefix + f"{base}\0{head}".encode("ascii")).hexdigest()


def find(ctx: Context, base: str, head: str) -> Earlier | None:
    """A memo of every wanted gate for the range of ``base`` and ``P``, ``P`` the head or an
    ancestor the head reaches through commits of one parent; None: the range is read whole.

    No merge base is computed (on a long history that walk costs what reading it does): the
    merge bases of ``base`` and the head are those of ``base`` and ``P``, because no commit
    after ``P`` is an ancestor of ``base``: one would make ``P`` one too, and the range of
    ``base`` and ``P`` empty, which is never kept."""
    gates = wanted(ctx)
    if not gates:
        return None
    places = [(gate, _folder(ctx, gate), _prefix(ctx, gate)) for gate in gates]
    if any(folder is None or not folder.is_dir() for _, folder, _ in places):
        return None
    found = _found(places, base, head)  # the same range again: no walk at all
    if found is not None:
        return found
    walk = ctx.git.ancestry(head, LOOKBACK)
    for i, (sha, parents) in enumerate(walk):
        if sha == base or (i and walk[i - 1][1] != (sha,)):
            return None  # the base reached, or not the chain git's walk lists first
        found = _found(places, base, sha) if i else None
        if found is not None:
            return found
        if len(parents) != 1:
            return None
    return None


def _found(places: list[tuple[str, Path | None, bytes]], base: str, sha: str) -> Earlier | None:
    """The memos of every gate for the range of ``base`` and ``sha``, one merge base for all."""
    found: Earlier | None = None
    for gate, folder, prefix in places:
        assert folder is not None
        read = _read(folder, _key(prefix, base, sha), gate)
        if read is None or read[0] == sha or (found and found.merge_base != read[0]):
            return None
        found = found or Earlier(read[0], sha)
        found.results[gate] = read[1]
    return found


def keep(ctx: Context, gate: str, result: GateResult) -> GateResult:
    """The gate's result for the whole range: ``result`` (of the commits read) after the
    memo's (of the range before them), if the run found one; kept as the memo of this
    range when the memo is on for it."""
    sel: RangeSelection = ctx.range
    earlier = sel.prior
    if earlier is not None and gate in earlier.results:
        result = _joined(earlier.results[gate], result)
        if earlier.head == sel.head:
            return result  # the kept range itself: kept already
    if gate in wanted(ctx) and sel.mode == "range" and sel.base and sel.head and sel.count:
        assert sel.merge_base is not None
        _save(ctx, gate, (sel.base, sel.merge_base, sel.head), result)
    return result


def _joined(before: GateResult, after: GateResult) -> GateResult:
    """One range's result from its earlier part's and the later commits': the findings in
    the order a whole run files them, the counts summed (``commits`` is already the whole
    range's, :func:`tools.gates.commit_range.range_commits`)."""
    joined = GateResult(after.gate)
    joined.findings = before.findings + after.findings
    for name in STATS:
        if name == "commits":
            joined.stats[name] = after.stats[name]
        elif name in before.stats or name in after.stats:
            joined.stats[name] = before.stats.get(name, 0) + after.stats.get(name, 0)
    joined.skip_reason = after.skip_reason
    return joined


# -- the files -------------------------------------------------------------------------------


def _payload(merge_base: str, result: GateResult) -> bytes | None:
    """The result as ASCII JSON; None when it holds what the memo does not keep."""
    if result.skip_reason is not None or set(result.stats) - set(STATS):
        return None
    rows = []
    for f in result.findings:
        if f.path is not None or f.end_line is not None or f.sites or f.baseline_state:
            return None
        rows.append([f.rule, f.severity, f.message, f.commit, f.line])
    data = {"merge_base": merge_base, "stats": result.stats, "findings": rows}
    return json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _read(folder: Path, key: str, gate: str) -> tuple[str, GateResult] | None:
    """The merge base and the result a memo file holds, if it is whole and right."""
    raw = verdict_cache.read_entry(folder / key)
    if raw is None or not raw.startswith(HEADER) or not raw.endswith(b"\n"):
        return None
    checksum, _, payload = raw[len(HEADER) : -1].partition(b" ")
    expected = hashlib.sha256(key.encode("ascii") + b" " + payload).hexdigest()
    if checksum != expected.encode("ascii"):
        return None
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not _is_sha(merge_base := data.pop("merge_base", None)):
        return None
    result = _result(data, gate)
    return None if result is None else (merge_base, result)


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and len(value) in (40, 64) and not value.strip("0123456789abcdef")


def _result(data: Any, gate: str) -> GateResult | None:
    """A verified payload as the gate's result; None for anything but what :func:`_payload`
    writes with the gate's declared rules."""
    if not isinstance(data, dict) or set(data) != {"stats", "findings"}:
        return None
    stats, rows = data["stats"], data["findings"]
    if not isinstance(stats, dict) or not isinstance(rows, list):
        return None
    if list(stats) != [s for s in STATS if s in stats] or "commits" not in stats:
        return None
    if not all(type(v) is int and v >= 0 for v in stats.values()):
        return None
    rules = declared().get(gate, {})
    result = GateResult(gate)
    result.stats = stats
    for row in rows:
        if not _row_ok(row, rules):
            return None
        rule, severity, message, commit, line = row
        result.findings.append(Finding(rule, severity, message, commit=commit, line=line))
    return result


def _row_ok(row: Any, rules: dict[str, Rule]) -> bool:
    # The gate's rules are declared once its module is loaded: tools.gates.prefetch loads the
    # gates of a run that keeps a memo before the range's thread looks for one.
    if not isinstance(row, list) or len(row) != 5:
        return False
    rule, severity, message, commit, line = row
    return (
        type(rule) is str
        and rule in rules
        and severity in SEVERITIES
        and type(message) is str
        and (commit is None or _is_sha(commit))
        and (line is None or type(line) is int)
    )


def _save(ctx: Context, gate: str, ends: tuple[str, str, str], result: GateResult) -> None:
    """Keep ``result`` as the memo of the range ``ends`` = (base, merge base, head)."""
    base, merge_base, head = ends
    payload = _payload(merge_base, result)
    folder = _folder(ctx, gate)
    if payload is None or folder is None:
        return
    key = _key(_prefix(ctx, gate), base, head)
    checksum = hashlib.sha256(key.encode("ascii") + b" " + payload).hexdigest().encode("ascii")
    data = HEADER + checksum + b" " + payload + b"\n"
    tmp = folder.parent.parent / "tmp"
    if _write(folder, tmp, key, data):
        _bound(folder, keep=key)


def _write(folder: Path, tmp: Path, name: str, data: bytes) -> bool:
    """``folder/name`` holding ``data``, whole or not at all (renamed from ``tmp``)."""
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.mkdir(parents=True, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix=f".{name[:16]}.", suffix=".tools-tmp", dir=tmp)
    except OSError:
        return False
    try:
        # No fsync: a file cut short by a crash fails its checksum and is a miss.
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(path, 0o644)
        os.replace(path, folder / name)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return False
    return True


def _bound(folder: Path, keep: str) -> None:
    """At most :data:`MAX_ENTRIES` files and the cache's byte bound: the oldest go."""
    try:
        entries = [(e.stat().st_mtime_ns, e.stat().st_size, e.name) for e in os.scandir(folder)]
    except OSError:
        return
    entries.sort(reverse=True)
    limit, total = verdict_cache.max_bytes(), 0
    for n, (_mtime, size, name) in enumerate(entries):
        total += size
        if name != keep and (n >= MAX_ENTRIES or total > limit):
            with contextlib.suppress(OSError):
                os.unlink(folder / name)
