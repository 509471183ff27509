"""Edges of the trailer block finder and the index table that no other fast test reaches.

Each test pins one behaviour a mutant of tools/trailer_block.py or tools/index_table.py
changed without a test noticing (bench/bench_mutmut.py; the survivors left are listed in
bench/mutmut-survivors.md). Plain calls, each well under a second; where git has an answer
(``git interpret-trailers --parse``), the message is checked against real git too.
"""

from __future__ import annotations

import subprocess

import pytest

from tools import index_table as IT
from tools.git import encode
from tools.trailer_block import SCISSORS, find_block, git_parse_output, git_trailers


def git_parse(text: str) -> str:
    """What real git prints for ``text`` (the conftest fixture isolates HOME: no config)."""
    proc = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=encode(text),
        capture_output=True,
        check=True,
        timeout=20,
    )
    return proc.stdout.decode("utf-8", "surrogateescape")


def pairs(text: str) -> list[tuple[str, str]]:
    return [(t.key, t.value) for t in git_trailers(text)]


# -- trailer_block: git reads the message as a C string ------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # A NUL ends the message: the block after it (and after a second NUL) is not read.
        ("Subject\n\nA: 1\0\n\nB: 2\0\n", [("A", "1")]),
        ("Subject\n\nA: 1\n\0\nB: 2\n", [("A", "1")]),
        # A NUL as the very first character: nothing is left.
        ("\0Subject\n\nA: 1\n", []),
    ],
    ids=["two-nuls", "one-nul", "nul-first"],
)
def test_nothing_after_a_nul_is_read(message: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)


# -- trailer_block: the scissors line --------------------------------------------------------


def test_the_first_of_two_scissors_lines_cuts_the_message() -> None:
    message = f"Subject\n\nA: 1\n{SCISSORS}\nB: 2\n{SCISSORS}"
    assert pairs(message) == [("A", "1")]
    assert git_parse_output(message) == git_parse(message)


def test_a_scissors_line_right_after_a_leading_newline_cuts_everything() -> None:
    message = f"\n{SCISSORS}Subject\n\nA: 1\n"
    assert pairs(message) == []
    assert git_parse_output(message) == git_parse(message)
    # Without the scissors line the same text has a block (the title is the empty line).
    assert pairs("\nSubject\n\nA: 1\n") == [("A", "1")]


# -- trailer_block: what is ignored at the end of the message -------------------------------


@pytest.mark.parametrize(
    ("message", "expected", "end"),
    [
        # An old-style Conflicts: block at the end is not the trailer block (its "Conflicts:"
        # line alone would be a trailer), whether or not paths follow it, whatever the
        # second line of the message is.
        ("Subject\n\nA: 1\n\nConflicts:\n", [("A", "1")], 3),
        ("Subject\nwrapped\n\nA: 1\n\nConflicts:\n\tf.c\n", [("A", "1")], 4),
        # The same after a message that starts with a blank line (an empty title).
        ("\nA: 1\n\nConflicts:\n\tf.c\n", [("A", "1")], 2),
        # A tab-indented line is a path only inside a Conflicts: block: at the end of the
        # message it continues the trailer above it.
        ("Subject\n\nA: 1\n\tmore\n", [("A", "1 more")], 4),
        # Below a comment it is no path either: the paragraph is no trailer block (whether a
        # line above already ended a trailing run or not).
        ("\nA: 1\n# note\n\tx\n", [], None),
        ("Subject\n\nA: 1\n# note\n\tx\n", [], None),
        # Trailing comment lines are outside the block; its last line is the trailer's.
        ("Subject\nwrapped\n\nA: 1\n# note\n", [("A", "1")], 4),
    ],
    ids=[
        "conflicts",
        "conflicts-paths",
        "conflicts-empty-title",
        "tab-end",
        "tab-comment",
        "tab-comment-after-reset",
        "comment",
    ],
)
def test_the_ignored_tail_of_a_message(
    message: str, expected: list[tuple[str, str]], end: int | None
) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)
    assert find_block(message, squash=False).end == end


# -- trailer_block: comment lines inside the block, git's whitespace in values --------------


def test_a_comment_line_first_in_the_block_counts_for_nothing() -> None:
    message = "Subject\n\n# note\nA: 1\n"
    assert pairs(message) == [("A", "1")]
    assert git_parse_output(message) == git_parse(message)
    assert (find_block(message).start, find_block(message).end) == (3, 4)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # \v, \f and non-ASCII spaces are no whitespace to git: values keep them, at either
        # end, folded or not.
        ("Subject\n\nA: v\x0b\nB: \u00a0w\u00a0\n", [("A", "v\x0b"), ("B", "\u00a0w\u00a0")]),
        ("Subject\n\nA: a\n b\x0b\nB: c\n  d\x0c\n", [("A", "a b\x0b"), ("B", "c d\x0c")]),
    ],
    ids=["plain", "folded"],
)
def test_values_are_trimmed_of_gits_whitespace_only(
    message: str, expected: list[tuple[str, str]]
) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)


# -- trailer_block: a recognised block needs a quarter of trailers; continuations don't count


@pytest.mark.parametrize("indent", [" ", "\t", "\r"], ids=["space", "tab", "cr"])
def test_continuation_lines_do_not_count_as_trailers(indent: str) -> None:
    cont = "".join(f"{indent}c{i}\n" for i in range(3))
    # One sign-off (its three continuation lines count for nothing) and four other lines:
    # 1 * 3 < 4, so this is no trailer block...
    short = f"Subject\n\nSigned-off-by: A <a@x>\n{cont}x1\nx2\nx3\nx4\n"
    assert pairs(short) == []
    assert git_parse_output(short) == git_parse(short)
    # ...and with three other lines it is (1 * 3 >= 3).
    enough = f"Subject\n\nSigned-off-by: A <a@x>\n{cont}x1\nx2\nx3\n"
    assert git_parse_output(enough) == git_parse(enough)
    assert [t.key for t in git_trailers(enough)] == ["Signed-off-by"]


# -- index_table: a table without a header, huge issue numbers, a body past one chunk -------


def test_an_index_without_a_header_has_no_rows() -> None:
    t = IT.parse("# Issue index\n\n| #1 | R1 | T | k |\n")
    assert t.header_line is None and t.malformed[0][0] == 3
    assert (t.row_count, t.keys(), t.unique, t.duplicates()) == (0, set(), True, [])
    assert t.rows == [] and t.entries() == []


def test_an_issue_number_past_two_to_the_63_on_a_line_read_alone() -> None:
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    # The first row is read in bulk; the huge number is in a row the bulk reader refuses
    # (a non-ASCII first character of its title), read alone while the keys are still
    # machine integers; the row after it is read line by line too.
    rows = "".join(
        f"{row}\n"
        for row in (
            "| #1 | R1 | T | k |",
            "| #99999999999999999999 | R | Éclair | k |",
            "| #2 | R2 | é | k |",
        )
    )
    t = IT.parse(head + rows)
    assert list(t.row_keys) == [1, 99999999999999999999, 2]
    assert list(t.row_lines) == [3, 4, 5] and t.malformed == []
    assert t.duplicates() == [] and t.row_at(1).title == "Éclair"


def test_a_body_longer_than_one_chunk_is_read_to_its_end() -> None:
    head = "# I\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    n = (IT._CHUNK // 30) + 5_000  # rows of about 30 bytes: past one chunk of the reader
    body = "".join(f"| #{i} | R{i} | Title | bug |\n" for i in range(1, n + 1))
    assert len(encode(body)) > IT._CHUNK
    t = IT.parse(head + body + "| #0 | R | Tïtle | k |\n")
    assert t.row_count == n + 1 and t.malformed == []
    assert t.row_keys[0] == 1 and t.row_keys[n - 1] == n and t.row_keys[n] == 0
    assert t.row_lines[n] == n + 5
    assert t.body_end == len(t.raw)


def test_the_body_ends_after_the_newline_of_a_row_with_a_long_blank_tail() -> None:
    # The blanks after the last row reach past the body-end finder's 64 KiB window: the
    # body still ends where that line does, its newline included.
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    for tail in ("\n", "\n\n", ""):
        t = IT.parse(head + "| #1 | R1 | T | k |" + " " * 70_000 + tail)
        assert t.body_end == len(head) + 19 + 70_000 + (1 if tail else 0), repr(tail)
        assert list(t.row_keys) == [1] and t.malformed == [] and t.clean
