"""Every read of a file of a judged tree or working tree, bounded (SPEC §10).

In CI the tree comes from a pull request, and so do its symbolic links: a committed link to
``/dev/zero`` or to a file of the CI machine must not make a gate read for ever or quote what
it read. A file is read here only if it is a regular file (opened without blocking, then
checked on the open descriptor, so a FIFO or a device is refused before a byte is read) and,
given the repository's root, only if it lies inside the repository once every link is
resolved. A file read whole is read up to ``limits.max_file_bytes``; a streamed one (the
ledger, the index) up to ``limits.max_line_bytes`` per line. Past either bound, or on any of
the refusals above, the read is one :class:`UsageError` (exit 2) naming the file.

The limits are the config's (``limits:``); :func:`configure` sets them once the config that
judges is known. The config itself, read before that, is read under the defaults.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from tools.errors import UsageError

MIB = 1024 * 1024
_CHUNK = 1 * MIB  # a streamed line is read in pieces of this size, never whole at once


class Limits(NamedTuple):
    """How much of one file tools reads: a file read whole, and one line of a streamed one."""

    max_file_bytes: int = 64 * MIB
    max_line_bytes: int = 256 * MIB


DEFAULT_LIMITS = Limits()
_current = DEFAULT_LIMITS


def configure(limits: Limits) -> None:
    """Set the limits of every later read (the judging config's ``limits:``)."""
    global _current
    _current = limits


def current() -> Limits:
    """The limits in force."""
    return _current


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def outside(path: Path, root: Path) -> bool:
    """Whether ``path``, every link on its way resolved, lies outside the repository at
    ``root`` (a path that does not exist yet is judged by what it would resolve to)."""
    real = os.path.realpath(path)
    top = os.path.realpath(root)
    return real != top and not real.startswith(top.rstrip(os.sep) + os.sep)


def _open(path: Path, where: str, root: Path | None) -> tuple[int, os.stat_result] | None:
    """A read-only descriptor of the regular file at ``path`` and its stat, or None when
    there is no file; every refusal is a UsageError naming ``where``."""
    if root is not None and os.path.lexists(path) and outside(path, root):
        raise UsageError(
            "is a symbolic link (or lies below one) that leaves the repository: not read",
            where=where,
        )
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None  # a folder on the way is a file: there is no such path
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror}", where=where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(
                f"is {_kind(st.st_mode)}, expected a regular file: not read", where=where
            )
        # Regular files never block; clear the flag so reads behave as plain reads.
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _too_big(where: str, limit: int) -> UsageError:
    return UsageError(
        f"is larger than limits.max_file_bytes ({limit:,} bytes): not read", where=where
    )


def read_optional(
    path: Path, where: str, *, root: Path | None = None, limit: int | None = None
) -> bytes | None:
    """The bytes of the regular file at ``path`` (None: no such file), at most ``limit``
    (default ``limits.max_file_bytes``); ``root``: the repository it must lie inside."""
    opened = _open(path, where, root)
    if opened is None:
        return None
    fd, st = opened
    cap = current().max_file_bytes if limit is None else limit
    with os.fdopen(fd, "rb") as handle:
        if st.st_size > cap:
            raise _too_big(where, cap)
        try:
            # One read of the size stat gave, plus one byte to see a file that grew since.
            want = st.st_size + 1
            data = handle.read(want)
            if len(data) == want:
                data += handle.read(cap + 1 - len(data))
        except OSError as exc:
            raise UsageError(f"cannot read: {exc.strerror}", where=where) from None
    if len(data) > cap:
        raise _too_big(where, cap)
    return data


def read_file(
    path: Path, where: str, *, root: Path | None = None, limit: int | None = None
) -> bytes:
    """:func:`read_optional`, where a missing file is a UsageError naming ``where``."""
    data = read_optional(path, where, root=root, limit=limit)
    if data is None:
        raise UsageError("no such file", where=where)
    return data


def open_stream(path: Path, where: str, *, root: Path | None = None) -> BinaryIO | None:
    """The regular file at ``path`` opened for :func:`lines` (None: no such file), with the
    refusals of :func:`read_optional`; the caller closes it."""
    opened = _open(path, where, root)
    if opened is None:
        return None
    return os.fdopen(opened[0], "rb")


def lines(handle: BinaryIO, where: str, *, limit: int | None = None) -> Iterator[bytes]:
    """The lines of ``handle`` (each with its ``\\n``, the last one perhaps without), none
    longer than ``limit`` (default ``limits.max_line_bytes``): a longer one is a UsageError
    naming ``where`` and its line, raised before it is held whole."""
    cap = current().max_line_bytes if limit is None else limit
    number = 0
    while True:
        line = handle.readline(min(cap, _CHUNK) + 1)
        if not line:
            return
        number += 1
        if not line.endswith(b"\n") and len(line) > min(cap, _CHUNK):
            parts = [line]
            size = len(line)
            while not parts[-1].endswith(b"\n") and size <= cap:
                part = handle.readline(min(_CHUNK, cap + 1 - size))
                if not part:
                    break
                parts.append(part)
                size += len(part)
            if size > cap:
                raise UsageError(
                    f"line {number} is longer than limits.max_line_bytes ({cap:,} bytes): not read",
                    where=where,
                )
            line = b"".join(parts)
        yield line
