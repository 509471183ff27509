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

import functools
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from operator import lt
from typing import Any, NamedTuple

from tools.appendonly import Entry
from tools.git import decode, encode
from tools.lazy_regex import LazyRegex
from tools.lines import split_lines

HEADER = ("issue", "row", "title", "kind")
HEADER_LINE = "| Issue | Row | Title | Kind |"
DELIMITER_LINE = "|---|---|---|---|"
NO_ROW = "—"
ROW_ID = LazyRegex(r"[A-Z0-9][A-Za-z0-9_.-]*")
_ISSUE = LazyRegex(r"#(\d+)|\[#(\d+)\]\([^()\s]+\)")
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
_ROW_FAST = LazyRegex(_ROW_TEXT)
# The same rows as bytes, for reading a whole body in one call. Stricter than _ROW_TEXT where
# str and bytes patterns differ: digits, the link target and the first character of Title and
# Kind (which must prove that ``strip()`` leaves the cell non-empty) are ASCII only; a line
# this refuses goes through parse_row. Possessive: a failed row costs one pass over it.
_B_CELL = rb"[^\\|\n]*+(?:\\++[^\\\n][^\\|\n]*+)*+"
_B_FILLED = rb"(?=[ \t]*+[\x21-\x7b\x7d\x7e])"
_B_ROW = (
    rb"[ \t]*+\|[ \t]*+(?:#[0-9]++|\[#[0-9]++\]\([\x21-\x27\x2a-\x7e]++\))[ \t]*+"
    rb"\|[ \t]*+(?:[A-Z0-9][A-Za-z0-9_.\-]*+|\xe2\x80\x94)[ \t]*+"
    rb"\|" + _B_FILLED + _B_CELL + rb"\|" + _B_FILLED + _B_CELL + rb"\|[ \t\r]*+\n"
)
_ROWS = re.compile(rb"(?:" + _B_ROW + rb")*+")
# The same rows for RE2, whose automaton reads a large body several times faster than ``re``:
# no possessive quantifier is needed (each one above is followed by a byte it cannot take,
# so it never gives anything back), and the lookahead of _B_FILLED is spelled out: blanks,
# then either a character of its class other than a backslash and the rest of the cell, or
# the cell's escape runs from its first character.
_R_ESC = rb"\\+[^\\\n][^\\|\n]*"
_R_FILLED = (
    rb"[ \t]*(?:[\x21-\x5b\x5d-\x7b\x7d\x7e][^\\|\n]*(?:" + _R_ESC + rb")*|(?:" + _R_ESC + rb")+)"
)
_R_AFTER_ISSUE = (
    rb"[ \t]*\|[ \t]*(?:[A-Z0-9][A-Za-z0-9_.\-]*|\xe2\x80\x94)[ \t]*"
    rb"\|" + _R_FILLED + rb"\|" + _R_FILLED + rb"\|[ \t\r]*\n"
)
_R_ROW = rb"[ \t]*\|[ \t]*(?:#[0-9]+|\[#[0-9]+\]\([\x21-\x27\x2a-\x7e]+\))" + _R_AFTER_ISSUE
_R_PLAIN_ROW = rb"\| #[0-9]+" + _R_AFTER_ISSUE  # a row of _R_ROW that starts ``| #N``
_RE2_FROM = 1 << 18  # body bytes from which RE2 pays for its import (about 3 ms)
# The key of each row read by _ROWS, from the newline before it (a literal: the search
# jumps from newline to newline instead of trying every position).
_KEYS = re.compile(rb"\n[ \t]*+\|[ \t]*+\[?#([0-9]++)")
_PLAIN_KEYS = re.compile(rb"\n\| #([0-9]+)")  # the same, for rows spelled ``| #N``
_CHUNK = 1 << 20
_ASCII_BLANKS = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
# Cheap: the issue number of anything that looks like a row (used only to subtract sets).
_ROW_KEY = LazyRegex(r"^[ \t]*\|[ \t]*\[?#(\d+)", re.MULTILINE)


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


class Table:
    """The parsed index. Rows are kept compact: their issue numbers and line numbers in file
    order (``row_keys``, ``row_lines``); :attr:`rows` builds the full :class:`Row` objects
    only when a caller asks for them (a million-row index never needs them)."""

    __slots__ = (
        "frame",
        "header_line",
        "malformed",
        "row_keys",
        "row_lines",
        "raw",
        "body_start",
        "body_end",
        "_rows",
        "_lines",
        "_unique",
        "__weakref__",  # the index gate keeps the tables it parsed while they are in use
    )

    def __init__(self, raw: bytes) -> None:
        self.frame: list[str] = []  # preamble + header + delimiter lines
        self.header_line: int | None = None  # 1-based, None: no header found
        self.malformed: list[tuple[int, str]] = []  # (line, why)
        self.row_keys: Sequence[int] = []
        self.row_lines: Sequence[int] = []
        self.raw = raw
        # Byte offsets of the body: from the first line after the frame to the end of the
        # last non-blank line (its newline included when it has one).
        self.body_start = 0
        self.body_end = 0
        self._rows: list[Row] | None = None
        self._lines: list[str] | None = None
        self._unique: bool | None = None

    @property
    def row_count(self) -> int:
        return len(self.row_keys)

    @property
    def rows(self) -> list[Row]:
        if self._rows is None:
            wanted = iter(self.row_lines)
            rows: list[Row] = []
            want = next(wanted, None)
            line_no = len(self.frame) + 1
            for a, b in _lines_from(self.raw, self.body_start):
                if want is None:
                    break
                if line_no == want:
                    row = parse_row(decode(self.raw[a:b]), line_no)
                    assert isinstance(row, Row), "a line recorded as a row parses as one"
                    rows.append(row)
                    want = next(wanted, None)
                line_no += 1
            self._rows = rows
        return self._rows

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = split_lines(decode(self.raw))
        return self._lines

    def line_text(self, line_no: int) -> str:
        """The text of 1-based line ``line_no`` (decoded), found without splitting the file."""
        at = line_start(self.raw, line_no)
        end = self.raw.find(b"\n", at)
        return decode(self.raw[at : end if end >= 0 else len(self.raw)])

    def row_at(self, index: int) -> Row:
        """The ``index``-th row (0-based), parsed from its line."""
        line_no = self.row_lines[index]
        row = parse_row(self.line_text(line_no), line_no)
        assert isinstance(row, Row), "a line recorded as a row parses as one"
        return row

    def keys(self) -> set[int]:
        return set(self.row_keys)

    def entries(self) -> list[Entry]:
        return [r.entry() for r in self.rows]

    @property
    def unique(self) -> bool:
        """No issue number twice."""
        if self._unique is None:
            self._unique = len(set(self.row_keys)) == len(self.row_keys)
        return self._unique

    @property
    def clean(self) -> bool:
        """A header, no malformed line, no issue number twice: the rows are the consecutive
        lines of the body, which is what the compact comparisons need."""
        return self.header_line is not None and not self.malformed and self.unique

    def duplicates(self) -> list[tuple[int, int, int]]:
        """(issue number, line of its first row, line of the repeat) per repeated row, in
        file order."""
        keys = self.row_keys
        if self.unique:
            return []
        first: dict[int, int] = {}
        out = []
        for key, line in zip(keys, self.row_lines, strict=True):
            at = first.setdefault(key, line)
            if at != line:
                out.append((key, at, line))
        return out

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


def line_start(raw: bytes, line_no: int) -> int:
    """Byte offset of 1-based line ``line_no`` of ``raw``."""
    left, lo, step = line_no - 1, 0, 1 << 20
    if not left:
        return 0
    while True:  # the chunk that holds the newline ending line ``line_no - 1``, counted in C
        n = raw.count(b"\n", lo, lo + step)
        if n >= left:
            break
        if lo + step >= len(raw):
            raise ValueError(f"no line {line_no}")
        left, lo = left - n, lo + step
    hi = lo + step
    while hi - lo > 256:  # bisect it
        mid = (lo + hi) // 2
        n = raw.count(b"\n", lo, mid)
        if n >= left:
            hi = mid
        else:
            left, lo = left - n, mid
    for _ in range(left):
        lo = raw.index(b"\n", lo) + 1
    return lo


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
    m = _ROW_FAST.compiled.fullmatch(line)
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
    m = _ISSUE.compiled.fullmatch(issue)
    if not m:
        return f"Issue cell {issue!r} is not #N or [#N](link)"
    if row != NO_ROW and not ROW_ID.compiled.fullmatch(row):
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
    """The table of ``text`` (see :func:`parse_bytes`)."""
    return parse_bytes(encode(text))


def _lines_from(raw: bytes, at: int) -> Iterator[tuple[int, int]]:
    """(start, end) byte offsets of the lines from offset ``at``, newlines excluded."""
    size = len(raw)
    while at < size:
        nl = raw.find(b"\n", at)
        end = size if nl < 0 else nl
        yield at, end
        at = end + 1


def _body_end(raw: bytes, start: int) -> int:
    """Where the body ends: after the last line (from ``start``) that is not blank, as
    ``str.strip`` sees blank (Unicode whitespace included); trailing blank lines end the file,
    not the table."""
    end = len(raw)
    while end > start:
        # Whole lines of ASCII whitespace first, in C; then the last line decoded.
        cut = max(start, end - (1 << 16))
        tail = raw[cut:end].rstrip(_ASCII_BLANKS)
        if not tail and cut > start:
            end = cut
            continue
        stop = cut + len(tail)
        line_at = raw.rfind(b"\n", start, stop) + 1 if stop > start else start
        line_at = max(line_at, start)
        if decode(raw[line_at:stop]).strip():
            # Its newline may lie past ``end``: blanks of the same line can span a window.
            nl = raw.find(b"\n", stop)
            return len(raw) if nl < 0 else nl + 1
        end = line_at
    return start


def parse_bytes(raw: bytes) -> Table:
    """The table of the index file ``raw``.

    Well-formed rows are read in bulk by :data:`_ROWS`, a bytes pattern that accepts only
    rows that :func:`parse_row` reads the same way (and leaves anything it cannot prove to
    it: a non-ASCII character where a cell must start, other whitespace, a row without its
    trailing pipe); every other line goes through :func:`parse_row`, one line at a time. A
    large body is read by RE2's spelling of the same pattern (:data:`_R_ROW`), its keys are
    checked for repeats as they are read, and its rows' line numbers are a range while no
    line breaks the run.
    """
    table = Table(raw)
    frame: list[str] = []
    header: int | None = None
    body_at = len(raw)
    for i, (a, b) in enumerate(_lines_from(raw, 0)):
        line = decode(raw[a:b])
        frame.append(line)
        if _is_header(line):
            header, body_at = i, b + 1
            break
    if header is None:
        table.frame = frame
        first_pipe = next((i for i, ln in enumerate(frame) if ln.lstrip().startswith("|")), 0)
        table.malformed.append(
            (first_pipe + 1, f"no `{HEADER_LINE}` table header: the index has no table")
        )
        table.body_start = table.body_end = len(raw)
        return table
    table.header_line = header + 1
    body_line = header + 2
    if body_at < len(raw):
        nl = raw.find(b"\n", body_at)
        end = len(raw) if nl < 0 else nl
        delim = decode(raw[body_at:end])
        if _is_delimiter(delim):
            frame.append(delim)
            body_at, body_line = end + 1, body_line + 1
    if len(frame) == header + 1:
        table.malformed.append(
            (body_line, f"the header must be followed by a delimiter line like {DELIMITER_LINE}")
        )
    table.frame = frame
    body_at = min(body_at, len(raw))
    last = _body_end(raw, body_at)
    table.body_start, table.body_end = body_at, last
    _scan_body(table, raw, body_at, last, body_line)
    return table


RowsEnd = Callable[[bytes, int, int], tuple[int, bool]]


def _rows_end(size: int) -> RowsEnd:
    """The end of the run of well-formed rows from ``pos`` (``end`` at most), and whether
    each of its lines starts ``| #N``; read by the bytes pattern: RE2's for a body of
    ``size`` bytes past :data:`_RE2_FROM`, else ``re``'s (both accept the same lines)."""
    if size < _RE2_FROM:

        def by_re(raw: bytes, pos: int, end: int) -> tuple[int, bool]:
            rows = _ROWS.match(raw, pos, end)  # never None: zero rows is a match
            return (rows.end() if rows else pos), False

        return by_re
    plain, bulk = _re2_rows()

    def by_re2(raw: bytes, pos: int, end: int) -> tuple[int, bool]:
        if plain.fullmatch(raw, pos, end):
            return end, True
        rows = bulk.match(raw, pos, end)
        return (int(rows.end()) if rows else pos), False

    return by_re2


@functools.cache
def _re2_rows() -> tuple[Any, Any]:
    """RE2's patterns of :data:`_R_PLAIN_ROW` and :data:`_R_ROW` runs."""
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # a byte is a character: any bytes read
    options.log_errors = False
    return tuple(re2.compile(b"(?:" + row + b")*", options) for row in (_R_PLAIN_ROW, _R_ROW))


class _Keys:
    """The issue numbers of a body's rows in file order, machine integers (8 bytes a row)
    until one past 2**63 turns them into a list; and whether one repeats, found while they
    are read: while they only rise none can (one comparison a row), after that by the set of
    those seen, which lives as long as the reading."""

    def __init__(self) -> None:
        self.keys: array[int] | list[int] = array("q")
        self._last: int | None = None  # the last key while every key so far rose
        self._seen: set[int] | None = None
        self.unique = True

    def add(self, values: list[int]) -> None:
        if not values:
            return
        if self._last is not None or not self.keys:
            last = self._last
            if (last is None or last < values[0]) and all(map(lt, values, values[1:])):
                self._last = values[-1]
            else:
                self._last = None
                self._seen = set(self.keys)
        seen = self._seen
        if seen is not None and self.unique:
            before = len(seen)
            seen.update(values)
            if len(seen) - before != len(values):
                self.unique, self._seen = False, None  # a repeat: the set has answered
        if isinstance(self.keys, list):
            self.keys.extend(values)
            return
        try:
            self.keys.extend(array("q", values))  # built whole first: all or nothing
        except OverflowError:
            self.keys = [*self.keys, *values]


def _run_keys(raw: bytes, pos: int, stop: int, plain: bool) -> list[int]:
    """The issue numbers of the rows from ``pos`` to ``stop`` (every line a row, as the bulk
    pattern read them): the spelling ``| #N`` in one literal search when every line has it
    (``plain``: known to), else each row's key as :data:`_KEYS` reads it."""
    found = _PLAIN_KEYS.findall(raw, pos - 1, stop)
    if not plain and len(found) != raw.count(b"\n", pos, stop):
        found = _KEYS.findall(raw, pos - 1, stop)
    return list(map(int, found))


def _scan_body(table: Table, raw: bytes, pos: int, end: int, line_no: int) -> None:
    keys = _Keys()
    # The rows' line numbers: a range while every body line so far is a row (the common
    # case, which then holds no number per row), an array from the first line that is not.
    first = line_no
    lines: array[int] | None = None
    rows_end = _rows_end(end - pos)
    while pos < end:
        # A chunk of whole lines at a time, so that the keys found are few at any moment.
        cut = raw.find(b"\n", min(end, pos + _CHUNK), end)
        chunk_end = end if cut < 0 else cut + 1
        stop, plain = rows_end(raw, pos, chunk_end)
        if stop > pos:
            found = _run_keys(raw, pos, stop, plain)
            keys.add(found)
            if lines is not None:
                lines.extend(range(line_no, line_no + len(found)))
            line_no += len(found)
            pos = stop
            if stop == chunk_end:
                continue
        if pos >= end:
            break
        nl = raw.find(b"\n", pos, end)
        stop = end if nl < 0 else nl
        line = decode(raw[pos:stop])
        row = parse_row(line, line_no) if line.strip() else None
        if isinstance(row, Row):
            keys.add([row.key])
            if lines is not None:
                lines.append(line_no)
        else:
            why = row or "blank line inside the table: markdown ends the table here"
            table.malformed.append((line_no, why))
            if lines is None:
                lines = array("q", range(first, line_no))
        pos, line_no = stop + 1, line_no + 1
    table.row_keys = keys.keys
    table.row_lines = lines if lines is not None else range(first, line_no)
    table._unique = keys.unique


def quick_keys(text: str) -> set[int]:
    """Issue numbers of every line that looks like a row, without parsing the table."""
    return {int(k) for k in _ROW_KEY.compiled.findall(text)}


# A pipe and the run of backslashes before it; the lookbehind starts a match only at the start
# of a run, so a long run without a pipe after it is passed over once, not once per backslash.
_PIPE_RUN = LazyRegex(r"(?<!\\)(\\*)\|")
_ESCAPED_RUN = LazyRegex(r"(?<!\\)\\+\|")


def escape_cell(text: str) -> str:
    """Escape pipes for a cell; backslashes right before a pipe are doubled first so that
    the text reads back exactly."""
    if "|" not in text:
        return text
    if "\\|" not in text:  # no backslash before any pipe (the common case), in C
        return text.replace("|", "\\|")
    if "\\\\|" not in text:  # at most one backslash before each pipe: 2n + 1 of them
        return text.replace("\\|", "\\\\|").replace("|", "\\|")
    return _PIPE_RUN.compiled.sub(r"\1\1\\|", text)


def unescape_cell(text: str) -> str:
    """The text GFM renders for the pipes of a cell (the inverse of :func:`escape_cell`): a
    pipe after N backslashes is an escaped pipe, and the N - 1 backslashes before that
    escape are read in pairs, so it shows (N - 1) // 2 backslashes and a pipe."""
    if "\\|" not in text:
        return text
    if "\\\\|" not in text:  # every escaped pipe has one backslash: drop it, in C
        return text.replace("\\|", "|")
    return _ESCAPED_RUN.compiled.sub(lambda m: "\\" * ((len(m.group()) - 2) // 2) + "|", text)


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
