"""The index's bulk reader and its compact comparisons against the line-by-line reference.

``index_table.parse_bytes`` reads well-formed rows in bulk with a bytes pattern and leaves
every other line to ``parse_row``; ``index_compare`` compares two versions of a table walking
them in step. Both must decide exactly what the row-by-row reading and the keyed comparison
decide, on generated tables full of what trips table readers: escaped pipes (after one or
two backslashes), code spans and HTML with pipes, rows without their trailing pipe, blank lines
that split the table, non-ASCII and Unicode whitespace where a cell starts, CRLF, links, the
em dash, Unicode digits, issue numbers past 2**63. Where the bulk reader accepts a table,
its cells are GFM's (pulldown-cmark, through tools.markdown)."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools import index_compare, index_table, markdown
from tools.appendonly import losses
from tools.index_table import HEADER, Row, parse_row, split_cells, split_lines

FRAME = "# Index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"

TITLES = [
    "Plain title",
    "a \\| b",
    "x \\\\| y",
    "`code|span`",
    "<b>|</b>",
    "Élan",
    "日本",
    "\u3000wide space",
    "\u00a0nbsp",
    "\x0bvt",
    "tab\tin",
    "trailing ",
    "",
    " ",
    "\\",
    "a\\",
]
ISSUES = ["#1", "#2", "#3", "[#4](https://x.example/4)", "#٣", "#99999999999999999999", "#x"]
ROW_IDS = ["A", "R1", "—", "a", "R-1.2_x"]


def reference(text: str) -> tuple[list[str], int | None, list[tuple[int, str]], list[Row], int]:
    """The table as the line-by-line reading sees it (the reader before the bulk path)."""
    lines = split_lines(text)

    def is_header(line: str) -> bool:
        cells = split_cells(line)
        return cells is not None and tuple(c.lower() for c in cells) == HEADER

    header = next((i for i, ln in enumerate(lines) if is_header(ln)), None)
    if header is None:
        first_pipe = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")), 0)
        return lines, None, [(first_pipe + 1, "no header")], [], len(lines)
    body = header + 1
    malformed: list[tuple[int, str]] = []
    cells = split_cells(lines[body]) if body < len(lines) else None
    if cells is not None and len(cells) == 4 and all(re.fullmatch(":?-+:?", c) for c in cells):
        body += 1
    else:
        malformed.append((body + 1, "delimiter"))
    last = len(lines)
    while last > body and not lines[last - 1].strip():
        last -= 1
    rows: list[Row] = []
    for i in range(body, last):
        if not lines[i].strip():
            malformed.append((i + 1, "blank"))
            continue
        row = parse_row(lines[i], i + 1)
        if isinstance(row, str):
            malformed.append((i + 1, row))
        else:
            rows.append(row)
    return lines[:body], header + 1, malformed, rows, len(lines)


def _row(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.sampled_from(
                ["", " ", "\t", "not a row", "| #5 | A | t", "|||", "| #6 | A | t | k | x |"]
            )
        )
    lead = draw(st.sampled_from(["", " ", "  "]))
    issue = draw(st.sampled_from(ISSUES))
    if issue == "#1":
        issue = f"#{draw(st.integers(1, 60))}"
    title = draw(st.sampled_from(TITLES))
    kind = draw(st.sampled_from(["bug", "k\\|x", "", "feature"]))
    close = draw(st.sampled_from([" |", "|", "", " | ", " |\r"]))
    row_id = draw(st.sampled_from(ROW_IDS))
    return f"{lead}| {issue} | {row_id} | {title} | {kind}{close}"


rows = st.composite(_row)


@st.composite
def tables(draw: st.DrawFn) -> str:
    body = draw(st.lists(rows(), max_size=12))
    end = draw(st.sampled_from(["\n", "", "\n\n", "\n \n"]))
    frame = draw(
        st.sampled_from(
            [FRAME, "| Issue | Row | Title | Kind |\n|---|---|---|---|\n", "# No table\n"]
        )
    )
    return frame + "\n".join(body) + (end if body else "")


def _same_as_reference(text: str) -> index_table.Table:
    table = index_table.parse(text)
    frame, header_line, malformed, rows, _ = reference(text)
    assert table.header_line == header_line
    assert table.frame == frame
    assert [line for line, _ in table.malformed] == [line for line, _ in malformed]
    assert table.rows == rows
    assert list(table.row_keys) == [r.key for r in rows]
    assert list(table.row_lines) == [r.line for r in rows]
    for i, row in enumerate(rows):
        assert table.row_at(i) == row
    return table


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_the_bulk_reader_reads_what_the_line_reader_reads(text: str) -> None:
    _same_as_reference(text)


def test_every_kind_of_line_in_one_table() -> None:
    lines = []
    n = 0
    for title in TITLES:
        for close in (" |", "", " |\r"):
            n += 1
            lines.append(f"| #{n} | A | {title} | bug{close}")
    table = _same_as_reference(FRAME + "\n".join(lines) + "\n")
    assert table.malformed  # empty titles, a vertical tab alone, ...
    assert 0 < table.row_count < len(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(TITLES[:7]), st.sampled_from(["", " ", "  "])), max_size=8)
)
def test_rows_the_bulk_reader_accepts_have_the_cells_gfm_reads(rows: list[tuple[str, str]]) -> None:
    text = FRAME + "".join(
        f"|{pad}#{i + 1} | A |{pad}{t} | bug |\n" for i, (t, pad) in enumerate(rows)
    )
    table = index_table.parse(text)
    gfm = [list(r.cells) for t in markdown.parse(text).tables for r in t.rows][1:]
    assert len(gfm) == len(rows)  # one table, every line a row of it
    first = len(index_table.split_lines(FRAME)) + 1
    for row in table.rows:  # GFM cuts extra cells: compare only the rows the index accepts
        assert gfm[row.line - first] == [row.issue, row.row, row.title, row.kind]


# -- comparing two versions --------------------------------------------------------------------
def _line(n: int, title: str = "t") -> str:
    return f"| #{n} | R{n} | {title} | bug |"


@st.composite
def versions(draw: st.DrawFn) -> tuple[str, str]:
    size = draw(st.integers(0, 30))
    old = [_line(n) for n in range(1, size + 1)]
    new = list(old)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["edit", "space", "remove", "insert", "append", "move", "dup"]))
        if op == "append" or not new:
            new.append(_line(100 + len(new), "added"))
            continue
        i = draw(st.integers(0, len(new) - 1))
        if op == "edit":
            new[i] = new[i].replace("| t |", "| t2 |")
        elif op == "space":
            new[i] = new[i].replace("| t |", "|   t |")
        elif op == "remove":
            del new[i]
        elif op == "insert":
            new.insert(i, _line(200 + i, "inserted"))
        elif op == "move":
            new.insert(draw(st.integers(0, len(new) - 1)), new.pop(i))
        else:
            new.insert(i, new[draw(st.integers(0, len(new) - 1))])
    end_old = draw(st.sampled_from(["\n", ""]))
    end_new = draw(st.sampled_from(["\n", ""]))
    return FRAME + "\n".join(old) + (end_old if old else ""), FRAME + "\n".join(new) + (
        end_new if new else ""
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(versions())
def test_the_walk_in_step_finds_the_losses_the_keyed_comparison_finds(
    pair: tuple[str, str],
) -> None:
    old, new = (index_table.parse(t) for t in pair)
    compact = index_compare.base_losses(old, new)
    full = losses(old.entries(), new.entries())
    if compact is None:
        assert not index_compare.comparable(old, new)
        return
    assert compact == full


def _inserted_reference(parent: index_table.Table, child: index_table.Table) -> list:
    keys = parent.keys()
    rows = child.rows
    last_old = max((i for i, r in enumerate(rows) if r.key in keys), default=-1)
    if last_old < 0:
        return []
    return [(r, rows[last_old]) for r in rows[:last_old] if r.key not in keys]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(versions())
def test_inserted_rows_are_the_ones_the_row_by_row_rule_finds(pair: tuple[str, str]) -> None:
    parent, child = (index_table.parse(t) for t in pair)
    found = index_compare.inserted(parent, child)
    if found is None:
        return
    assert found == _inserted_reference(parent, child)


def test_a_million_rows_are_not_needed_to_find_one_edit() -> None:
    old = FRAME + "".join(_line(n) + "\n" for n in range(1, 20001))
    new = old.replace(_line(777) + "\n", _line(777, "renamed") + "\n") + _line(20001) + "\n"
    a, b = index_table.parse(old), index_table.parse(new)
    found = index_compare.base_losses(a, b)
    assert found is not None and [(x.kind, x.base.key, x.now.line) for x in found] == [
        ("altered", 777, 781)
    ]
    assert a._rows is None and b._rows is None  # no row object was built for the others
