"""Inline code spans, found in linear time (tools.markdown.code_spans / blank_code_spans)."""

from __future__ import annotations

import time

import pytest

from tools.markdown import blank_code_spans, code_spans


@pytest.mark.parametrize(
    ("line", "spans"),
    [
        ("no code", []),
        ("a `b` c", [(2, 5)]),
        ("``a ` b`` then `c`", [(0, 9), (15, 18)]),
        ("a `` b ` c", []),  # no run of two closes the run of two; the lone one has no partner
        ("`a`` b`", [(0, 7)]),  # a run of one closes at the next run of exactly one
        ("\\`a` b`", [(3, 7)]),  # an escaped first backtick is literal
        ("\\\\`a`", [(2, 5)]),  # an escaped backslash escapes nothing after it
        ("\\``a`", [(2, 5)]),  # the rest of an escaped run can still open a span
    ],
)
def test_code_spans(line: str, spans: list[tuple[int, int]]) -> None:
    assert code_spans(line) == spans


def test_blank_code_spans_keeps_columns() -> None:
    line = "#1 `#2` ``#3`` #4"
    blanked = blank_code_spans(line)
    assert len(blanked) == len(line)
    assert blanked == "#1 " + " " * 4 + " " + " " * 6 + " #4"


@pytest.mark.parametrize(
    "line",
    ["`" * 1_048_576, "`a" * 524_288, "\\``" * 349_525, "``a`" * 262_144, "`" + "a`" * 524_287],
    ids=range(5),
)
def test_one_mib_adversarial_lines(line: str) -> None:
    start = time.monotonic()
    blank_code_spans(line)
    runs = "".join("`" * k + "x" for k in range(1, 1400))  # every run length once: no partners
    assert code_spans(runs) == []
    assert time.monotonic() - start < 5
