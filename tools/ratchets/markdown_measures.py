"""The ``markdown`` kind: four fixed measures of one markdown file, each a bucket.

- ``chars``: characters of the file (a CRLF counts as one; a byte that is not UTF-8 is one);
- ``h2_sections``: level-2 headings (ATX ``##`` or setext ``---``), wherever GitHub renders one;
- ``long_paragraphs``: paragraphs longer than ``paragraph_max`` characters;
- ``oversized_cells``: table cells longer than ``cell_max`` characters.

The file is read as GitHub reads it (:mod:`tools.markdown`). A paragraph is a CommonMark
paragraph, in a block quote or a list item too (a tight list item's text is one); its length
is its lines, trimmed, joined with one space (as rendered). A cell is a cell of a GFM table:
trimmed, as written (``\\|`` is an escaped pipe inside it); a table ends at a blank line, so
lines after one are never its cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.markdown import Document

BUCKETS = ("chars", "h2_sections", "long_paragraphs", "oversized_cells")
PARAGRAPH_MAX = 800
CELL_MAX = 220


def measure(
    text: str,
    paragraph_max: int = PARAGRAPH_MAX,
    cell_max: int = CELL_MAX,
    where: str | None = None,
) -> tuple[dict[str, int], dict[str, list[tuple[int, str]]]]:
    """(counts, sites): the four counts and, for the three that have sites, each site as
    (line, text that identifies it across versions)."""
    # Loaded here: a repository without a markdown ratchet never pays for the parser.
    from tools import markdown as md

    sites = document_sites(md.parse(text, where=where), paragraph_max, cell_max)
    counts = {
        "chars": len(text) - text.count("\r\n"),
        **{name: len(found_sites) for name, found_sites in sites.items()},
    }
    return counts, sites


def document_sites(
    doc: Document, paragraph_max: int = PARAGRAPH_MAX, cell_max: int = CELL_MAX
) -> dict[str, list[tuple[int, str]]]:
    """The sites of the three buckets that have them, in a parsed document."""
    return {
        "h2_sections": [(h.line, h.text) for h in doc.headings if h.level == 2],
        "long_paragraphs": [(p.line, p.first) for p in doc.paragraphs if p.length > paragraph_max],
        "oversized_cells": [
            (row.line, cell)
            for table in doc.tables
            for row in table.rows
            for cell in row.cells
            if len(cell) > cell_max
        ],
    }
