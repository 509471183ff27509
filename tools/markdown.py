"""Markdown read as GitHub reads it: one CommonMark/GFM parse per document.

The parse is pulldown-cmark's (through ``pyromark``): compiled, CommonMark-compliant, with GFM's
tables, strikethrough, task lists and footnotes, and a byte range for every event, so every
reader of the gates (links, NOW headings and entries, spec sections and citations, evidence
markers, the markdown ratchet, ``spec_now`` rows) sees the same blocks GitHub renders:
headings inside block quotes and list items, fences inside list items, HTML blocks and
comments that hold no markdown, tables that end at a blank line. docs/docs-and-links.md ("How
markdown is read") says why this parser and gives its figures on hostile input.

What is ours: GitHub's heading anchors (:func:`slug`, :func:`anchor_names`), computed on the
heading's rendered text; the ``id`` / ``name`` attributes of HTML elements (GitHub keeps them as
anchors); and the shapes the gates read (:class:`Document`).
"""

import bisect
import contextlib
import gc
import itertools
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, NamedTuple

import pyromark

from tools import lines as text_lines
from tools.errors import UsageError
from tools.lazy_regex import LazyRegex
from tools.mdlinks import slug

_O = pyromark.Options
# GitHub's extensions. Heading attributes ({#id}), math and smart punctuation stay off: GitHub
# renders none of them.
OPTIONS = (
    _O.ENABLE_TABLES
    | _O.ENABLE_STRIKETHROUGH
    | _O.ENABLE_TASKLISTS
    | _O.ENABLE_FOOTNOTES
    | _O.ENABLE_GFM
)
# Containers nested deeper than this are refused (exit 2): no real document comes near, and a
# hostile one (a million ``>``) would otherwise cost a Python object per level.
MAX_DEPTH = 256
_BLANKS = " \t"
_BOM = "\ufeff"
_TO_BLANK = bytes(10 if b == 10 else 32 for b in range(256))  # every byte a space, but \n
_INLINE_TAGS = frozenset(
    ["Emphasis", "Strong", "Strikethrough", "Link", "Image", "Superscript", "Subscript"]
)


# Markdown reads CRLF text as LF.
split_lines = partial(text_lines.split_lines, drop_cr=True)


class Heading(NamedTuple):
    """A heading: its 1-based line, level (1-6), its text as written (inline markup kept) and
    as rendered (``plain``: markup, inline HTML and images dropped, entities decoded)."""

    line: int
    level: int
    text: str
    plain: str = ""

    @property
    def title(self) -> str:
        """The rendered text lower-cased, section numbering (``6.``, ``2.1``) dropped: what a
        required heading such as ``Now`` is compared with."""
        return strip_numbering(self.plain).strip().lower()


class Section(NamedTuple):
    """A heading and its body: lines ``start`` to ``end`` (1-based, inclusive; ``end`` <
    ``start`` when the body is empty), up to the next heading of the same or a higher level."""

    heading: Heading
    start: int
    end: int

    def body(self, lines: list[str]) -> list[str]:
        return lines[self.start - 1 : self.end]


class Link(NamedTuple):
    """A link target as GitHub reads it (escapes and entities resolved) and its 1-based line."""

    line: int
    target: str
    kind: str  # "link" | "image" | "definition"


class Anchor(NamedTuple):
    """An anchor of a document: its line, name (what follows ``#``), and what makes it: the
    heading's text as written, or the HTML element that names it."""

    line: int
    name: str
    source: str
    kind: str  # "heading" | "html"


class Row(NamedTuple):
    """A table row (the header row included): its line, its cells as written (trimmed,
    escaped pipes kept) and as rendered, and the text of its code spans."""

    line: int
    header: bool
    cells: tuple[str, ...] = ()
    plain: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()


class Table:
    """A GFM table: its header row and body rows, which end at a blank line or a new block."""

    __slots__ = ("line", "rows")

    def __init__(self, line: int) -> None:
        self.line = line
        self.rows: list[Row] = []


class Paragraph(NamedTuple):
    """A paragraph (a tight list item's text counts as one): first and last line, and its
    length as rendered on one line (its lines trimmed, joined with one space)."""

    line: int
    end: int
    length: int
    first: str  # its first line, trimmed: what identifies it across versions


class Item(NamedTuple):
    """A list item: its line and the last line of its own text (its first paragraph; nested
    blocks are not its text)."""

    line: int
    end: int


class Document:
    """One parsed markdown document (read-only: the last parse is shared, see :func:`parse`)."""

    __slots__ = (
        "lines",
        "headings",
        "links",
        "html_anchors",
        "tables",
        "paragraphs",
        "items",
        "html",
        "code_mask",
        "_data",
        "_starts",
        "_blank",
        "_sections",
    )

    def __init__(self, lines: list[str], data: bytes, starts: list[int]) -> None:
        self.lines = lines
        self.headings: list[Heading] = []
        self.links: list[Link] = []
        self.html_anchors: list[Anchor] = []
        self.tables: list[Table] = []
        self.paragraphs: list[Paragraph] = []
        self.items: list[Item] = []
        # (line, HTML) of each HTML block line, each inline comment
        self.html: list[tuple[int, str]] = []
        self.code_mask: list[bool] = []  # per line: inside a code block
        self._data = data  # the source, and where each of its lines starts
        self._starts = starts
        self._blank: list[tuple[int, int]] = []  # byte spans that are no prose
        self._sections: list[Section] | None = None

    def sections(self) -> list[Section]:
        """:func:`sections` of the document, computed once (the spec and docs gates both
        read them of one shared parse)."""
        if self._sections is None:
            self._sections = sections(self.lines, self.headings)
        return list(self._sections)

    def anchors(self) -> list[Anchor]:
        """Every anchor GitHub makes, in line order: the headings' and the HTML elements'."""
        names = anchor_names(self.headings)
        with uncollected():
            out = [
                Anchor(h.line, name, h.text, "heading")
                for h, name in zip(self.headings, names, strict=True)
                if name
            ]
        if self.html_anchors:
            out.extend(self.html_anchors)
            out.sort(key=lambda a: a.line)
        return out

    def anchor_set(self) -> set[str]:
        return {a.name for a in self.anchors()}

    def prose(self) -> list[str]:
        """The lines with code (spans and blocks) and raw HTML blanked to spaces: the text in
        which a citation or a marker is read. Line numbers are kept."""
        if not self._blank:
            return list(self.lines)
        buf = bytearray(self._data)
        for start, end in self._blank:
            buf[start:end] = buf[start:end].translate(_TO_BLANK)
        return split_lines(buf.decode("utf-8", "replace"))


def _clean(text: str) -> str:
    """What the parser is given: a leading BOM dropped (GitHub ignores it), and bytes that are
    not UTF-8 (kept by git's decoding as surrogates) replaced, as a browser shows them."""
    if text.startswith(_BOM):
        text = text[1:]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


class _Walk:
    """One pass over the events, filling a :class:`Document`."""

    def __init__(self, text: str, where: str | None):
        self.where = where
        clean = _clean(text)
        self.data = clean.encode("utf-8")
        # Where each line starts (a byte offset), from the lines' lengths in one C-level pass.
        starts = list(
            itertools.accumulate((len(ln) + 1 for ln in self.data.split(b"\n")), initial=0)
        )
        starts.pop()
        self.starts = starts
        # The 1-based line of a byte offset: a C call, not a method's frame.
        self.line: Callable[[int], int] = partial(bisect.bisect_right, starts)
        self.doc = Document(split_lines(text), self.data, starts)
        self.doc.code_mask = [False] * len(self.doc.lines)
        self.clean = clean
        # The walk's state between events. The loop in :meth:`run` keeps only what the most
        # frequent event, plain text outside list items and headings, needs.
        self.blocks: list[str] = []  # the open block tags
        self.in_item = False  # the innermost open block is a list item (a tight item's text)
        self.depth = 0  # every open tag, inline ones included
        self.image = 0  # open images: their alt text is no rendered text of a heading or cell
        self.collect: list[str] | None = None  # rendered text of the open heading
        self.heading: list[int] | None = None  # [line, level, first, last offset of its text]
        self.para_at = -1  # offset of the open paragraph (or a tight item's text), or -1
        self.para_end = 0
        self.para_quote = 0
        self.implicit = False  # the open paragraph is a tight item's text, with no tags
        self.items: list[list[int]] = []  # per open item: [its line, the end of its text or 0]
        self.html_pieces: list[tuple[int, str]] = []
        self.quotes = 0

    def src(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def run(self) -> Document:
        doc = self.doc
        blank = doc._blank.append
        # Read as plain dicts (popitem), not through pyromark's TypedDicts of each event.
        events: Iterator[tuple[Any, Any]] = iter(
            pyromark.events_with_range(self.clean, options=OPTIONS, merge_text=True)
        )
        quiet = True  # no list item's text and no heading is open: text needs no reading
        for event, span in events:
            # Each event and range is a fresh dict of ours: popitem is a single C call, and a
            # range is read only where it is needed.
            if event.__class__ is dict:
                kind, value = event.popitem()
                if kind == "Text" and quiet:  # the most frequent event, at its fastest
                    continue
            else:
                kind, value = event, None
            if kind == "Start":
                quiet = self._start(value, span, events)
            elif kind == "End":
                quiet = self._end(value, span["end"])
            elif not quiet:
                self._leaf(kind, value, span["start"], span["end"])
            elif kind == "Code":
                blank((span["start"], span["end"]))
            elif kind != "SoftBreak" and kind != "HardBreak":
                self._leaf(kind, value, span["start"], span["end"])
        self._definitions()
        doc.links.sort(key=lambda link: link.line)
        return doc

    def _quiet(self) -> bool:
        return not self.in_item and self.heading is None

    def _close_para(self) -> None:
        """The open paragraph ends: record it (its lines trimmed, a block quote's markers on
        its later lines dropped) and, as a list item's first text, the item's last line."""
        start, end = self.para_at, self.para_end
        self.para_at, self.implicit = -1, False
        last = self.line(max(end - 1, start))
        if self.in_item and self.items[-1][1] == 0:
            self.items[-1][1] = last
        pieces = self.src(start, end).split("\n")
        if self.para_quote:
            pieces[1:] = [p.lstrip("> \t") for p in pieces[1:]]
        parts = [p for p in map(str.strip, pieces, itertools.repeat(" \t\r")) if p]
        if parts:
            length = len(" ".join(parts))
            self.doc.paragraphs.append(Paragraph(self.line(start), last, length, parts[0]))

    def _start(self, value: Any, span: Any, events: Iterator[tuple[Any, Any]]) -> bool:
        """A tag opens; returns whether the walk is quiet after it (see :meth:`run`)."""
        payload: Any  # a tag's attributes, read as a plain dict
        name, payload = (value, None) if value.__class__ is str else value.popitem()
        start, end = span["start"], span["end"]
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self._too_deep()
        if name in _INLINE_TAGS:
            self._inline_start(name, payload, start, end)
            return self._quiet()
        if self.implicit:
            self._close_para()
        items = self.items
        if self.in_item and items[-1][1] == 0 and name != "Paragraph":
            items[-1][1] = items[-1][0]  # its first block is no text of its own
        if name == "Table":
            # A table's events, to its end, in a loop of their own: a long table is most of
            # the events of its document, and its cells need little state.
            self._table(events, start, self.depth)
            self.depth -= 1
            self.in_item = bool(self.blocks) and self.blocks[-1] == "Item"
            return self._quiet()
        if name == "Heading":  # the same for headings: a spec may hold 260,000 of them
            self._heading(events, int(payload["level"][1:]), start, end)
            self.depth -= 1
            self.in_item = bool(self.blocks) and self.blocks[-1] == "Item"
            return not self.in_item
        self.blocks.append(name)
        self.in_item = name == "Item"
        if name == "Paragraph":
            self.para_at, self.para_end, self.para_quote = start, end, self.quotes
        elif name == "Item":
            items.append([self.line(start), 0])
        elif name == "BlockQuote":
            self.quotes += 1
        elif name == "CodeBlock":
            self._mark_code(start, end)
            self.doc._blank.append((start, end))
        elif name == "HtmlBlock":
            self.html_pieces = []
            self.doc._blank.append((start, end))
        return self._quiet()

    def _heading(self, events: Iterator[tuple[Any, Any]], level: int, at: int, to: int) -> None:
        """Read a heading's events, from the one after its start to its end. A heading holds
        inline content only: its text is read here, any other event (inline markup, code,
        HTML, breaks) by the walk's own handlers, which then find the heading open (most
        headings have none: the walk's state is set for them only)."""
        heading = [self.line(at), level, to, at]  # [line, level, first, last offset of text]
        collect: list[str] = []
        opened = False
        for event, span in events:
            if event.__class__ is dict:
                kind, value = event.popitem()
            else:
                kind, value = event, None
            if kind == "Text":
                start, end = span["start"], span["end"]
                if start < heading[2]:
                    heading[2] = start
                if end > heading[3]:
                    heading[3] = end
                if not self.image:  # an image's alt text is no text of the heading
                    collect.append(value)
                continue
            if kind == "End" and value.__class__ is dict:
                break  # the heading's own end: nothing inline ends with a payload
            if not opened:
                self.heading, self.collect, self.in_item, opened = heading, collect, False, True
            if kind == "Start":
                self._start(value, span, events)
            elif kind == "End":
                self._end(value, span["end"])
            else:
                self._leaf(kind, value, span["start"], span["end"])
        line, _, first, last = heading
        written = self.data[first:last].decode("utf-8").strip(_BLANKS) if last > first else ""
        self.doc.headings.append(Heading(line, level, written, "".join(collect)))
        if opened:
            self.heading = self.collect = None

    def _reach(self, start: int, end: int) -> None:
        """Inline content from ``start`` to ``end``: it is text of the open tight list item
        (which opens its implicit paragraph) and of the open heading."""
        if self.in_item:
            if self.para_at < 0:
                self.para_at, self.para_quote, self.implicit = start, self.quotes, True
            self.para_end = max(self.para_end, end)
        heading = self.heading
        if heading is not None:
            heading[2], heading[3] = min(heading[2], start), max(heading[3], end)

    def _inline_start(self, name: str, payload: Any, start: int, end: int) -> None:
        self._reach(start, end)
        if name == "Image":
            self.image += 1
        if (name == "Link" or name == "Image") and payload["link_type"] == "Inline":
            self._link(name, payload["dest_url"], end)

    def _end(self, value: Any, end: int) -> bool:
        """A tag closes; returns whether the walk is quiet after it (see :meth:`run`)."""
        name = value if value.__class__ is str else value.popitem()[0]
        self.depth -= 1
        if name in _INLINE_TAGS:
            if name == "Image":
                self.image -= 1
            return self._quiet()
        if self.implicit:
            self._close_para()
        blocks = self.blocks
        blocks.pop()
        self.in_item = bool(blocks) and blocks[-1] == "Item"
        if name == "Paragraph":
            self.para_end = end
            self._close_para()
        elif name == "Item":
            line, own = self.items.pop()
            self.doc.items.append(Item(line, own or line))
        elif name == "Heading" and self.heading is not None:
            line, level, first, last = self.heading
            written = self.src(first, last).strip(_BLANKS) if last > first else ""
            self.doc.headings.append(Heading(line, level, written, "".join(self.collect or ())))
            self.heading, self.collect = None, None
        elif name == "BlockQuote":
            self.quotes -= 1
        elif name == "HtmlBlock":
            self._html(self.html_pieces)
        return self._quiet()

    def _leaf(self, kind: str, value: Any, start: int, end: int) -> None:
        """A leaf event: text, code, HTML, a break, a rule, a footnote reference…"""
        if kind != "Rule":  # a rule is no item's text (and is never in a heading)
            self._reach(start, end)
        collect = self.collect if not self.image else None
        if kind == "Text":
            if collect is not None:
                collect.append(value)
        elif kind == "Code":
            self.doc._blank.append((start, end))
            if collect is not None:
                collect.append(value)
        elif kind == "SoftBreak" or kind == "HardBreak":
            if collect is not None:
                collect.append("\n")
        elif kind == "Html":
            self.html_pieces.append((start, value))
            self.doc.html.append((self.line(start), value))
        elif kind == "InlineHtml":
            self._inline_html(value, start, end)

    def _too_deep(self) -> None:
        raise UsageError(
            f"markdown nested deeper than {MAX_DEPTH} levels: not judged", where=self.where
        )

    def _inline_html(self, value: str, start: int, end: int) -> None:
        doc = self.doc
        doc._blank.append((start, end))
        if value.startswith("<!--"):
            doc.html.append((self.line(start), value))
        elif "=" in value:  # one whole tag: only one with attributes names an anchor
            _tag_anchors(value, self.line(start), doc)

    def _table(self, events: Iterator[tuple[Any, Any]], at: int, depth: int) -> None:
        """Read a table's events, from the one after its start to its end. Inside a table
        only rows, cells and inline events come, and a cell's text is its own (no paragraph,
        heading or list item around it). A long table is most of its document's events, so
        each event does as little as it can: a range is read only at a cell's or a row's end
        (an end has its start's range), a row's line is counted on from the previous row's,
        and a cell of one piece of text is rendered as that piece, without a list."""
        if depth + 2 > MAX_DEPTH:  # its rows, then their cells
            self._too_deep()
        data = self.data
        clean = self.clean
        ascii_only = len(clean) == len(data)  # then byte offsets are character offsets
        count = data.count
        line = self.line(at)
        seen = at  # the offset up to which newlines are counted in ``line``
        table = Table(line)
        self.doc.tables.append(table)
        rows = table.rows
        cells: list[str] = []
        plain: list[str] = []
        codes: list[str] = []
        text: str | None = None  # the rendered text of the open cell: its first piece,
        more: list[str] | None = None  # and all of its pieces once there are several
        inline = 0  # open inline tags in the open cell
        image = 0  # open images: their alt text is no rendered text of a cell
        kind: str
        value: Any
        payload: Any
        for event, span in events:
            if event.__class__ is dict:
                kind, value = event.popitem()
            elif event == "SoftBreak" or event == "HardBreak":
                kind, value = "Text", "\n"
            else:
                continue  # a rule cannot be in a table
            # The most frequent events first: a cell's start and end, then its text.
            if value == "TableCell":
                if kind == "End":
                    start, end = span["start"], span["end"]
                    written = clean[start:end] if ascii_only else data[start:end].decode("utf-8")
                    cells.append(written.strip(_BLANKS))
                    plain.append(("".join(more) if more is not None else text or "").strip(_BLANKS))
                    text = more = None
                continue
            if kind == "Text" or kind == "Code":
                if kind == "Code":
                    self.doc._blank.append((span["start"], span["end"]))
                    codes.append(value)
                if image:
                    continue
                if text is None:
                    text = value
                elif more is None:
                    more = [text, value]
                else:
                    more.append(value)
            elif value == "TableRow" or value == "TableHead":
                if kind == "End":
                    start = span["start"]
                    line += count(b"\n", seen, start)
                    seen = start
                    rows.append(Row(line, value == "TableHead", (*cells,), (*plain,), (*codes,)))
                    del cells[:], plain[:], codes[:]
            elif kind == "Start":
                name, payload = (value, None) if isinstance(value, str) else value.popitem()
                inline += 1
                if depth + 2 + inline > MAX_DEPTH:
                    self._too_deep()
                if name == "Image":
                    image += 1
                if (name == "Link" or name == "Image") and payload["link_type"] == "Inline":
                    self._link(name, payload["dest_url"], span["end"])
            elif kind == "End":
                if value == "Table":
                    return
                inline -= 1
                if value == "Image":
                    image -= 1
            elif kind == "InlineHtml":
                self._inline_html(value, span["start"], span["end"])

    def _link(self, name: str, target: str, end: int) -> None:
        self.doc.links.append(
            Link(self.line(end - 1), target, "image" if name == "Image" else "link")
        )

    def _mark_code(self, start: int, end: int) -> None:
        mask = self.doc.code_mask
        for i in range(self.line(start) - 1, min(self.line(max(end - 1, start)), len(mask))):
            mask[i] = True

    def _html(self, pieces: list[tuple[int, str]]) -> None:
        """The ``id`` and ``name`` attributes of the elements of an HTML block (outside its
        comments)."""
        in_comment = False
        for offset, text in pieces:
            in_comment = _element_anchors(text, in_comment, self.line(offset), self.doc)

    def _definitions(self) -> None:
        found = pyromark.reference_definitions(self.clean, options=OPTIONS)
        for definition in found.values():
            span = definition["span"]
            start = span["start"]
            text = self.src(start, span["end"])
            line = self.line(start)
            colon = text.find("]:")
            rest = text[colon + 2 :] if colon >= 0 else text
            if rest.partition("\n")[0].strip(_BLANKS) == "" and "\n" in rest:
                line += 1  # the target sits on the next line
            self.doc.links.append(Link(line, str(definition["dest"]), "definition"))


class _LinkWalk(_Walk):
    """The light pass of the links gate (SPEC §12): the events are read for what links and
    anchors need only (link and image targets, reference definitions, headings and the
    ``id`` / ``name`` of HTML elements) and every other event is passed over; the
    :class:`Document` it fills holds those, and its lines. A heading is read by the full
    walk's own reader (its rendered text names its anchor), so both give the same anchors; a
    test holds the two passes to the same links and anchors on every document it has."""

    def run(self) -> Document:
        events: Iterator[tuple[Any, Any]] = iter(
            pyromark.events_with_range(self.clean, options=OPTIONS, merge_text=True)
        )
        payload: Any
        for event, span in events:
            if event.__class__ is not dict:
                continue  # a break or a rule: no link, no anchor, no nesting
            kind, value = event.popitem()
            if kind == "Text":
                continue  # the most frequent event: text outside a heading is not read
            if kind == "Start":
                name, payload = (value, None) if value.__class__ is str else value.popitem()
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    self._too_deep()
                if name == "Heading":
                    self._heading(events, int(payload["level"][1:]), span["start"], span["end"])
                    self.depth -= 1
                elif (name == "Link" or name == "Image") and payload["link_type"] == "Inline":
                    self._link(name, payload["dest_url"], span["end"])
                elif name == "HtmlBlock":
                    self.html_pieces = []
            elif kind == "End":
                self.depth -= 1
                if (value if value.__class__ is str else value.popitem()[0]) == "HtmlBlock":
                    self._html(self.html_pieces)
            elif kind == "Html":
                self.html_pieces.append((span["start"], value))
            elif kind == "InlineHtml":
                self._inline_html(value, span["start"], span["end"])
        self._definitions()
        self.doc.links.sort(key=lambda link: link.line)
        return self.doc


def _element_anchors(text: str, in_comment: bool, line: int, doc: Document) -> bool:
    """Add the anchors named by the elements of ``text`` (one line or one inline piece of raw
    HTML) to ``doc``; returns whether a comment is still open at its end. Linear: each step
    moves forward, and a quote or a tag that does not close ends the scan of the piece."""
    i, n = 0, len(text)
    while i < n:
        if in_comment:
            close = text.find("-->", i)
            if close < 0:
                return True
            i, in_comment = close + 3, False
            continue
        at = text.find("<", i)
        if at < 0:
            return False
        if text.startswith("<!--", at):
            i, in_comment = at + 4, True
            continue
        j = at + 1
        while j < n and (text[j].isascii() and (text[j].isalnum() or text[j] == "-")):
            j += 1
        if j == at + 1 or not text[at + 1].isalpha():
            i = at + 1
            continue
        end = _attributes(text, j, at, line, doc)
        if end < 0:
            return False
        i = end
    return in_comment


def _attributes(text: str, i: int, at: int, line: int, doc: Document) -> int:
    """Read the attributes of the tag opened at ``at`` from ``i``; returns the offset past its
    ``>`` (or -1 when it does not close in this piece). Each attribute is one match of a
    regex whose parts cannot overlap (no backtracking)."""
    found: list[str] = []
    while True:
        m = _ATTRIBUTE.compiled.match(text, i)
        if m is None:
            break
        if m.group(1).lower() in ("id", "name"):
            value = m.group(2) or m.group(3) or m.group(4)
            if value:
                found.append(_unescape(value))
        i = m.end()
    m = _TAG_END.compiled.match(text, i)
    if m is None:
        # No ">" (or an unclosed quote): no tag here; stop the piece, so that no later "<"
        # inside the quote is tried again (which would make the scan quadratic).
        return -1
    i = m.end()
    element = text[at:i]
    if len(element) > 80:
        element = element[:77] + "..."
    for value in found:
        doc.html_anchors.append(Anchor(line, value, element, "html"))
    return i


_ATTRIBUTE = LazyRegex(
    r"""[ \t\r\n]+([^ \t\r\n"'>/=]+)"""  # the name
    r"""(?:[ \t\r\n]*=[ \t\r\n]*(?:"([^"]*)"|'([^']*)'|([^ \t\r\n"'=<>`]+)))?"""  # the value
)
_TAG_END = LazyRegex(r"[ \t\r\n]*/?>")


def _unescape(value: str) -> str:
    """An attribute value with its character references resolved, as a browser reads it.
    ``html`` (~5 ms with its entity table) is imported only for a value that has one."""
    if "&" not in value:
        return value
    import html

    return html.unescape(value)


def _tag_anchors(tag: str, line: int, doc: Document) -> None:
    """The anchors named by one inline tag (the parser has checked its syntax)."""
    name = _TAG_NAME.compiled.match(tag)
    if name is None:
        return
    found = []
    for m in _ATTRIBUTE.compiled.finditer(tag, name.end()):
        if m.group(1).lower() in ("id", "name"):
            value = m.group(2) or m.group(3) or m.group(4)
            if value:
                found.append(_unescape(value))
    element = tag if len(tag) <= 80 else tag[:77] + "..."
    for value in found:
        doc.html_anchors.append(Anchor(line, value, element, "html"))


_TAG_NAME = LazyRegex(r"<[A-Za-z][A-Za-z0-9-]*")


def parse(text: str, *, where: str | None = None) -> Document:
    """Parse one document. Raises UsageError (naming ``where``) for nesting deeper than
    :data:`MAX_DEPTH`."""
    # The walk allocates an object per event and keeps many: the cycle collector, run every
    # few hundred allocations over all of them, would make a large document quadratic.
    for seen, doc in _LAST:
        if seen == text:
            return doc  # readers of one file (evidence's markers and its Now section) share it
    with uncollected():
        doc = _Walk(text, where).run()
    _LAST[:] = [(text, doc), *_LAST[:1]]
    return doc


@contextlib.contextmanager
def uncollected() -> Iterator[None]:
    """No cycle collection while many objects that hold no cycle are made (a parse, a list of
    sections or anchors, a matrix's rows): run every few hundred allocations over all the
    objects kept so far, it would make a document of many headings or rows near quadratic."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_LAST: list[tuple[str, Document]] = []  # the last two parses, the latest first


def forget() -> None:
    """Drop the remembered parses (a benchmark measures the parse itself)."""
    _LAST.clear()


def parse_links(text: str, *, where: str | None = None) -> Document:
    """The links and anchors of one document, in the links gate's light pass: ``links``,
    ``headings`` and ``html_anchors`` (so :meth:`Document.anchors`) are those :func:`parse`
    finds; its other fields stay empty. Raises UsageError (naming ``where``) for nesting
    deeper than :data:`MAX_DEPTH`."""
    with uncollected():
        return _LinkWalk(text, where).run()


def parse_lines(lines: list[str], *, where: str | None = None) -> Document:
    return parse("\n".join(lines) + "\n" if lines else "", where=where)


def code_mask(lines: list[str]) -> list[bool]:
    """For each line, whether it lies in a code block (fenced, indented, in a list or not)."""
    return parse_lines(lines).code_mask


def headings(lines: list[str]) -> list[Heading]:
    return parse_lines(lines).headings


def sections(lines: list[str], found: list[Heading] | None = None) -> list[Section]:
    """One section per heading, in the headings' order. One pass: the headings still open
    wait on a stack (their levels rise from bottom to top), and a heading closes every open
    one of its level or deeper, so each heading is pushed and popped once."""
    if found is None:
        found = headings(lines)
    ends = [len(lines)] * len(found)
    open_: list[int] = []  # indexes into ``found`` of the headings whose section runs on
    for k, h in enumerate(found):
        while open_ and found[open_[-1]].level >= h.level:
            ends[open_.pop()] = h.line - 1
        open_.append(k)
    with uncollected():
        return [Section(h, h.line + 1, end) for h, end in zip(found, ends, strict=True)]


def code_texts(text: str) -> list[str]:
    """The text of each code span of ``text`` (a line read as markdown), in order."""
    out: list[str] = []
    for event, _ in pyromark.events_with_range(text.strip(_BLANKS), options=OPTIONS):
        if event.__class__ is dict and "Code" in event:
            out.append(str(event["Code"]).strip(" \t\n"))
    return out


def strip_numbering(text: str) -> str:
    """``6. Now`` -> ``Now``; ``2.1 Owed`` -> ``Owed``; other text unchanged."""
    if not text or text[0] not in _NUMBERING_STARTS:
        return text  # most headings: no numbering, and no regex run for them
    m = _NUMBERING.match(text)
    return text[m.end() :] if m else text


# Section numbering: digits, dot-separated groups, an optional final dot, then a blank. Each part
# is unambiguous (digits, then a dot that must be followed by a digit or a blank): no backtracking.
_NUMBERING = re.compile(r"[ \t]*[0-9]+(?:\.[0-9]+)*\.?[ \t]+")
_NUMBERING_STARTS = frozenset(" \t0123456789")


def anchor_names(found: list[Heading]) -> list[str]:
    """The anchor of each heading, repeats suffixed ``-1``, ``-2``… as GitHub does."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    out: list[str] = []
    for h in found:
        base = slug(h.plain)
        candidate = base
        if candidate in taken:
            k = seen.get(base, 0)
            while True:
                k += 1
                candidate = f"{base}-{k}"
                if candidate not in taken:
                    break
            seen[base] = k
        taken.add(candidate)
        out.append(candidate)
    return out
