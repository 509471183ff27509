"""Detached git worktrees for arms and bisections, under one private temp dir per run.

:class:`Worktrees` removes every worktree it made when it closes (callers close it in a
``finally``, so an exception, Ctrl-C or SIGTERM all pass through it) and prunes git's
bookkeeping. A process killed outright (SIGKILL) cannot clean up: each run keeps a registry
entry under ``<git dir>/tools/mutate/worktrees/`` locked while it lives, and :func:`sweep`
(run by every ``tools mutate`` and ``tools attribute`` invocation) removes what a dead run
left behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from tools.git import GitError, run_git
from tools.mutate.runlocks import of_dead_runs

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def _registry(tools_dir: Path) -> Path:
    return tools_dir / "mutate" / "worktrees"


class Worktrees:
    """Worktrees of one repository, made under one temp dir and all removed by :meth:`close`."""

    def __init__(self, repo_root: Path, tools_dir: Path):
        self.root = repo_root
        self.tmp = Path(tempfile.mkdtemp(prefix="tools-mutate-"))
        self._lock = threading.Lock()
        self._live: list[Path] = []
        self._n = 0
        reg = _registry(tools_dir)
        reg.mkdir(parents=True, exist_ok=True)
        self.registry = reg
        self._entry = reg / f"{self.tmp.name}.json"
        # Lock first, then write: a sweeper that sees the entry unlocked sees it empty too.
        self._fd = os.open(self._entry, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.write(self._fd, json.dumps({"tmp": str(self.tmp), "pid": os.getpid()}).encode())
        self.closed = False

    def add(self, label: str, rev: str) -> Path:
        """A new worktree detached at ``rev``, its directory named after ``label``."""
        with self._lock:
            if self.closed:
                raise RuntimeError("worktrees already closed")
            self._n += 1
            path = self.tmp / f"{self._n:03d}-{_SAFE.sub('_', label)[:60]}"
            self._live.append(path)
        # `git worktree add` reads every other worktree's records, and one being made
        # concurrently is half written: registration (fast, no files) goes one at a time,
        # across threads and tools processes alike; the checkout then runs in parallel,
        # with git writing the files on every core.
        with _registration(self.registry):
            run_git(
                self.root,
                "worktree",
                "add",
                "--no-checkout",
                "--detach",
                "--quiet",
                str(path),
                rev,
            )
        run_git(path, "-c", "checkout.workers=0", "reset", "--hard", "--quiet")
        return path

    def remove(self, path: Path) -> None:
        """Remove one worktree's files; git's record of it goes at :meth:`close` (``git
        worktree remove`` deletes git's worktrees folder when it empties, which races with
        a parallel ``worktree add``). Never raises."""
        shutil.rmtree(path, ignore_errors=True)
        with self._lock:
            if path in self._live:
                self._live.remove(path)

    def close(self) -> None:
        """Remove every worktree still there, the temp dir, git's stale records and the
        registry entry. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            live = list(self._live)
        for path in live:
            self.remove(path)
        shutil.rmtree(self.tmp, ignore_errors=True)
        # Pruning may delete git's emptied worktrees folder: not while another registers.
        with contextlib.suppress(GitError, OSError), _registration(self.registry):
            run_git(self.root, "worktree", "prune")
        with contextlib.suppress(OSError):
            os.unlink(self._entry)
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def __enter__(self) -> Worktrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Pool:
    """Worktrees of one run reused from arm to arm: an arm takes a free one (or a new one,
    up to one per parallel slot), and gives it back reset to ``base``. Checking out a large
    tree is the cost of an arm on disk; resetting one costs only the files an arm changed.

    A worktree is reused only when, after ``git reset --hard`` and ``git clean -ffdx``,
    ``git status`` shows nothing at all (ignored files included): the next arm starts from
    exactly ``base``. Anything else (an error, a timeout, a status that is not empty) removes
    it instead, and so does a worktree that no arm still to come would take (the last arms'
    are not reset only to be removed)."""

    def __init__(self, worktrees: Worktrees, base: str):
        self.worktrees = worktrees
        self.base = base
        self._free: list[Path] = []
        self._lock = threading.Lock()
        self._wanted = 0  # takes still to come, as announced by :meth:`expect`
        self._readying = 0  # worktrees being reset for one of them

    def expect(self, takes: int) -> None:
        """Announce ``takes`` more calls of :meth:`take`."""
        with self._lock:
            self._wanted += takes

    def take(self, label: str) -> tuple[Path, bool]:
        """A worktree at ``base`` with nothing else in it, and whether it was reused."""
        with self._lock:
            self._wanted = max(0, self._wanted - 1)
            if self._free:
                return self._free.pop(), True
        return self.worktrees.add(label, self.base), False

    def give_back(self, path: Path, *, reusable: bool) -> None:
        with self._lock:
            needed = reusable and self._wanted > len(self._free) + self._readying
            if needed:
                self._readying += 1
        if needed:
            ready = self._reset(path)
            with self._lock:
                self._readying -= 1
                if ready:
                    self._free.append(path)
            if ready:
                return
        self.worktrees.remove(path)

    def _reset(self, path: Path) -> bool:
        try:
            run_git(path, "reset", "--hard", "--quiet", self.base)
            run_git(path, "clean", "-ffdxq")
            _, out, _ = run_git(path, "status", "--porcelain", "--ignored", "--untracked-files=all")
        except (GitError, OSError):
            return False
        return not out.strip()


@contextlib.contextmanager
def _registration(reg: Path) -> Iterator[None]:
    """An exclusive lock for registering a worktree with git (one flock per open, so threads
    of one process exclude each other as processes do)."""
    fd = os.open(reg / "add.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def sweep(repo_root: Path, tools_dir: Path, *, min_age_s: float = 60.0) -> list[str]:
    """Remove the worktrees of runs that died without cleaning up; one notice per run."""
    reg = _registry(tools_dir)
    notices: list[str] = []
    try:
        entries = sorted(reg.glob("*.json"))
    except OSError:
        return notices
    for entry, fd in of_dead_runs(entries, os.O_RDWR):
        raw = os.pread(fd, 1 << 16, 0)
        try:
            tmp = Path(json.loads(raw)["tmp"])
        except (ValueError, KeyError, TypeError):
            # Written by a run killed between creating and filling its entry.
            if time.time() - os.fstat(fd).st_mtime > min_age_s:
                os.unlink(entry)
            continue
        gone = 0
        # Only ever a directory this module made.
        if tmp.name.startswith("tools-mutate-") and tmp.is_dir():
            for path in sorted(tmp.iterdir()):
                shutil.rmtree(path, ignore_errors=True)
                gone += 1
            shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(GitError, OSError), _registration(reg):
            run_git(repo_root, "worktree", "prune")
        os.unlink(entry)
        notices.append(
            f"removed {gone} worktree(s) left under {tmp} by an earlier run that was killed"
        )
    return notices
