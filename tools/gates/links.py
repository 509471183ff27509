"""links: citations that resolve (SPEC §4.10).

Every markdown file matched by ``links.paths`` minus ``links.exclude``: a relative link names an
existing path, a ``#heading`` anchor a heading of its target (slugged as GitHub does), a
``#L10`` / ``#L10-L20`` line anchor lines within the target. External URLs are never fetched.

The tree judged is the working tree as git sees it (tracked files still present, and untracked
files git does not ignore), or with ``--staged`` the index: its files and its contents.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Mapping
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from tools import file_reads, markdown, mdlinks
from tools.git import SUBMODULE_MODE, SYMLINK_MODE, decode
from tools.globs import Globs
from tools.markdown import Link
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

    def __init__(self, ctx: Context):
        self.ctx = ctx
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
        self._lines: dict[str, list[str] | None] = {}
        self._docs: dict[str, markdown.Document] = {}
        self._anchors: dict[str, set[str] | None] = {}
        self._folded: dict[str, set[str]] = {}

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

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            raw = self.read(path)
            self._lines[path] = None if raw is None else markdown.split_lines(decode(raw))
        return self._lines[path]

    def document(self, path: str) -> markdown.Document | None:
        """A file parsed as markdown, once however many links name it."""
        if path not in self._docs:
            lines = self.lines(path)
            if lines is None:
                return None
            # The light pass: links and anchors only (SPEC §12).
            text = "\n".join(lines) + "\n" if lines else ""
            self._docs[path] = markdown.parse_links(text, where=path)
        return self._docs[path]

    def anchors(self, path: str) -> set[str] | None:
        """The anchors of a markdown file: its headings' slugs and its HTML elements' names."""
        if path not in self._anchors:
            doc = self.document(path)
            self._anchors[path] = None if doc is None else doc.anchor_set()
        return self._anchors[path]

    def folded_anchors(self, path: str) -> set[str]:
        """The anchors of a markdown file, lowercased (Unicode): GitHub resolves a fragment
        that matches an anchor once both are lowercased (``[R](#R)`` to ``### R``)."""
        if path not in self._folded:
            self._folded[path] = {a.lower() for a in self.anchors(path) or ()}
        return self._folded[path]


def _is_markdown(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in _MARKDOWN


def _hint(fragment: str, anchors: set[str]) -> str:
    low = fragment.lower()
    near = sorted(a for a in anchors if a == low or a == markdown.slug(fragment))
    return f" (did you mean #{near[0]}?)" if near else ""


def _judge(result: GateResult, tree: _Tree, source: str, link: Link) -> None:
    def add(rule: str, message: str) -> None:
        result.add(rule, message, path=source, line=link.line)

    try:
        target = mdlinks.resolve(source, link.target)
    except mdlinks.Escapes:
        add("link-broken", f"{link.target!r} climbs out of the repository")
        return
    kind = tree.kind(target.path)
    if kind is None:
        add("link-broken", f"{link.target!r}: {target.path or '/'} does not exist")
        return
    fragment = target.fragment
    if not fragment or kind != "file":
        return  # nothing to anchor, or a folder / submodule (GitHub shows no anchors there)
    span = mdlinks.line_anchor(fragment)
    if span is not None:
        lines = tree.lines(target.path)
        if lines is None:
            return  # a symlink: its lines are not the repository's to judge
        first, last = span
        if not 1 <= first <= last <= len(lines):
            shown = f"L{first}" if first == last else f"L{first}-L{last}"
            add(
                "line-anchor-out-of-range",
                f"{link.target!r}: #{shown} is outside {target.path} "
                f"({len(lines)} line{'' if len(lines) == 1 else 's'})",
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
            f"{link.target!r}: no heading of {target.path} has the anchor "
            f"#{fragment}{_hint(fragment, anchors)}",
        )


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config.links
    include, exclude = Globs(cfg.paths), Globs(cfg.exclude)
    tree = _Tree(ctx)
    included = list(itertools.compress(paths := tree.files(), include.match_all(paths)))
    kept = itertools.compress(included, map(operator.not_, exclude.match_all(included)))
    files = [p for p in kept if tree.lines(p) is not None]
    where = "the index" if ctx.opts.staged else "the working tree"
    if not files:
        patterns = ", ".join(include.patterns) or "(none)"
        result.add(
            LINKS_ABSENT.id,
            f"no markdown file of {where} matches links.paths ({patterns}): nothing to judge",
        )
        return result
    checked = external = 0
    for path in files:
        doc = tree.document(path)
        for link in doc.links if doc is not None else []:
            if not link.target or mdlinks.is_external(link.target):
                external += bool(link.target)
                continue
            checked += 1
            _judge(result, tree, path, link)
    result.stats.update({"files": len(files), "links": checked, "external": external})
    return result


def list_anchors(paths: list[str], read: Callable[[str], bytes]) -> GateResult:
    """``tools links anchors``: one ``anchor`` info per anchor of each file, in line order,
    naming the heading text or the HTML element that makes it. ``read`` returns a file's
    bytes (raising UsageError for one that cannot be read)."""
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
