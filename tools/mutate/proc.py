"""Running one build or test step: through the shell, in its own process group, with a
timeout that ends the whole group, the output's tail kept, and cancellation (Ctrl-C, SIGTERM,
in this thread or from another) that ends every live group.

A group is ended the way an interrupt at a terminal would end it, so that a build tool can
clean up (make deletes a half-written target when its recipe dies by a signal): SIGTERM to
the whole group, up to the registry's ``kill_grace_s`` (``mutate.kill_grace_s``, default 10
s) for every process of it to exit, then SIGKILL. A timeout ends the step the same way. A
further interrupt during the grace (a second Ctrl-C or SIGTERM) SIGKILLs at once.

A run killed outright (SIGKILL) cannot end its groups, which live on in their own sessions:
while a command runs inside :func:`journal`, every group it starts is written (with its
leader's start time) to a journal under ``<git dir>/tools/mutate/groups/``, locked while the
run lives; :func:`sweep_groups` (every ``tools mutate`` and ``tools attribute`` invocation,
before any restore or worktree sweep) ends the groups of a journal whose run is gone.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import secrets
import signal
import subprocess
import threading
import time
import typing
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tools.git import clean_env
from tools.mutate.runlocks import of_dead_runs

TAIL_BYTES = 4096
# After SIGTERM, how long a step's group gets to exit before SIGKILL (mutate.kill_grace_s).
DEFAULT_KILL_GRACE_S = 10.0
_POLL_S = 0.05


class Cancelled(Exception):
    """The run was interrupted; the step's process group has been ended."""


class Registry:
    """The live process groups of one run, so that an interrupt can end them all.
    ``kill_grace_s``: how long a group has after SIGTERM before SIGKILL."""

    def __init__(self, kill_grace_s: float = DEFAULT_KILL_GRACE_S) -> None:
        self.kill_grace_s = kill_grace_s
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self.cancelled = threading.Event()
        self.hurried = threading.Event()  # a second interrupt: no more grace

    def add(self, pgid: int) -> None:
        _journal_add(pgid)
        with self._lock:
            self._groups.add(pgid)
            if self.cancelled.is_set():
                # Its shell still waits for the line that lets the command start: nothing
                # of the command's to clean up.
                _kill_group(pgid, signal.SIGKILL)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)

    def cancel(self) -> None:
        """Mark the run cancelled: each running step ends its group (SIGTERM, the grace,
        SIGKILL) and raises :class:`Cancelled`; no step starts any more."""
        self.cancelled.set()

    def kill(self) -> None:
        """A further interrupt: SIGKILL every live group now, the grace cut short."""
        with self._lock:
            self.cancelled.set()
            self.hurried.set()
            groups = list(self._groups)
        for pgid in groups:
            _kill_group(pgid, signal.SIGKILL)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled()


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


# -- the journal of process groups, and ending the groups a killed run left ---------------------
_PROC = Path("/proc")
_journal_lock = threading.Lock()
_journal_fd: int | None = None


def _groups_dir(tools_dir: Path) -> Path:
    return tools_dir / "mutate" / "groups"


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, process group, session, start time in clock ticks) of ``pid`` from
    ``/proc/PID/stat``, or None when it is gone (or there is no /proc)."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    fields = raw.rsplit(b")", 1)[-1].split()
    try:
        # After the command name: state, ppid, pgrp, session, ... starttime is the 20th.
        return fields[0].decode(), int(fields[2]), int(fields[3]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _journal_add(pgid: int) -> None:
    """Best effort: a journal that cannot be written costs only the sweep after a SIGKILL."""
    with _journal_lock:
        if _journal_fd is None:
            return
        st = _stat(pgid)
        line = json.dumps({"pgid": pgid, "start": st[3] if st else None}) + "\n"
        with contextlib.suppress(OSError):
            os.write(_journal_fd, line.encode())


@contextlib.contextmanager
def journal(tools_dir: Path) -> Iterator[None]:
    """While inside, every process group a step starts is recorded under ``tools_dir``; the
    journal goes when the block ends (a SIGKILL leaves it, unlocked, for the next sweep)."""
    global _journal_fd
    folder = _groups_dir(tools_dir)
    path: Path | None = None
    fd: int | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        # Locked under a name the sweep skips, then renamed: never seen unlocked while alive.
        tmp = folder / f".{os.getpid()}-{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        path = tmp.with_name(tmp.name[1:-4] + ".jsonl")
        os.rename(tmp, path)
    except OSError:
        if fd is not None:
            os.close(fd)
        fd = None
    with _journal_lock:
        outer, _journal_fd = _journal_fd, fd
    try:
        yield
    finally:
        with _journal_lock:
            _journal_fd = outer
        if fd is not None:
            if path is not None:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            os.close(fd)


def _members(pgid: int, start: int) -> list[int]:
    """The live processes of group ``pgid`` that belong to the group recorded with leader
    start time ``start``: none when the leader's pid now names another process."""
    leader = _stat(pgid)
    if leader is not None and leader[3] != start:
        return []  # the pid was reused: not the group we started
    found = []
    try:
        names = [e.name for e in os.scandir(_PROC) if e.name.isdigit()]
    except OSError:
        return []
    for name in names:
        st = _stat(int(name))
        # A pid is never reused while a group of that id lives, and every member of the
        # recorded group started after its leader.
        if st and st[1] == pgid and st[2] == pgid and st[0] != "Z" and st[3] >= start:
            found.append(int(name))
    return found


def _wait_gone(pgid: int, start: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while True:
        if not _members(pgid, start):
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(_POLL_S)


def end_group(pgid: int, start: int | None, grace: float = DEFAULT_KILL_GRACE_S) -> int:
    """End the recorded group ``pgid`` if it still lives and is the one recorded: SIGTERM,
    then SIGKILL after ``grace`` seconds. The number of its processes that were alive."""
    if start is None:
        return 0  # no start time was recorded (no /proc): it cannot be told from another
    alive = _members(pgid, start)
    if not alive:
        return 0
    _kill_group(pgid, signal.SIGTERM)
    if not _wait_gone(pgid, start, grace):
        _kill_group(pgid, signal.SIGKILL)
        _wait_gone(pgid, start, max(grace, 2.0))
    return len(alive)


def sweep_groups(tools_dir: Path, grace: float = DEFAULT_KILL_GRACE_S) -> list[str]:
    """End the process groups that runs killed outright left behind (SIGTERM, ``grace``
    seconds, SIGKILL); one notice per group."""
    folder = _groups_dir(tools_dir)
    notices: list[str] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return notices
    journals = [e for e in entries if e.name.endswith((".jsonl", ".tmp"))]
    for entry, fd in of_dead_runs(journals, os.O_RDONLY | os.O_NOFOLLOW):
        raw = os.pread(fd, 1 << 20, 0)
        for line in raw.splitlines():
            try:
                item = json.loads(line)
                pgid, start = int(item["pgid"]), item["start"]
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by the kill
            n = end_group(pgid, None if start is None else int(start), grace)
            if n:
                notices.append(
                    f"ended process group {pgid} ({n} process(es)) left running by an "
                    "earlier run that was killed"
                )
        with contextlib.suppress(OSError):
            os.unlink(entry)
    return notices


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


class _Tail:
    """The last ``TAIL_BYTES`` of a pipe, read by a thread of its own until the pipe closes."""

    def __init__(self, pipe: io.BufferedReader) -> None:
        self.pipe = pipe
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        for chunk in iter(lambda: self.pipe.read1(65536), b""):
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size - len(self._chunks[0]) >= TAIL_BYTES:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-TAIL_BYTES:]
        return data.decode("utf-8", "replace")


# The step's shell reads one line before it runs the command, and the line is sent once the
# step's process group is in the journal: a tools killed in between leaves no group that the
# next sweep cannot find (the shell meets the end of its input and exits instead).
_AFTER_JOURNAL = "read -r _ || exit 125; exec </dev/null; "


def _release(proc: subprocess.Popen[bytes]) -> None:
    """Let the step's shell run its command (it waits for one line on its stdin)."""
    stdin = proc.stdin
    if stdin is None:
        return
    try:
        stdin.write(b"\n")
        stdin.flush()
    except OSError:
        pass  # the shell is gone already (a cancelled run killed its group)
    finally:
        with contextlib.suppress(OSError):
            stdin.close()


def run_step(
    command: str,
    cwd: Path,
    *,
    timeout: float | None,
    registry: Registry,
) -> StepResult:
    """Run ``command`` with ``/bin/sh -c`` from ``cwd``, stdin from /dev/null.

    The command gets its own session (so its process group can be signalled whole, and a
    terminal's Ctrl-C reaches tools, which decides), and starts only once that group is
    journaled. Processes it leaves behind in its group are killed when it exits. On timeout,
    on an interrupt in this thread and on a cancel from another: SIGTERM to the group, the
    registry's grace for it to exit, then SIGKILL (see the module's docstring).
    """
    registry.check()
    started = time.monotonic()
    proc = subprocess.Popen(
        ["/bin/sh", "-c", _AFTER_JOURNAL + command],
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=clean_env(),
    )
    pgid = proc.pid
    leader = _stat(pgid)
    start = leader[3] if leader is not None else None
    # A pipe opened with the default buffering is a BufferedReader, which has read1.
    tail = _Tail(typing.cast(io.BufferedReader, proc.stdout))
    stopped = False
    try:
        registry.add(pgid)
        _release(proc)
        deadline = None if timeout is None else started + timeout
        timed_out = _wait(proc, deadline, registry)
        if timed_out:
            stopped = True
            _stop(proc, pgid, start, registry)
    except BaseException:
        # Ctrl-C or SIGTERM in this thread, or a cancel from another: no further step runs,
        # and this one's group gets its grace to clean up.
        registry.cancel()
        if not stopped:
            _stop(proc, pgid, start, registry)
        raise
    finally:
        # Whatever the step started in its group and left running goes with it.
        _kill_group(pgid, signal.SIGKILL)
        registry.discard(pgid)
        tail.thread.join(2.0)
        # A process that left the group may still hold the pipe: then the reader thread
        # keeps it (closing under a blocked read would wait on the reader's lock).
        if not tail.thread.is_alive():
            tail.pipe.close()
    rc = proc.returncode
    if rc is not None and rc < 0:
        rc = 128 - rc
    return StepResult(
        rc=None if timed_out else rc,
        timed_out=timed_out,
        tail=tail.text(),
        seconds=round(time.monotonic() - started, 3),
        signal=None if timed_out else signal_of(rc),
    )


def _wait(proc: subprocess.Popen[bytes], deadline: float | None, registry: Registry) -> bool:
    """Wait for the step to end; True if it ran past ``deadline`` (still running). Raises
    :class:`Cancelled` once the run is cancelled, the step still running or not (a step that
    a cancel's SIGKILL ended has no status of its own to report)."""
    while True:
        try:
            proc.wait(_POLL_S)
            break
        except subprocess.TimeoutExpired:
            pass
        registry.check()
        if deadline is not None and time.monotonic() >= deadline:
            return True
    registry.check()
    return False


def _stop(proc: subprocess.Popen[bytes], pgid: int, start: int | None, registry: Registry) -> None:
    """End the step's group: SIGTERM, up to ``registry.kill_grace_s`` for every process of it
    to exit (the step's own cleanup: make deletes a half-written target), then SIGKILL. A
    further interrupt meanwhile, in this thread or through :meth:`Registry.kill`, ends the
    wait: SIGKILL at once (and, raised here, the interrupt goes on up)."""
    if not registry.hurried.is_set():
        _kill_group(pgid, signal.SIGTERM)
        try:
            _wait_group(proc, pgid, start, registry.kill_grace_s, registry.hurried)
        except BaseException:
            registry.kill()
            _kill_group(pgid, signal.SIGKILL)
            proc.wait()
            raise
    _kill_group(pgid, signal.SIGKILL)
    proc.wait()


def _wait_group(
    proc: subprocess.Popen[bytes],
    pgid: int,
    start: int | None,
    seconds: float,
    hurried: threading.Event,
) -> bool:
    """Wait up to ``seconds`` for every process of the step's group to exit (its leader
    reaped on the way); False when some remain, or when ``hurried`` is set meanwhile."""
    end = time.monotonic() + seconds
    while True:
        proc.poll()  # reaped, the leader no longer counts
        if not _group_alive(pgid, start):
            return True
        if time.monotonic() >= end or hurried.wait(min(_POLL_S, max(0.0, end - time.monotonic()))):
            return not _group_alive(pgid, start)


def _group_alive(pgid: int, start: int | None) -> bool:
    """Whether a process of the step's group lives (a zombie does not count)."""
    if start is not None:
        return bool(_members(pgid, start))
    try:  # no /proc: a signal 0 to the group tells
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
