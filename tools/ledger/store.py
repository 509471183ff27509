"""Appending to a ledger: atomic, under an exclusive ``flock`` on the ledger itself, never a
partial line; a torn final line left by a killed writer is moved to ``<ledger>.torn`` first.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import mmap
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError
from tools.fsio import refuse_links
from tools.ledger.record import canonical_json, verify_record
from tools.ledger.scan import parse_line

if TYPE_CHECKING:
    import logging

_CHUNK = 1 << 16


@functools.cache
def _log() -> logging.Logger:
    """The ``tools.ledger`` logger, set up on its first notice: ``logging`` costs ~3 ms to
    import, which every gate run would pay for a message it almost never sends."""
    import logging

    log = logging.getLogger("tools.ledger")
    log.addHandler(logging.NullHandler())  # a library: callers decide where notices go
    return log


# -- appending --------------------------------------------------------------------------------
class Appended(list):  # type: ignore[type-arg]
    """The records actually written (a list), plus ``notices`` for the caller to print
    (for example, that a torn final line was moved aside)."""

    def __init__(self, records: Iterable[dict[str, Any]] = (), notices: Iterable[str] = ()):
        super().__init__(records)
        self.notices: list[str] = list(notices)


class _Prepared:
    """The records to append, and each one's line."""

    __slots__ = ("records", "lines")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.lines: list[bytes] = []


def _prepare(records: Iterable[dict[str, Any]]) -> _Prepared:
    out = _Prepared()
    seen: set[str] = set()
    for i, record in enumerate(records):
        problem = verify_record(record)
        if problem:
            raise ValueError(f"record {i}: {problem}")
        if record["id"] in seen:
            continue
        seen.add(record["id"])
        out.records.append(record)
        out.lines.append(canonical_json(record) + b"\n")
    return out


@contextlib.contextmanager
def locked(path: Path, root: Path | None = None) -> Iterator[int]:
    """Open ``path`` for appending (creating it) and hold an exclusive flock on it.

    The lock is on the ledger file itself, so no lock file litters the working tree. If the
    file was replaced while we waited (a checkout or merge writes a new inode), lock again.
    A symbolic link is never opened (exit 2 naming it); with ``root``, nor a link on the way
    from the repository's root.
    """
    if root is not None:
        refuse_links(path, root)
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    while True:
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UsageError(
                    "is a symbolic link: tools never writes through one", where=str(path)
                ) from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield fd
    finally:
        os.close(fd)  # closing releases the flock


def _last_newline(fd: int, size: int) -> int:
    """Offset of the last ``\\n`` before ``size``, or -1."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        pos = chunk.rfind(b"\n")
        if pos >= 0:
            return start + pos
        end = start
    return -1


def torn_path(path: Path) -> Path:
    return path.with_name(path.name + ".torn")


def _move_torn_tail(fd: int, path: Path, size: int) -> str | None:
    """If the file does not end in ``\\n``, move its last partial line to ``<ledger>.torn``
    (appended there, newline-terminated) and truncate it away. Returns the notice."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    cut = _last_newline(fd, size) + 1
    tail = os.pread(fd, size - cut, cut)
    aside = torn_path(path)
    with open(aside, "ab") as handle:
        handle.write(tail + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.ftruncate(fd, cut)
    os.fsync(fd)
    return (
        f"{path}: moved a torn final line ({len(tail)} bytes at byte {cut}, left by a writer "
        f"that stopped mid-append) to {aside}"
    )


def _present(fd: int, size: int, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` are already the id of a record in the file.

    A substring search over the mapped file finds candidates without parsing every line;
    each hit is confirmed by parsing its line (an id may also be quoted inside a payload).
    """
    wanted = list(ids)
    if size == 0 or not wanted:
        return set()
    found: set[str] = set()
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as mem:
        for rid in wanted:
            needle = rid.encode("ascii")
            pos = mem.find(needle)
            while pos >= 0:
                start = mem.rfind(b"\n", 0, pos) + 1
                end = mem.find(b"\n", pos)
                end = size if end < 0 else end
                parsed = parse_line(mem[start:end])
                if isinstance(parsed, dict) and parsed.get("id") == rid:
                    found.add(rid)
                    break
                pos = mem.find(needle, end)
    return found


def _write_all(fd: int, data: bytes, rollback_to: int) -> None:
    """Write every byte or none: on an error the file is truncated back (we hold the lock)."""
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, rollback_to)
        raise


def append_records(
    path: Path, records: list[dict[str, Any]], *, root: Path | None = None
) -> Appended:
    """Append ``records`` to the ledger at ``path`` (created if absent), atomically.

    Each record must verify (ValueError otherwise, nothing written). Records whose id is
    already in the ledger (or repeated in ``records``) are skipped. Runs under an exclusive
    flock; the lines go out in one write, and an interrupted write is rolled back. A torn
    final line left by a killed writer is first moved to ``<ledger>.torn``.

    Returns the records actually written, as an :class:`Appended` list whose ``notices``
    say what else happened (also logged on the ``tools.ledger`` logger). ``root``: the
    repository the ledger belongs to (links on the way refused, see :func:`locked`).
    """
    path = Path(path)
    prepared = _prepare(records)
    if root is not None:
        refuse_links(torn_path(path), root)
    path.parent.mkdir(parents=True, exist_ok=True)
    notices: list[str] = []
    with locked(path, root) as fd:
        size = os.fstat(fd).st_size
        notice = _move_torn_tail(fd, path, size)
        if notice:
            notices.append(notice)
            _log().warning(notice)
            size = os.fstat(fd).st_size
        present = _present(fd, size, (r["id"] for r in prepared.records))
        keep = [i for i, r in enumerate(prepared.records) if r["id"] not in present]
        if keep:
            _write_all(fd, b"".join(prepared.lines[i] for i in keep), size)
    return Appended([prepared.records[i] for i in keep], notices)


def append_to_ledger(root: Path, full: Path, rel: str, records: list[dict[str, Any]]) -> Appended:
    """:func:`append_records` for a command: the ledger ``full`` of the repository at
    ``root``, shown as ``rel``; a write that fails is a :class:`~tools.errors.UsageError`
    naming it (exit 2). The caller says the returned ``notices``."""
    try:
        return append_records(full, records, root=root)
    except OSError as exc:
        raise UsageError(f"cannot append: {exc.strerror}", where=rel) from None
