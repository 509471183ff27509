"""The one way git runs: one argv prefix (:func:`git_argv`), one environment
(:func:`git_env`, an allow-list: docs/git-environment.md says what passes and why), the
processes that run to completion (:func:`run_git`) and the long-lived ``cat-file`` batches
(:class:`CatFile`). Plain subprocesses: a runner is thread-safe, as the mutation runner needs.
"""

from __future__ import annotations

import os
import subprocess
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from tools.errors import UsageError
from tools.git.text import decode, encode

ARGV_BUDGET = 64 * 1024


def argv_chunks(paths: Sequence[str]) -> Iterator[list[str]]:
    """``paths`` in groups whose total length stays well under the OS's argv limit."""
    chunk: list[str] = []
    size = 0
    for path in paths:
        if chunk and size + len(path) > ARGV_BUDGET:
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += len(path) + 1
    if chunk:
        yield chunk


class GitError(UsageError):
    """A git command failed in a way the gate cannot judge around."""


class MergeTreeUnsupported(GitError):
    """This git cannot write a merge tree (``merge-tree --write-tree`` came in git 2.38)."""


# -- the one way git runs ----------------------------------------------------------------------
# Every git process of the package is built by git_argv and git_env (docs/git-environment.md).
# Plain subprocesses: a runner is thread-safe, as the mutation runner needs.
_ARGV_PREFIX = ("git", "-c", "core.hooksPath=/dev/null")


# What passes from the caller's environment to every git process: where git and its helpers
# are, and which configuration files the user's own git reads.
GIT_PASSED = (
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
)


# What also passes to git reading the repository being judged (``repository=True``): the index
# and object store git itself works on when it runs a hook (``commit -a``'s temporary index, a
# ``pre-receive``'s quarantine), made absolute so that they mean the same from the top.
GIT_REPOSITORY_PASSED = (
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
)


# Set whatever the caller's are: messages in English (some are read), no optional index
# refresh as a side effect of a read, never a prompt.
GIT_FORCED = {"LC_ALL": "C", "LANGUAGE": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


def git_argv(*args: str, hooks_off: bool = True) -> list[str]:
    """The command line of ``git args…``: hooks off (no git this package runs makes a commit
    of the user's; a checkout in a scratch worktree must not run theirs). Only the questions
    no hook could answer to (where the hooks live, git's version) ask with
    ``hooks_off=False``."""
    return [*_ARGV_PREFIX, *args] if hooks_off else ["git", *args]


def _absolute(name: str, value: str) -> str:
    if name != "GIT_ALTERNATE_OBJECT_DIRECTORIES":
        return os.path.abspath(value)
    # A list; an entry in double quotes is C-quoted by git's rules and left as it is.
    parts = value.split(os.pathsep)
    return os.pathsep.join(p if p.startswith('"') or not p else os.path.abspath(p) for p in parts)


def git_env(*, repository: bool = False, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git process: :data:`GIT_PASSED` from the caller's, with
    :data:`GIT_REPOSITORY_PASSED` for git reading the judged repository, then
    :data:`GIT_FORCED`, then ``extra`` (what the caller sets on purpose)."""
    source = os.environ
    env = {name: source[name] for name in GIT_PASSED if name in source}
    if repository:
        for name in GIT_REPOSITORY_PASSED:
            value = source.get(name)
            if value:
                env[name] = _absolute(name, value)
    env.update(GIT_FORCED)
    if extra:
        env.update(extra)
    return env


def run_git(
    cwd: Path,
    *args: str,
    input: bytes | None = None,
    ok: Sequence[int] | None = (0,),
    repository: bool = False,
    env: Mapping[str, str] | None = None,
    hooks_off: bool = True,
) -> tuple[int, bytes, bytes]:
    """Run ``git args…`` in ``cwd`` to completion; returns (status, stdout, stderr). A status
    outside ``ok`` (None: any) raises :class:`GitError`. ``repository``: git reads the
    repository being judged (see :func:`git_env`); ``env``: variables set on purpose;
    ``hooks_off``: see :func:`git_argv`."""
    try:
        proc = subprocess.run(
            git_argv(*args, hooks_off=hooks_off),
            cwd=cwd,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            env=git_env(repository=repository, extra=env),
            check=False,
        )
    except OSError as exc:  # no git on PATH, or no such folder
        raise GitError(f"cannot run git in {cwd}: {exc.strerror or exc}") from None
    if ok is not None and proc.returncode not in ok:
        msg = decode(proc.stderr).strip()
        raise GitError(f"git {' '.join(args[:3])} failed ({proc.returncode}): {msg}")
    return proc.returncode, proc.stdout, proc.stderr


def git_popen(cwd: Path, *args: str, repository: bool = False) -> subprocess.Popen[bytes]:
    """A long-lived ``git args…`` in ``cwd`` that answers on its stdout what it is sent on its
    stdin (the ``cat-file`` batches); stderr is dropped."""
    return subprocess.Popen(
        git_argv(*args),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=git_env(repository=repository),
        bufsize=1 << 18,  # fewer, larger reads: a tree's blobs run to many megabytes
    )


def batch_pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    if proc.stdin is None or proc.stdout is None:
        raise GitError("git cat-file started without its pipes")
    return proc.stdin, proc.stdout


# (object id, type, size, contents: b"" from ``--batch-check``)
Answer = tuple[bytes, bytes, int, bytes]


def read_answer(stdout: IO[bytes], spec: str, *, data: bool) -> Answer | None:
    """One answer of a ``cat-file`` batch; None for an object it reports missing."""
    header = stdout.readline()
    if not header:
        raise GitError(f"git cat-file --batch ended early (at {spec})")
    parts = header.split()
    # "<sha> <type> <size>", or "<request> missing" / "<request> ambiguous"
    if len(parts) < 3 or not parts[-1].isdigit():
        return None
    size = int(parts[-1])
    body = b""
    if data:
        body = stdout.read(size)
        stdout.read(1)  # the newline after the contents
    return parts[0], parts[1], size, body


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a batch: its pipes closed, it exits (at the end of its input, or on its next write
    to a closed pipe). The wait blocks: one with a timeout polls, sleeping 1 ms, then 2, 4 ms
    between looks (stopping a staged preflight's two batches took 2.3-4.6 ms that way, and
    1.0-2.0 ms blocking, seven runs each)."""
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            try:
                stream.close()
            except OSError:
                pass
    proc.wait()


class CatFile:
    """One persistent ``git cat-file --batch`` (``check``: ``--batch-check``), started at the
    first request and ended with its owner: one request a line, answered in order."""

    def __init__(self, cwd: Path, *, check: bool):
        self._cwd = cwd
        self._check = check
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the process now, for a run that will ask: git starts while the run works."""
        with self._lock:
            self._started()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            mode = "--batch-check" if self._check else "--batch"
            self._proc = git_popen(self._cwd, "cat-file", mode, repository=True)
            weakref.finalize(self, _stop, self._proc)
        return self._proc

    def ask(self, spec: str) -> Answer | None:
        """(object id, type, size, contents) of the object ``spec`` names, or None."""
        with self._lock:
            stdin, stdout = batch_pipes(self._started())
            try:
                stdin.write(encode(spec) + b"\n")
                stdin.flush()
            except (BrokenPipeError, OSError):
                raise GitError(f"git cat-file --batch ended early (at {spec})") from None
            return read_answer(stdout, spec, data=not self._check)


def clean_env() -> dict[str, str]:
    """The environment of a command that is not git (a mutation step's test command): the
    caller's, which that command may need whole, without the variables that would point the
    git it runs at another repository than its working directory's (set inside a hook)."""
    return {k: v for k, v in os.environ.items() if k not in _FOREIGN_GIT_ENV}


# Variables that would point git at another repository than the one named by ``cwd``.
_FOREIGN_GIT_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
)
