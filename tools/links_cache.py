"""What the links gate reads of a file, kept by the file's blob sha (SPEC §12).

The light pass (:func:`tools.markdown.parse_links`) turns a file's bytes into an
:class:`Extract`: its link targets with their lines, its anchors, and how many lines it has.
That depends on the bytes alone, so it is kept between runs under the file's blob sha, and a
file unchanged since a run that read it is neither parsed again nor makes the parser load.

Unit. git's object id of the bytes (the sha1 of ``blob <size>\\0<bytes>``): computed here from
the bytes read in the working tree, or the index's own under ``--staged``, so both share
entries. A file that no link reads as markdown (the target of a ``#L…`` anchor) keeps its line
count alone, under ``lines`` and its blob. And so that an unchanged working-tree file is not
even read, a file read at a stat (its path, inode, mode, size and the times of its last
change) that was the same after the read keeps the blob it held under that stat, once the
change has settled (:data:`SETTLED_NS`: a write within the same tick of the file system's
clock could leave the stat as it was, as git's "racy" files); a write changes the stat, and
the file is read again. The gate asks for it only for a regular file with no symbolic link on
its way, within ``limits.max_file_bytes``: one the read would refuse is always read.

Key. The sha256 of this format, the tool's version, a digest of what extracts (the source of
:data:`SOURCES`, pyromark's installed files, the Python version, whose Unicode tables slug the
anchors), the digest of the config the extraction reads (none: ``links.paths`` and
``links.exclude`` choose the files, not what is read in one) and the unit.

Storage. :class:`tools.verdict_cache.VerdictCache`'s segments under
``<git common dir>/tools/cache/links/``: atomic writes, a checksum per entry, verified reads,
the size bound, and ``--no-cache`` / ``TOOLS_NO_CACHE``. A payload is
``[lines, [[line, target], …], [anchor, …]]``, or for a stat the blob sha as a JSON string;
one of any other shape is a miss, and the file is read and extracted again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from typing import TYPE_CHECKING, NamedTuple

from tools import verdict_cache
from tools.git import decode

if TYPE_CHECKING:
    from tools.context import Context

GATE = "links"
FORMAT = "tools-links/1"
# The modules whose code decides an Extract, as paths inside the package: read without being
# imported, so that a run whose every file is cached never loads the parser.
SOURCES = (
    "markdown.py",
    "mdlinks.py",
    "lines.py",
    "lazy_regex.py",
    "git/text.py",
    "links_cache.py",
)
# What of the config the extraction reads: nothing (see the module's docstring). It is part
# of every key all the same, so that a setting that comes to shape it must be named here.
CONFIG_READ: dict[str, object] = {}
_HEX = frozenset("0123456789abcdef")
# How old a file's last change must be before its stat may stand for its bytes: a change
# within the same tick of the file system's clock would leave the stat as it was (git's "racy"
# files), and no file system keeps time more coarsely than two seconds.
SETTLED_NS = 2_000_000_000


class Extract(NamedTuple):
    """What the links gate reads of one file."""

    lines: int  # how many lines it has (a #L… anchor must lie within them)
    links: tuple[tuple[int, str], ...]  # (1-based line, target as GitHub reads it), in order
    anchors: frozenset[str]  # the anchors GitHub makes: headings' slugs, HTML ids and names


def blob_id(data: bytes) -> str:
    """git's object id of a file holding ``data`` (what ``git hash-object`` prints)."""
    h = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def line_count(data: bytes) -> int:
    """How many lines :func:`tools.markdown.split_lines` makes of ``data`` decoded: one per
    ``\\n`` (a byte no other UTF-8 character holds), and one more for what follows the last,
    unless that is nothing or a lone CR (dropped as the end of a CRLF line)."""
    return data.count(b"\n") + (data[data.rfind(b"\n") + 1 :] not in (b"", b"\r"))


def extract(data: bytes, where: str) -> Extract:
    """One light pass over a file's bytes. Raises UsageError (naming ``where``) as
    :func:`tools.markdown.parse_links` does."""
    from tools import markdown  # the parser loads on a miss only

    doc = markdown.parse_links(_as_lines(decode(data)), where=where)
    links = tuple((link.line, link.target) for link in doc.links)
    return Extract(line_count(data), links, frozenset(doc.anchor_set()))


def _as_lines(text: str) -> str:
    """``text`` as its lines (:func:`tools.markdown.split_lines`) joined, each ended by a
    newline, without making the list of them (a large file's would be megabytes): a CR that
    ends a line dropped, and a last newline added."""
    if not text:
        return ""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    return text if not text or text.endswith("\n") else text + "\n"


def _read(raw: object) -> Extract | str | None:
    """A payload's JSON as what :class:`LinksCache` wrote: an Extract, or a blob sha; None for
    any other shape."""
    if isinstance(raw, str):
        return raw if len(raw) == 40 and all(c in _HEX for c in raw) else None
    if not (isinstance(raw, list) and len(raw) == 3):
        return None
    lines, links, anchors = raw
    if type(lines) is not int or lines < 0 or not isinstance(links, list):
        return None
    if not (isinstance(anchors, list) and all(type(a) is str for a in anchors)):
        return None
    pairs = [tuple(pair) for pair in links if type(pair) is list and len(pair) == 2]
    if len(pairs) != len(links) or not all(
        type(line) is int and line >= 1 and type(target) is str for line, target in pairs
    ):
        return None
    return Extract(lines, tuple(pairs), frozenset(anchors))


def _installed(package: str) -> bytes:
    """The files of an installed package by name, size and time (not read: a compiled
    library is megabytes): another version or build of it is another digest."""
    import importlib.util

    out: list[str] = []
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                st = entry.stat()
                out.append(f"{entry.name}\0{st.st_size}\0{st.st_mtime_ns}")
    return "\n".join(sorted(out)).encode("utf-8", "surrogateescape")


def code_digest() -> str:
    """sha256 of what turns bytes into an :class:`Extract` (see the module's docstring)."""
    h = hashlib.sha256(verdict_cache.source_digest(SOURCES).encode("ascii") + b"\0")
    h.update(sys.version.encode() + b"\0")
    h.update(_installed("pyromark"))
    return h.hexdigest()


def stat_unit(path: str, st: os.stat_result) -> str:
    """What identifies a file's bytes without reading them: its path and the stat fields
    that any write changes (its inode, size, and the times of its last change)."""
    fields = (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return "stat\0" + path + "\0" + " ".join(map(str, fields))


class LinksCache:
    """The extractions of one repository's files, read once when opened; :meth:`save` writes
    what the run computed. Three kinds of entries: a blob's :class:`Extract`; a blob's line
    count alone (``lines_only``: a file no link reads as markdown, an Extract without links or
    anchors); and a working-tree file's stat, whose payload is the blob sha read at it."""

    def __init__(self, store: verdict_cache.VerdictCache) -> None:
        self._store = store

    def get(self, blob: str, lines_only: bool = False) -> Extract | None:
        """The verified extraction of the blob ``blob``; None: none, or one not trusted."""
        unit = "lines\0" + blob if lines_only else blob
        found = self._store.get_data(self._store.key(unit))
        return found if isinstance(found, Extract) else None

    def put(self, blob: str, found: Extract, lines_only: bool = False) -> None:
        unit = "lines\0" + blob if lines_only else blob
        payload = [found.lines, [list(pair) for pair in found.links], sorted(found.anchors)]
        self._store.put_data(self._store.key(unit), payload)

    def blob_at(self, path: str, st: os.stat_result) -> str | None:
        """The blob sha an earlier run read in the working-tree file ``path`` at the stat
        ``st`` (None: none)."""
        found = self._store.get_data(self._store.key(stat_unit(path, st)))
        return found if isinstance(found, str) else None

    def remember(self, path: str, st: os.stat_result, blob: str) -> None:
        """Keep that the file ``path``, read at the stat ``st`` (the same before and after the
        read), holds the blob ``blob``: once its last change has settled (:data:`SETTLED_NS`)."""
        if max(st.st_mtime_ns, st.st_ctime_ns) < time.time_ns() - SETTLED_NS:
            self._store.put_data(self._store.key(stat_unit(path, st)), blob)

    def save(self) -> None:
        """Write what this run computed (best effort: a failure costs a later run its work)."""
        self._store.save()


def open_cache(ctx: Context) -> LinksCache | None:
    """The cache of ``ctx``'s repository, or None when the cache is off for this run (or a
    folder on its way is a symbolic link: it could lead anywhere)."""
    if verdict_cache.off(ctx.opts.no_cache):
        return None
    from tools import __version__

    tools_dir = verdict_cache.common_dir(ctx.git.git_dir) / "tools"
    folder = tools_dir / "cache" / GATE
    for path in (tools_dir, tools_dir / "cache", folder):
        if path.is_symlink():
            return None
    config = verdict_cache.digest(CONFIG_READ)
    prefix = "\0".join([FORMAT, __version__, code_digest(), GATE, config, ""])
    store = verdict_cache.VerdictCache(
        folder, tools_dir / "tmp", prefix.encode(), frozenset(), data=_read
    )
    return LinksCache(store)
