"""The one append-only check both ledgers share (issue index and evidence ledger).

Both files are line-based and keyed: the index by issue number, the ledger by record id.
"Append-only against the base" means: every entry of the base is still present now, under
the same key and unaltered (same fingerprint). Duplicate keys are found in the same pass.

Entries are fed one at a time, so a caller can stream a large file and keep only keys and
fingerprints. A byte-prefix test (the base's bytes are the start of the current bytes, as
appends and tail-union merges leave them) settles the common case without keying the base.
"""

import bisect
import hashlib
import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tools import file_reads
from tools.errors import UsageError

if TYPE_CHECKING:  # only for annotations: the table parser imports this module too
    from tools.context import Context


class Entry(NamedTuple):
    """One keyed entry: ``fingerprint`` is what "unaltered" compares; ``line`` is 1-based.
    (A tuple: a large file makes one per line.)"""

    key: Hashable
    fingerprint: Hashable
    line: int | None = None
    label: str = ""


class Loss(NamedTuple):
    """A base entry that is ``removed`` (``now`` is None), ``altered`` (same key, other
    fingerprint) or ``moved`` (unaltered, but out of the base's order: an append-only file
    keeps its base entries in place)."""

    kind: str
    base: Entry
    now: Entry | None

    @property
    def removed(self) -> bool:
        return self.kind == "removed"


def _longest_increasing(values: list[int]) -> set[int]:
    """Indices of one longest strictly increasing subsequence of ``values`` (n log n)."""
    tails: list[int] = []  # values of the smallest tails
    tail_idx: list[int] = []
    prev = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_idx.append(i)
        else:
            tails[k] = v
            tail_idx[k] = i
        prev[i] = tail_idx[k - 1] if k else -1
    keep: set[int] = set()
    i = tail_idx[-1] if tail_idx else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def line_aligned(base_len: int, now_len: int, base_ends_line: bool) -> bool:
    """Whether bytes that start with the base's ``base_len`` bytes (``now_len`` in all) only
    append to it: the base's last line was complete (``base_ends_line``), the base was empty,
    or nothing follows. A base without a final newline whose last line now continues was
    edited, not appended to. The one byte-level append rule: :class:`PrefixMatcher` and
    :func:`blob_starts` both decide by it."""
    return base_ends_line or base_len == 0 or base_len == now_len


class PrefixMatcher:
    """Whether the base's bytes are a line-aligned prefix of bytes fed in order."""

    def __init__(self, base: bytes):
        self._base = base
        self._pos = 0
        self._ok = True
        self._ends_line = base.endswith(b"\n")
        self._total = 0

    def feed(self, chunk: bytes) -> None:
        self._total += len(chunk)
        if not self._ok or self._pos >= len(self._base):
            return
        left = len(self._base) - self._pos
        if len(chunk) <= left:
            self._ok = self._base.startswith(chunk, self._pos)  # a memcmp, no copy
        else:
            self._ok = chunk.startswith(self._base[self._pos :])
        self._pos += min(left, len(chunk))

    @property
    def matched(self) -> bool:
        if not self._ok or self._pos < len(self._base):
            return False
        return line_aligned(len(self._base), self._total, self._ends_line)


def blob_starts(
    oid: str, length: int, read: Callable[[int, int], bytes | memoryview], size: int
) -> bool:
    """Whether the git blob ``oid`` (``length`` bytes) is a line-aligned prefix of the
    ``size`` bytes that ``read(a, b)`` returns — proved by hashing that prefix the way git
    names blobs (sha1 or sha256 repositories), without reading the blob."""
    algo = {40: "sha1", 64: "sha256"}.get(len(oid))
    if length > size or algo is None:
        return False
    ends_line = length > 0 and read(length - 1, length) == b"\n"
    if not line_aligned(length, size, ends_line):
        return False
    digest = hashlib.new(algo, b"blob %d\0" % length)
    for at in range(0, length, 1 << 22):
        digest.update(read(at, min(length, at + (1 << 22))))
    return digest.hexdigest() == oid


def is_prefix(base: bytes, now: bytes) -> bool:
    matcher = PrefixMatcher(base)
    matcher.feed(now)
    return matcher.matched


class AppendOnly:
    """Feed the current entries; ask for duplicates as they come and for losses at the end.

    ``base`` is a callable producing the base's entries, called only when the prefix test
    (``prefix`` = True when the caller established it) did not already prove preservation.
    """

    def __init__(self, base: Callable[[], Iterable[Entry]] | None = None):
        self._base = base
        self._first: dict[Hashable, Entry] = {}
        # Keys fed in bulk whose fingerprint is the key itself (content-addressed entries
        # verified before): key -> line, so that no Entry is built for each.
        self._bulk: dict[Hashable, int] = {}
        # Fingerprints seen per key beyond the first (only when a key repeats).
        self._more: dict[Hashable, set[Hashable]] = {}
        self.prefix = False

    def get(self, key: Hashable) -> Entry | None:
        """The first entry fed with ``key``."""
        first = self._first.get(key)
        if first is None and key in self._bulk:
            return Entry(key, key, self._bulk[key])
        return first

    def feed(self, entry: Entry) -> Entry | None:
        """Record ``entry``; return the earlier entry with the same key if there is one."""
        first = self.get(entry.key)
        if first is None:
            self._first[entry.key] = entry
            return None
        self._more.setdefault(entry.key, set()).add(entry.fingerprint)
        return first

    def preload_content_keys(self, keys: Sequence[Hashable], first_line: int = 1) -> None:
        """Feed, before anything else, entries on consecutive lines whose fingerprint is
        their key and among which no key repeats (a prefix verified by an earlier run)."""
        if self._first or self._bulk:
            raise ValueError("preload before feeding")
        self._bulk = dict(zip(keys, range(first_line, first_line + len(keys)), strict=True))

    def feed_all(self, entries: Iterable[Entry]) -> list[tuple[Entry, Entry]]:
        """Feed every entry; return (earlier, duplicate) pairs."""
        dups = []
        for entry in entries:
            first = self.feed(entry)
            if first is not None:
                dups.append((first, entry))
        return dups

    def keys(self) -> set[Hashable]:
        return set(self._first) | set(self._bulk)

    def losses(self) -> list[Loss]:
        """Base entries removed, altered or moved now, in base order."""
        if self._base is None or self.prefix:
            return []
        out: list[Loss | None] = []
        kept: list[tuple[int, Entry, Entry]] = []  # (slot in out, base, now) of unaltered ones
        for old in self._base():
            now = self.get(old.key)
            if now is None:
                out.append(Loss("removed", old, None))
            elif now.fingerprint != old.fingerprint and old.fingerprint not in self._more.get(
                old.key, ()
            ):
                out.append(Loss("altered", old, now))
            else:
                kept.append((len(out), old, now))
                out.append(None)
        # The unaltered ones must keep the base's order; the fewest out of place are "moved".
        order = [now.line if now.line is not None else 0 for _, _, now in kept]
        in_place = _longest_increasing(order)
        for i, (slot, old, now) in enumerate(kept):
            if i not in in_place:
                out[slot] = Loss("moved", old, now)
        return [loss for loss in out if loss is not None]


def losses(base: Iterable[Entry], now: Iterable[Entry]) -> list[Loss]:
    """Every entry of ``base`` still present and unaltered in ``now``? The losses, if not."""
    base_list = list(base)
    check = AppendOnly(lambda: base_list)
    check.feed_all(now)
    return check.losses()


# -- where the current file comes from -------------------------------------------------------
def head_explicit(ctx: "Context") -> bool:
    """Whether ``--head`` names the state to judge (else the working tree, or the index)."""
    return bool(ctx.opts.head) and not ctx.opts.staged


def read_now(ctx: "Context", path: str) -> bytes | None:
    """The file as judged now: the staged blob with --staged, the blob at --head when given,
    else the working tree file (what CI's checkout and a local run both hold)."""
    if head_explicit(ctx):
        head = ctx.range.head
        return ctx.git.blob(head, path) if head else None
    return ctx.read_current(path)


def worktree_file(ctx: "Context", path: str) -> Path | None:
    """The working-tree file to stream when it is what is judged now (no --staged, no
    --head) and it exists; else None (then use :func:`read_now`)."""
    if ctx.opts.staged or head_explicit(ctx):
        return None
    full = ctx.git.worktree_path(path)
    if not full.exists() and not full.is_symlink():
        return None
    # The checks of every bounded read (SPEC §10): a regular file inside the repository.
    stream = file_reads.open_stream(full, path, root=ctx.root)
    if stream is None:
        return None
    stream.close()
    if not os.access(full, os.R_OK):
        raise UsageError(f"{path}: cannot read: permission denied")
    return full
