"""Matrix rows (SPEC §4.4 "Rows, precisely") and the versions of a matrix file.

A row is identified by its table (the header line's text and the table's ordinal among tables
with that header) and its key cell; its state is the state token of its state cell, or the last
backticked state token on the row; it moves when that state changes (an appearing row with a
state moves from none).

A range reads hundreds of versions of one matrix, each a few lines away from its parent, and a
whole parse of each was most of the docs gate's time. So a :class:`Version` (a file's tables and
their body rows, for one :class:`RowSpec`) is parsed whole at most once per blob, and a commit's
version is made from its parent's and the commit's ``-U0`` patch when every hunk only rewrites
body rows of a table that nothing around it can read otherwise, or prose that no table can see
(:func:`spliced`). The new rows are read by the same parser, from the table's header and
delimiter lines and the hunk's added lines; a hunk anywhere else, or lines that do not read
back as rows of that table one for one, make the caller parse the version whole instead. The
rows a commit moved are then looked for only among the keys its hunks touched
(:func:`version_moves`).
"""

import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from tools import markdown
from tools.git import Hunk, decode
from tools.lazy_regex import LazyRegex

_ONE_CODE = LazyRegex(r"`([^`]+)`")  # a cell that is one single-backtick code span
# A delimiter row as written: pipes, colons, dashes and blanks (and a CRLF file's CR).
# Each run of blanks stands alone (never two blank runs side by side): a line that does not
# match fails in linear time, not after trying every split of its blanks between two runs.
_DELIMITER = LazyRegex(r"[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*(?:\|[ \t]*)?\r?")


class RowSpec(NamedTuple):
    """How rows of a matrix are read: their state tokens, the key column (1-based) and the
    state column (a header name or a 1-based index; None: the last state token on the row)."""

    states: frozenset[str]
    key_column: int = 1
    state_column: str | int | None = None


class MatrixRow(NamedTuple):
    line: int  # 1-based
    key: str  # the key cell (the first by default), stripped
    text: str  # the whole line
    states: tuple[str, ...]  # the backticked tokens of `states` on the line, in order
    table: tuple[str, int] = ("", 0)  # the header line's text and its ordinal among its kind
    state: str | None = None  # the row's state (§4.4): its state cell's, or the last token
    header: bool = False
    table_line: int = 0  # the table's header line


def table_rows(doc: markdown.Document) -> list[tuple[int, str, str, tuple[str, ...]]]:
    r"""(1-based line, first cell, line, code spans) of each row of each GFM table of a
    matrix file (the header row included, the delimiter row not): a table ends at a blank
    line, a row needs no trailing pipe, and ``\|`` is an escaped pipe inside a cell (kept in
    the first cell)."""
    return [
        (row.line, row.cells[0] if row.cells else "", doc.lines[row.line - 1], row.codes)
        for table in doc.tables
        for row in table.rows
    ]


def _states(
    line: str, states: frozenset[str], codes: Sequence[str] | None = None
) -> tuple[str, ...]:
    """The state tokens of a row line, in order (``codes``: its code spans, when known)."""
    found = markdown.code_texts(line) if codes is None else [c.strip(" \t\n") for c in codes]
    return tuple(tok for tok in found if tok in states)


def _column(header: markdown.Row, column: str | int) -> int | None:
    """The 0-based index of the state column in a table with ``header`` (None: it has none)."""
    if isinstance(column, int):
        return column - 1
    wanted = column.strip().casefold()
    for k, (cell, plain) in enumerate(zip(header.cells, header.plain, strict=False)):
        if wanted in (cell.strip().casefold(), plain.strip().casefold()):
            return k
    return None


def _cell_tokens(cell: str, states: frozenset[str]) -> list[str]:
    """The state tokens among the code spans of a cell, in order."""
    if "`" not in cell:
        return []
    one = _ONE_CODE.compiled.fullmatch(cell.strip())
    # The common cell, one code span and nothing else, is read without a parse.
    texts = [one.group(1).strip(" \t")] if one else markdown.code_texts(cell)
    return [tok for tok in texts if tok in states]


def _cell_state(row: markdown.Row, index: int | None, states: frozenset[str]) -> str | None:
    """The state in the row's state cell: its last backticked state token, else the cell's
    whole text when that is a state token."""
    if index is None or index >= len(row.cells):
        return None
    found = _cell_tokens(row.cells[index], states)
    if found:
        return found[-1]
    plain = row.plain[index].strip() if index < len(row.plain) else row.cells[index].strip()
    return plain if plain in states else None


def _read_row(
    row: markdown.Row, line: str, spec: RowSpec, index: int | None
) -> tuple[str, tuple[str, ...], str | None]:
    """(key, state tokens, state) of a table row whose table's state column is ``index``."""
    k = spec.key_column - 1
    key = row.cells[k].strip() if k < len(row.cells) else ""
    tokens = _states(line, spec.states, row.codes)
    if row.header:
        state = None
    elif spec.state_column is None:
        state = tokens[-1] if tokens else None
    else:
        state = _cell_state(row, index, spec.states)
    return key, tokens, state


def _header(doc: markdown.Document, table: markdown.Table, seen: dict[str, int]) -> tuple[str, int]:
    """A table's identity: its header line's text and its ordinal among tables with that
    header so far (``seen`` counts them)."""
    head_text = doc.lines[table.rows[0].line - 1].strip(" \t\r")
    ordinal = seen.get(head_text, 0)
    seen[head_text] = ordinal + 1
    return head_text, ordinal


def _tables(
    doc: markdown.Document, spec: RowSpec
) -> Iterator[tuple[markdown.Table, tuple[str, int], int | None]]:
    """Each table of ``doc`` that has rows, with its name (:func:`_header`) and the index of
    its state column (None: the spec names none, or the header lacks it)."""
    seen: dict[str, int] = {}
    for table in doc.tables:
        if not table.rows:
            continue
        ident = _header(doc, table, seen)
        head = table.rows[0]
        column = _column(head, spec.state_column) if spec.state_column is not None else None
        yield table, ident, column


def read_rows(text: str, spec: RowSpec, *, headers: bool = False) -> list[MatrixRow]:
    """The rows of every table of a matrix file, each with its table, key and state (the
    header rows only when ``headers``)."""
    doc = markdown.parse(text)
    out: list[MatrixRow] = []
    for table, ident, index in _tables(doc, spec):
        for row in table.rows:
            if row.header and not headers:
                continue
            line = doc.lines[row.line - 1]
            key, tokens, state = _read_row(row, line, spec, index)
            out.append(MatrixRow(row.line, key, line, tokens, ident, state, row.header, table.line))
    return out


def matrix_rows(text: str, states: frozenset[str]) -> list[MatrixRow]:
    """The table rows of a matrix file (header rows included), each with its state tokens."""
    return read_rows(text, RowSpec(states), headers=True)


class Move(NamedTuple):
    row: MatrixRow
    before: str | None  # the state it had (None: none, or the row is new)
    new: bool  # the row appeared (no row of its table and key before it)
    tables: int  # tables in the file (a row is named by its table when there are several)

    @property
    def what(self) -> str:
        was = "(new row)" if self.new else (f"`{self.before}`" if self.before else "(none)")
        now = f"`{self.row.state}`" if self.row.state else "(none)"
        return f"{self.name} moved {was} -> {now}"

    @property
    def name(self) -> str:
        row = self.row
        if self.tables <= 1:
            return f"row {row.key!r}"
        header, ordinal = row.table
        nth = f" (#{ordinal + 1} of that header)" if ordinal else ""
        return f"row {row.key!r} of the table at line {row.table_line} ({header!r}{nth})"


def row_moves(old: str | None, new: str, spec: RowSpec) -> list[Move]:
    """The rows of ``new`` whose state differs from the same row of ``old`` (same table,
    same key, the n-th of that key matched to the n-th), or that appear with a state.
    A change of anything else on a row (evidence citing states included) is no move."""
    with markdown.uncollected():  # a row and a move per table row: 100,000 of each
        before = parse_version(old, spec) if old is not None else None
        return version_moves(before, parse_version(new, spec))


# -- versions ----------------------------------------------------------------------------------
class Body(NamedTuple):
    """A body row of a table, without its line (a version's rows are shared by the next)."""

    key: str
    text: str
    states: tuple[str, ...]
    state: str | None


class Table(NamedTuple):
    """A table of a version: its header line, identity, state column and body rows."""

    line: int
    ident: tuple[str, int]
    column: int | None  # the state column, 0-based (None: none, or the row's last token)
    rows: tuple[Body, ...]
    # Each row's line less the header's; None: the rows follow the delimiter line one a line.
    offsets: tuple[int, ...] | None
    # The header and delimiter lines as written, when hunks may rewrite the body (the table is
    # top-level and its rows follow one a line); None: a hunk near it parses the version whole.
    head: str | None

    @property
    def last(self) -> int:
        """The table's last line: its last body row's, or its delimiter row's."""
        if self.offsets is None:
            return self.line + 1 + len(self.rows)
        return self.line + (self.offsets[-1] if self.offsets else 1)

    def row(self, k: int) -> MatrixRow:
        body = self.rows[k]
        line = self.line + (self.offsets[k] if self.offsets is not None else k + 2)
        return MatrixRow(
            line, body.key, body.text, body.states, self.ident, body.state, False, self.line
        )


class Version(NamedTuple):
    """The tables of one version of a matrix file, read for one :class:`RowSpec`."""

    spec: RowSpec
    tables: tuple[Table, ...]
    lines: tuple[str, ...]  # the file's lines as written (a CRLF file's CRs kept)
    # A state (or the state column) is read from rendered text holding a bracket, which a
    # reference or footnote definition anywhere in the file may turn into a link: then only
    # rows may change without a whole parse.
    refs: bool

    @property
    def with_rows(self) -> int:
        """The tables with a body row (a row is named by its table when there are several)."""
        return sum(1 for t in self.tables if t.rows)


def _free_head(doc: markdown.Document, raw: list[str], table: markdown.Table) -> str | None:
    """The header and delimiter lines of ``table`` as written when hunks may rewrite its body
    rows, else None. Its header must start a top-level block: at column 0, after the start of
    the file, a blank line or an ATX heading at column 0 (no container reaches a line there,
    and none is lazily continued by a table row); its body rows must follow the delimiter row
    one a line (a lone CR, which markdown reads as a line break, would break that)."""
    h = table.rows[0].line
    if table.line != h or h + 1 > len(raw):
        return None
    header, delimiter = raw[h - 1], raw[h]
    if not header.startswith("|") or "\r" in header[:-1]:
        return None
    if not _DELIMITER.compiled.fullmatch(delimiter):
        return None
    if h > 1:
        before = doc.lines[h - 2]
        heading = before.startswith("#") and any(x.line == h - 1 for x in doc.headings)
        if before.strip(" \t") and not heading:
            return None
    for k, row in enumerate(table.rows[1:]):
        if row.line != h + 2 + k or row.header:
            return None
    return f"{header}\n{delimiter}\n"


def _rendered_bracket(row: markdown.Row, column: int | None, spec: RowSpec) -> bool:
    """Whether ``row``'s state is read from its state cell's rendered text (the cell holds no
    state in a code span) while the cell holds a bracket."""
    if spec.state_column is None or column is None or column >= len(row.cells):
        return False
    cell = row.cells[column]
    return "[" in cell and not _cell_tokens(cell, spec.states)


def parse_version(text: str, spec: RowSpec) -> Version:
    """A version read whole: what :func:`read_rows` reads, in tables."""
    doc = markdown.parse(text)
    raw = text.split("\n")
    if raw[-1] == "":
        raw.pop()  # a final newline ends the last line and starts none
    tables: list[Table] = []
    refs = False
    for table, ident, column in _tables(doc, spec):
        if isinstance(spec.state_column, str) and any("[" in c for c in table.rows[0].cells):
            refs = True
        rows: list[Body] = []
        offsets: list[int] = []
        for row in table.rows:
            if row.header:
                continue
            line = doc.lines[row.line - 1]
            key, tokens, state = _read_row(row, line, spec, column)
            rows.append(Body(key, line, tokens, state))
            offsets.append(row.line - table.line)
            refs = refs or _rendered_bracket(row, column, spec)
        free = _free_head(doc, raw, table)
        tables.append(
            Table(table.line, ident, column, tuple(rows), None if free else tuple(offsets), free)
        )
    return Version(spec, tuple(tables), tuple(raw), refs)


def version_moves(
    old: Version | None, new: Version, touched: Iterable[tuple[tuple[str, int], str]] | None = None
) -> list[Move]:
    """:func:`row_moves` between two versions; ``touched``: the only (table, key) pairs whose
    rows may differ (None: any may), in any order. The moves come in the order of ``new``."""
    count = new.with_rows
    before: dict[tuple[tuple[str, int], str], list[str | None]] = {}
    wanted = None if touched is None else set(touched)
    for table in old.tables if old is not None else ():
        for body in table.rows:
            pair = (table.ident, body.key)
            if wanted is None or pair in wanted:
                before.setdefault(pair, []).append(body.state)
    seen: dict[tuple[tuple[str, int], str], int] = {}
    moves: list[Move] = []
    for table in new.tables:
        if wanted is not None and not any(ident == table.ident for ident, _ in wanted):
            continue
        for k, body in enumerate(table.rows):
            pair = (table.ident, body.key)
            if wanted is not None and pair not in wanted:
                continue
            n = seen.get(pair, 0)
            seen[pair] = n + 1
            prev = before.get(pair, [])
            if n < len(prev):
                if prev[n] != body.state:
                    moves.append(Move(table.row(k), prev[n], False, count))
            elif body.state is not None:
                moves.append(Move(table.row(k), None, True, count))
    return moves


# -- a version from its parent's and a patch ---------------------------------------------------
class Spliced(NamedTuple):
    """A version made from its parent's and a patch, and the (table, key) pairs it touched."""

    version: Version
    touched: set[tuple[tuple[str, int], str]]


def _added_rows(table: Table, added: list[str], spec: RowSpec) -> list[Body] | None:
    """The body rows the lines ``added`` make at a place inside ``table``'s body, read by the
    parser after the table's own header and delimiter lines; None when they do not read back
    as that many rows, one a line, or when a row's state could depend on the rest of the
    file (:func:`_rendered_bracket`)."""
    assert table.head is not None
    doc = markdown.parse(table.head + "".join(line + "\n" for line in added))
    if len(doc.tables) != 1 or len(doc.tables[0].rows) != len(added) + 1:
        return None
    out: list[Body] = []
    for k, row in enumerate(doc.tables[0].rows):
        if row.line != (k + 2 if k else 1) or row.header != (k == 0):
            return None
        if k == 0:
            continue
        if _rendered_bracket(row, table.column, spec):
            return None
        line = doc.lines[row.line - 1]
        key, tokens, state = _read_row(row, line, spec, table.column)
        out.append(Body(key, line, tokens, state))
    return out


def _place(tables: tuple[Table, ...], starts: list[int], hunk: Hunk) -> tuple[int, int] | None:
    """(table index, first body row index) that ``hunk`` rewrites, when it removes only body
    rows of one table that hunks may rewrite, or adds after its delimiter row or a body row."""
    at, removed = hunk.old_start, hunk.old_count
    t = bisect.bisect_right(starts, at) - 1
    if t < 0:
        return None
    table = tables[t]
    if table.head is None:
        return None
    first, last = table.line + 2, table.line + 1 + len(table.rows)  # its body rows' lines
    if removed:
        return (t, at - first) if first <= at and at + removed - 1 <= last else None
    return (t, at - first + 1) if first - 1 <= at <= last else None


# Text that may open or close a block reaching past a blank line (a fence, an HTML block, and
# the ends of those HTML blocks that blank lines do not end), or make a table (a delimiter row
# holds a pipe).
_RISKY = ("|", "<", ">", "```", "~~~")


def _region_end(lines: Sequence[str], at: int) -> int:
    """The first blank line from line ``at`` on after which the next line that is not blank
    starts at column 0 (or none comes): a container open before it (a list item, whose
    blocks may follow blank lines indented) reaches no further."""
    n = len(lines)
    while at <= n:
        if lines[at - 1].strip(" \t\r"):
            at += 1
            continue
        after = at + 1
        while after <= n and not lines[after - 1].strip(" \t\r"):
            after += 1
        # A lone CR at a line's start is a line break to markdown: what follows may be indented.
        if after > n or lines[after - 1][:1] not in (" ", "\t", "\r"):
            return at
        at = after
    return at


def _prose(old: Version, hunk: Hunk, added: list[str]) -> bool:
    """Whether ``hunk`` rewrites prose that no table can see: the lines between the blank
    lines around it (:func:`_region_end`) hold no table line, no table after them depends on
    what comes before it (every one is top-level, after a blank line or a heading:
    :func:`_free_head`), nothing in them or in what it adds can reach past a blank line or
    make a table, and no state is read from rendered text that a reference definition could
    change."""
    if old.refs:
        return False
    lines = old.lines
    lo = hunk.old_start - 1 if hunk.old_count else hunk.old_start  # the line before it
    hi = hunk.old_start + hunk.old_count if hunk.old_count else hunk.old_start + 1  # after it
    while lo >= 1 and lines[lo - 1].strip(" \t\r"):
        lo -= 1
    hi = _region_end(lines, hi)
    for table in old.tables:
        if table.line < hi and table.last > lo:
            return False
        if table.line > lo and table.head is None:
            return False
    return not any(r in line for line in (*lines[lo : hi - 1], *added) for r in _RISKY)


def _read_hunk(old: Version, hunk: Hunk) -> tuple[int, list[str]] | None:
    """(where in ``old.lines`` the hunk starts, the lines it adds) when it applies to ``old``:
    its lines are as many as its header says, and those it removes are ``old``'s there."""
    if len(hunk.removed) != hunk.old_count or len(hunk.added) != hunk.new_count:
        return None
    at = hunk.old_start - 1 if hunk.old_count else hunk.old_start
    if at < 0 or at + hunk.old_count > len(old.lines):
        return None
    if list(old.lines[at : at + hunk.old_count]) != [decode(x) for x in hunk.removed]:
        return None
    return at, [decode(x) for x in hunk.added]


def spliced(old: Version, hunks: Sequence[Hunk]) -> Spliced | None:
    """The version ``hunks`` (a ``-U0`` patch of the file ``old`` was read from, in order)
    make of ``old``, or None when one of them rewrites anything but body rows of a table or
    prose no table can see (see the module's docstring): the caller then parses the new
    version whole."""
    starts = [t.line for t in old.tables]
    edits: dict[int, list[tuple[int, int, list[Body]]]] = {}
    shift = [0] * len(old.tables)  # lines added less removed before each table's header
    touched: set[tuple[tuple[str, int], str]] = set()
    texts: list[tuple[int, int, list[str]]] = []
    for hunk in hunks:
        read = _read_hunk(old, hunk)
        if read is None:
            return None
        at, added = read
        place = _place(old.tables, starts, hunk)
        if place is not None:
            t, first = place
            table = old.tables[t]
            bodies = _added_rows(table, added, old.spec) if added else []
            if bodies is None:
                return None
            edits.setdefault(t, []).append((first, hunk.old_count, bodies))
            for body in (*table.rows[first : first + hunk.old_count], *bodies):
                touched.add((table.ident, body.key))
            after = t + 1
        elif _prose(old, hunk, added):
            after = bisect.bisect_right(starts, hunk.old_start)
        else:
            return None
        for later in range(after, len(shift)):
            shift[later] += hunk.new_count - hunk.old_count
        texts.append((at, hunk.old_count, added))
    lines = list(old.lines)
    for at, count, added in reversed(texts):
        lines[at : at + count] = added
    tables = [_edited(table, shift[t], edits.get(t, [])) for t, table in enumerate(old.tables)]
    return Spliced(Version(old.spec, tuple(tables), tuple(lines), old.refs), touched)


def _edited(table: Table, shift: int, edits: list[tuple[int, int, list[Body]]]) -> Table:
    """``table`` moved down ``shift`` lines, with each (first row, rows removed, rows added)
    of ``edits`` (in order, each on the rows as they were) made to its body."""
    if not edits:
        return table._replace(line=table.line + shift) if shift else table
    rows = list(table.rows)
    for first, count, added in reversed(edits):
        rows[first : first + count] = added
    return table._replace(line=table.line + shift, rows=tuple(rows))
