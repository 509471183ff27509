"""The conditions an arm ran under (SPEC §6): load averages, available memory, free disk,
CPU count and the tool versions the plan's ``versions`` commands print; and the ``quiet``
wait, which starts an arm only when the machine's 1-minute load per CPU is low enough.

Read from the operating system (``os.getloadavg``, ``/proc/meminfo``, ``os.statvfs``); a
value the system does not offer is recorded as null, never guessed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

VERSION_TIMEOUT_S = 60.0
VERSION_CHARS = 1000  # of each versions command's output, kept in the record
_TICK_S = 1.0


def cpus() -> int:
    """CPUs this process may run on (its affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the system has none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def mem_available() -> int | None:
    """Available memory in bytes (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def disk_free(path: Path) -> int | None:
    """Bytes free to an unprivileged user on the file system holding ``path``, or None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def moment() -> dict[str, Any]:
    return {"load": load(), "mem_available": mem_available()}


def start(tree: Path) -> dict[str, Any]:
    """The conditions record at an arm's start (``end`` filled by :func:`finish`)."""
    return {
        "cpus": cpus(),
        "start": moment(),
        "end": None,
        "disk_free": disk_free(tree),
        "versions": [],
    }


def finish(record: dict[str, Any]) -> None:
    record["end"] = moment()


def load_per_cpu() -> float | None:
    now = load()
    return None if now is None else round(now[0] / cpus(), 3)


def wait_quiet(
    max_load: float,
    wait_s: float,
    *,
    tick: Callable[[float, float | None], None],
    cancelled: Callable[[], bool],
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Wait until the 1-minute load per CPU is at most ``max_load``, for up to ``wait_s``
    seconds; ``tick(seconds_left, load_per_cpu)`` is called about once a second while it
    waits. Returns the record: ``quiet`` (true: the window came), ``waited_s``, the last
    ``load_per_cpu`` read, and the limits."""
    started = clock()
    deadline = started + wait_s
    while True:
        per_cpu = load_per_cpu()
        # No load average at all (a system without one) cannot show a quiet machine.
        quiet = per_cpu is not None and per_cpu <= max_load
        now = clock()
        if quiet or now >= deadline or cancelled():
            return {
                "max_load": max_load,
                "wait_s": wait_s,
                "quiet": quiet,
                "waited_s": round(now - started, 3),
                "load_per_cpu": per_cpu,
            }
        tick(deadline - now, per_cpu)
        sleep(min(_TICK_S, max(0.0, deadline - now)))
