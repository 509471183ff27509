"""Readers of git's output: the records a query returns (commits, changes, tree entries,
patches) and the parsers that build them from ``log -z``, ``diff -z``, ``ls-files -s -z``,
``ls-tree -z`` and ``-p`` patches. Pure functions of bytes: no process starts here."""

from __future__ import annotations

import operator
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from tools.git.text import decode, unquote_c


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


def parse_name_status(raw: bytes) -> list[Change]:
    """Parse ``git diff -z --name-status`` output."""
    changes, _ = _parse_changes(raw.split(b"\0"), 0)
    return changes


_IndexEntry = tuple[bytes, bytes, bytes, str]  # mode, object id, stage, path


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
                found[decode(name)] = mode
    return found


# A record's stage when it is not 0, as ``ls-files -s`` prints it (a path holding these bytes
# only sends the listing through the careful pass).
_UNMERGED_STAGE = re.compile(rb" [123]\t")


# Where a record of the listing holds its mode (6 octal digits, as git prints every mode); its
# object id is at the view's ``sha`` slice, as long as the repository's object format makes it.
MODE_FIELD = slice(0, 6)


class IndexModes(Mapping[str, tuple[bytes, bytes]]):
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
        return record[MODE_FIELD].encode("ascii"), record[self._sha].encode("ascii")

    def __contains__(self, path: object) -> bool:
        return path in self._records

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


class IndexView:
    """The index as ``git ls-files -s -z`` lists it: its stage-0 entries in index order
    (``stage0``: path -> the entry's record, ``MODE SHA 0<TAB>PATH``), its unmerged entries,
    and its stage-0 symlinks and submodules (``special``: path -> mode)."""

    def __init__(self, raw: bytes):
        self.unmerged: list[_IndexEntry] = []
        # Where each unmerged entry stands: how many stage-0 entries come before it.
        self._after: list[int] = []
        records = decode(raw).split("\0")  # the metadata is ASCII
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
                    mode, sha = record[MODE_FIELD].encode(), record[self.sha].encode()
                    self.unmerged.append((mode, sha, stage.encode(), path))
                    self._after.append(len(self.stage0))
        self.special = _special_entries(raw)

    def mode(self, path: str) -> str:
        return self.stage0[path][MODE_FIELD]

    def entries(self) -> list[_IndexEntry]:
        """Every entry in index order: the stage-0 entries, and in a conflict the unmerged
        ones back in their places."""
        sha = self.sha
        entries = [
            (record[MODE_FIELD].encode(), record[sha].encode(), b"0", path)
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


def _patch_path(line: bytes, prefix: bytes = b"b/") -> str | None:
    """The path of a ``+++ b/path`` line, or with ``prefix`` ``a/`` of a ``--- a/path`` line
    (None for ``/dev/null``)."""
    name = line[4:]
    if name.startswith(b'"'):
        name = unquote_c(name)
    elif name.endswith(b"\t"):
        name = name[:-1]  # git ends a name holding a space with a tab
    if not name.startswith(prefix):
        return None
    return decode(name[2:])


def _index_ids(line: bytes) -> tuple[str, str] | None:
    """(old, new) blob ids of an ``index OLD..NEW [mode]`` line."""
    old, dots, new = line[6:].split(b" ", 1)[0].partition(b"..")
    if not dots or not _is_sha_line(old) or not _is_sha_line(new):
        return None
    return old.decode("ascii"), new.decode("ascii")


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

    __slots__ = ("commit", "path", "new_path", "old_path", "ids", "patch")

    def __init__(self, commit: str | None, path: str | None) -> None:
        self.commit = commit
        self.path = path
        self.new_path: str | None = None
        self.old_path: str | None = None  # from the ``---`` line
        self.ids: tuple[str, str] | None = None  # from the ``index`` line (``--full-index``)
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
        elif line.startswith(b"--- "):
            current.old_path = _patch_path(line, b"a/")
        elif line.startswith(b"index "):
            current.ids = _index_ids(line)
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


class PathPatch(NamedTuple):
    """One file of a commit's ``-p --full-index`` patch: the commit, the file's old and new
    names (None: ``/dev/null``, or no ``---``/``+++`` line, as for a pure rename), the blob
    ids of both sides (None: no ``index`` line), and its hunks."""

    commit: str | None
    old_path: str | None
    new_path: str | None
    ids: tuple[str, str] | None
    patch: FilePatch


def parse_path_patches(raw: bytes) -> list[PathPatch]:
    """The files of a ``diff-tree --stdin -p --full-index`` patch, in order."""
    return [
        PathPatch(s.commit, s.old_path, s.new_path, s.ids, s.patch)
        for s in _patch_sections(raw, commits=True)
    ]


def parse_patches(raw: bytes) -> dict[str, FilePatch]:
    """The hunks of a ``-p`` patch of a diff without renames, path -> :class:`FilePatch`."""
    found: dict[str, FilePatch] = {}
    for section in _patch_sections(raw, commits=False):
        if section.path is not None:
            into = found.setdefault(section.path, FilePatch())
            into.binary = into.binary or section.patch.binary
            into.hunks.extend(section.patch.hunks)
    return found


def parse_ls(raw: bytes, *, staged: bool) -> Iterator[TreeEntry]:
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
