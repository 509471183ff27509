"""The one git access layer every gate uses.

Everything is read as bytes (plumbing where speed needs it): refs, merge bases, a whole range
in one ``git log`` pass (messages, parents and changed paths with rename detection, ``-z``),
blobs at a revision through one persistent ``cat-file --batch``, and the staged tree. Paths
are repo-relative ``str`` decoded with ``surrogateescape`` so that non-UTF-8 names survive a
round trip.

Every git process of the package starts here, from one argv prefix (:func:`git_argv`) and one
environment (:func:`git_env`, an allow-list: docs/git-environment.md says what passes and
why): the processes that run to completion through :func:`run_git`, the long-lived
``cat-file`` batches through :func:`git_popen`. This layer sits beside gitpython rather than
on its command layer: gitpython builds each child's environment from the whole of
``os.environ`` (only adding to it), so an allow-list cannot go through it, and its persistent
processes are not thread-safe, where the mutation runner works in several worktrees at once.
The repository is found by ``git rev-parse`` through the same runner, so nothing here imports
gitpython or lets it start a process.
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
import re
import subprocess
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple

from tools.background import Background
from tools.errors import UsageError
from tools.lazy_regex import LazyRegex

if TYPE_CHECKING:
    from tempfile import TemporaryDirectory

_ENC = "utf-8"
_ERRORS = "surrogateescape"
# Options that make ``git log`` output independent of the user's git config.
_LOG_FIXED = ["--no-color", "--no-ext-diff", "--no-show-signature", "--no-notes"]


def decode(raw: bytes) -> str:
    """Bytes from git to ``str`` without losing a byte (non-UTF-8 survives)."""
    return raw.decode(_ENC, _ERRORS)


def encode(text: str) -> bytes:
    return text.encode(_ENC, _ERRORS)


class Change(NamedTuple):
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


class Commit(NamedTuple):
    """One commit as ``git log`` read it (a history of 5,000 makes 5,000)."""

    sha: str
    parents: list[str]
    message: bytes
    committer_time: int
    changes: list[Change]

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


class MergeTree(NamedTuple):
    """git's merge of two commits: the tree it wrote and the paths it left in conflict."""

    tree: str
    conflicted: list[str]


class Hunk:
    """One hunk of a ``-U0`` patch: where it starts on each side and the lines it removes
    and adds (without their ``-``/``+``), filled in as the patch is read."""

    __slots__ = ("old_start", "old_count", "new_start", "new_count", "removed", "added")

    def __init__(self, old_start: int, old_count: int, new_start: int, new_count: int) -> None:
        self.old_start = old_start
        self.old_count = old_count
        self.new_start = new_start
        self.new_count = new_count
        self.removed: list[bytes] = []
        self.added: list[bytes] = []


class FilePatch:
    """One file's patch, filled in as it is read: binary, or its hunks."""

    __slots__ = ("binary", "hunks")

    def __init__(self) -> None:
        self.binary = False
        self.hunks: list[Hunk] = []


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
    # Without paths every commit is five tokens (sha, parents, time, message, and the empty
    # one between commits), and a last empty one ends the output: read by slices, in C.
    if len(tokens) % 5 == 1 and not any(tokens[4::5]):
        shas = tokens[0:-1:5]
        if all(sha.startswith(b"\x01") for sha in shas):
            return list(
                map(
                    Commit,
                    [sha[1:].decode("ascii") for sha in shas],
                    [p.decode("ascii").split() for p in tokens[1::5]],
                    tokens[3::5],
                    [int(t or b"0") for t in tokens[2::5]],
                    [[] for _ in shas],
                )
            )
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


def _grep_threads() -> int:
    """Worker threads for ``git grep``: one less than the cores this process may use (git's
    default is all of them). The caller lists and matches the tree on its own thread
    meanwhile; on two cores git's second thread only contends for the object store
    (``--cached`` took 27 ms with one thread against 54 ms with two on 20,000 files)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity call on this platform
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def parse_name_status(raw: bytes) -> list[Change]:
    """Parse ``git diff -z --name-status`` output."""
    changes, _ = _parse_changes(raw.split(b"\0"), 0)
    return changes


_IndexEntry = tuple[bytes, bytes, bytes, str]  # mode, object id, stage, path
# Up to this many objects, Git.blobs asks the persistent cat-file (no process of their own).
_FEW_OBJECTS = 16


# The modes of index entries that are no regular file, as git prints them: a symlink and a
# submodule (gitlink).
SYMLINK_MODE, SUBMODULE_MODE = b"120000", b"160000"
_SPECIAL_MODES = (SYMLINK_MODE, SUBMODULE_MODE)


def _special_entries(raw: bytes) -> dict[str, bytes]:
    """path -> mode of the stage-0 symlinks and submodules of a ``git ls-files -s -z``
    listing. They are rare, so they are found by searching the listing for their modes, not
    by a test of each of 20,000 entries (a record starts the listing or follows a NUL, which
    no path holds)."""
    found: dict[str, bytes] = {}
    for mode in _SPECIAL_MODES:
        starts = [0] if raw.startswith(mode + b" ") else []
        at = raw.find(b"\0" + mode + b" ")
        while at != -1:
            starts.append(at + 1)
            at = raw.find(b"\0" + mode + b" ", at + 1)
        for start in starts:
            end = raw.find(b"\0", start)
            meta, _, name = raw[start : end if end != -1 else len(raw)].partition(b"\t")
            if meta.endswith(b" 0"):
                found[name.decode(_ENC, _ERRORS)] = mode
    return found


# A record's stage when it is not 0, as ``ls-files -s`` prints it (a path holding these bytes
# only sends the listing through the careful pass).
_UNMERGED_STAGE = re.compile(rb" [123]\t")
# Where a record of the listing holds its mode (6 octal digits, as git prints every mode); its
# object id is at the view's ``sha`` slice, as long as the repository's object format makes it.
_MODE = slice(0, 6)


class _IndexModes(Mapping[str, tuple[bytes, bytes]]):
    """path -> (mode, object id), both as git prints them, of the index's stage-0 entries.
    Each entry is kept as its ``ls-files -s`` record and its value cut from it when asked:
    a run asks for a few of 20,000, and a pair made for each entry was most of the cost of
    reading the listing."""

    __slots__ = ("_records", "_sha")

    def __init__(self, records: dict[str, str], sha: slice) -> None:
        self._records = records  # path -> "MODE SHA STAGE\tPATH"
        self._sha = sha

    def __getitem__(self, path: str) -> tuple[bytes, bytes]:
        record = self._records[path]
        return record[_MODE].encode("ascii"), record[self._sha].encode("ascii")

    def __contains__(self, path: object) -> bool:
        return path in self._records

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


class _IndexView:
    """The index as ``git ls-files -s -z`` lists it: its stage-0 entries in index order
    (``stage0``: path -> the entry's record, ``MODE SHA 0<TAB>PATH``), its unmerged entries,
    and its stage-0 symlinks and submodules (``special``: path -> mode)."""

    def __init__(self, raw: bytes):
        self.unmerged: list[_IndexEntry] = []
        # Where each unmerged entry stands: how many stage-0 entries come before it.
        self._after: list[int] = []
        records = raw.decode(_ENC, _ERRORS).split("\0")  # the metadata is ASCII
        if not records[-1]:
            records.pop()  # after the last record's NUL
        # Every record has one layout: the mode, a space, the object id, a space, the stage,
        # a tab, then the path.
        start = records[0].index("\t") + 1 if records else 0
        self.sha = slice(7, start - 3)
        if _UNMERGED_STAGE.search(raw) is None:  # every entry at stage 0: C-level maps only
            paths = map(operator.itemgetter(slice(start, None)), records)
            self.stage0: dict[str, str] = dict(zip(paths, records, strict=True))
        else:
            self.stage0 = {}
            for record in records:
                stage, path = record[start - 2], record[start:]
                if stage == "0":
                    self.stage0[path] = record
                else:
                    mode, sha = record[_MODE].encode(), record[self.sha].encode()
                    self.unmerged.append((mode, sha, stage.encode(), path))
                    self._after.append(len(self.stage0))
        self.special = _special_entries(raw)

    def mode(self, path: str) -> str:
        return self.stage0[path][_MODE]

    def entries(self) -> list[_IndexEntry]:
        """Every entry in index order: the stage-0 entries, and in a conflict the unmerged
        ones back in their places."""
        sha = self.sha
        entries = [
            (record[_MODE].encode(), record[sha].encode(), b"0", path)
            for path, record in self.stage0.items()
        ]
        if not self.unmerged:
            return entries
        out: list[_IndexEntry] = []
        done = 0
        for after, entry in zip(self._after, self.unmerged, strict=True):
            out += entries[done:after]
            out.append(entry)
            done = after
        return out + entries[done:]


class Git:
    """A repository, opened once per invocation."""

    def __init__(self, path: Path | str | None = None, *, bare_ok: bool = False):
        start = Path(path) if path is not None else Path.cwd()
        if not start.exists():
            raise UsageError(f"not a git repository: {start} does not exist")
        found = _discover(start, top_only=path is not None)
        self.root, self._git_dir, self.bare = found
        if self.bare and not bare_ok:
            raise UsageError(
                f"a bare repository has no working tree to judge: {start} (only the message "
                "gates, `tools trailers check` and `tools style check`, judge a bare repository)"
            )
        self._resolved: dict[str, str | None] = {}
        self._resolving = threading.Lock()
        self._empty_tree: str | None = None
        self._index_view: _IndexView | None = None
        self._pending_index: Background[_IndexView] | None = None
        self._batch = _CatFile(self.root, check=False)
        self._batch_check = _CatFile(self.root, check=True)
        # The commit whose `.gitattributes` git reads when it diffs or merges history (None:
        # the working tree's, as git does by itself); see use_attributes_from.
        self._attributes_from: str | None = None
        self._attribute_dir: TemporaryDirectory[str] | None = None  # made on first use

    # -- where git keeps its state ----------------------------------------------------------
    @property
    def git_dir(self) -> Path:
        """This working tree's git directory, absolute (in a linked worktree:
        ``.git/worktrees/<name>``, where its HEAD, index and MERGE_HEAD live)."""
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
        self,
        *args: str,
        ok: Sequence[int] = (0,),
        input: bytes | None = None,
        attributes: bool = False,
    ) -> tuple[int, bytes]:
        """Run ``git args…`` in the repository (``input`` on its stdin); bytes out. A status
        outside ``ok`` raises. ``attributes``: git reads ``.gitattributes`` from the commit
        :meth:`use_attributes_from` names, if any (a diff or merge of history)."""
        cwd, env = self._attribute_place() if attributes else (self.root, None)
        status, out, _ = run_git(cwd, *args, input=input, ok=ok, repository=True, env=env)
        return status, out

    # -- whose attributes ---------------------------------------------------------------------
    def use_attributes_from(self, rev: str) -> None:
        """Have git read ``.gitattributes`` from ``rev``'s tree, not the working tree's, when
        it diffs or merges history for a gate (``--config-from base``: a pull request's
        checkout must not decide, through ``-diff`` or ``merge=…``, what git shows the gates
        or how git's own merge of two parents comes out)."""
        self._attributes_from = rev

    def _attribute_place(self) -> tuple[Path, dict[str, str] | None]:
        """Where git runs, and with which variables, to read the attributes of
        :meth:`use_attributes_from`'s commit: a folder holding only that tree's
        ``.gitattributes`` files, as the work tree, and an empty index: git reads attribute
        files from the work tree it runs in, then from the index, so nothing of the checkout
        is consulted."""
        if self._attributes_from is None:
            return self.root, None
        if self._attribute_dir is None:
            self._attribute_dir = self._materialise_attributes(self._attributes_from)
        holder = Path(self._attribute_dir.name)
        folder = holder / "tree"
        return folder, {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(folder),
            # No index (an empty one): git falls back on the index for an attribute file
            # the work tree lacks, and the user's index holds the checkout's.
            "GIT_INDEX_FILE": str(holder / "no-index"),
        }

    def _materialise_attributes(self, rev: str) -> TemporaryDirectory[str]:
        import tempfile  # here, not at the top: most runs never need it

        from tools import file_reads

        cap = file_reads.current().max_file_bytes
        holder = tempfile.TemporaryDirectory(prefix="tools-attributes-")
        top = Path(holder.name) / "tree"
        top.mkdir()
        for entry in self.tree(rev):
            parts = entry.path.split("/")
            # As git reads them: regular files only (a linked .gitattributes is ignored).
            if parts[-1] != ".gitattributes" or entry.mode not in ("100644", "100755"):
                continue
            if any(part in ("", ".", "..", ".git") for part in parts):
                continue  # not a path git would check out
            header = self._batch_check.ask(entry.sha)
            if header is not None and header[2] > cap:
                raise UsageError(
                    f"is larger than limits.max_file_bytes ({cap:,} bytes): not read",
                    where=f"{rev[:12]}:{entry.path}",
                )
            target = top.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.object(entry.sha))
        return holder

    def out(self, *args: str, input: bytes | None = None, attributes: bool = False) -> bytes:
        return self.run(*args, input=input, attributes=attributes)[1]

    # -- refs ---------------------------------------------------------------------------------
    def resolve(self, ref: str) -> str | None:
        """The commit sha ``ref`` names, or None."""
        # Under a lock: the reads started ahead ask for HEAD from two threads at once.
        with self._resolving:
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

    def log_from_merge_base(
        self, base: str, head: str, *, paths: bool = True
    ) -> tuple[str | None, list[Commit]]:
        """``merge-base(base, head)`` and the commits of ``merge_base..head`` (newest first),
        or (None, []) when the two share no history.

        Both walk the same history, so they run at once: ``git merge-base --all`` on a thread
        while ``git log base..head`` reads the commits. When the merge base is the only one,
        every commit both sides reach is reachable from it, so ``base..head`` is exactly
        ``merge_base..head``; with several (a criss-cross merge) the range is read again from
        the first, the one ``git merge-base`` prints."""
        bases = Background(functools.partial(self._merge_bases, base, head))
        commits = self.log([f"{base}..{head}"], paths=paths)
        found = bases.result()
        if not found:
            return None, []
        merge_base = found[0].decode("ascii")
        if len(found) > 1:
            commits = self.log([f"{merge_base}..{head}"], paths=paths)
        return merge_base, commits

    def _merge_bases(self, a: str, b: str) -> list[bytes]:
        status, out = self.run("merge-base", "--all", a, b, ok=(0, 1, 128))
        return out.split() if status == 0 else []

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
                attributes=True,
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
        spec = self._spec(rev, path)
        found = self._batch.ask(spec) if spec is not None else None
        return found[3] if found is not None and found[1] == b"blob" else None

    def _spec(self, rev: str, path: str) -> str | None:
        """How the batches name ``path`` at ``rev`` (the index for ``""``): ``rev:path``, or,
        for a name holding a newline (the batches take one request a line), its object id
        from the tree or index listing; None when no such entry exists."""
        if "\n" not in path:
            return f"{rev}:{path}" if rev else f":0:{path}"
        if rev:
            raw = self.out("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path)
            entries = list(_parse_ls(raw, staged=False))
        else:
            raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", path)
            entries = list(_parse_ls(raw, staged=True))
        return next((e.sha for e in entries if e.path == path), None)

    def entry(self, rev: str, path: str) -> TreeEntry | None:
        """``path``'s entry (mode, object id) at ``rev`` (the index for ``""``), or None."""
        if rev:
            raw = self.out("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path)
        else:
            raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", path)
        return next((e for e in _parse_ls(raw, staged=not rev) if e.path == path), None)

    def blob_header(self, rev: str, path: str) -> tuple[str, int] | None:
        """(object id, size) of ``path`` at ``rev`` without reading its content, or None."""
        spec = self._spec(rev, path)
        found = self._batch_check.ask(spec) if spec is not None else None
        if found is None or found[1] != b"blob":
            return None
        return found[0].decode("ascii"), found[2]

    def blobs(self, shas: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """The contents of many objects, in request order, from one ``git cat-file --batch
        --buffer`` process (never a process per object): (sha, bytes), or (sha, None) for an
        object that is missing. A thread feeds the requests while this one reads, so neither
        side can block the other on a full pipe. A few objects are asked of the invocation's
        persistent ``cat-file --batch`` instead: a round trip each costs less than a
        process."""
        wanted = list(shas)
        if not wanted:
            return
        if len(wanted) <= _FEW_OBJECTS:
            for sha in wanted:
                found = self._batch.ask(sha)
                yield sha, found[3] if found is not None else None
            return
        proc = git_popen(self.root, "cat-file", "--batch", "--buffer", repository=True)
        stdin, stdout = _pipes(proc)

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
                found = _read_answer(stdout, sha, data=True)
                yield sha, found[3] if found is not None else None
        finally:
            stdout.close()
            writer.join()
            proc.wait()

    def tracked_modes(self, *, unmerged: bool = True) -> dict[str, str]:
        """Every path the index tracks, once, with its mode as git prints it: unmerged paths
        with the mode of their first stage, or left out with ``unmerged=False``."""
        view = self._index()
        if not unmerged or not view.unmerged:
            return {path: record[_MODE] for path, record in view.stage0.items()}
        modes: dict[str, str] = {}
        for mode, _, _, path in view.entries():
            modes.setdefault(path, mode.decode())
        return modes

    def index_special(self) -> dict[str, bytes]:
        """The index's stage-0 entries that are no regular file, path -> mode as git prints
        it: symlinks (``120000``) and submodules (``160000``)."""
        return dict(self._index().special)

    def index_regular_files(self) -> list[str]:
        """The paths of the index's stage-0 regular files (modes ``100644`` and ``100755``),
        in index order."""
        view = self._index()
        if not view.special:
            return list(view.stage0)
        return list(itertools.filterfalse(view.special.__contains__, view.stage0))

    def index_modes(self, paths: Iterable[str]) -> dict[str, str]:
        """The modes of those of ``paths`` the index holds at stage 0 (as git prints them)."""
        view = self._index()
        return {p: view.mode(p) for p in paths if p in view.stage0}

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
        args = ["grep", f"--threads={_grep_threads()}", "-a", "-l", "-z", "-F", "--no-color"]
        args.append("--full-name")
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
        """The bytes of the object ``sha`` (which must exist)."""
        found = self._batch.ask(sha)
        if found is None:
            raise GitError(f"git cat-file: object {sha} is missing")
        return found[3]

    def tree(self, rev: str) -> list[TreeEntry]:
        """Every file entry of ``rev``'s tree."""
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        return list(_parse_ls(raw, staged=False))

    def file_modes(self, rev: str | None = None) -> Mapping[str, tuple[bytes, bytes]]:
        """path -> (mode, object id), both as git prints them, of every file entry of
        ``rev``'s tree, or of the index's stage-0 entries when ``rev`` is None (read-only:
        the index's is shared): the lean listing a whole-tree count needs."""
        if rev is None:
            view = self._index()
            return _IndexModes(view.stage0, view.sha)
        out: dict[str, tuple[bytes, bytes]] = {}
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        for rec in raw.split(b"\0"):
            if rec:
                meta, _, name = rec.partition(b"\t")
                mode, kind, sha = meta.split(b" ")
                if kind == b"blob":
                    out[decode(name)] = (mode, sha)
        return out

    def prefetch_index(self) -> None:
        """Start reading the index on a thread, for a run whose gates will ask for it."""
        if self._index_view is None and self._pending_index is None:
            self._pending_index = Background(self._read_index)

    def _index(self) -> _IndexView:
        """Every index entry, read once per invocation: every gate that asks for the index
        shares one ``git ls-files -s`` (nothing tools runs in the user's repository writes
        the index while a command judges it)."""
        if self._index_view is None:
            pending, self._pending_index = self._pending_index, None
            self._index_view = pending.result() if pending is not None else self._read_index()
        return self._index_view

    def _read_index(self) -> _IndexView:
        return _IndexView(self.out("ls-files", "-s", "-z"))

    def index_entries(self) -> list[TreeEntry]:
        """Every stage-0 entry of the index (what ``--staged`` judges)."""
        view = self._index()
        sha = view.sha
        return [TreeEntry(rec[_MODE], rec[sha], path) for path, rec in view.stage0.items()]

    def unmerged_paths(self) -> list[str]:
        """Paths with unmerged index entries (a merge, rebase or cherry-pick stopped on
        conflicts), each once, in index order."""
        return list(dict.fromkeys(path for _, _, _, path in self._index().unmerged))

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

    def worktree_path(self, path: str) -> Path:
        return self.root / os.fsdecode(encode(path))

    # -- merges -------------------------------------------------------------------------------
    def version(self) -> tuple[int, ...] | None:
        """git's version as numbers (``git --version``), or None when it prints no version."""
        # Plain ``git --version``: nothing it does could run a hook.
        _, out, _ = run_git(self.root, "--version", hooks_off=False)
        words = decode(out).split()
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
        """``git args…`` over history, attributes as :meth:`use_attributes_from` says:
        (status, stdout, stderr), whatever the status."""
        cwd, env = self._attribute_place()
        return run_git(cwd, *args, ok=None, repository=True, env=env)

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
                attributes=True,
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
                attributes=True,
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
        import tempfile  # here, not at the top: the commands that never need it skip ~2 ms

        with tempfile.TemporaryDirectory(prefix="tools-attr-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            run_git(self.root, "read-tree", rev, env=index, repository=True)
            _, out, _ = run_git(
                self.root,
                "check-attr",
                "--cached",
                "-z",
                "--stdin",
                attr,
                input=b"".join(encode(p) + b"\0" for p in paths),
                env=index,
                repository=True,
            )
        tokens = out.split(b"\0")
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


# git's C quoting (quote.c): these escapes, and three octal digits for any other byte (a
# control byte, and with ``core.quotePath`` every byte of a non-ASCII name, UTF-8 or not).
_C_ESCAPES = {
    **{f"{n:03o}".encode(): bytes([n]) for n in range(256)},
    b"a": b"\a",
    b"b": b"\b",
    b"t": b"\t",
    b"n": b"\n",
    b"v": b"\v",
    b"f": b"\f",
    b"r": b"\r",
    b'"': b'"',
    b"\\": b"\\",
}
_C_ESCAPE = LazyRegex(rb'\\([0-3][0-7][0-7]|[abtnvfr"\\])')


def unquote_c(raw: bytes) -> bytes:
    """A name as git C-quotes it (``"a\\tb"``, ``"\\303\\251"``) back to its bytes: the
    one unquoting of the package. A name that does not start with a quoted string (git wrote
    it as it is) is returned unchanged, as is one whose closing quote is missing; bytes after
    the closing quote are not part of the name. A backslash git would not write before a
    character stays as it is."""
    if raw[:1] != b'"':
        return raw
    body = raw[1:]
    # The closing quote is the first one no escape takes: with every escaped backslash, then
    # every escaped quote, masked (same length, left to right as git reads them), it is the
    # first quote left. Linear, at the speed of ``bytes.replace``.
    masked = body.replace(b"\\\\", b"\0\0").replace(b'\\"', b"\0\0")
    end = masked.find(b'"')
    if end < 0:
        return raw
    parts = _C_ESCAPE.compiled.split(body[:end])  # text, escape, text, …: no call per escape
    parts[1::2] = [_C_ESCAPES[code] for code in parts[1::2]]
    return b"".join(parts)


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


def _is_sha_line(line: bytes) -> bool:
    return len(line) in (40, 64) and all(c in b"0123456789abcdef" for c in line)


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
        name = unquote_c(rest)  # the first name: up to its closing quote
        return decode(name[2:]) if name.startswith(b"a/") else None
    half = (len(rest) - 5) // 2
    name = rest[2 : 2 + half]
    if rest != b"a/" + name + b" b/" + name:
        return None
    return decode(name)


class _Section:
    """One file of a ``-p`` patch: the commit it belongs to (``diff-tree --stdin``), its path
    from the ``diff --git`` header (None when the header names two paths, a rename) and from
    the ``+++`` line (None for ``/dev/null``, or before that line), and its hunks."""

    __slots__ = ("commit", "path", "new_path", "patch")

    def __init__(self, commit: str | None, path: str | None) -> None:
        self.commit = commit
        self.path = path
        self.new_path: str | None = None
        self.patch = FilePatch()


def _hunk_body(lines: Sequence[bytes], i: int, hunk: Hunk) -> int:
    """Read the body of ``hunk`` from ``lines[i:]`` by the counts of its header; the index of
    the line after it."""
    old, new = hunk.old_count, hunk.new_count
    n = len(lines)
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
    return i


def _patch_sections(raw: bytes, *, commits: bool) -> list[_Section]:
    """The files of a ``-p`` patch, in order: the one reader of patches.

    Hunk bodies are consumed by the counts of their headers, so a content line that looks
    like a header (``+++ b/x``, ``diff --git``, a sha) is never taken for one. ``commits``:
    the patch is ``diff-tree --stdin``'s, where a line holding a sha starts a commit."""
    sections: list[_Section] = []
    current: _Section | None = None
    commit: str | None = None
    lines = raw.split(b"\n")
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith(b"@@ "):
            head = _hunk_header(line)
            if head is not None:
                hunk = Hunk(*head)
                i = _hunk_body(lines, i, hunk)
                if current is not None:
                    current.patch.hunks.append(hunk)
        elif line.startswith(b"diff --git "):
            current = _Section(commit, _header_path(line))
            sections.append(current)
        elif commits and _is_sha_line(line):
            commit, current = line.decode("ascii"), None
        elif line.startswith(b"+++ "):
            if current is None:  # a patch without its ``diff --git`` header
                current = _Section(commit, None)
                sections.append(current)
            current.new_path = _patch_path(line)
        elif current is None:
            continue
        elif line.startswith(b"Binary files ") and line.endswith(b" differ"):
            current.patch.binary = True
    return sections


def parse_added_lines(raw: bytes, *, commits: bool) -> dict[str | None, dict[str, list[bytes]]]:
    """The added lines of a ``-p`` patch: commit (None without ``commits``) -> path (its new
    name) -> lines (without the ``+``)."""
    found: dict[str | None, dict[str, list[bytes]]] = {}
    for section in _patch_sections(raw, commits=commits):
        if section.new_path and section.patch.hunks:
            into = found.setdefault(section.commit, {}).setdefault(section.new_path, [])
            for hunk in section.patch.hunks:
                into.extend(hunk.added)
    return found


def parse_patches(raw: bytes) -> dict[str, FilePatch]:
    """The hunks of a ``-p`` patch of a diff without renames, path -> :class:`FilePatch`."""
    found: dict[str, FilePatch] = {}
    for section in _patch_sections(raw, commits=False):
        if section.path is not None:
            into = found.setdefault(section.path, FilePatch())
            into.binary = into.binary or section.patch.binary
            into.hunks.extend(section.patch.hunks)
    return found


class GitError(UsageError):
    """A git command failed in a way the gate cannot judge around."""


class MergeTreeUnsupported(GitError):
    """This git cannot write a merge tree (``merge-tree --write-tree`` came in git 2.38)."""


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


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    if proc.stdin is None or proc.stdout is None:
        raise GitError("git cat-file started without its pipes")
    return proc.stdin, proc.stdout


# (object id, type, size, contents: b"" from ``--batch-check``)
_Answer = tuple[bytes, bytes, int, bytes]


def _read_answer(stdout: IO[bytes], spec: str, *, data: bool) -> _Answer | None:
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


class _CatFile:
    """One persistent ``git cat-file --batch`` (``check``: ``--batch-check``), started at the
    first request and ended with its owner: one request a line, answered in order."""

    def __init__(self, cwd: Path, *, check: bool):
        self._cwd = cwd
        self._check = check
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def ask(self, spec: str) -> _Answer | None:
        """(object id, type, size, contents) of the object ``spec`` names, or None."""
        with self._lock:
            if self._proc is None:
                mode = "--batch-check" if self._check else "--batch"
                self._proc = git_popen(self._cwd, "cat-file", mode, repository=True)
                weakref.finalize(self, _stop, self._proc)
            stdin, stdout = _pipes(self._proc)
            try:
                stdin.write(encode(spec) + b"\n")
                stdin.flush()
            except (BrokenPipeError, OSError):
                raise GitError(f"git cat-file --batch ended early (at {spec})") from None
            return _read_answer(stdout, spec, data=not self._check)


def _discover(start: Path, *, top_only: bool) -> tuple[Path, Path, bool]:
    """(root, git directory, bare) of the repository at ``start``: its top, or its git
    directory when bare. ``top_only``: ``start`` must be that top (a folder below it, or one
    that is no repository, is refused); else ``start`` may lie anywhere inside it."""
    if not start.is_dir():
        raise UsageError(f"not a git repository: {start}")
    status, out, err = run_git(
        start, "rev-parse", "--absolute-git-dir", "--is-bare-repository", "--show-toplevel", ok=None
    )
    lines = decode(out).split("\n")
    if len(lines) < 3 or lines[1] not in ("true", "false"):
        fatal = decode(err).strip().splitlines()
        if fatal and "not a git repository" not in fatal[-1]:
            raise UsageError(f"not a git repository: {start}: {fatal[-1]}")
        raise UsageError(f"not a git repository: {start}")
    git_dir = Path(lines[0]).resolve()
    bare = lines[1] == "true"
    if bare:
        root = git_dir
    elif status == 0 and lines[2]:
        root = Path(lines[2]).resolve()
    elif git_dir.name == ".git":
        root = git_dir.parent  # asked from inside the git directory of a work tree
    else:
        raise UsageError(f"not a git repository: {start}")
    here = start.resolve()
    if top_only and here != root:
        if here != git_dir:
            raise UsageError(f"not a git repository: {start}")
        raise UsageError(f"not the top of a git repository: {start} (its top is {root})")
    return root, git_dir, bare


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
