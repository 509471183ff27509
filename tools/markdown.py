"""The little of CommonMark the gates need, parsed by hand in linear time.

Markdown comes from pull requests, so nothing here uses a regex that can backtrack: lines are
classified with string operations. What is recognised:

- fenced code blocks (```` ``` ```` or ``~~~``, three or more, indented up to three spaces;
  closed by a fence of the same character at least as long, with nothing after it): their lines
  are code, never headings, entries or links;
- ATX headings (``#`` to ``######`` then a space, a tab or the end of the line; an optional
  closing run of ``#`` after a space) and setext headings (a paragraph line underlined by
  ``===`` or ``---``);
- sections: a heading and the lines up to the next heading of the same or a higher level;
- GitHub's heading anchors (lower case, punctuation dropped, spaces to hyphens, ``-1``,
  ``-2``… for repeats), so ``## 6. Now`` is ``#6-now``.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

_BLANKS = " \t"


def split_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` with a final ``\\r`` dropped; a final newline starts no line."""
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def indent(line: str) -> int:
    """Columns of leading spaces (a tab counts as reaching the next multiple of four)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _fence(line: str) -> tuple[str, int, str] | None:
    """(fence character, run length, rest of the line) if ``line`` opens or closes a fence."""
    if indent(line) > 3:
        return None
    body = line.lstrip(" ")
    if not body or body[0] not in "`~":
        return None
    ch = body[0]
    run = len(body) - len(body.lstrip(ch))
    if run < 3:
        return None
    rest = body[run:]
    if ch == "`" and "`" in rest:
        return None  # a backtick fence's info string may not hold a backtick
    return ch, run, rest


def code_mask(lines: list[str]) -> list[bool]:
    """For each line, whether it belongs to a fenced code block (the fence lines included).
    An unclosed fence runs to the end of the document, as CommonMark says."""
    mask = [False] * len(lines)
    open_fence: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        fence = _fence(line)
        if open_fence is None:
            if fence is not None:
                open_fence = (fence[0], fence[1])
                mask[i] = True
            continue
        mask[i] = True
        if (
            fence is not None
            and fence[0] == open_fence[0]
            and fence[1] >= open_fence[1]
            and not fence[2].strip(_BLANKS)
        ):
            open_fence = None
    return mask


@dataclass(frozen=True)
class Heading:
    """A heading: its 1-based line, level (1-6) and text as written (inline markup kept)."""

    line: int
    level: int
    text: str

    @property
    def title(self) -> str:
        """The text lower-cased, inline markup and any section numbering (``6.``, ``2.1``)
        dropped: what a required heading such as ``Now`` is compared with."""
        return strip_numbering(plain_text(self.text)).strip().lower()


def _atx(line: str) -> tuple[int, str] | None:
    if indent(line) > 3:
        return None
    body = line.lstrip(" ")
    level = len(body) - len(body.lstrip("#"))
    if not 1 <= level <= 6:
        return None
    rest = body[level:]
    if rest and rest[0] not in _BLANKS:
        return None
    text = rest.strip(_BLANKS)
    # An optional closing sequence: a run of # preceded by a space or tab (or alone).
    closing = text.rstrip("#")
    if closing != text and (not closing or closing[-1] in _BLANKS):
        text = closing.rstrip(_BLANKS)
    return level, text


def is_heading_line(line: str) -> bool:
    """Whether ``line`` alone is an ATX heading."""
    return _atx(line) is not None


def _setext_level(line: str) -> int | None:
    if indent(line) > 3:
        return None
    body = line.strip(_BLANKS)
    if not body or body[0] not in "=-" or body.strip(body[0]):
        return None
    return 1 if body[0] == "=" else 2


def is_list_item(line: str) -> bool:
    """Whether ``line`` starts a list item (``-``, ``*``, ``+`` or ``1.`` / ``1)``)."""
    body = line.lstrip(_BLANKS)
    if body[:1] in ("-", "*", "+"):
        return len(body) == 1 or body[1] in _BLANKS
    digits = len(body) - len(body.lstrip("0123456789"))
    if not 1 <= digits <= 9 or digits >= len(body) or body[digits] not in ".)":
        return False
    return digits + 1 == len(body) or body[digits + 1] in _BLANKS


def headings(lines: list[str], mask: list[bool] | None = None) -> list[Heading]:
    """Every ATX and setext heading outside fenced code blocks, in order."""
    if mask is None:
        mask = code_mask(lines)
    out: list[Heading] = []
    prev: str | None = None  # the previous line when it can carry a setext underline
    for i, line in enumerate(lines):
        if mask[i]:
            prev = None
            continue
        atx = _atx(line)
        if atx is not None:
            out.append(Heading(i + 1, atx[0], atx[1]))
            prev = None
            continue
        level = _setext_level(line)
        if level is not None and prev is not None:
            out.append(Heading(i, level, prev.strip(_BLANKS)))
            prev = None
            continue
        blank = not line.strip(_BLANKS)
        prev = None if blank or is_list_item(line) or line.lstrip(_BLANKS)[:1] in "|>" else line
    return out


@dataclass(frozen=True)
class Section:
    """A heading and its body: lines ``start`` to ``end`` (1-based, inclusive; ``end`` <
    ``start`` when the body is empty), up to the next heading of the same or a higher level."""

    heading: Heading
    start: int
    end: int

    def body(self, lines: list[str]) -> list[str]:
        return lines[self.start - 1 : self.end]


def sections(lines: list[str], found: list[Heading] | None = None) -> list[Section]:
    """One section per heading."""
    if found is None:
        found = headings(lines)
    out: list[Section] = []
    for k, h in enumerate(found):
        end = len(lines)
        for later in found[k + 1 :]:
            if later.level <= h.level:
                end = later.line - 1
                break
        out.append(Section(h, h.line + 1, end))
    return out


def strip_numbering(text: str) -> str:
    """``6. Now`` -> ``Now``; ``2.1 Owed`` -> ``Owed``; other text unchanged."""
    s = text.lstrip(_BLANKS)
    i = 0
    n = len(s)
    while True:
        j = i
        while j < n and s[j].isdigit() and s[j].isascii():
            j += 1
        if j == i:
            return text
        i = j
        if i < n and s[i] == "." and i + 1 < n and s[i + 1].isdigit():
            i += 1
            continue
        break
    if i < n and s[i] == ".":
        i += 1
    if i < n and s[i] in _BLANKS:
        return s[i:].lstrip(_BLANKS)
    return text


def plain_text(text: str) -> str:
    """Inline markup reduced to the text GitHub renders: ``[text](url)`` -> ``text``, images
    to their alt text, backticks and emphasis markers dropped (one linear pass)."""
    out: list[str] = []
    i, n = 0, len(text)
    last_close = text.rfind(")")  # past it no link target can close: no search is repeated
    while i < n:
        ch = text[i]
        if ch == "!" and i + 1 < n and text[i + 1] == "[":
            i += 1
            continue
        if ch == "]" and i + 1 < n and text[i + 1] == "(" and i + 2 <= last_close:
            close = text.find(")", i + 2)
            if close >= 0:
                i = close + 1
                continue
        if ch in "[]`*":
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text (before de-duplication)."""
    out: list[str] = []
    for ch in plain_text(text).strip().lower():
        if ch == " ":
            out.append("-")
        elif ch in "-_" or unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
    return "".join(out)


def anchors(found: list[Heading]) -> list[str]:
    """The anchor of each heading, repeats suffixed ``-1``, ``-2``… as GitHub does."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    out: list[str] = []
    for h in found:
        base = slug(h.text)
        candidate = base
        if candidate in taken:
            k = seen.get(base, 0)
            while True:
                k += 1
                candidate = f"{base}-{k}"
                if candidate not in taken:
                    break
            seen[base] = k
        taken.add(candidate)
        out.append(candidate)
    return out


def code_spans(line: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` character ranges of the inline code spans of one line, backtick
    runs included: a run of N backticks opens a span that the next run of exactly N closes;
    a run without a partner is literal text. A backslash before a run escapes its first
    backtick (outside a span). Linear apart from a binary search per run: a run's partner is
    looked up among the runs of its length, never searched for along the line again."""
    runs: list[tuple[int, int]] = []  # (start, length) of each backtick run
    i, n = 0, len(line)
    while True:
        i = line.find("`", i)
        if i < 0:
            break
        j = i
        while j < n and line[j] == "`":
            j += 1
        runs.append((i, j - i))
        i = j
    if len(runs) < 2:
        return []
    by_length: dict[int, list[int]] = {}  # run length -> indices of the runs of that length
    for k, (_, length) in enumerate(runs):
        by_length.setdefault(length, []).append(k)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        start, length = runs[k]
        if start > 0 and line[start - 1] == "\\" and not _escaped_backslash(line, start - 1):
            start, length = start + 1, length - 1  # the first backtick is a literal one
        later = by_length.get(length, []) if length else []
        at = bisect.bisect_right(later, k)
        if at == len(later):
            k += 1
            continue
        close = later[at]
        spans.append((start, runs[close][0] + runs[close][1]))
        k = close + 1
    return spans


def _escaped_backslash(line: str, at: int) -> bool:
    """Whether the backslash at ``at`` is itself escaped (an odd run of backslashes before)."""
    count = 0
    while at - 1 - count >= 0 and line[at - 1 - count] == "\\":
        count += 1
    return count % 2 == 1


def blank_code_spans(line: str) -> str:
    """``line`` with every inline code span (backticks and content) replaced by spaces, so
    that what lies inside code is never read as a link, a citation or a marker; columns keep
    their positions."""
    spans = code_spans(line)
    if not spans:
        return line
    out: list[str] = []
    at = 0
    for start, end in spans:
        out.append(line[at:start])
        out.append(" " * (end - start))
        at = end
    out.append(line[at:])
    return "".join(out)
