"""The trailer parser agrees with real ``git interpret-trailers --parse``; the squash shape."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tools import trailer_block
from tools.git import decode, encode
from tools.lines import split_lines
from tools.trailer_block import (
    SCISSORS,
    _cut_line_end,
    _patch_start,
    find_block,
    git_parse_output,
    git_trailers,
    paragraphs,
)


def git_parse(text: str) -> bytes:
    """What real git prints for ``text`` (the fixture isolates HOME: no trailer.* config)."""
    proc = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=encode(text),
        capture_output=True,
        check=True,
        timeout=20,
    )
    return proc.stdout


def git_hangs(text: str) -> bool:
    # git 2.39 loops forever when a scissors line lies below the patch divider.
    cut = _cut_line_end(text, len(text))
    return cut != len(text) and cut > _patch_start(text)


# Line shapes that exercise every branch of git's block finder.
LINES = [
    "Subject line",
    "Body text, with a colon: here",
    "Key: value",
    "key-2:value",
    "Key : value: with colons",
    "Key\t: tabbed",
    "Key:",
    "-: dash key",
    "Assisted by: spaced key",
    "a b: c",
    ": no key",
    "Key",
    "Signed-off-by: A U Thor <a@example.com>",
    "Signed-off-by:no-space",
    "(cherry picked from commit 0123456789abcdef)",
    "Co-authored-by: B <b@users.noreply.github.com>",
    "  continued",
    "\tcontinued: with colon",
    " ",
    "\r",
    "",
    "",
    "# a comment",
    "#",
    "---",
    "--- not a divider? it is",
    "---\r",
    "----------",
    "---x",
    "Conflicts:",
    "\tpath/in/conflict.c",
    "https://example.com/a:b",
    "K\udcffy: non-utf8 key",
    "Key: non-utf8 \udcfe value",
    "Kéy: non-ascii key",
    "Key: value\r",
    "Value-Only-Line\r",
    SCISSORS[:-1],
]

line = st.one_of(
    st.sampled_from(LINES),
    st.text(alphabet=" \t\r:#-aB0()\udcff\u00e9\u00a0\x0b\x0c", max_size=8),
)
# Line soup: any sequence of line shapes.
soup = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(line, max_size=12),
    st.sampled_from(["", "\n", "\n\n", "\r\n"]),
)
# Message-shaped: a title, then paragraphs mostly of trailer-like lines, so that the last
# paragraph is often a (mixed) trailer block and the 25 % rule is exercised.
TRAILERISH = [
    "Key: value",
    "Other-Key: x: y",
    "Signed-off-by: A U Thor <a@example.com>",
    "(cherry picked from commit 0123456789abcdef)",
    "Co-authored-by: B <b@users.noreply.github.com>",
    "  continued",
    "# a comment",
    "not a trailer",
    "Assisted by: spaced key",
    "----------",
    "Key\t: tabbed\r",
]
paragraph = st.lists(
    st.one_of(st.sampled_from(TRAILERISH), st.sampled_from(TRAILERISH), line),
    min_size=1,
    max_size=6,
).map("\n".join)
shaped = st.builds(
    lambda title, paras, end: title + "".join(sep + p for sep, p in paras) + end,
    st.sampled_from(["Subject", "# comment\nSubject", "", "Subject\nwrapped", "Key: v"]),
    st.lists(
        st.tuples(st.sampled_from(["\n\n", "\n \n", "\n\r\n", "\n\n\n", "\n"]), paragraph),
        max_size=4,
    ),
    st.sampled_from(["", "\n", "\n\n", "\n# trailing comment\n"]),
)
messages = st.one_of(soup, shaped)


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(messages)
@example("Subject\n\nKey: a\n  b\n c: d\nOther: x\n\n\n")
@example("Subject\n\nSigned-off-by: a\nfoo\nbar\nbaz\n")
@example("Subject\n\nSigned-off-by: a\nfoo\nbar\nbaz\nqux\n")
@example("Subject\n\nKey: v\n(cherry picked from commit abc)\n")
@example("\nKey: v\n")
@example("Key: v\n")
@example("Subject\n\nKey: v\nConflicts:\n\tfile\n")
# Continuations under a comment, under a line that is no trailer, led by a CR; blank-looking
# and comment lines below the paragraph (the block finder counts these in bulk).
@example("Subject\n\nSigned-off-by: a\n# c\n  x\n y\nK: v\n")
@example("Subject\n\nSigned-off-by: a\nnot one\n x\n y\n z\n")
@example("Subject\n\nK: v\n\rcr\nL: w\n \n#\n \t\n")
@example("Subject\n\n x\nK: v\n\n#\n")
@example("Subject\n\nK: v\n\n  \n\n")
def test_agrees_with_git_interpret_trailers(message: str) -> None:
    assume(not git_hangs(message))
    assert encode(git_parse_output(message)) == git_parse(message)


def _region(message: str) -> str:
    """The message below its title, as the block finder reads it (final newline dropped)."""
    below = message.partition("\n\n")[2]
    return below[:-1] if below.endswith("\n") else below


@pytest.mark.parametrize(
    "message",
    [
        "Subject\n\nKey: a\n  b\n c: d\nOther: x\n\n\n",
        "Subject\n\nSigned-off-by: a\n# c\n  x\n y\nK: v\n \n#\n \t",
        "Subject\n\n x\nK: v\n\n#",
    ],
)
def test_blank_and_comment_lines_below_the_block_agree_with_git(message: str) -> None:
    # The block finder counts these in bulk (no step per line): git is the reference.
    assert encode(git_parse_output(message)) == git_parse(message)


def test_a_long_region_is_read_by_the_passes_and_agrees_with_git() -> None:
    body = "Body line.\n" * (trailer_block.SHORT_REGION // 11 + 10)
    message = f"Subject\n\n{body}\nKey: v\n  more\n# note\nSigned-off-by: A <a@x>\n"
    assert len(_region(message)) > trailer_block.SHORT_REGION
    assert encode(git_parse_output(message)) == git_parse(message)


TRICKY = {
    "url-after-trailers": "Subject\n\nBody.\n\nKey: v\nOther: w\n\nhttps://example.com/x\n",
    "assisted-by-space": "Subject\n\nBody.\n\nAI-Assisted: true\nAssisted by: a:b [c]\n",
    "assisted-by-space-signed": (
        "Subject\n\nBody.\n\nAI-Assisted: true\nAssisted by: a:b [c]\nSigned-off-by: A <a@x>\n"
    ),
    "patch-divider": "Subject\n\nKey: v\n---\nOther: w\n",
    "divider-with-text": "Subject\n\nBody\n\nKey: v\n--- a/file\n+++ b/file\n",
    "crlf": "Subject\r\n\r\nBody.\r\n\r\nKey: v\r\nOther: w\r\n",
    "non-utf8": decode(b"Subj\xff\n\nBody \xfe.\n\nKey: v\xff\nOther: \xc3w\n"),
    "non-utf8-key": decode(b"Subj\n\nBody.\n\nKey: v\nK\xc3y: w\n"),
    "empty": "",
    "only-blank": "\n\n \n",
    "continuation": "Subject\n\nKey: a\n  b\n\tc\nOther: x:y:z\n",
    "comment-inside": "Subject\n\nKey: v\n# note\nOther: w\n",
    "trailing-comments": "Subject\n\nKey: v\n\n# Please enter the commit message\n#\n",
    "scissors": f"Subject\n\nKey: v\n{SCISSORS}diff --git a/x b/x\n\nOther: w\n",
    "title-only-trailers": "Key: v\nOther: w\n",
    "mixed-25": "Subject\n\nSigned-off-by: a\nnot one\nnot two\nnot three\n",
    "mixed-under-25": "Subject\n\nSigned-off-by: a\nn1\nn2\nn3\nn4\n",
    "case-insensitive-keys": "Subject\n\nfollowing-agents-protocol: true\nAI-ASSISTED: false\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_messages_agree_with_git(name: str) -> None:
    assert encode(git_parse_output(TRICKY[name])) == git_parse(TRICKY[name])


def test_tricky_messages_parse_as_expected() -> None:
    # The facts the gates rely on, spelled out (each also agrees with git above).
    # A URL line is itself a "trailer" (key `https`): it is the block now, the real ones are not.
    url = git_trailers(TRICKY["url-after-trailers"])
    assert [(t.key, t.value, t.line) for t in url] == [("https", "//example.com/x", 8)]
    # `Assisted by:` is no trailer: alone it spoils the block; beside a sign-off (25 % rule)
    # the block stands and the line is dropped.
    assert git_trailers(TRICKY["assisted-by-space"]) == []
    spaced = git_trailers(TRICKY["assisted-by-space-signed"])
    assert [t.key for t in spaced] == ["AI-Assisted", "Signed-off-by"]
    assert [t.key for t in git_trailers(TRICKY["patch-divider"])] == ["Key"]
    crlf = git_trailers(TRICKY["crlf"])
    assert [(t.key, t.value, t.line) for t in crlf] == [("Key", "v", 5), ("Other", "w", 6)]
    assert [(t.key, t.value) for t in git_trailers(TRICKY["continuation"])] == [
        ("Key", "a b c"),
        ("Other", "x:y:z"),
    ]
    assert git_trailers(TRICKY["mixed-25"])[0].key == "Signed-off-by"
    assert git_trailers(TRICKY["mixed-under-25"]) == []
    assert git_trailers(TRICKY["title-only-trailers"]) == []
    assert [t.key for t in git_trailers(TRICKY["scissors"])] == ["Key"]
    assert [encode(t.value) for t in git_trailers(TRICKY["non-utf8"])] == [b"v\xff", b"\xc3w"]
    assert git_trailers(TRICKY["non-utf8-key"]) == []  # keys are ASCII [A-Za-z0-9-] only


def test_a_one_megabyte_message_agrees_with_git() -> None:
    body = "".join(f"line {i}: some words of body text here\n" for i in range(25_000))
    message = f"Subject\n\n{body}\nKey: v\n  more\nOther: w\n"
    assert len(message) > 1_000_000
    assert encode(git_parse_output(message)) == git_parse(message)
    trailers = git_trailers(message)
    assert [(t.key, t.value, t.line) for t in trailers] == [
        ("Key", "v more", 25_004),
        ("Other", "w", 25_006),
    ]


# -- lines and paragraphs --------------------------------------------------------------------


def test_lines_split_on_newline_only() -> None:
    text = "a\rb\x0bc\x0cd\x1ce\u2028f\n\ng\n"
    assert split_lines(text) == ["a\rb\x0bc\x0cd\x1ce\u2028f", "", "g"]
    assert len(text.splitlines()) != len(split_lines(text))  # what splitlines would get wrong
    paras = paragraphs(split_lines("s\r\n\r\nb1\nb2\n \t\nt\n"))
    assert [(p.start, p.lines) for p in paras] == [(1, ("s\r",)), (3, ("b1", "b2")), (6, ("t",))]


# -- the GitHub squash extension -------------------------------------------------------------


SQUASH_TAIL = "Co-authored-by: Jane <123+jane@users.noreply.github.com>\n"


@pytest.mark.parametrize(
    "dashes",
    ["AI-Assisted: false\n---------\n\n", "AI-Assisted: false\n\n----\n\n"],
    ids=["dashes-end-the-paragraph", "dashes-alone"],
)
def test_squash_shape_is_one_block(dashes: str) -> None:
    message = f"Subject\n\nBody.\n\nFollowing-Agents-Protocol: true\n{dashes}{SQUASH_TAIL}"
    # git alone sees only the Co-authored-by paragraph...
    assert [t.key for t in git_trailers(message)] == ["Co-authored-by"]
    assert encode(git_parse_output(message)) == git_parse(message)
    # ...the extension sees the whole squash block.
    block = find_block(message)
    assert block.squash
    assert [t.key for t in block.trailers] == [
        "Following-Agents-Protocol",
        "AI-Assisted",
        "Co-authored-by",
    ]
    assert block.start == 5
    assert not find_block(message, squash=False).squash


@pytest.mark.parametrize(
    "message",
    [
        # three dashes: git's patch divider, not the squash line
        f"Subject\n\nBody.\n\nAI-Assisted: false\n---\n\n{SQUASH_TAIL}",
        # prose above the dashes, not a trailer paragraph
        f"Subject\n\nBody.\n\nJust prose.\n\n-----\n\n{SQUASH_TAIL}",
        # the last paragraph mixes other trailers in
        f"Subject\n\nBody.\n\nAI-Assisted: false\n-----\n\n{SQUASH_TAIL}Other: x\n",
        # no dash line at all
        f"Subject\n\nBody.\n\nAI-Assisted: false\n\n{SQUASH_TAIL}",
    ],
    ids=["three-dashes", "prose-above", "mixed-last", "no-dashes"],
)
def test_near_squash_shapes_are_not_extended(message: str) -> None:
    block = find_block(message)
    assert not block.squash
    assert [(t.key, t.value) for t in block.trailers] == [
        (t.key, t.value) for t in git_trailers(message)
    ]
