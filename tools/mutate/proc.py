"""Running one build or test step: through the shell, in its own process group, with a
timeout that kills the whole group, the output's tail kept, and cancellation from another
thread (Ctrl-C, SIGTERM) that kills every live group at once."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.git import clean_env

TAIL_BYTES = 4096
# After SIGTERM, how long a timed-out group gets to exit before SIGKILL.
TERM_GRACE_S = 2.0
_POLL_S = 0.05


class Cancelled(Exception):
    """The run was interrupted; the step's process group has been killed."""


class Registry:
    """The live process groups of one run, so that an interrupt can end them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self.cancelled = threading.Event()

    def add(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)
            if self.cancelled.is_set():
                _kill_group(pgid, signal.SIGKILL)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def cancel(self) -> None:
        """Mark the run cancelled and kill every live group now."""
        with self._lock:
            self.cancelled.set()
            groups = list(self._groups)
        for pgid in groups:
            _kill_group(pgid, signal.SIGKILL)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


@dataclass
class StepResult:
    """``rc``: the exit status as a shell reports it (a signal ``n`` is ``128 + n``); None
    when the step timed out. ``tail``: the last bytes of stdout and stderr together.
    ``signal``: the name of the signal that ended it (``SIGKILL``), read from the status, or
    None; never a signal ``tools`` sent (a timeout is ``timed_out``, an interrupt raises)."""

    rc: int | None
    timed_out: bool
    tail: str
    seconds: float
    signal: str | None = None


def signal_of(rc: int | None) -> str | None:
    """The signal a shell status ``128 + n`` reports (``SIGSEGV`` for 139), or None. A
    status above 128 that names no signal (200) is an exit code."""
    if rc is None or rc <= 128:
        return None
    try:
        return signal.Signals(rc - 128).name
    except ValueError:
        return None


def _tail_text(chunks: deque[bytes]) -> str:
    data = b"".join(chunks)[-TAIL_BYTES:]
    return data.decode("utf-8", "replace")


def run_step(
    command: str,
    cwd: Path,
    *,
    timeout: float | None,
    registry: Registry,
) -> StepResult:
    """Run ``command`` with ``/bin/sh -c`` from ``cwd``, stdin from /dev/null.

    The command gets its own session (so its process group can be killed whole, and a
    terminal's Ctrl-C reaches tools, which decides). Processes it leaves behind in its group
    are killed when it exits. On timeout: SIGTERM to the group, SIGKILL after a grace.
    """
    registry.check()
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=clean_env(),
    )
    pgid = proc.pid
    registry.add(pgid)
    chunks: deque[bytes] = deque()
    size = [0]

    def pump() -> None:
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            chunks.append(chunk)
            size[0] += len(chunk)
            while size[0] - len(chunks[0]) >= TAIL_BYTES:
                size[0] -= len(chunks.popleft())

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        deadline = None if timeout is None else started + timeout
        while True:
            try:
                proc.wait(_POLL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            if registry.cancelled.is_set():
                _kill_group(pgid, signal.SIGKILL)
                proc.wait()
                raise Cancelled()
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                _kill_group(pgid, signal.SIGTERM)
                try:
                    proc.wait(TERM_GRACE_S)
                except subprocess.TimeoutExpired:
                    _kill_group(pgid, signal.SIGKILL)
                    proc.wait()
                break
        if registry.cancelled.is_set():
            # Ended by the interrupt's SIGKILL, not by itself: no status to report.
            raise Cancelled()
    finally:
        # Whatever the step started in its group and left running goes with it.
        _kill_group(pgid, signal.SIGKILL)
        registry.discard(pgid)
        reader.join(2.0)
        # A process that left the group may still hold the pipe: then the reader thread
        # keeps it (closing under a blocked read would wait on the reader's lock).
        if proc.stdout is not None and not reader.is_alive():
            proc.stdout.close()
    rc = proc.returncode
    if rc is not None and rc < 0:
        rc = 128 - rc
    return StepResult(
        rc=None if timed_out else rc,
        timed_out=timed_out,
        tail=_tail_text(chunks),
        seconds=round(time.monotonic() - started, 3),
        signal=None if timed_out else signal_of(rc),
    )


class Interrupted(BaseException):
    """SIGTERM or SIGHUP arrived (SIGINT arrives as KeyboardInterrupt)."""

    def __init__(self, signum: int):
        super().__init__(f"signal {signum}")
        self.signum = signum


@contextlib.contextmanager
def interrupts() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise :class:`Interrupted` in the main thread, so that
    ``finally`` blocks (restores, worktree removal) run for them as they do for Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def exit_status(exc: BaseException) -> int:
    """The shell's status for a run ended by ``exc``: 128 + the signal."""
    return 128 + (exc.signum if isinstance(exc, Interrupted) else signal.SIGINT)
