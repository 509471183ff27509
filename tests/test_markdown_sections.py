"""Sections of a markdown document: one per heading, up to the next heading of the same or a
higher level, found in one pass (SPEC §10: a spec of 260,000 headings within §8's bound), and
the headings' own reading (text, rendered text, line) unchanged by their fast path."""

from __future__ import annotations

import gc

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools import markdown
from tools.markdown import Heading, Section


def _reference(lines: list[str], found: list[Heading]) -> list[Section]:
    """The definition, heading by heading: the body runs to the line before the next
    heading of the same or a higher level (a lower number), else to the end."""
    out = []
    for k, h in enumerate(found):
        later = [g for g in found[k + 1 :] if g.level <= h.level]
        out.append(Section(h, h.line + 1, later[0].line - 1 if later else len(lines)))
    return out


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), max_size=40))
@example([(1, 0), (2, 0), (2, 1), (1, 0)])
@example([(6, 0), (5, 0), (4, 0), (3, 0), (2, 0), (1, 0)])
@example([(1, 2), (3, 0), (2, 0), (3, 1)])
def test_sections_are_the_definition(shape: list[tuple[int, int]]) -> None:
    """Headings of any levels, each followed by some body lines."""
    lines: list[str] = []
    for level, body in shape:
        lines.append("#" * level + " h")
        lines += ["text"] * body
        lines.append("")
    doc = markdown.parse_lines(lines)
    assert doc.sections() == _reference(doc.lines, doc.headings)
    assert markdown.sections(doc.lines, doc.headings) == _reference(doc.lines, doc.headings)


def test_sections_of_a_shared_parse_are_a_fresh_list_each_time() -> None:
    doc = markdown.parse("# a\n\n## b\n\ntext\n\n# c\n")
    first = doc.sections()
    first.clear()
    assert [s.heading.text for s in doc.sections()] == ["a", "b", "c"]
    assert [(s.start, s.end) for s in doc.sections()] == [(2, 6), (4, 6), (8, 7)]


def test_one_heading_over_many_closes_at_the_end() -> None:
    lines = ["# top"] + ["## sub"] * 1000
    doc = markdown.parse_lines(lines)
    sections = doc.sections()
    assert sections[0] == Section(doc.headings[0], 2, len(doc.lines))
    assert all(s.start == s.end + 1 for s in sections[1:-1])  # each sub's body is empty


def test_headings_read_as_before() -> None:
    """What a heading's fast path reads: the text as written, the rendered text (markup,
    images and inline HTML dropped), the line, and what its inline events leave behind
    (links, HTML anchors, code spans blanked in prose)."""
    text = (
        "# a *b* `c` ![alt](i.png) [l](m.md)\n\n"
        "Setext *title*\n===\n\n"
        "## x <a id='q'></a> &amp; y\n\n"
        "- item\n\n  ### in an item\n\n"
        "> ## quoted\n\n"
        "#\n"
    )
    doc = markdown.parse(text)
    assert [(h.line, h.level, h.text, h.plain) for h in doc.headings] == [
        (1, 1, "a *b* `c` ![alt](i.png) [l](m.md)", "a b c  l"),
        (3, 1, "Setext *title*", "Setext title"),
        (6, 2, "x <a id='q'></a> &amp; y", "x  & y"),
        (10, 3, "in an item", "in an item"),
        (12, 2, "quoted", "quoted"),
        (14, 1, "", ""),
    ]
    assert [(link.line, link.target) for link in doc.links] == [(1, "i.png"), (1, "m.md")]
    assert [(a.line, a.name) for a in doc.anchors()] == [
        (1, "a-b-c--l"),
        (3, "setext-title"),
        (6, "x---y"),
        (6, "q"),
        (10, "in-an-item"),
        (12, "quoted"),
    ]  # an empty heading makes no anchor
    assert "`c`" not in doc.prose()[0]  # the code span is blanked
    assert [i.line for i in doc.items] == [8]


def test_a_parse_leaves_the_cycle_collector_as_it_found_it() -> None:
    markdown.forget()
    assert gc.isenabled()
    markdown.parse("# a\n" * 100)
    assert gc.isenabled()
    gc.disable()
    try:
        markdown.forget()
        markdown.parse("# b\n" * 100).sections()
        assert not gc.isenabled()
    finally:
        gc.enable()
