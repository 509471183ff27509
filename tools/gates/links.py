"""links: citations that resolve (SPEC §4.10).

Every markdown file matched by ``links.paths`` minus ``links.exclude``: a relative link names an
existing path, a ``#heading`` anchor a heading of its target (slugged as GitHub does), a
``#L10`` / ``#L10-L20`` line anchor lines within the target. External URLs are never fetched.

The tree judged is the working tree as git sees it (tracked files still present, and untracked
files git does not ignore), or with ``--staged`` the index: its files and its contents.

Each file is read at most once, and what the gate needs of it (its links, its anchors, its
line count) comes from one light pass, kept between runs by the file's blob sha
(:mod:`tools.links_cache`): a file unchanged since an earlier run is not parsed again, nor even
read when its stat says so. Only that is held, never a parsed document, so a run's memory
does not grow with the size of the tree's markdown.
"""

from __future__ import annotations

import itertools
import operator
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from tools import file_reads, links_cache, mdlinks
from tools.errors import UsageError
from tools.git import SUBMODULE_MODE, SYMLINK_MODE, decode
from tools.globs import Globs
from tools.links_cache import Extract, stat_unit
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "links"
LINK_BROKEN = Rule(
    "link-broken",
    "error",
    "a relative link names a path that does not exist",
    example="'gone.md': docs/gone.md does not exist",
    fix=(
        "Fix the target (relative to the linking file's folder; `/…` starts at the "
        "repository root; names are case-sensitive), or restore the file it names. "
        "Update links in the same change that moves or deletes a file."
    ),
)

ANCHOR_MISSING = Rule(
    "anchor-missing",
    "error",
    "a #heading anchor matches no heading of its target",
    example=(
        "'guide.md#6-Now': no heading of docs/guide.md has the anchor #6-Now (did you mean #6-now?)"
    ),
    fix=(
        "Link an anchor the target has: GitHub's slug of the heading (lower case, "
        "punctuation dropped, spaces turned into hyphens, numbering kept; a repeated "
        "heading gets `-1`, `-2`…). The message suggests the anchor when only the "
        "case differs. If the heading was renamed, update the links to it in the "
        "same change."
    ),
)

LINE_ANCHOR_OUT_OF_RANGE = Rule(
    "line-anchor-out-of-range",
    "error",
    "a #L10 or #L10-L20 line anchor lies outside its target file",
    example="'../src/tool.py#L11': #L11 is outside src/tool.py (10 lines)",
    fix=(
        "The file changed under the link: point `#L…` at the lines meant now, or "
        "link a heading, which survives edits."
    ),
)

LINKS_ABSENT = Rule(
    "links-absent",
    "info",
    "no markdown file matches links.paths: nothing to judge",
    example=(
        "no markdown file of the working tree matches links.paths (**/*.md): nothing to judge"
    ),
    fix=("Nothing to fix (an info finding). Set `links.paths` to the markdown files to judge."),
)

ANCHOR = Rule(
    "anchor",
    "info",
    "an anchor of a file as GitHub makes it (listed by `tools links anchors`)",
    example="docs/guide.md:5: #c  (heading '<a id=\"cpp\"></a>C++')",
    fix=(
        "Nothing to fix (an info finding, listed only by `tools links anchors "
        "FILE…`). Link to the anchor it names, or give the heading the text whose "
        "slug you link to."
    ),
)

RULES = declare(NAME, [LINK_BROKEN, ANCHOR_MISSING, LINE_ANCHOR_OUT_OF_RANGE, LINKS_ABSENT, ANCHOR])

# Extensions GitHub renders as markdown: a heading anchor is judged only in these.
_MARKDOWN = {".md", ".markdown", ".mdown", ".mkdn", ".mkd", ".mdwn"}


class _Tree:
    """The files judged and the paths links may name: the working tree or the index."""

    def __init__(self, ctx: Context, cache: links_cache.LinksCache | None):
        self.ctx = ctx
        self.cache = cache
        self.staged = ctx.opts.staged
        # path -> (mode, object id) as git prints them (the index's, read-only); and in the
        # working tree the untracked files, which have neither.
        self.entries: Mapping[str, tuple[bytes, bytes]] = ctx.git.file_modes()
        self.untracked: dict[str, tuple[bytes, bytes]] = {}
        if not self.staged:
            for path in ctx.git.untracked_files():
                if path not in self.entries:
                    self.untracked[path] = (b"", b"")
        self._submodules: list[str] | None = None  # read on the first link to no file
        self._dirs: set[str] | None = None  # built on the first link to a folder
        self._kinds: dict[str, str | None] = {}
        # path -> what a file gives the gate (None: a symlink, a submodule or no file; a
        # UsageError: its parse failed, raised where the file is judged or named).
        self._extracts: dict[str, Extract | UsageError | None] = {}
        self._counts: dict[str, int | None] = {}
        self._folded: dict[str, set[str]] = {}
        self._real_dirs: dict[str, bool] = {"": True}

    @property
    def submodules(self) -> list[str]:
        """The index's submodules, each as a folder prefix (``sub/``)."""
        if self._submodules is None:
            special = self.ctx.git.index_special()
            self._submodules = [p + "/" for p, mode in special.items() if mode == SUBMODULE_MODE]
        return self._submodules

    @property
    def dirs(self) -> set[str]:
        """Every folder that holds a file of the tree (most links name files: built lazily)."""
        if self._dirs is None:
            dirs = {""}
            for path in itertools.chain(self.entries, self.untracked):
                at = path.rfind("/")
                while at > 0 and path[:at] not in dirs:
                    dirs.add(path[:at])
                    at = path.rfind("/", 0, at)
            self._dirs = dirs
        return self._dirs

    def files(self) -> list[str]:
        return [*self.entries, *self.untracked]

    def _entry(self, path: str) -> tuple[bytes, bytes] | None:
        entry = self.entries.get(path)
        return entry if entry is not None else self.untracked.get(path)

    def kind(self, path: str) -> str | None:
        """ "file", "dir", "submodule" (a path inside one: not judged) or None."""
        if path not in self._kinds:  # many links name one path: one look each
            self._kinds[path] = self._kind(path)
        return self._kinds[path]

    def _kind(self, path: str) -> str | None:
        entry = self._entry(path)
        if entry is not None:
            if entry[0] == SUBMODULE_MODE:
                return "submodule"
            if self.staged:
                return "file"
            full = self.ctx.git.worktree_path(path)
            return "file" if full.exists() or full.is_symlink() else None
        if any(path.startswith(s) for s in self.submodules):
            return "submodule"
        if path in self.dirs:
            if self.staged:
                return "dir"
            return "dir" if self.ctx.git.worktree_path(path).is_dir() else None
        return None

    def read(self, path: str) -> bytes | None:
        """A regular file's bytes (a symlink or a submodule: None, never followed)."""
        entry = self._entry(path)
        if entry is None or entry[0] in (SYMLINK_MODE, SUBMODULE_MODE):
            return None
        if self.staged:
            return self.ctx.git.object(entry[1].decode("ascii"))
        full = self.ctx.git.worktree_path(path)
        if full.is_symlink() or not full.exists() or full.is_dir():
            return None
        return file_reads.read_optional(full, path, root=self.ctx.root)

    def prepare(self, path: str) -> bool:
        """Read a file to judge (a read that fails raises here, in the files' order) and
        extract it; whether it is a file to judge (no symlink, no submodule)."""
        if path not in self._extracts:
            self._extracts[path] = self._extract(path)
        return self._extracts[path] is not None

    def extract(self, path: str) -> Extract | None:
        """What the gate reads of a file, once however many links name it."""
        self.prepare(path)
        found = self._extracts[path]
        if isinstance(found, UsageError):
            raise found
        return found

    def _extract(self, path: str) -> Extract | UsageError | None:
        found, raw, blob = self._find(path, lines_only=False)
        if found is not None or raw is None:
            return found
        try:
            # The light pass (SPEC §12): links, anchors and the line count only.
            found = links_cache.extract(raw, path)
        except UsageError as exc:
            return exc.with_traceback(None)  # the parse's frames hold its whole input
        if self.cache is not None:
            self.cache.put(blob, found)
        return found

    def line_count(self, path: str) -> int | None:
        """How many lines a file has (None: a symlink, a submodule or no file)."""
        found = self._extracts.get(path)
        if isinstance(found, Extract):
            return found.lines
        if path not in self._counts:  # a file no link reads as markdown: not parsed
            known, raw, blob = self._find(path, lines_only=True)
            count = known.lines if known is not None else None
            if raw is not None:
                count = links_cache.line_count(raw)
                if self.cache is not None:
                    self.cache.put(blob, Extract(count, (), frozenset()), lines_only=True)
            self._counts[path] = count
        return self._counts[path]

    def _find(self, path: str, *, lines_only: bool) -> tuple[Extract | None, bytes | None, str]:
        """What the cache holds for a file, or else its bytes, with its blob sha; (None, None,
        "") for no file to read. Under --staged the index names the blob, and in the working
        tree an earlier run's read of the file at the same stat does: such a file is not read."""
        cache = self.cache
        if self.staged:
            entry = self._entry(path)
            if entry is None or entry[0] in (SYMLINK_MODE, SUBMODULE_MODE):
                return None, None, ""
            blob = entry[1].decode("ascii")
            found = cache.get(blob, lines_only) if cache is not None else None
            return (found, None, blob) if found else (None, self.ctx.git.object(blob), blob)
        st = self._plain(path) if cache is not None else None
        known = cache.blob_at(path, st) if cache is not None and st is not None else None
        found = cache.get(known, lines_only) if cache is not None and known else None
        if found is not None:
            return found, None, known or ""
        raw = self.read(path)
        if raw is None or cache is None:
            return None, raw, ""
        blob = links_cache.blob_id(raw)
        after = self._plain(path) if st is not None else None
        if st is not None and after is not None and stat_unit(path, st) == stat_unit(path, after):
            cache.remember(path, st, blob)  # unchanged while it was read
        found = cache.get(blob, lines_only)
        return (found, None, blob) if found else (None, raw, blob)

    def _plain(self, path: str) -> os.stat_result | None:
        """The stat of a working-tree file that :meth:`read` would read without a refusal
        (a regular file, the index's entry no symlink nor submodule, no symbolic link on its
        way, within limits.max_file_bytes); None for any other."""
        entry = self._entry(path)
        if entry is None or entry[0] in (SYMLINK_MODE, SUBMODULE_MODE):
            return None
        if not self._real_dir(path[: max(path.rfind("/"), 0)]):
            return None
        try:
            st = os.lstat(self.ctx.git.worktree_path(path))
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > file_reads.current().max_file_bytes:
            return None
        return st

    def _real_dir(self, folder: str) -> bool:
        """Whether ``folder`` and every folder above it is a folder, none a symbolic link."""
        if folder not in self._real_dirs:
            up = self._real_dir(folder[: max(folder.rfind("/"), 0)])
            try:
                mode = os.lstat(self.ctx.git.worktree_path(folder)).st_mode
            except OSError:
                mode = 0
            self._real_dirs[folder] = up and stat.S_ISDIR(mode)
        return self._real_dirs[folder]

    def anchors(self, path: str) -> frozenset[str] | None:
        """The anchors of a markdown file: its headings' slugs and its HTML elements' names."""
        found = self.extract(path)
        return None if found is None else found.anchors

    def folded_anchors(self, path: str) -> set[str]:
        """The anchors of a markdown file, lowercased (Unicode): GitHub resolves a fragment
        that matches an anchor once both are lowercased (``[R](#R)`` to ``### R``)."""
        if path not in self._folded:
            self._folded[path] = {a.lower() for a in self.anchors(path) or ()}
        return self._folded[path]


def _is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in _MARKDOWN


def _hint(fragment: str, anchors: frozenset[str]) -> str:
    low = fragment.lower()
    near = sorted(a for a in anchors if a == low or a == mdlinks.slug(fragment))
    return f" (did you mean #{near[0]}?)" if near else ""


def _judge(result: GateResult, tree: _Tree, source: str, line: int, written: str) -> None:
    def add(rule: str, message: str) -> None:
        result.add(rule, message, path=source, line=line)

    try:
        target = mdlinks.resolve(source, written)
    except mdlinks.Escapes:
        add("link-broken", f"{written!r} climbs out of the repository")
        return
    kind = tree.kind(target.path)
    if kind is None:
        add("link-broken", f"{written!r}: {target.path or '/'} does not exist")
        return
    fragment = target.fragment
    if not fragment or kind != "file":
        return  # nothing to anchor, or a folder / submodule (GitHub shows no anchors there)
    span = mdlinks.line_anchor(fragment)
    if span is not None:
        count = tree.line_count(target.path)
        if count is None:
            return  # a symlink: its lines are not the repository's to judge
        first, last = span
        if not 1 <= first <= last <= count:
            shown = f"L{first}" if first == last else f"L{first}-L{last}"
            add(
                "line-anchor-out-of-range",
                f"{written!r}: #{shown} is outside {target.path} "
                f"({count} line{'' if count == 1 else 's'})",
            )
        return
    if not _is_markdown(target.path):
        return  # an anchor into a rendered non-markdown file is not judged
    anchors = tree.anchors(target.path)
    if (
        anchors is not None
        and fragment not in anchors
        and fragment.lower() not in tree.folded_anchors(target.path)
    ):
        add(
            "anchor-missing",
            f"{written!r}: no heading of {target.path} has the anchor "
            f"#{fragment}{_hint(fragment, anchors)}",
        )


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config.links
    include, exclude = Globs(cfg.paths), Globs(cfg.exclude)
    cache = links_cache.open_cache(ctx)
    tree = _Tree(ctx, cache)
    try:
        _judge_all(result, tree, include, exclude)
    finally:
        if cache is not None:
            cache.save()  # what was extracted before a failure is kept too
    return result


def _judge_all(result: GateResult, tree: _Tree, include: Globs, exclude: Globs) -> None:
    ctx = tree.ctx
    included = list(itertools.compress(paths := tree.files(), include.match_all(paths)))
    kept = itertools.compress(included, map(operator.not_, exclude.match_all(included)))
    files = [p for p in kept if tree.prepare(p)]
    where = "the index" if ctx.opts.staged else "the working tree"
    if not files:
        patterns = ", ".join(include.patterns) or "(none)"
        result.add(
            LINKS_ABSENT.id,
            f"no markdown file of {where} matches links.paths ({patterns}): nothing to judge",
        )
        return
    checked = external = 0
    for path in files:
        found = tree.extract(path)
        for line, target in found.links if found is not None else ():
            if not target or mdlinks.is_external(target):
                external += bool(target)
                continue
            checked += 1
            _judge(result, tree, path, line, target)
    result.stats.update({"files": len(files), "links": checked, "external": external})


def list_anchors(paths: list[str], read: Callable[[str], bytes]) -> GateResult:
    """``tools links anchors``: one ``anchor`` info per anchor of each file, in line order,
    naming the heading text or the HTML element that makes it. ``read`` returns a file's
    bytes (raising UsageError for one that cannot be read)."""
    from tools import markdown  # the full parse: the heading's text names each anchor

    result = GateResult(NAME)
    count = 0
    for path in paths:
        doc = markdown.parse(decode(read(path)), where=path)
        for anchor in doc.anchors():
            what = "heading" if anchor.kind == "heading" else "element"
            result.add(
                ANCHOR.id,
                f"#{anchor.name}  ({what} {anchor.source!r})",
                path=path,
                line=anchor.line,
            )
            count += 1
    result.stats.update({"files": len(paths), "anchors": count})
    return result
