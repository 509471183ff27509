"""Markdown read as GitHub reads it: each class of misreading of the old hand-written subset,
through the gates' readers (tools.markdown) and through the real CLI."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import Repo
from tools import index_table, markdown
from tools.errors import UsageError
from tools.gates import docs as docs_gate
from tools.gates import now
from tools.ratchets import markdown_measures as ratchet_md


def anchors(text: str) -> set[str]:
    return markdown.parse(text).anchor_set()


def targets(text: str) -> list[str]:
    return [link.target for link in markdown.parse(text).links]


# -- headings --------------------------------------------------------------------------------
def test_headings_in_block_quotes_and_list_items_are_headings() -> None:
    doc = "> ### Command Line Notation\n\n- ## In an item\n\n1. > #### Deeper\n"
    assert anchors(doc) == {"command-line-notation", "in-an-item", "deeper"}


def test_inline_html_in_a_heading_is_no_text_of_its_anchor() -> None:
    assert anchors('### <a id="cpp"></a>C++\n') == {"c", "cpp"}
    assert anchors("## Using Box<T>\n") == {"using-box"}


def test_emphasis_markers_are_not_text() -> None:
    assert anchors("## _emphasis_ and __strong__ and *star*\n") == {"emphasis-and-strong-and-star"}


def test_a_literal_star_at_the_start_keeps_the_hyphen_of_its_space() -> None:
    assert anchors("## \\* starred\n") == {"-starred"}


def test_a_bom_does_not_hide_the_first_heading() -> None:
    assert anchors("\ufeff## Byte order mark\n") == {"byte-order-mark"}


def test_entities_in_headings_are_decoded() -> None:
    assert anchors("## Fish &amp; Chips\n## &#x41;BC\n") == {"fish--chips", "abc"}


def test_code_is_kept_and_image_alt_dropped() -> None:
    assert anchors("## The `tools` command\n## ![logo](l.png) Title\n") == {
        "the-tools-command",
        "-title",
    }


def test_repeats_get_suffixes() -> None:
    assert [a.name for a in markdown.parse("# A\n# A\n# A-1\n").anchors()] == ["a", "a-1", "a-1-1"]


# -- HTML, comments, code ----------------------------------------------------------------------
def test_lines_in_a_comment_are_neither_headings_nor_links() -> None:
    doc = "<!--\n## Commented out\n[x](gone.md)\n-->\n"
    assert anchors(doc) == set() and targets(doc) == []


def test_links_inside_an_html_block_are_text() -> None:
    assert targets("<div>\n[x](gone.md)\n</div>\n") == []


def test_explicit_anchors_only_where_github_renders_html() -> None:
    doc = (
        '`<a id="in-code">` \\<a id="escaped"> <a id="real">\n\n'
        '    <a id="indented">\n\n'
        '<!-- <a id="in-comment"> -->\n'
        "<div id=\"block-id\"><a name='named'></a></div>\n"
    )
    assert anchors(doc) == {"real", "block-id", "named"}


def test_anchor_listing_names_the_element() -> None:
    found = markdown.parse('<a id="x">\n\n## Y\n').anchors()
    assert [(a.line, a.name, a.source) for a in found] == [(1, "x", '<a id="x">'), (3, "y", "Y")]


# -- links -------------------------------------------------------------------------------------
def test_entities_in_link_targets_are_decoded() -> None:
    assert targets("[a](guide.md#1---agn&#x00F3;sticos)\n") == ["guide.md#1---agnósticos"]


def test_a_fence_inside_a_list_item_is_a_fence() -> None:
    doc = "1. item\n   - sub\n     ```\n     [x](in-fence.md)\n     ```\n"
    assert targets(doc) == []
    assert markdown.parse(doc).code_mask == [False, False, True, True, True]


@pytest.mark.parametrize("fence", ["```", "~~~"])
def test_a_longer_closing_fence_closes_and_a_shorter_one_does_not(fence: str) -> None:
    """CommonMark: a closing fence is at least as long as its opening one."""
    longer = [fence, "code", fence + fence[0], "# After", ""]
    doc = markdown.parse_lines(longer)
    assert doc.code_mask == [True, True, True, False, False]
    assert [h.line for h in doc.headings] == [4]
    shorter = [fence + fence[0], "code", fence, "# Inside", fence + fence[0], "# After"]
    doc = markdown.parse_lines(shorter)
    assert doc.code_mask == [True, True, True, True, True, False]
    assert [h.line for h in doc.headings] == [6]


def test_an_unmatched_backtick_pairs_with_nothing_across_blocks() -> None:
    assert targets("- a ` b\n- [x](shown.md)\n- c ` d\n") == ["shown.md"]


def test_reference_definitions_in_block_quotes_and_list_items_are_read() -> None:
    doc = "> [g]: missing-guide.md\n\n- [h]: missing-two.md\n"
    assert targets(doc) == ["missing-guide.md", "missing-two.md"]


def test_links_gate_reads_each_class_as_github(repo: Repo) -> None:
    classes = (
        "\ufeff## Byte order mark\n\n> ### Command Line Notation\n\n- ### In a list item\n\n"
        '### <a id="cpp"></a>C++\n\n## Using Box<T>\n\n## _emphasis_ words\n\n## \\* starred\n\n'
        "## Fish &amp; Chips\n\n## 1 - agnósticos\n\n<!--\n## Commented out\n-->\n\n"
        '`<a id="in-code">` and \\<a id="escaped">\n\n    <a id="indented">\n\n'
        '<!-- <a id="in-comment"> -->\n'
    )
    good = [
        "byte-order-mark",
        "command-line-notation",
        "in-a-list-item",
        "c",
        "cpp",
        "using-box",
        "emphasis-words",
        "-starred",
        "fish--chips",
        "1---agn&#x00F3;sticos",
    ]
    bad = ["commented-out", "in-code", "escaped", "indented", "in-comment"]
    page = "".join(f"[a](classes.md#{a})\n\n" for a in good + bad)
    page += "<div>\n[x](gone-in-html.md)\n</div>\n\n"
    page += "1. item\n   - sub\n     ```\n     [x](gone-in-fence.md)\n     ```\n\n"
    page += "- a ` b\n- [x](missing-after-backtick.md)\n- c ` d\n\n"
    page += "> [g]: missing-guide.md\n\n- [h]: missing-two.md\n"
    repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": yaml.safe_dump({}),
            "docs/classes.md": classes,
            "docs/page.md": page,
        },
    )
    run = repo.tools("--format", "json", "links", "check")
    findings = run.json()["gates"][0]["findings"]
    got = sorted((f["rule"], f["message"].split("'")[1]) for f in findings)
    assert got == sorted(
        [("anchor-missing", f"classes.md#{a}") for a in bad]
        + [
            ("link-broken", "missing-after-backtick.md"),
            ("link-broken", "missing-guide.md"),
            ("link-broken", "missing-two.md"),
        ]
    )


# -- tables ------------------------------------------------------------------------------------
def cells(text: str) -> list[list[str]]:
    return [list(row.cells) for t in markdown.parse(text).tables for row in t.rows]


def test_a_row_without_a_trailing_pipe_is_a_row() -> None:
    assert cells("| a | b\n|---|---\n| 1 | 2\n3 | 4\n") == [["a", "b"], ["1", "2"], ["3", "4"]]


def test_a_blank_line_ends_a_table() -> None:
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| " + "x" * 30 + " | y |\n"
    assert cells(text) == [["a", "b"], ["1", "2"]]
    counts, _ = ratchet_md.measure(text, cell_max=20)
    assert counts["oversized_cells"] == 0
    rows = docs_gate.matrix_rows(text + "| z | `done` |\n", frozenset(["done"]))
    assert [r.line for r in rows] == [1, 3]  # the lines after the blank line are no rows


def test_an_oversized_cell_in_a_row_without_a_trailing_pipe_counts() -> None:
    counts, sites = ratchet_md.measure("| a | b\n|---|---\n| " + "x" * 30 + " | y\n", cell_max=20)
    assert counts["oversized_cells"] == 1 and sites["oversized_cells"][0][0] == 3


def test_an_escaped_pipe_is_inside_its_cell_whatever_precedes_it() -> None:
    text = "| a | b |\n|---|---|\n| x \\\\| y | z |\n"
    assert cells(text)[1] == ["x \\\\| y", "z"]
    assert index_table.split_cells("| x \\\\| y | z |") == ["x \\\\| y", "z"]
    assert index_table.unescape_cell("x \\\\| y") == "x | y"  # what GitHub renders


def test_spec_now_rows_need_no_trailing_pipe() -> None:
    text = "| key | state\n|---|---\n| r1 | `done`\n"
    rows = docs_gate.matrix_rows(text, frozenset(["done"]))
    assert [(r.line, r.key, r.states) for r in rows] == [(1, "key", ()), (3, "r1", ("done",))]


def test_a_table_reads_what_its_cells_hold() -> None:
    # Inside a list item and a block quote, with code, links, images, inline HTML and text
    # that is not ASCII: every reader sees the same rows, lines, cells and anchors.
    text = (
        'Intro\n\n- item\n\n  | h `c` | <a id="t">é</a> |\n  |---|---|\n'
        "  | [x](a.md#b) ![alt *e*](i.png) | `k` and `l` |\n  | ü\\|v | <!-- c --> |\n\n"
        "> | q | r |\n> |-|-|\n> | **s** | [t][] |\n\n[t]: t.md\n"
    )
    doc = markdown.parse(text)
    rows = [(r.line, r.header, r.cells, r.plain, r.codes) for t in doc.tables for r in t.rows]
    assert rows == [
        (5, True, ("h `c`", '<a id="t">é</a>'), ("h c", "é"), ("c",)),
        (7, False, ("[x](a.md#b) ![alt *e*](i.png)", "`k` and `l`"), ("x", "k and l"), ("k", "l")),
        (8, False, ("ü\\|v", "<!-- c -->"), ("ü|v", ""), ()),
        (10, True, ("q", "r"), ("q", "r"), ()),
        (12, False, ("**s**", "[t][]"), ("s", "t"), ()),
    ]
    assert [t.line for t in doc.tables] == [5, 10]
    assert [(link.line, link.target, link.kind) for link in doc.links] == [
        (7, "a.md#b", "link"),
        (7, "i.png", "image"),
        (14, "t.md", "definition"),
    ]
    assert [(a.line, a.name) for a in doc.html_anchors] == [(5, "t")]
    assert doc.html == [(8, "<!-- c -->")]
    prose = doc.prose()
    assert "`" not in prose[4] and "<a" not in prose[4] and "<!--" not in prose[7]
    assert [i.line for i in doc.items] == [3]


def test_nesting_inside_a_table_cell_is_refused() -> None:
    cell = "*a " * 300 + "b" + " a*" * 300  # 300 levels of emphasis in a header cell
    with pytest.raises(UsageError, match="nested deeper than 256"):
        markdown.parse("| " + cell + " | b |\n|-|-|\n")
    shallow = "*a " * 200 + "b" + " a*" * 200
    doc = markdown.parse("| " + shallow + " | b |\n|-|-|\n")
    assert doc.tables[0].rows[0].plain[0].startswith("a a")


# -- NOW ---------------------------------------------------------------------------------------
def test_now_reads_headings_and_entries_as_github() -> None:
    doc = markdown.parse(
        '## <a id="n"></a>Next\n\n> ## Done\n\nk | v\n--|--\n'
        + "a | "
        + "b" * 50
        + "\n\n```\n- not an entry\n```\n"
    )
    assert now.headings(doc) == ["next", "done"]
    assert now.entries(doc) == [(5, 5), (7, 54)]


def test_a_stamp_in_code_is_no_stamp() -> None:
    doc = markdown.parse("`<!-- now-updated: 2026-01-01 -->`\n\n<!-- now-updated: 2026-02-02 -->\n")
    assert [v for _, piece in doc.html for v in now.stamps(piece)] == ["2026-02-02"]


# -- bad input ---------------------------------------------------------------------------------
def test_nesting_beyond_the_limit_is_exit_2(repo: Repo) -> None:
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": yaml.safe_dump({}), "docs/deep.md": ">" * 100_000 + " x\n"},
    )
    run = repo.tools("links", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: docs/deep.md: markdown nested deeper than")
