"""The journals that runs keep under ``.git/tools/`` (worktree registrations, process groups):
each is locked by its live run, so a free lock means the run that wrote it is dead."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path


def of_dead_runs(entries: Iterable[Path], flags: int) -> Iterator[tuple[Path, int]]:
    """Each entry whose run is dead, opened with ``flags`` and locked; its descriptor is
    closed when the caller moves on. An entry that cannot be opened, or whose run still holds
    its lock, is passed over."""
    for entry in entries:
        try:
            fd = os.open(entry, flags | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its run is alive
            yield entry, fd
        finally:
            os.close(fd)
