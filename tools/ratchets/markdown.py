"""The ``markdown`` kind: four fixed measures of one markdown file, each a bucket.

- ``chars``: characters of the file (a CRLF counts as one; a byte that is not UTF-8 is one);
- ``h2_sections``: level-2 headings (ATX ``##`` or setext ``---``) outside fenced code;
- ``long_paragraphs``: paragraphs longer than ``paragraph_max`` characters;
- ``oversized_cells``: table cells longer than ``cell_max`` characters.

A paragraph is a run of non-blank lines outside fenced code that are neither headings nor
table lines; a list item starts a new one. Its length is its lines, trimmed, joined with one
space (as rendered). A table line is one whose first non-blank character is ``|``; its cells
are split as the issue index splits them (``\\|`` escapes a pipe). Everything is linear:
lines are classified with string operations (:mod:`tools.markdown`).
"""

from __future__ import annotations

BUCKETS = ("chars", "h2_sections", "long_paragraphs", "oversized_cells")
PARAGRAPH_MAX = 800
CELL_MAX = 220


def _table_line(line: str) -> bool:
    return line.lstrip(" \t").startswith("|")


def measure(
    text: str, paragraph_max: int = PARAGRAPH_MAX, cell_max: int = CELL_MAX
) -> tuple[dict[str, int], dict[str, list[tuple[int, str]]]]:
    """(counts, sites): the four counts and, for the three that have sites, each site as
    (line, text that identifies it across versions)."""
    # Loaded here: a repository without a markdown ratchet never pays for them.
    from tools import markdown as md
    from tools.index_table import split_cells

    lines = md.split_lines(text)
    mask = md.code_mask(lines)
    found = md.headings(lines, mask)
    heading_lines: set[int] = set()
    for h in found:
        heading_lines.add(h.line)
        if not md.is_heading_line(lines[h.line - 1]):
            heading_lines.add(h.line + 1)  # a setext heading's underline
    sites: dict[str, list[tuple[int, str]]] = {b: [] for b in BUCKETS[1:]}
    sites["h2_sections"] = [(h.line, h.text) for h in found if h.level == 2]

    def close(start: int, parts: list[str]) -> None:
        if parts:
            joined = " ".join(parts)
            if len(joined) > paragraph_max:
                sites["long_paragraphs"].append((start, parts[0]))

    start, parts = 0, []
    for i, line in enumerate(lines, start=1):
        if mask[i - 1] or i in heading_lines or not line.strip() or _table_line(line):
            close(start, parts)
            start, parts = 0, []
            if not mask[i - 1] and _table_line(line):
                for cell in split_cells(line) or []:
                    if len(cell) > cell_max:
                        sites["oversized_cells"].append((i, cell))
            continue
        if parts and md.is_list_item(line):
            close(start, parts)
            start, parts = 0, []
        if not parts:
            start = i
        parts.append(line.strip())
    close(start, parts)
    counts = {
        "chars": len(text) - text.count("\r\n"),
        **{name: len(found_sites) for name, found_sites in sites.items()},
    }
    return counts, sites
