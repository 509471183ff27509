"""The tree a ratchet counts: the working tree, the index (``--staged``) or a commit's tree.

Only tracked files are counted, each read as that tree holds it: from disk for the working
tree, as blobs (read in bulk through one ``cat-file --batch``) for the index and commits.
Symlinks are never followed: a tracked symlink is not read, and on disk a file is opened with
``O_NOFOLLOW`` under directories checked not to be symlinks, so nothing outside the
repository is ever read. Submodules and anything that is not a regular file are skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from tools import file_reads
from tools.errors import UsageError
from tools.git import Git, encode

_REGULAR_MODES = ("100644", "100755")
_REGULAR = (b"100644", b"100755")
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang the read
_OPEN_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Tree:
    """One tree to count. ``rev`` (a commit sha) or ``staged``; neither: the working tree."""

    def __init__(self, git: Git, *, rev: str | None = None, staged: bool = False):
        self.git = git
        self.rev = rev
        self.staged = staged
        self._entries: Mapping[str, tuple[bytes, bytes]] | None = None  # path -> (mode, sha)
        self._modes: dict[str, str] | None = None  # the working tree's index modes
        self._kept: dict[str, bytes] = {}  # small files read along with the others
        self._dirs: dict[str, bool] = {"": True}
        self.skipped_links = 0

    @property
    def label(self) -> str:
        if self.rev:
            return f"the tree of {self.rev[:12]}"
        return "the index" if self.staged else "the working tree"

    # -- which files ---------------------------------------------------------------------------
    def _load(self) -> Mapping[str, tuple[bytes, bytes]]:
        if self._entries is None:
            self._entries = self.git.file_modes(self.rev) if self.in_git else {}
        return self._entries

    def paths(self) -> list[str]:
        """The tracked paths of this tree that may hold a file (links and submodules of the
        index or a commit left out; on disk a path is judged when it is read)."""
        if self.staged:
            return self.git.index_regular_files()
        if self.rev:
            return [p for p, (mode, _) in self._load().items() if mode in _REGULAR]
        if self._modes is None:
            self._modes = self.git.tracked_modes()
        return list(self._modes)

    @property
    def in_git(self) -> bool:
        """Whether the files are read from git's objects (a commit or the index)."""
        return bool(self.rev or self.staged)

    def may_contain(
        self,
        literals: list[str],
        paths: list[str] | None = None,
        pathspecs: list[str] | None = None,
    ) -> set[str]:
        """The paths whose file holds one of ``literals``: a superset of the files holding a
        site (what a prefilter needs), found by one multi-threaded ``git grep -F``.

        On disk (``paths``: the tracked paths searched), ``git grep`` would follow a
        symlinked folder, so such folders are left out of its search (nothing outside the
        repository is read), and a path the index holds as something other than a regular
        file is kept for the careful reader to judge."""
        if self.rev:
            return self.git.grep_files(literals, rev=self.rev, pathspecs=pathspecs or ())
        if self.staged:
            return self.git.grep_files(literals, cached=True, pathspecs=pathspecs or ())
        paths = self.paths() if paths is None else paths
        bad = sorted({d for d in (p.rpartition("/")[0] for p in paths) if not self._dir_ok(d)})
        outermost = [d for d in bad if not any(d.startswith(o + "/") for o in bad if o != d)]
        found = self.git.grep_files(literals, exclude=outermost, pathspecs=pathspecs or ())
        modes = self._modes or {}
        odd = {p for p in paths if modes.get(p) not in _REGULAR_MODES}
        return found | odd

    # -- reading -------------------------------------------------------------------------------
    def read_many(self, paths: list[str], keep: Sequence[str] = ()) -> Iterator[tuple[str, bytes]]:
        """(path, bytes) for each path that is a regular file of this tree. ``keep``: small
        files read in the same pass and kept for :meth:`read` (baselines, the index)."""
        if self.rev or self.staged:
            entries = self._load()
            by_sha: dict[str, list[str]] = {}
            for path in [*keep, *paths]:
                found = entries.get(path)
                if found is not None and found[0] in _REGULAR:
                    by_sha.setdefault(found[1].decode("ascii"), []).append(path)
            kept = set(keep)
            wanted = set(paths)
            for sha, data in self.git.blobs(by_sha):
                if data is None:
                    raise UsageError(f"object {sha} of {self.label} cannot be read")
                for path in by_sha[sha]:
                    if path in kept:
                        self._kept[path] = data
                    if path in wanted:
                        yield path, data
            return
        for path in paths:
            data = self._read_disk(path)
            if data is not None:
                yield path, data

    def read(self, path: str) -> bytes | None:
        """One file of this tree (tracked or not, for the working tree), or None."""
        if self.rev or self.staged:
            found = self._load().get(path)
            if found is None:
                return None
            if found[0] not in _REGULAR:
                raise UsageError("is not a regular file in " + self.label, where=path)
            if path in self._kept:
                return self._kept[path]
            sha = found[1].decode("ascii")
            return next((data for _, data in self.git.blobs([sha]) if data is not None), None)
        return self._read_disk(path, strict=True)

    def _dir_ok(self, rel_dir: str) -> bool:
        """Whether every component of ``rel_dir`` is a real directory (no symlink)."""
        known = self._dirs.get(rel_dir)
        if known is not None:
            return known
        parent, _, _ = rel_dir.rpartition("/")
        ok = self._dir_ok(parent)
        if ok:
            try:
                st = os.lstat(self.git.root / os.fsdecode(encode(rel_dir)))
                ok = stat.S_ISDIR(st.st_mode)
            except OSError:
                ok = False
        self._dirs[rel_dir] = ok
        return ok

    def _read_disk(self, path: str, *, strict: bool = False) -> bytes | None:
        """A regular file of the working tree, or None (missing, a link, not a file).
        ``strict``: a path that exists but is a link or not a file is exit 2."""
        rel_dir = path.rpartition("/")[0]
        full: Path = self.git.worktree_path(path)
        if not self._dir_ok(rel_dir):
            if strict and os.path.lexists(full):
                raise UsageError("lies under a symlinked directory; not read", where=path)
            return None
        if not _O_NOFOLLOW and os.path.islink(full):  # no O_NOFOLLOW here: look first
            self.skipped_links += 1
            if strict:
                raise UsageError("is a symlink; not followed", where=path)
            return None
        try:
            fd = os.open(full, _OPEN_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if os.path.islink(full):
                self.skipped_links += 1
                if strict:
                    raise UsageError("is a symlink; not followed", where=path) from None
                return None
            raise UsageError(f"cannot read: {exc.strerror}", where=path) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                if strict:
                    raise UsageError("is not a regular file", where=path)
                return None
            cap = file_reads.current().max_file_bytes
            if st.st_size > cap:
                raise UsageError(
                    f"is larger than limits.max_file_bytes ({cap:,} bytes): not read", where=path
                )
            data = _read_all(fd, st.st_size, cap)
            if len(data) > cap:
                raise UsageError(
                    f"is larger than limits.max_file_bytes ({cap:,} bytes): not read", where=path
                )
            return data
        finally:
            os.close(fd)


def _read_all(fd: int, size: int, cap: int) -> bytes:
    """The file's bytes, read until its end or one byte past ``cap`` (a file that grew)."""
    chunks = [os.read(fd, max(size, 1) + 1)]
    total = len(chunks[0])
    while chunks[-1] and total <= cap:
        chunks.append(os.read(fd, min(1 << 20, cap + 1 - total)))
        total += len(chunks[-1])
    return b"".join(chunks)
