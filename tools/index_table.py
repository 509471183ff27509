"""The issue index: a markdown table ``| Issue | Row | Title | Kind |`` after a free preamble.

Rows are keyed by issue number (``[#N](…)`` or ``#N`` in the first cell). ``Row`` is a row id
(``[A-Z0-9][A-Za-z0-9_.-]*``) or ``—``. Rows are split into cells as GFM splits them: the
leading and trailing pipes are optional, and a pipe right after a backslash (``\\|``, also in
``\\\\|``) is an escaped pipe inside the cell, never a cell boundary.

The file splits into a *frame* (preamble, header line, delimiter line: compared whole) and a
*body* (rows). A body line that is not a row is malformed, with its line number; blank lines
after the last row are tolerated, a blank line between rows is not (markdown ends the table
there, so the rows after it silently stop being a table).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from tools.appendonly import Entry

HEADER = ("issue", "row", "title", "kind")
HEADER_LINE = "| Issue | Row | Title | Kind |"
DELIMITER_LINE = "|---|---|---|---|"
NO_ROW = "—"
ROW_ID = re.compile(r"[A-Z0-9][A-Za-z0-9_.-]*")
_ISSUE = re.compile(r"#(\d+)|\[#(\d+)\]\([^()\s]+\)")
_DELIM_CELL = re.compile(r":?-+:?")
# A run of backslashes and the one character after it (a pipe too: GFM's escaped pipe), then
# plain text; unambiguous, so no backtracking.
_CELL_TEXT = r"[^\\|\n]*(?:\\+[^\\\n][^\\|\n]*)*"
# A well-formed row in one match (the common case); anything else goes the long way, which
# also says what is wrong.
_ROW_TEXT = (
    r"[ \t]*\|[ \t]*(#(\d+)|\[#(\d+)\]\([^()\s]+\))[ \t]*"
    r"\|[ \t]*([A-Z0-9][A-Za-z0-9_.-]*|—)[ \t]*"
    rf"\|({_CELL_TEXT})\|({_CELL_TEXT})\|[ \t\r]*"
)
_ROW_FAST = re.compile(_ROW_TEXT)
_ROW_LINE = re.compile(rf"^{_ROW_TEXT}$", re.MULTILINE)
# Cheap: the issue number of anything that looks like a row (used only to subtract sets).
_ROW_KEY = re.compile(r"^[ \t]*\|[ \t]*\[?#(\d+)", re.MULTILINE)


class Row(NamedTuple):
    key: int
    issue: str
    row: str
    title: str  # as written (escapes kept)
    kind: str
    line: int  # 1-based

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """What "the row's text" means for edits: its four cells, trimmed (alignment
        whitespace is cosmetic)."""
        return (self.issue, self.row, self.title, self.kind)

    @property
    def title_text(self) -> str:
        return unescape_cell(self.title)

    def entry(self) -> Entry:
        return Entry(self.key, (self.issue, self.row, self.title, self.kind), self.line)


class BodyLine(NamedTuple):
    """A non-blank line of the table body in file order: a row (``key`` is its issue number)
    or a malformed line (``key`` is ``("~", text)``, so merges carry it as an opaque line)."""

    key: object
    identity: object
    text: str


@dataclass
class Table:
    frame: list[str] = field(default_factory=list)  # preamble + header + delimiter lines
    header_line: int | None = None  # 1-based, None: no header found
    rows: list[Row] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)  # (line, why)
    line_count: int = 0
    lines: list[str] = field(default_factory=list, repr=False)

    def keys(self) -> set[int]:
        return {r.key for r in self.rows}

    def entries(self) -> list[Entry]:
        return [r.entry() for r in self.rows]

    @property
    def body(self) -> list[BodyLine]:
        """Rows and malformed non-blank lines of the table, in file order (for merging)."""
        items: list[tuple[int, BodyLine]] = [
            (r.line, BodyLine(r.key, r.identity, self.lines[r.line - 1])) for r in self.rows
        ]
        if self.header_line is not None:
            taken = {r.line for r in self.rows}
            for line_no, _ in self.malformed:
                text = self.lines[line_no - 1] if line_no <= len(self.lines) else ""
                if line_no > len(self.frame) and line_no not in taken and text.strip():
                    taken.add(line_no)
                    items.append((line_no, BodyLine(("~", text.strip()), text.strip(), text)))
        return [item for _, item in sorted(items, key=lambda pair: pair[0])]


def split_lines(text: str) -> list[str]:
    """Lines without their ``\\n`` (a final newline ends the last line, it starts none)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def split_cells(line: str) -> list[str] | None:
    """The trimmed cells of a table row as GFM splits it (escapes kept): cells end at pipes
    that no backslash precedes, the outer pipes are optional; None when the line holds no
    cell boundary at all."""
    s = line.strip()
    pieces = s.split("|")
    if "\\|" in s:
        # A piece that ends with a backslash ends at an escaped pipe: it goes on.
        cells = []
        group = [pieces[0]]
        for piece in pieces[1:]:
            if group[-1].endswith("\\"):
                group.append(piece)
            else:
                cells.append("|".join(group))
                group = [piece]
        cells.append("|".join(group))
    else:
        cells = pieces
    if len(cells) < 2:
        return None
    if s.startswith("|"):
        del cells[0]
    if cells and s.endswith("|") and not s.endswith("\\|"):
        cells.pop()
    return [c.strip() for c in cells]


def parse_row(line: str, line_no: int) -> Row | str:
    """A row, or why the line is not one."""
    m = _ROW_FAST.fullmatch(line)
    if m:
        title, kind = m.group(5).strip(), m.group(6).strip()
        if title and kind:
            key = int(m.group(2) or m.group(3))
            return Row(key, m.group(1), m.group(4), title, kind, line_no)
    cells = split_cells(line)
    if cells is None:
        return "not a table row (no `|` between cells)"
    if len(cells) != 4:
        return f"{len(cells)} cells, expected 4 (Issue | Row | Title | Kind); escape a pipe as \\|"
    issue, row, title, kind = cells
    m = _ISSUE.fullmatch(issue)
    if not m:
        return f"Issue cell {issue!r} is not #N or [#N](link)"
    if row != NO_ROW and not ROW_ID.fullmatch(row):
        return f"Row cell {row!r} is not a row id ([A-Z0-9][A-Za-z0-9_.-]*) or {NO_ROW}"
    if not title:
        return "empty Title cell"
    if not kind:
        return "empty Kind cell"
    return Row(int(m.group(1) or m.group(2)), issue, row, title, kind, line_no)


def _is_header(line: str) -> bool:
    cells = split_cells(line)
    return cells is not None and tuple(c.lower() for c in cells) == HEADER


def _is_delimiter(line: str) -> bool:
    cells = split_cells(line)
    return cells is not None and len(cells) == 4 and all(_DELIM_CELL.fullmatch(c) for c in cells)


def parse(text: str) -> Table:
    lines = split_lines(text)
    table = Table(line_count=len(lines), lines=lines)
    header = next((i for i, ln in enumerate(lines) if _is_header(ln)), None)
    if header is None:
        table.frame = lines
        first_pipe = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")), 0)
        table.malformed.append(
            (first_pipe + 1, f"no `{HEADER_LINE}` table header: the index has no table")
        )
        return table
    table.header_line = header + 1
    body = header + 1
    if body < len(lines) and _is_delimiter(lines[body]):
        body += 1
    else:
        table.malformed.append(
            (body + 1, f"the header must be followed by a delimiter line like {DELIMITER_LINE}")
        )
    table.frame = lines[:body]
    last = len(lines)
    while last > body and not lines[last - 1].strip():
        last -= 1  # blank lines after the last row end the file, not the table
    if not _parse_fast(table, lines, body, last):
        _parse_lines(table, lines, body, last)
    return table


def _parse_fast(table: Table, lines: list[str], body: int, last: int) -> bool:
    """One regex pass over the whole body; gives up (False, nothing recorded) at the first
    line that is not a well-formed row, leaving the line-by-line parse to say why."""
    text = "\n".join(lines[body:last])
    rows: list[Row] = []
    pos = 0
    line_no = body + 1
    for m in _ROW_LINE.finditer(text):
        if m.start() != pos:
            return False
        title, kind = m.group(5).strip(), m.group(6).strip()
        if not title or not kind:
            return False
        rows.append(
            Row(int(m.group(2) or m.group(3)), m.group(1), m.group(4), title, kind, line_no)
        )
        pos = m.end() + 1
        line_no += 1
    if pos < len(text):
        return False
    table.rows = rows
    return True


def _parse_lines(table: Table, lines: list[str], body: int, last: int) -> None:
    for i in range(body, last):
        line = lines[i]
        if not line.strip():
            table.malformed.append(
                (i + 1, "blank line inside the table: markdown ends the table here")
            )
            continue
        row = parse_row(line, i + 1)
        if isinstance(row, str):
            table.malformed.append((i + 1, row))
        else:
            table.rows.append(row)


def quick_keys(text: str) -> set[int]:
    """Issue numbers of every line that looks like a row, without parsing the table."""
    return {int(k) for k in _ROW_KEY.findall(text)}


def _pipe_runs(text: str) -> list[tuple[int, int]]:
    """(start of the backslash run, position of the pipe) for each pipe, in one pass."""
    out: list[tuple[int, int]] = []
    run_start = -1
    for i, ch in enumerate(text):
        if ch == "\\":
            if run_start < 0:
                run_start = i
        else:
            if ch == "|":
                out.append((run_start if run_start >= 0 else i, i))
            run_start = -1
    return out


def _rewrite_pipes(text: str, new_run: Callable[[int], str]) -> str:
    """Replace each backslash run + pipe by ``new_run(run length)`` (linear, no regex)."""
    if "|" not in text:
        return text
    parts: list[str] = []
    at = 0
    for start, pipe in _pipe_runs(text):
        parts.append(text[at:start])
        parts.append(new_run(pipe - start))
        at = pipe + 1
    parts.append(text[at:])
    return "".join(parts)


def escape_cell(text: str) -> str:
    """Escape pipes for a cell; backslashes right before a pipe are doubled first so that
    the text reads back exactly."""
    return _rewrite_pipes(text, lambda n: "\\" * (2 * n) + "\\|")


def unescape_cell(text: str) -> str:
    """The text GFM renders for the pipes of a cell (the inverse of :func:`escape_cell`): a
    pipe after N backslashes is an escaped pipe, and the N - 1 backslashes before that
    escape are read in pairs, so it shows (N - 1) // 2 backslashes and a pipe."""
    return _rewrite_pipes(text, lambda n: "\\" * ((n - 1) // 2) + "|" if n else "|")


def render_row(issue: int, row: str, title: str, kind: str) -> str:
    return f"| #{issue} | {row} | {escape_cell(title)} | {escape_cell(kind)} |"


def skeleton(preamble: str = "# Issue index\n") -> str:
    """A new index: a preamble, the header and the delimiter."""
    return f"{preamble.rstrip()}\n\n{HEADER_LINE}\n{DELIMITER_LINE}\n"


# -- the merge driver ---------------------------------------------------------------------------
def _conflict(ours: list[str], theirs: list[str]) -> list[str]:
    return ["<<<<<<< ours", *ours, "=======", *theirs, ">>>>>>> theirs"]


def _first(body: list[BodyLine]) -> dict[object, BodyLine]:
    out: dict[object, BodyLine] = {}
    for item in body:
        out.setdefault(item.key, item)
    return out


def merge3(base: str, ours: str, theirs: str) -> tuple[str, list[str]]:
    """The ordered union: base rows (each merged three-way), then ours' additions, then
    theirs', de-duplicated by key. Returns the text and the conflicts (same key, different
    text); each conflict is written into the text between conflict markers."""
    b, o, t = parse(base), parse(ours), parse(theirs)
    conflicts: list[str] = []
    # Blocks of lines, flattened at the end, so a conflict can replace one line in place.
    blocks: list[list[str]] = []
    if o.frame == t.frame or t.frame == b.frame:
        blocks.append(list(o.frame))
    elif o.frame == b.frame:
        blocks.append(list(t.frame))
    else:
        conflicts.append("the preamble or header was changed differently on both sides")
        blocks.append(_conflict(o.frame, t.frame))
    bf, of, tf = _first(b.body), _first(o.body), _first(t.body)
    for key, old in bf.items():
        mine, yours = of.get(key), tf.get(key)
        mine_id = mine.identity if mine else None
        yours_id = yours.identity if yours else None
        if mine_id == yours_id:
            pick = mine
        elif mine_id == old.identity:
            pick = yours  # only theirs changed (or removed) it
        elif yours_id == old.identity:
            pick = mine
        else:
            conflicts.append(f"{_name(key)} was changed differently on both sides")
            blocks.append(_conflict([mine.text] if mine else [], [yours.text] if yours else []))
            continue
        if pick is not None:
            blocks.append([pick.text])
    added: list[dict[object, tuple[BodyLine, int]]] = [{}, {}]  # per side: key -> (line, block)
    for side, body in enumerate((o.body, t.body)):
        for item in body:
            if item.key in bf:
                continue
            mine_at = added[0].get(item.key) if side == 1 else None
            if mine_at is not None:
                mine, at = mine_at
                if mine.identity != item.identity and at >= 0:
                    conflicts.append(
                        f"{_name(item.key)} was added on both sides with different text"
                    )
                    blocks[at] = _conflict([mine.text], [item.text])
                    added[0][item.key] = (mine, -1)  # one conflict per key
                continue
            prev = added[side].get(item.key)
            if prev is not None and prev[0].identity == item.identity:
                continue  # the same row twice on one side: once is enough
            if prev is None:
                added[side][item.key] = (item, len(blocks))
            blocks.append([item.text])  # a side's own duplicate stays for the gate to report
    return "\n".join(line for block in blocks for line in block) + "\n", conflicts


def _name(key: object) -> str:
    return f"issue #{key}" if isinstance(key, int) else f"line {key[1]!r}"  # type: ignore[index]
