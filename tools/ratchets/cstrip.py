"""Blank C/C++ comments and string and character literals, keeping every line where it was.

Source comes from pull requests, so this is a linear scan: one regex finds the next place
where something may start (``//``, ``/*``, a quote), and ``str.find`` jumps to where it ends.
Blanked characters become spaces and newlines stay, so line numbers (and columns) are those of
the original text. What is recognised:

- ``//`` comments (continued by a backslash at the end of the line, as the preprocessor
  splices lines) and ``/* */`` comments (an unclosed one runs to the end of the text);
- string literals with any prefix (``u8``, ``u``, ``U``, ``L``) and raw strings
  (``R"delim( … )delim"``, which may span lines); the quotes stay, the contents are blanked;
- character literals, told apart from C++14 digit separators (``1'000'000``) and from an
  apostrophe inside a word (``#error don't``) by the character before the quote;
- the operand of ``#include`` / ``#include_next`` / ``#import`` is kept (``"a/cuda/b.h"``
  and ``<a//b.h>`` alike), so include buckets still see it.

An ordinary literal never runs past the end of its line (unless a backslash continues it):
a stray quote blanks the rest of its line, never the rest of the file.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"/[/*]|[\"']")
# Unrolled loops: each character is consumed one way only, so no backtracking.
_BODY = {
    '"': re.compile(r'[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*'),
    "'": re.compile(r"[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*"),
}
_DIRECTIVE = re.compile(r"#[ \t]*(?:include_next|include|import)[ \t]*([<\"])")
_BLANKS = re.compile(r"[ \t]*")
_RAW_DELIM_MAX = 16


def _ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def blank(segment: str) -> str:
    """``segment`` with every character but ``\\n`` turned into a space."""
    if "\n" not in segment:
        return " " * len(segment)
    return "\n".join(" " * len(part) for part in segment.split("\n"))


def include_spans(text: str, stop: int | None = None) -> list[tuple[int, int]]:
    """The operands of the include directives (``#`` first on its line, blanks aside) that
    start before ``stop``, as spans in order: from the opening ``"`` or ``<`` through the
    closing one, or to the end of the line when it is not closed."""
    spans: list[tuple[int, int]] = []
    if "#" not in text:
        return spans
    n = len(text)
    line_start, scanned, first = 0, 0, -1  # first: where the current line's text begins
    for m in _DIRECTIVE.finditer(text, 0, n if stop is None else stop):
        h = m.start()
        nl = text.rfind("\n", scanned, h)  # each stretch is searched once: linear
        scanned = h
        if nl >= 0 or first < 0:
            line_start = nl + 1 if nl >= 0 else line_start
            blanks = _BLANKS.match(text, line_start)
            first = blanks.end() if blanks else line_start
        if h != first:
            continue
        q = m.start(1)
        eol = text.find("\n", q)
        eol = n if eol < 0 else eol
        close = text.find(">" if m.group(1) == "<" else '"', q + 1, eol)
        spans.append((q, close + 1 if close >= 0 else eol))
    return spans


def _char_prefix(text: str, p: int) -> bool:
    """Whether the quote at ``p`` opens a character literal, judged by what precedes it."""
    if p == 0 or not _ident(text[p - 1]):
        return True
    # After a word character the quote is a literal only behind an encoding prefix.
    if text[p - 1] in "uUL" and (p < 2 or not _ident(text[p - 2])):
        return True
    return text[p - 2 : p] == "u8" and (p < 3 or not _ident(text[p - 3]))


def _raw_string_end(text: str, p: int) -> tuple[int, bool] | None:
    """If the ``"`` at ``p`` opens a raw string: the index just past its end, and whether it
    is closed (an unclosed one runs to the end of the text)."""
    if p == 0 or text[p - 1] != "R":
        return None
    k = p - 1
    if text[k - 2 : k] == "u8":
        k -= 2
    elif k > 0 and text[k - 1] in "uUL":
        k -= 1
    if k > 0 and _ident(text[k - 1]):
        return None
    paren = text.find("(", p + 1, p + 2 + _RAW_DELIM_MAX)
    if paren < 0:
        return None
    delim = text[p + 1 : paren]
    if any(ch in delim for ch in ' ()\\\t\v\f\n"'):
        return None
    close = text.find(")" + delim + '"', paren + 1)
    return (len(text), False) if close < 0 else (close + len(delim) + 2, True)


def _line_comment_end(text: str, p: int) -> int:
    """The newline that ends the ``//`` comment at ``p`` (splices followed)."""
    pos = p
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        back = nl - 1
        if back > p and text[back] == "\r":
            back -= 1
        if back > p + 1 and text[back] == "\\":
            pos = nl + 1
            continue
        return nl


def strip_c(text: str, upto: int | None = None) -> str:
    """``text`` with comments and literals blanked (same length, same newlines).

    ``upto``: only the part before this index is needed; the scan stops at the first
    comment or literal that starts at or after it (the rest is returned as it is)."""
    n = len(text)
    stop = n if upto is None else upto
    spans = include_spans(text, stop)
    nspans, si = len(spans), 0
    out: list[str] = []
    push = out.append
    copied = i = 0  # text[:copied] is already in out; the next search starts at i
    search = _SPECIAL.search
    find = text.find
    while True:
        m = search(text, i, stop)
        if m is None:
            break
        p = m.start()
        while si < nspans and spans[si][1] <= p:
            si += 1
        if si < nspans and spans[si][0] <= p:
            i = spans[si][1]  # inside an include operand: kept as written
            continue
        c = text[p]
        if c == "/":
            if text[p + 1] == "/":
                end = find("\n", p)
                if end < 0:
                    end = n
                elif text[end - 1] in "\\\r":  # maybe a splice: the careful way
                    end = _line_comment_end(text, p)
            else:
                end = find("*/", p + 2)
                end = n if end < 0 else end + 2
            push(text[copied:p])
            push(blank(text[p:end]))
        else:
            if c == "'" and p and not _char_prefix(text, p):
                i = p + 1  # a digit separator or an apostrophe inside a word
                continue
            raw = _raw_string_end(text, p) if c == '"' and p and text[p - 1] == "R" else None
            if raw is not None:
                end = raw[0]
                inner_end = end - 1 if raw[1] else end
            else:
                body = _BODY[c].match(text, p + 1)
                inner_end = body.end() if body else p + 1
                end = inner_end + 1 if inner_end < n and text[inner_end] == c else inner_end
            push(text[copied : p + 1])
            push(
                " " * (inner_end - p - 1)
                if inner_end - p < 3 or "\n" not in text[p:inner_end]
                else blank(text[p + 1 : inner_end])
            )
            push(text[inner_end:end])
        copied = i = end
    if not out:
        return text
    push(text[copied:])
    return "".join(out)
