"""The one git access layer every gate uses.

Everything is read as bytes through gitpython's command runner (plumbing where speed needs
it): refs, merge bases, a whole range in one ``git log`` pass (messages, parents and changed
paths with rename detection, ``-z``), blobs at a revision through one persistent
``cat-file --batch``, and the staged tree. Paths are repo-relative ``str`` decoded with
``surrogateescape`` so that non-UTF-8 names survive a round trip.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

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


class TreeEntry(NamedTuple):
    """One file entry of a tree or of the index (a tuple: a large tree makes 20,000)."""

    mode: str
    sha: str
    path: str

    @property
    def is_symlink(self) -> bool:
        return self.mode == "120000"

    @property
    def is_submodule(self) -> bool:
        return self.mode == "160000"


class RawChange(NamedTuple):
    """One path that differs between two trees (``diff-tree --raw``); a mode ``000000`` and
    an all-zero sha mean the path is absent on that side."""

    old_mode: str
    new_mode: str
    old_sha: str
    new_sha: str
    status: str
    path: str


@dataclass
class MergeTree:
    """git's merge of two commits: the tree it wrote and the paths it left in conflict."""

    tree: str
    conflicted: list[str]


@dataclass
class Hunk:
    """One hunk of a ``-U0`` patch: where it starts on each side and the lines it removes
    and adds (without their ``-``/``+``)."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    removed: list[bytes] = field(default_factory=list)
    added: list[bytes] = field(default_factory=list)


@dataclass
class FilePatch:
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)


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

    def __init__(self, path: Path | str | None = None, *, bare_ok: bool = False):
        start = Path(path) if path is not None else Path.cwd()
        if not start.exists():
            raise UsageError(f"not a git repository: {start} does not exist")
        try:
            self.repo = gitpython.Repo(start, search_parent_directories=path is None)
        except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
            raise UsageError(f"not a git repository: {start}") from None
        self.bare = bool(self.repo.bare)
        if self.bare and not bare_ok:
            raise UsageError(
                f"a bare repository has no working tree to judge: {start} (only the message "
                "gates, `tools trailers check` and `tools style check`, judge a bare repository)"
            )
        # A bare repository's "root" is its git directory: nothing is read from a work tree.
        top = self.repo.git_dir if self.bare else self.repo.working_tree_dir
        self.root = Path(top or start).resolve()
        if path is not None and Path(path).resolve() != self.root:
            raise UsageError(f"not the top of a git repository: {start} (its top is {self.root})")
        self._resolved: dict[str, str | None] = {}
        self._empty_tree: str | None = None
        self._git_dir: Path | None = None
        self._index_listing: list[tuple[bytes, bytes, bytes, str]] | None = None

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
    def run(
        self, *args: str, ok: Sequence[int] = (0,), input: bytes | None = None
    ) -> tuple[int, bytes]:
        """Run ``git args…`` in the repository (``input`` on its stdin); bytes out. A status
        outside ``ok`` raises."""
        stdin = None
        if input is not None:
            # The runner takes a file for stdin; a pipe fed from here could deadlock on output.
            stdin = tempfile.TemporaryFile()
            stdin.write(input)
            stdin.seek(0)
        try:
            status, out, err = self.repo.git.execute(
                ["git", *args],
                istream=stdin,
                with_extended_output=True,
                with_exceptions=False,
                stdout_as_string=False,
                strip_newline_in_stdout=False,
            )
        finally:
            if stdin is not None:
                stdin.close()
        if status not in ok:
            msg = decode(err if isinstance(err, bytes) else encode(str(err))).strip()
            raise GitError(f"git {' '.join(args[:3])} failed ({status}): {msg}")
        return status, out

    def out(self, *args: str, input: bytes | None = None) -> bytes:
        return self.run(*args, input=input)[1]

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

    def default_branch(self) -> str | None:
        """The branch a range gate's base should name: ``origin/HEAD``'s target, else the
        first of origin/main, origin/master, main, master that resolves, else the current
        branch (which resolves once it has a commit); None on a detached, unborn HEAD."""
        status, out = self.run("symbolic-ref", "-q", "refs/remotes/origin/HEAD", ok=(0, 1, 128))
        target = out.decode().strip()
        if status == 0 and target.startswith("refs/remotes/") and self.resolve(target):
            return target[len("refs/remotes/") :]
        for ref in ("origin/main", "origin/master", "main", "master"):
            if self.resolve(f"refs/{'remotes' if '/' in ref else 'heads'}/{ref}"):
                return ref
        status, out = self.run("symbolic-ref", "-q", "--short", "HEAD", ok=(0, 1, 128))
        return out.decode().strip() or None if status == 0 else None

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

    def added_lines(
        self, commits: Sequence[str], paths: Sequence[str]
    ) -> dict[str, dict[str, list[bytes]]]:
        """The lines each of ``commits`` adds to ``paths`` (commit -> path -> lines, without
        the ``+``), each non-merge commit against its parent and a root commit against the
        empty tree, read in one ``diff-tree --stdin`` pass (one more per 64 KiB of paths).

        Only ``paths`` are diffed, so a commit's unrelated changes cost nothing; a caller
        names both sides of a rename, so that git still pairs them."""
        found: dict[str, dict[str, list[bytes]]] = {}
        if not commits or not paths:
            return found
        stdin = "".join(f"{sha}\n" for sha in commits).encode("ascii")
        for chunk in _chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "--stdin",
                "--root",
                "-r",
                "-M",
                "-p",
                "-U0",
                *_PATCH_FIXED,
                "--",
                *chunk,
                input=stdin,
            )
            for sha, per_path in parse_added_lines(raw, commits=True).items():
                into = found.setdefault(sha or "", {})
                for path, lines in per_path.items():
                    into.setdefault(path, []).extend(lines)
        return found

    def staged_added_lines(self, paths: Sequence[str]) -> dict[str, list[bytes]]:
        """The lines the index adds to ``paths`` relative to HEAD (or the empty tree)."""
        found: dict[str, list[bytes]] = {}
        base = self.head() or self.empty_tree()
        for chunk in _chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-index",
                "--cached",
                "-M",
                "-p",
                "-U0",
                *_PATCH_FIXED,
                base,
                "--",
                *chunk,
            )
            for path, lines in parse_added_lines(raw, commits=False).get(None, {}).items():
                found.setdefault(path, []).extend(lines)
        return found

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

    def blobs(self, shas: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """The contents of many objects, in request order, from one ``git cat-file --batch
        --buffer`` process (never a process per object): (sha, bytes), or (sha, None) for an
        object that is missing. A thread feeds the requests while this one reads, so neither
        side can block the other on a full pipe."""
        wanted = list(shas)
        if not wanted:
            return
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch", "--buffer"],
            cwd=self.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=1 << 18,  # fewer, larger reads: a tree's blobs run to many megabytes
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def feed() -> None:
            try:
                stdin.write("".join(f"{sha}\n" for sha in wanted).encode("ascii"))
            except (BrokenPipeError, OSError):
                pass  # the reader reports what is missing
            finally:
                try:
                    stdin.close()
                except OSError:
                    pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha in wanted:
                header = stdout.readline()
                if not header:
                    raise GitError(f"git cat-file --batch ended early (at {sha})")
                parts = header.split()
                if len(parts) != 3:
                    yield sha, None  # "<sha> missing" (or ambiguous)
                    continue
                size = int(parts[2])
                data = stdout.read(size)
                stdout.read(1)  # the newline after the contents
                yield sha, data
        finally:
            stdout.close()
            writer.join()
            proc.wait()

    def tracked_modes(self) -> dict[str, str]:
        """Every path the index tracks, once, with its mode (unmerged paths included, with
        the mode of their first stage)."""
        modes: dict[str, str] = {}
        for mode, _, _, path in self._index():
            if path not in modes:
                modes[path] = mode.decode()
        return modes

    def grep_files(
        self,
        literals: Sequence[str],
        *,
        rev: str | None = None,
        cached: bool = False,
        exclude: Sequence[str] = (),
        pathspecs: Sequence[str] = (),
    ) -> set[str]:
        """Paths of the files that contain any of ``literals`` (fixed strings, none holding a
        newline): in ``rev``'s tree, in the index (``cached``) or in the working tree's
        tracked files. One multi-threaded ``git grep -F``; every file is read as text
        (``-a``), so attributes cannot hide one. ``pathspecs`` (git pathspecs, magic
        allowed) limit the search; ``exclude``: literal paths left out."""
        if not literals:
            return set()
        args = ["grep", "-a", "-l", "-z", "-F", "--no-color", "--full-name"]
        for literal in literals:
            args += ["-e", literal]
        if rev:
            args.append(rev)
        elif cached:
            args.append("--cached")
        args.append("--")
        args += list(pathspecs)
        args += [f":(exclude,literal){path}" for path in exclude]
        prefix = f"{rev}:".encode() if rev else b""
        _, out = self.run(*args, ok=(0, 1))
        found: set[str] = set()
        for rec in out.split(b"\0"):
            if rec:
                found.add(decode(rec[len(prefix) :] if rec.startswith(prefix) else rec))
        return found

    def staged_blob(self, path: str) -> bytes | None:
        return self.blob("", path)

    def object(self, sha: str) -> bytes:
        return self.repo.git.get_object_data(sha)[3]

    def tree(self, rev: str) -> list[TreeEntry]:
        """Every file entry of ``rev``'s tree."""
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        return list(_parse_ls(raw, staged=False))

    def file_modes(self, rev: str | None = None) -> dict[str, tuple[bytes, bytes]]:
        """path -> (mode, object id), both as git prints them, of every file entry of
        ``rev``'s tree, or of the index's stage-0 entries when ``rev`` is None: the lean
        listing a whole-tree count needs (no object per entry)."""
        out: dict[str, tuple[bytes, bytes]] = {}
        if rev is not None:
            raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
            for rec in raw.split(b"\0"):
                if rec:
                    meta, _, path = rec.partition(b"\t")
                    mode, kind, sha = meta.split(b" ")
                    if kind == b"blob":
                        out[path.decode(_ENC, _ERRORS)] = (mode, sha)
            return out
        for mode, sha, stage, path in self._index():
            if stage == b"0":
                out[path] = (mode, sha)
        return out

    def _index(self) -> list[tuple[bytes, bytes, bytes, str]]:
        """(mode, object id, stage, path) of every index entry, read once per invocation:
        every gate that asks for the index shares one ``git ls-files -s`` (nothing tools
        runs in the user's repository writes the index while a command judges it)."""
        if self._index_listing is None:
            listing = []
            for rec in self.out("ls-files", "-s", "-z").split(b"\0"):
                if rec:
                    meta, _, path = rec.partition(b"\t")
                    mode, sha, stage = meta.split(b" ")
                    listing.append((mode, sha, stage, path.decode(_ENC, _ERRORS)))
            self._index_listing = listing
        return self._index_listing

    def index_entries(self) -> list[TreeEntry]:
        """Every stage-0 entry of the index (what ``--staged`` judges)."""
        return [
            TreeEntry(mode.decode(), sha.decode(), path)
            for mode, sha, stage, path in self._index()
            if stage == b"0"
        ]

    def index_table(self) -> dict[str, tuple[bytes, bytes]]:
        """Stage-0 path -> (mode, object id) as git prints them, from the one index read
        (cheaper than an entry object per path, for 20,000 paths)."""
        return {path: (mode, sha) for mode, sha, stage, path in self._index() if stage == b"0"}

    def index_modes(self) -> dict[str, str]:
        """Stage-0 path -> mode, from the one index read (no entry object per path)."""
        return {path: mode.decode() for mode, _, stage, path in self._index() if stage == b"0"}

    def unmerged_paths(self) -> list[str]:
        """Paths with unmerged index entries (a merge, rebase or cherry-pick stopped on
        conflicts), each once, in index order."""
        seen: dict[str, None] = {}
        for _, _, stage, path in self._index():
            if stage != b"0":
                seen.setdefault(path, None)
        return list(seen)

    def untracked_files(self) -> list[str]:
        """Untracked files git does not ignore: what ``git add -A`` would add."""
        raw = self.out("ls-files", "-z", "--others", "--exclude-standard")
        return [decode(rec) for rec in raw.split(b"\0") if rec]

    def staged_changes(self) -> list[Change]:
        """What the index changes relative to HEAD (or the empty tree in a new repository)."""
        base = self.head() or self.empty_tree()
        return parse_name_status(
            self.out("diff-index", "--cached", "-z", "--name-status", "-M", base, "--")
        )

    def index_entries_under(self, folder: str) -> list[TreeEntry]:
        """The stage-0 index entries under ``folder`` (a repo-relative path)."""
        raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", folder)
        return list(_parse_ls(raw, staged=True))

    def worktree_files_under(self, folder: str) -> list[str]:
        """Paths under ``folder`` as the working tree holds them: tracked (conflicted ones
        included) and untracked files git does not ignore; sorted, each once."""
        raw = self.out(
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            folder,
        )
        return sorted({decode(p) for p in raw.split(b"\0") if p})

    def tracked_files(self) -> list[TreeEntry]:
        return self.index_entries()

    def worktree_path(self, path: str) -> Path:
        return self.root / os.fsdecode(encode(path))

    # -- merges -------------------------------------------------------------------------------
    def version(self) -> tuple[int, ...] | None:
        """git's version as numbers (``git --version``), or None when it prints no version."""
        words = decode(self.out("--version")).split()
        if len(words) < 3 or words[:2] != ["git", "version"]:
            return None
        nums = []
        for part in words[2].split("."):
            digits = "".join(itertools.takewhile(str.isdigit, part))
            if not digits:
                break
            nums.append(int(digits))
        return tuple(nums) or None

    def commit_trees(self, shas: Sequence[str]) -> dict[str, str]:
        """commit -> its tree, for many commits in one ``git log --no-walk --stdin``."""
        if not shas:
            return {}
        raw = self.out(
            "log",
            *_LOG_FIXED,
            "--no-walk=unsorted",
            "--stdin",
            "--format=%H %T",
            input="".join(f"{sha}\n" for sha in shas).encode("ascii"),
        )
        found: dict[str, str] = {}
        for line in raw.decode("ascii").splitlines():
            commit, _, tree = line.partition(" ")
            if tree:
                found[commit] = tree
        return found

    def merge_tree(self, ours: str, theirs: str, *, unrelated: bool = False) -> MergeTree | None:
        """git's own merge of two commits (``merge-tree --write-tree``, git >= 2.38), written
        to the object store only: the tree and the paths it left in conflict. Conflict hunks
        are written in the plain two-sided style whatever the user's ``merge.conflictStyle``,
        labelled with ``ours`` and ``theirs`` as given. None: the two commits share no history
        and ``unrelated`` was not given (git's refusal to merge unrelated histories).
        Raises :class:`MergeTreeUnsupported` when this git has no ``--write-tree``."""
        args = [
            "-c",
            "merge.conflictStyle=merge",
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            "--no-messages",
        ]
        if unrelated:
            args.append("--allow-unrelated-histories")
        status, out, err = self._run_err(*args, ours, theirs)
        if status not in (0, 1):
            text = decode(err).strip()
            if "unrelated histories" in text and not unrelated:
                return None
            if status == 129 or "write-tree" in text:
                raise MergeTreeUnsupported(text.splitlines()[0] if text else f"exit {status}")
            raise GitError(f"git merge-tree failed ({status}): {text}")
        fields = out.split(b"\0")
        tree = fields[0].decode("ascii").strip()
        conflicted = [decode(f) for f in fields[1:] if f] if status == 1 else []
        return MergeTree(tree, list(dict.fromkeys(conflicted)))

    def _run_err(self, *args: str) -> tuple[int, bytes, bytes]:
        """``git args…``: (status, stdout, stderr), whatever the status."""
        status, out, err = self.repo.git.execute(
            ["git", *args],
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
        return status, out, err if isinstance(err, bytes) else encode(str(err))

    def raw_diff(self, old: str, new: str) -> list[RawChange]:
        """Every file entry that differs between trees ``old`` and ``new``, path by path (no
        rename detection): ``diff-tree -r -z --raw --no-renames``."""
        raw = self.out("diff-tree", "-r", "-z", "--raw", "--no-renames", old, new, "--")
        tokens = raw.split(b"\0")
        changes: list[RawChange] = []
        i = 0
        while i + 1 < len(tokens):
            meta = tokens[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode("ascii").split()
            changes.append(
                RawChange(old_mode, new_mode, old_sha, new_sha, status[0], decode(tokens[i + 1]))
            )
            i += 2
        return changes

    def patches(self, old: str, new: str, paths: Sequence[str]) -> dict[str, FilePatch]:
        """The ``-U0`` patch of each of ``paths`` from tree ``old`` to tree ``new``, path by
        path (no rename detection, no textconv): its hunks, or that git sees it as binary."""
        found: dict[str, FilePatch] = {}
        for chunk in _chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "-r",
                "-p",
                "-U0",
                "--no-renames",
                *_PATCH_FIXED,
                old,
                new,
                "--",
                *chunk,
            )
            for path, patch in parse_patches(raw).items():
                into = found.setdefault(path, FilePatch())
                into.binary = into.binary or patch.binary
                into.hunks.extend(patch.hunks)
        return found

    def numstat(
        self, old: str, new: str, paths: Sequence[str]
    ) -> dict[str, tuple[int, int] | None]:
        """(lines added, lines removed) of each of ``paths`` from commit or tree ``old`` to
        ``new``, path by path; None for a file git sees as binary. Paths equal on both sides
        are absent."""
        found: dict[str, tuple[int, int] | None] = {}
        for chunk in _chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "-r",
                "-z",
                "--numstat",
                "--no-renames",
                "--no-textconv",
                old,
                new,
                "--",
                *chunk,
            )
            tokens = raw.split(b"\0")
            for tok in tokens:
                added, _, rest = tok.partition(b"\t")
                removed, _, path = rest.partition(b"\t")
                if not path:
                    continue
                name = decode(path)
                if added == b"-" or removed == b"-":
                    found[name] = None
                    continue
                prev = found.get(name, (0, 0)) or (0, 0)
                found[name] = (prev[0] + int(added), prev[1] + int(removed))
        return found

    def attributes_at(self, rev: str, attr: str, paths: Sequence[str]) -> dict[str, str]:
        """The value of attribute ``attr`` for each of ``paths`` as the ``.gitattributes``
        files of ``rev``'s tree set it (with ``info/attributes`` and the user's global file,
        as git applies them): git's own ``check-attr --cached`` over a throwaway index of
        that tree, so the user's index and working tree are never read or written.
        ``unspecified`` paths are absent; a set or unset attribute reads ``set`` / ``unset``."""
        if not paths:
            return {}
        with tempfile.TemporaryDirectory(prefix="tools-attr-") as tmp:
            env = clean_env(optional_locks=False)
            env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
            base = ["git", "-c", "core.hooksPath=/dev/null"]
            subprocess.run(
                [*base, "read-tree", rev], cwd=self.root, env=env, check=True, capture_output=True
            )
            proc = subprocess.run(
                [*base, "check-attr", "--cached", "-z", "--stdin", attr],
                cwd=self.root,
                env=env,
                input=b"".join(encode(p) + b"\0" for p in paths),
                capture_output=True,
                check=False,
            )
        if proc.returncode != 0:
            raise GitError(f"git check-attr failed ({proc.returncode}): {decode(proc.stderr)}")
        tokens = proc.stdout.split(b"\0")
        values: dict[str, str] = {}
        for i in range(0, len(tokens) - 2, 3):
            value = decode(tokens[i + 2])
            if value != "unspecified":
                values[decode(tokens[i])] = value
        return values


# Plumbing diffs independent of the user's config: literal paths, names unquoted but for
# control characters, no external diff or textconv, fixed a/ b/ prefixes.
_DIFF_FIXED = ("--literal-pathspecs", "-c", "core.quotePath=false")
_PATCH_FIXED = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)
_ARGV_BUDGET = 64 * 1024


def _chunks(paths: Sequence[str]) -> Iterator[list[str]]:
    """``paths`` in groups whose total length stays well under the OS's argv limit."""
    chunk: list[str] = []
    size = 0
    for path in paths:
        if chunk and size + len(path) > _ARGV_BUDGET:
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += len(path) + 1
    if chunk:
        yield chunk


_C_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}


def unquote_c(raw: bytes) -> bytes:
    """A name as git C-quotes it (``"a\\tb"``, octal ``\\303``) back to its bytes; an
    unquoted name is returned unchanged."""
    if len(raw) < 2 or raw[:1] != b'"':
        return raw
    out = bytearray()
    i, n = 1, len(raw)
    while i < n:
        c = raw[i]
        if c == 34:  # the closing quote
            break
        if c != 92 or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = raw[i + 1]
        if 48 <= nxt <= 55:
            digits = raw[i + 1 : i + 4]
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
            continue
        out.append(_C_ESCAPES.get(nxt, nxt))
        i += 2
    return bytes(out)


def _patch_path(line: bytes) -> str | None:
    """The new-side path of a ``+++ b/path`` line (None for ``/dev/null``)."""
    name = line[4:]
    if name.startswith(b'"'):
        name = unquote_c(name)
    elif name.endswith(b"\t"):
        name = name[:-1]  # git ends a name holding a space with a tab
    if not name.startswith(b"b/"):
        return None
    return decode(name[2:])


def _hunk_counts(line: bytes) -> tuple[int, int] | None:
    """(old, new) line counts of a ``@@ -a[,b] +c[,d] @@`` header."""
    parts = line.split(b" ", 3)
    if len(parts) < 4 or parts[1][:1] != b"-" or parts[2][:1] != b"+":
        return None
    counts = []
    for part in parts[1:3]:
        _, comma, count = part[1:].partition(b",")
        if comma and not count.isdigit():
            return None
        counts.append(int(count) if comma else 1)
    return counts[0], counts[1]


def _is_sha_line(line: bytes) -> bool:
    return len(line) in (40, 64) and all(c in b"0123456789abcdef" for c in line)


def parse_added_lines(raw: bytes, *, commits: bool) -> dict[str | None, dict[str, list[bytes]]]:
    """The added lines of a ``-p`` patch: commit (None without ``commits``) -> path -> lines.

    Hunk bodies are consumed by the counts of their headers, so an added line that looks
    like a header (``+++ b/x``, a sha) is never taken for one."""
    found: dict[str | None, dict[str, list[bytes]]] = {}
    lines = raw.split(b"\n")
    commit: str | None = None
    path: str | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith(b"@@ "):
            counts = _hunk_counts(line)
            if counts is None:
                continue
            old, new = counts
            added = found.setdefault(commit, {}).setdefault(path, []) if path else None
            while (old > 0 or new > 0) and i < n:
                body = lines[i]
                mark = body[:1]
                if mark == b"+":
                    new -= 1
                    if added is not None:
                        added.append(body[1:])
                elif mark == b"-":
                    old -= 1
                elif mark == b" ":
                    old -= 1
                    new -= 1
                elif mark != b"\\":
                    break
                i += 1
        elif line.startswith(b"diff --git "):
            path = None
        elif line.startswith(b"+++ "):
            path = _patch_path(line)
        elif commits and _is_sha_line(line):
            commit, path = line.decode("ascii"), None
    return found


def _hunk_header(line: bytes) -> tuple[int, int, int, int] | None:
    """(old start, old count, new start, new count) of a ``@@ -a[,b] +c[,d] @@`` header."""
    parts = line.split(b" ", 3)
    if len(parts) < 4 or parts[1][:1] != b"-" or parts[2][:1] != b"+":
        return None
    nums: list[int] = []
    for part in parts[1:3]:
        start, comma, count = part[1:].partition(b",")
        if not start.isdigit() or (comma and not count.isdigit()):
            return None
        nums += [int(start), int(count) if comma else 1]
    return nums[0], nums[1], nums[2], nums[3]


def _header_path(line: bytes) -> str | None:
    """The path of a ``diff --git a/P b/P`` header of a diff without renames (both names are
    the same path, so a name holding `` b/`` still splits in one way only)."""
    rest = line[len(b"diff --git ") :]
    if rest.startswith(b'"'):
        i = 1
        while i < len(rest) and rest[i] != 34:
            i += 2 if rest[i] == 92 else 1
        name = unquote_c(rest[: i + 1])
        return decode(name[2:]) if name.startswith(b"a/") else None
    half = (len(rest) - 5) // 2
    name = rest[2 : 2 + half]
    if rest != b"a/" + name + b" b/" + name:
        return None
    return decode(name)


def parse_patches(raw: bytes) -> dict[str, FilePatch]:
    """The hunks of a ``-p`` patch of a diff without renames, path -> :class:`FilePatch`.

    Hunk bodies are consumed by the counts of their headers, so a content line that looks
    like a header is never taken for one."""
    found: dict[str, FilePatch] = {}
    lines = raw.split(b"\n")
    patch: FilePatch | None = None
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith(b"diff --git "):
            path = _header_path(line)
            patch = found.setdefault(path, FilePatch()) if path is not None else None
        elif patch is None:
            continue
        elif line.startswith(b"Binary files ") and line.endswith(b" differ"):
            patch.binary = True
        elif line.startswith(b"@@ "):
            head = _hunk_header(line)
            if head is None:
                continue
            hunk = Hunk(*head)
            patch.hunks.append(hunk)
            old, new = hunk.old_count, hunk.new_count
            while (old > 0 or new > 0) and i < n:
                body = lines[i]
                mark = body[:1]
                if mark == b"+":
                    new -= 1
                    hunk.added.append(body[1:])
                elif mark == b"-":
                    old -= 1
                    hunk.removed.append(body[1:])
                elif mark == b" ":
                    old -= 1
                    new -= 1
                elif mark != b"\\":
                    break
                i += 1
    return found


class GitError(UsageError):
    """A git command failed in a way the gate cannot judge around."""


class MergeTreeUnsupported(GitError):
    """This git cannot write a merge tree (``merge-tree --write-tree`` came in git 2.38)."""


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
