"""The one git access layer every gate uses.

Everything is read as bytes through gitpython's command runner (plumbing where speed needs
it): refs, merge bases, a whole range in one ``git log`` pass (messages, parents and changed
paths with rename detection, ``-z``), blobs at a revision through one persistent
``cat-file --batch``, and the staged tree. Paths are repo-relative ``str`` decoded with
``surrogateescape`` so that non-UTF-8 names survive a round trip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git as gitpython

from tools.errors import UsageError

_ENC = "utf-8"
_ERRORS = "surrogateescape"
# Options that make ``git log`` output independent of the user's git config.
_LOG_FIXED = ["--no-color", "--no-ext-diff", "--no-show-signature", "--no-notes"]


def decode(raw: bytes) -> str:
    """Bytes from git to ``str`` without losing a byte (non-UTF-8 survives)."""
    return raw.decode(_ENC, _ERRORS)


def encode(text: str) -> bytes:
    return text.encode(_ENC, _ERRORS)


@dataclass(frozen=True)
class Change:
    """One changed path of a commit or of the staged change.

    ``status`` is git's letter (A, M, D, R, C, T, U); ``score`` the similarity for R/C.
    """

    status: str
    path: str
    old_path: str | None = None
    score: int | None = None

    @property
    def is_pure_rename(self) -> bool:
        return self.status == "R" and self.score == 100


@dataclass
class Commit:
    sha: str
    parents: list[str]
    message: bytes
    committer_time: int = 0
    changes: list[Change] = field(default_factory=list)

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def is_root(self) -> bool:
        return not self.parents

    @property
    def text(self) -> str:
        return decode(self.message)


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    sha: str
    path: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"

    @property
    def is_submodule(self) -> bool:
        return self.mode == "160000"


def _parse_changes(tokens: Sequence[bytes], start: int) -> tuple[list[Change], int]:
    """Parse ``--name-status -z`` records from ``tokens[start:]`` up to the next commit."""
    changes: list[Change] = []
    i = start
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        if tok.startswith(b"\x01"):
            break
        tok = tok.lstrip(b"\n")
        if not tok:
            i += 1
            continue
        letter = chr(tok[0])
        score = int(tok[1:]) if len(tok) > 1 and tok[1:].isdigit() else None
        if letter in "RC":
            old, new = decode(tokens[i + 1]), decode(tokens[i + 2])
            changes.append(Change(letter, new, old, score))
            i += 3
        else:
            changes.append(Change(letter, decode(tokens[i + 1])))
            i += 2
    return changes, i


def parse_log(raw: bytes) -> list[Commit]:
    """Parse the output of ``git log -z --format=%x01%H%x00%P%x00%ct%x00%B%x00 --name-status``.

    A message cannot hold a NUL byte, so NUL-splitting is unambiguous; each commit starts
    with a token beginning with ``\\x01`` that no status letter can begin with.
    """
    tokens = raw.split(b"\0")
    commits: list[Commit] = []
    i = 0
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        if not tok.startswith(b"\x01"):
            i += 1
            continue
        sha = tok[1:].decode("ascii")
        parents = tokens[i + 1].decode("ascii").split()
        ctime = int(tokens[i + 2] or b"0")
        message = tokens[i + 3]
        changes, i = _parse_changes(tokens, i + 4)
        commits.append(Commit(sha, parents, message, ctime, changes))
    return commits


def parse_name_status(raw: bytes) -> list[Change]:
    """Parse ``git diff -z --name-status`` output."""
    changes, _ = _parse_changes(raw.split(b"\0"), 0)
    return changes


class Git:
    """A repository, opened once per invocation."""

    def __init__(self, path: Path | str | None = None):
        start = Path(path) if path is not None else Path.cwd()
        if not start.exists():
            raise UsageError(f"not a git repository: {start} does not exist")
        try:
            self.repo = gitpython.Repo(start, search_parent_directories=path is None)
        except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
            raise UsageError(f"not a git repository: {start}") from None
        if self.repo.bare:
            raise UsageError(f"a bare repository has no working tree to judge: {start}")
        self.root = Path(self.repo.working_tree_dir or start).resolve()
        if path is not None and Path(path).resolve() != self.root:
            raise UsageError(f"not the top of a git repository: {start} (its top is {self.root})")
        self._resolved: dict[str, str | None] = {}
        self._empty_tree: str | None = None
        self._git_dir: Path | None = None

    # -- where git keeps its state ----------------------------------------------------------
    @property
    def git_dir(self) -> Path:
        """This working tree's git directory, absolute (in a linked worktree:
        ``.git/worktrees/<name>``, where its HEAD, index and MERGE_HEAD live)."""
        if self._git_dir is None:
            self._git_dir = Path(self.repo.git_dir).resolve()
        return self._git_dir

    def tools_dir(self) -> Path:
        """Where tools keeps caches and recovery records: ``<git dir>/tools``, never the
        working tree."""
        return self.git_dir / "tools"

    def in_merge(self) -> bool:
        """Whether a merge is in progress (``MERGE_HEAD`` exists in this worktree's git dir)."""
        return (self.git_dir / "MERGE_HEAD").is_file()

    # -- running git ------------------------------------------------------------------------
    def run(self, *args: str, ok: Sequence[int] = (0,)) -> tuple[int, bytes]:
        """Run ``git args…`` in the repository; bytes out. A status outside ``ok`` raises."""
        status, out, err = self.repo.git.execute(
            ["git", *args],
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
        if status not in ok:
            msg = decode(err if isinstance(err, bytes) else encode(str(err))).strip()
            raise GitError(f"git {' '.join(args[:3])} failed ({status}): {msg}")
        return status, out

    def out(self, *args: str) -> bytes:
        return self.run(*args)[1]

    # -- refs ---------------------------------------------------------------------------------
    def resolve(self, ref: str) -> str | None:
        """The commit sha ``ref`` names, or None."""
        if ref not in self._resolved:
            if ref.startswith("-"):
                self._resolved[ref] = None
            else:
                status, out = self.run(
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    "--end-of-options",
                    f"{ref}^{{commit}}",
                    ok=(0, 1, 128),
                )
                self._resolved[ref] = out.decode().strip() if status == 0 else None
        return self._resolved[ref]

    def head(self) -> str | None:
        return self.resolve("HEAD")

    def merge_base(self, a: str, b: str) -> str | None:
        status, out = self.run("merge-base", a, b, ok=(0, 1, 128))
        return out.decode().strip() if status == 0 and out.strip() else None

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository").strip() == b"true"

    def is_ancestor(self, a: str, b: str) -> bool:
        status, _ = self.run("merge-base", "--is-ancestor", a, b, ok=(0, 1, 128))
        return status == 0

    def empty_tree(self) -> str:
        if self._empty_tree is None:
            self._empty_tree = self.out("hash-object", "-t", "tree", os.devnull).decode().strip()
        return self._empty_tree

    def committer_time(self, rev: str) -> int:
        return int(self.out("show", "-s", "--format=%ct", rev, "--").strip() or 0)

    # -- history ------------------------------------------------------------------------------
    def log(
        self, revs: Sequence[str], *, paths: bool = True, max_count: int | None = None
    ) -> list[Commit]:
        """Read commits in one ``git log`` pass (newest first, as git lists them)."""
        args = ["log", *_LOG_FIXED, "-z", "--format=%x01%H%x00%P%x00%ct%x00%B%x00"]
        if paths:
            args += ["--name-status", "-M"]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        args += [*revs, "--"]
        return parse_log(self.out(*args))

    def diff_tree(self, old: str, new: str) -> list[Change]:
        return parse_name_status(
            self.out(
                "diff-tree", "-r", "-z", "--name-status", "-M", "--no-ext-diff", old, new, "--"
            )
        )

    # -- contents -----------------------------------------------------------------------------
    def blob(self, rev: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``rev`` (``rev`` may be ``""`` for the index), or None."""
        spec = f"{rev}:{path}" if rev else f":0:{path}"
        if "\n" in path or not _batch_safe(path):
            # cat-file --batch takes one UTF-8 line per request: look such names up by entry.
            found = self._entry_sha(rev, path)
            if found is None:
                return None
            spec = found
        try:
            _, kind, _, data = self.repo.git.get_object_data(spec)
        except ValueError:
            return None
        return data if kind == b"blob" else None

    def _entry_sha(self, rev: str, path: str) -> str | None:
        if rev:
            raw = self.out("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path)
            entries = list(_parse_ls(raw, staged=False))
        else:
            raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", path)
            entries = list(_parse_ls(raw, staged=True))
        return next((e.sha for e in entries if e.path == path), None)

    def blob_header(self, rev: str, path: str) -> tuple[str, int] | None:
        """(object id, size) of ``path`` at ``rev`` without reading its content, or None."""
        spec: str | None = f"{rev}:{path}"
        if "\n" in path or not _batch_safe(path):
            spec = self._entry_sha(rev, path)
            if spec is None:
                return None
        try:
            sha, kind, size = self.repo.git.get_object_header(spec)
        except ValueError:
            return None
        return (sha.decode("ascii"), int(size)) if kind == b"blob" else None

    def staged_blob(self, path: str) -> bytes | None:
        return self.blob("", path)

    def object(self, sha: str) -> bytes:
        return self.repo.git.get_object_data(sha)[3]

    def tree(self, rev: str) -> list[TreeEntry]:
        """Every file entry of ``rev``'s tree."""
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        return list(_parse_ls(raw, staged=False))

    def index_entries(self) -> list[TreeEntry]:
        """Every stage-0 entry of the index (what ``--staged`` judges)."""
        raw = self.out("ls-files", "-s", "-z")
        return list(_parse_ls(raw, staged=True))

    def staged_changes(self) -> list[Change]:
        """What the index changes relative to HEAD (or the empty tree in a new repository)."""
        base = self.head() or self.empty_tree()
        return parse_name_status(
            self.out("diff-index", "--cached", "-z", "--name-status", "-M", base, "--")
        )

    def tracked_files(self) -> list[TreeEntry]:
        return self.index_entries()

    def worktree_path(self, path: str) -> Path:
        return self.root / os.fsdecode(encode(path))


class GitError(UsageError):
    """A git command failed in a way the gate cannot judge around."""


def _batch_safe(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parse_ls(raw: bytes, *, staged: bool) -> Iterator[TreeEntry]:
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        parts = meta.split()
        if staged:
            mode, sha, stage = parts[0], parts[1], parts[2]
            if stage != b"0":
                continue
        else:
            mode, kind, sha = parts[0], parts[1], parts[2]
            if kind != b"blob" and kind != b"commit":
                continue
        yield TreeEntry(mode.decode(), sha.decode(), decode(path))


# -- plain git processes ------------------------------------------------------------------------
# gitpython's runner and its persistent ``cat-file`` processes are not thread-safe; the mutation
# runner works in several worktrees at once, so there git runs as plain subprocesses.
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


def clean_env(*, optional_locks: bool = True) -> dict[str, str]:
    """The environment without variables that redirect git (set when running inside a hook).
    ``optional_locks=False`` also stops git from refreshing an index as a side effect of a
    read (``git status``), so a read never rewrites the user's ``.git/index``."""
    env = {k: v for k, v in os.environ.items() if k not in _FOREIGN_GIT_ENV}
    if not optional_locks:
        env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def run_git(
    cwd: Path, *args: str, input: bytes | None = None, ok: Sequence[int] = (0,)
) -> tuple[int, bytes, bytes]:
    """Run ``git args…`` in ``cwd`` as a plain subprocess (thread-safe; hooks disabled, no
    optional index refresh); returns (status, stdout, stderr). A status outside ``ok``
    raises :class:`GitError`."""
    import subprocess

    proc = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        env=clean_env(optional_locks=False),
        check=False,
    )
    if proc.returncode not in ok:
        msg = decode(proc.stderr).strip()
        raise GitError(f"git {' '.join(args[:3])} failed ({proc.returncode}): {msg}")
    return proc.returncode, proc.stdout, proc.stderr
