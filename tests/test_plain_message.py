"""The plain shape's reading agrees with the full one: the same trailer block, and the marker
rules met, whenever it claims a message; every other message is left to the full reading."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools.commit_messages import is_own_paragraph, marker_lines
from tools.config import defaults, merge
from tools.config_model import protocol_config
from tools.gates import trailers
from tools.lines import split_lines
from tools.plain_message import plain_block
from tools.trailer_block import find_block, is_blank

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
PLAIN = (
    "Port kernel 7 from upstream\n\nBrings kernel 7 over.\nWith its tests.\n\n"
    f"{MARKER}\n\nFollowing-Agents-Protocol: true\nAI-Assisted: true\n"
    "Assisted-by: claude:opus-4 [claude-code]\n"
)

# Pieces of real messages and of the shapes git reads otherwise: folded trailers, comments,
# dividers, blank-looking lines, CRs, tabs, keys with blanks before the colon.
TEXT = [
    "Subject",
    "Port kernel 7 from upstream",
    "Body text, with a colon: here",
    "  indented body",
    "Key: value",
    "Key:value",
    "Key : value",
    "Key:  two spaces",
    "Key: trailing space ",
    "Key:",
    "Signed-off-by: A U Thor <a@example.com>",
    "Co-authored-by: B <b@users.noreply.github.com>",
    "(cherry picked from commit 0123456789abcdef)",
    "Following-Agents-Protocol: true",
    "AI-Assisted: true",
    "Assisted-by: claude:opus-4 [claude-code]",
    "  continued",
    "\tcontinued",
    "# a comment",
    "---",
    "----",
    "Conflicts:",
    "https://example.com/pull/1",
    MARKER,
    f" {MARKER}",
    f"{MARKER}\r",
    "",
    " ",
    "\t",
    "\r",
    "Key: v\x0b",
    "K\udcffy: non-utf8 key",
]
line = st.one_of(st.sampled_from(TEXT), st.text(alphabet=" \t\r:#-aK\n", max_size=6))
paragraph = st.lists(line, min_size=1, max_size=4).map("\n".join)
trailer_paragraph = st.lists(st.sampled_from(TEXT[4:17]), min_size=1, max_size=5).map("\n".join)
# Near the plain shape: paragraphs, the marker, trailer-like lines, and each seam varied.
messages = st.builds(
    lambda title, paras, sep1, mark, sep2, last, end: (
        title + "".join("\n\n" + p for p in paras) + sep1 + mark + sep2 + last + end
    ),
    st.sampled_from(["Subject", "# Subject", "", "Subject\nwrapped", "Key: v", MARKER]),
    st.lists(paragraph, max_size=3),
    st.sampled_from(["\n\n", "\n", "\n\n\n", "\n \n", "\n\r\n"]),
    st.sampled_from([MARKER, f"{MARKER} ", MARKER.lower(), "MARKER", f"{MARKER}\n\n{MARKER}"]),
    st.sampled_from(["\n\n", "\n", "\n\n\n", "\n\t\n"]),
    st.one_of(trailer_paragraph, paragraph),
    st.sampled_from(["\n", "", "\n\n", " \n", "\r\n", "\n# comment\n"]),
)

GOOD_TRAILERS = [
    "Following-Agents-Protocol: true",
    "AI-Assisted: true",
    "AI-Assisted: false",
    "Assisted-by: claude:opus-4 [claude-code]",
    "Signed-off-by: A U Thor <a@example.com>",
    "Co-authored-by: B <b@users.noreply.github.com>",
    "Key: value: with colons",
    "K: v\x0b",
]
INSERTS = ["\n", "\n\n", " ", "\t", "\r", "#", "---", ":", " \n", "\n ", MARKER, "\x00", "-"]


def _spoil(text: str, edits: list[tuple[float, str]]) -> str:
    for where, what in edits:
        at = int(where * len(text))
        text = text[:at] + what + text[at:]
    return text


# The plain shape itself, then a few characters put anywhere: most stay plain or just miss.
near_plain = st.builds(
    _spoil,
    st.builds(
        lambda body, last: f"Subject\n\n{body}\n\n{MARKER}\n\n{last}\n",
        st.lists(st.sampled_from(TEXT[:3]), min_size=1, max_size=3).map("\n".join),
        st.lists(st.sampled_from(GOOD_TRAILERS), min_size=1, max_size=5).map("\n".join),
    ),
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from(INSERTS)), max_size=2),
)


def _full_reading(text: str) -> tuple[list[int], bool, list[int]]:
    """What the full reading says of the marker: its lines, whether the first is a
    paragraph of its own that is not the last, and the ``---`` lines."""
    lines = split_lines(text)
    found = marker_lines(text, MARKER)
    own = bool(found) and is_own_paragraph(lines, found[0])
    not_last = own and not all(is_blank(x) for x in lines[found[0] :])
    return found, not_last, trailers.framing_lines(text)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(near_plain, messages, st.text(alphabet=f"\n \t\r:#-aK{MARKER[:3]}", max_size=60)))
@example(PLAIN)
@example(PLAIN.replace("\nAI-Assisted", "\n\tAI-Assisted"))
@example(PLAIN.replace("Key", "Co-authored-by"))
def test_the_plain_reading_agrees_with_the_full_one(text: str) -> None:
    block = plain_block(text, MARKER)
    if block is None:
        return
    full = find_block(text)
    assert (block.trailers, block.start, block.end, block.squash) == (
        full.trailers,
        full.start,
        full.end,
        full.squash,
    )
    found, not_last, framing = _full_reading(text)
    assert len(found) == 1 and not_last and framing == []


def test_the_plain_shape_is_read_and_holds_the_trailers() -> None:
    block = plain_block(PLAIN, MARKER)
    assert block is not None
    assert [(t.key, t.value, t.line) for t in block.trailers] == [
        ("Following-Agents-Protocol", "true", 8),
        ("AI-Assisted", "true", 9),
        ("Assisted-by", "claude:opus-4 [claude-code]", 10),
    ]
    assert (block.start, block.end) == (8, 10)


@pytest.mark.parametrize(
    "change",
    [
        ("\nAI-Assisted", "\n  AI-Assisted"),  # a folded trailer
        ("With its tests.", "With\tits tests."),  # a tab
        ("With its tests.", "With its tests. "),  # a trailing space
        ("With its tests.", "With its tests.\n \nMore."),  # a line of spaces
        ("With its tests.", "With its tests.\n---"),  # a patch divider
        ("With its tests.", "With its tests.\n# comment"),  # a comment line
        ("true\n", "true\r\n"),  # a CR
        ("over.\n", "over.\n\n\n"),  # blank lines in a row
        ("Brings", f"{MARKER}\n\nBrings"),  # the marker twice
        (f"\n\n{MARKER}\n\n", f"\n{MARKER}\n\n"),  # the marker shares a paragraph
        ("\n\nFollowing", "\n\nNot a trailer\nFollowing"),  # a line that is no trailer
        ("AI-Assisted: true", "AI-Assisted : true"),  # a blank before the colon
        ("[claude-code]\n", "[claude-code]\n\n"),  # blank lines at the end
        ("[claude-code]\n", "[claude-code]"),  # no final newline
    ],
)
def test_every_other_shape_is_left_to_the_full_reading(change: tuple[str, str]) -> None:
    old, new = change
    assert old in PLAIN
    assert plain_block(PLAIN.replace(old, new, 1), MARKER) is None


def test_co_authors_only_are_left_to_the_full_reading() -> None:
    # GitHub's squash shape can join a trailer paragraph above the Co-authored-by lines.
    text = f"Subject\n\n{MARKER}\n\nCo-authored-by: A <a@x>\n"
    assert plain_block(text, MARKER) is None
    assert plain_block(text.replace("Co-authored", "Reviewed"), MARKER) is not None


@pytest.mark.parametrize("marker", ["", " FOLLOWING", "A\nB"])
def test_a_marker_that_is_no_line_is_left_to_the_full_reading(marker: str) -> None:
    assert plain_block(PLAIN, marker) is None


# -- the memo of clean trailer paragraphs --------------------------------------------------

_CFG = protocol_config(
    merge(
        defaults(),
        {
            "trailers": {
                "marker": MARKER,
                "marker_placement": "paragraph",
                "required": {
                    "Following-Agents-Protocol": ["true"],
                    "AI-Assisted": ["true", "false"],
                },
                "assisted_by": True,
                "ai_identities": ["claude", "bot"],
            }
        },
    )
).trailers
# Last paragraphs: clean ones, and ones that each block rule finds something in.
LASTS = [
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]",
    "Following-Agents-Protocol: true\nAI-Assisted: false",
    "Following-Agents-Protocol: true\nAI-Assisted: true",
    "AI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]",
    "Following-Agents-Protocol: true\nAI-Assisted: maybe",
    "Following-Agents-Protocol: true\nAI-Assisted: false\nAssisted-by: a:b [c]",
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: no tool",
    "Following-Agents-Protocol: true\nFollowing-Agents-Protocol: true\nAI-Assisted: false",
    "Following-Agents-Protocol: true\nAI-Assisted: false\nSigned-off-by: Claude <c@example.com>",
    "Following-Agents-Protocol: true\nAI-Assisted: false\nReviewed-by: A <a@example.com>",
]
# Bodies: plain ones, one with the unfilled template, ones with trailer-like lines that a
# missing trailer's hint points at, and ones that leave the plain shape.
BODIES = [
    "Brings kernel 7 over.",
    "Left AGENT:MODEL [TOOL] in.",
    "AI-Assisted: true\nin the body",
    "Following-Agents-Protocol: true",
    "Two\n\nparagraphs",
    "a\ttab",
    "---",
]
history = st.lists(
    st.one_of(
        st.builds(
            lambda title, body, last: f"{title}\n\n{body}\n\n{MARKER}\n\n{last}\n",
            st.sampled_from(["Subject", "Port kernel 7 from upstream"]),
            st.lists(st.sampled_from(BODIES), min_size=1, max_size=3).map("\n\n".join),
            st.sampled_from(LASTS),
        ),
        near_plain,
    ),
    min_size=1,
    max_size=12,
)


def _findings(text: str, *, filled: bool, clean: set[str] | None) -> list[tuple]:
    found: list[tuple] = []
    trailers.judge(text, _CFG, lambda *finding: found.append(finding), filled=filled, clean=clean)
    return found


def _message(body: str, last: str) -> str:
    return f"Subject\n\n{body}\n\n{MARKER}\n\n{last}\n"


@settings(max_examples=1500, deadline=None)
@given(history, st.booleans())
# A remembered paragraph below a divider (the shape must still be checked), below the
# template (still found), and a paragraph with a finding, twice (never remembered).
@example([_message("Body", LASTS[0]), _message("---", LASTS[0])], False)
@example([_message("Body", LASTS[0]), _message("Left AGENT:MODEL [TOOL] in.", LASTS[0])], True)
@example([_message("Body", LASTS[2]), _message("Body", LASTS[2])], False)
def test_the_memo_of_clean_paragraphs_changes_no_finding(texts: list[str], filled: bool) -> None:
    clean: set[str] = set()
    with_memo = [_findings(t, filled=filled, clean=clean) for t in texts]
    assert with_memo == [_findings(t, filled=filled, clean=None) for t in texts]


def test_a_clean_paragraph_is_judged_once() -> None:
    clean: set[str] = set()
    assert _findings(PLAIN, filled=True, clean=clean) == []
    assert clean == {PLAIN[:-1].rpartition("\n\n")[2]}
    # The same paragraph below another body: no block finding, the template's still.
    again = PLAIN.replace("With its tests.", "With AGENT:MODEL [TOOL].")
    assert [f[0] for f in _findings(again, filled=True, clean=clean)] == [
        trailers.PLACEHOLDER_RULE.id
    ]
    # A paragraph with a finding is never remembered.
    bad = PLAIN.replace("AI-Assisted: true", "AI-Assisted: maybe")
    assert _findings(bad, filled=False, clean=clean) != []
    assert _findings(bad, filled=False, clean=clean) != [] and len(clean) == 1


# -- the one-pass check of a clean trailer paragraph ---------------------------------------

TRAILER_POOL = [
    "Following-Agents-Protocol: true",
    "Following-Agents-Protocol: false",
    "following-agents-protocol: true",
    "AI-Assisted: true",
    "AI-Assisted: false",
    "ai-ASSISTED: true",
    "AI-Assisted: yes",
    "Assisted-by: claude:opus-4 [claude-code]",
    "assisted-BY: codex:gpt-5 [codex] [ci]",
    "Assisted-by: no tool here",
    "Assisted-by: a:b[c]",
    "Signed-off-by: A U Thor <a@example.com>",
    "signed-off-by: Claude <c@example.com>",
    "Co-authored-by: B <b@users.noreply.github.com>",
    "Reviewed-by: R <r@example.com>",
    "Reviewed-by: claude",
    "Key: value: with colons",
]
CONFIGS = [
    _CFG,
    _CFG._replace(assisted_by_format=r"[a-z]+:[a-z0-9-]+ \[[a-z-]+\]"),
    _CFG._replace(assisted_by=False),
    _CFG._replace(required={**_CFG.required, "Reviewed-by": ("R <r@example.com>",)}),
    _CFG._replace(required={}),
]


def _block_findings(text: str, cfg) -> list[tuple]:
    found: list[tuple] = []
    block = plain_block(text, MARKER)
    assert block is not None
    trailers._block_rules(text, block, cfg, lambda *finding: found.append(finding))
    return found


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.sampled_from(TRAILER_POOL), min_size=1, max_size=6),
    st.sampled_from(range(len(CONFIGS))),
)
@example(["Following-Agents-Protocol: true", "AI-Assisted: true"], 0)
@example(["Following-Agents-Protocol: true", "AI-Assisted: false", "Reviewed-by: claude"], 0)
def test_a_remembered_paragraph_is_judged_as_a_fresh_one(lines: list[str], which: int) -> None:
    # A paragraph is remembered only when the block rules found nothing in it: a message
    # ending in it then gets exactly the findings a fresh reading gives.
    cfg = CONFIGS[which]
    last = "\n".join(lines)

    def judged(text: str, clean: set[str] | None) -> list[tuple]:
        found: list[tuple] = []
        trailers.judge(text, cfg, lambda *f: found.append(f), clean=clean)
        return found

    clean: set[str] = set()
    judged(_message("Body.", last), clean)
    again = _message("Another body.", last)
    assert judged(again, clean) == judged(again, None)


@pytest.mark.parametrize(
    ("last", "passes"),
    [
        (LASTS[0], True),
        (LASTS[1], True),
        ("ai-assisted: false\nFOLLOWING-AGENTS-PROTOCOL: true\nReviewed-by: R <r@x>", True),
        (LASTS[2], False),  # AI-Assisted: true without Assisted-by
        (LASTS[3], False),  # a required trailer missing
        (LASTS[4], False),  # a value not allowed
        (LASTS[5], False),  # Assisted-by with AI-Assisted: false
        (LASTS[6], False),  # a malformed Assisted-by
        (LASTS[7], False),  # a required trailer twice
        (LASTS[8], False),  # an AI credited as a signer (any credit is judged in full)
    ],
)
def test_the_block_rules_pass_clean_paragraphs_only(last: str, passes: bool) -> None:
    assert (_block_findings(_message("Body.", last), _CFG) == []) is passes
    # A clean paragraph is remembered; a second message ending in it is not read again.
    clean: set[str] = set()
    _findings(_message("Body.", last), filled=False, clean=clean)
    assert (last in clean) is passes


def test_a_last_paragraph_with_prose_is_no_trailer_block() -> None:
    # The required trailers, then a line that is no trailer: git reads no block there.
    text = _message("Body.", "Following-Agents-Protocol: true\nAI-Assisted: false\nSee the spec.")
    rules = [f[0] for f in _findings(text, filled=False, clean=set())]
    assert rules == [trailers.TRAILER_MISSING.id, trailers.TRAILER_MISSING.id]
