"""Blank C/C++ comments and string and character literals, keeping every line where it was.

Source comes from pull requests, and a ratchet must see every device site the compiler sees,
so this is a lexer that follows the C++17 lexical grammar, in one linear pass (a C file is
read by the same rules; see the end for where C differs):

1. Line splices first (translation phase 2): a backslash, optional blanks (gcc accepts them,
   with a warning) and a line ending are removed wherever they are, inside a word, a ``//``,
   a ``/*`` or a literal. A line ending is ``\\n``, ``\\r\\n`` or a lone ``\\r`` (gcc reads all
   three as one, so a ``\\r`` ends a ``//`` comment and an ordinary literal too).
2. Then the preprocessing tokens (phase 3), scanned left to right:

   - *pp-number* ([lex.ppnumber]): a digit or ``.`` digit, then digits, identifier
     characters, ``.``, ``e+ e- E+ E- p+ p- P+ P-``, and ``'`` followed by a digit or a
     letter or ``_`` (a digit separator: ``1'000'000``, ``0x1'ff``). A sign follows only an
     ``e`` or ``p`` that is not the letter of a separator (``1'e+5`` is ``1'e``, ``+``,
     ``5``). As gcc does, adjacent separators stay in the number (``1''2``, an error);
   - *identifier*: a letter, ``_``, ``$``, a universal character name or any non-ASCII
     character, then those and digits. An identifier (a keyword alike) ends before a quote,
     so ``case'"':`` is ``case`` and the character literal ``'"'``. The identifiers ``u8 u
     U L`` glued to a quote are encoding prefixes; ``R u8R uR UR LR`` glued to ``"`` open a
     raw string;
   - *character and string literals*: up to the closing quote, backslash escapes skipped;
     one not closed on its line ends at the end of that line (gcc warns "missing
     terminating ' character" and goes on), so a stray quote blanks the rest of its line,
     never the rest of the file;
   - *raw strings* ``R"delim( … )delim"``: read on the text as written (phase 2 is undone in
     them, as the standard says), so they may span lines and a backslash at a line's end
     inside them splices nothing. A delimiter of up to 16 characters of the basic set (no
     blank, no ``( ) \\``); past a character that cannot be one, the literal runs to the
     next ``"``, as gcc reads it; one never closed runs to the end of the text;
   - *comments*: ``//`` to the end of its (spliced) line, ``/* */`` (an unclosed one runs to
     the end of the text).

What is blanked: comments whole, and a literal's contents — everything between its opening
and closing quote (a raw string's delimiter and parentheses too). Prefixes, quotes and suffixes
stay, as does everything else, splices outside comments and literals included. Blanked
characters become spaces and line endings (``\\n`` and ``\\r``) stay, so line numbers (and
columns) are those of the original text.

One exception to the grammar, for include buckets: the operand of ``#include`` /
``#include_next`` / ``#import`` (``#`` or ``%:`` first on its line, blanks and comments
aside) is kept as written, quoted or angled (``"a/cuda/b.h"``, ``<a//b.h>``), to its
closing quote or ``>``, or to the end of its line when it has none.

Not modelled, each time the C++17 reading is the one taken: trigraphs (gone in C++17; gcc
replaces them only under ``-trigraphs`` or a strict ISO ``-std`` before C++17), and C's own
readings where ISO C lacks a C++ token (no raw strings, which GNU C has; no digit separators
before C23).

The scan searches for the next character that can start anything (a quote, ``/``, ``#``,
``%``) and reads what starts there with one regex match; before a quote it lexes only the
run of word characters glued to it, from that run's first token, to tell a digit separator
from a literal and a raw-string prefix from a word. Each character is read a bounded number
of times (possessive patterns, which never backtrack), so time is linear in the text.
tests/test_cstrip_differential.py holds the result to gcc's own lexer.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate
from operator import sub

from tools.lazy_regex import LazyRegex

# Phase 2. gcc ends a line at \n, \r\n and a lone \r alike.
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\r\n?|\n)")

# Identifier characters. Every non-ASCII character counts as a letter: gcc takes those that
# may appear in an identifier, and a file holding any other outside a literal or comment is
# one gcc rejects.
_ID = r"0-9A-Za-z_$\x80-\U0010ffff"
_UCN = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_IDENT = rf"(?:[A-Za-z_$\x80-\U0010ffff]|{_UCN})(?:[{_ID}]++|{_UCN})*+"
# The run excludes e, E, p, P so that each of them can take a sign; the letter after a
# separator is consumed with it, so it takes none. gcc also lets a sign follow a UCN whose
# spelling ends in e or E (it looks at the character before the sign).
_PPNUM = (
    rf"\.?[0-9](?:[eEpP][+-]?|'++[0-9A-Za-z_]|[0-9A-DF-OQ-Za-df-oq-z_$.\x80-\U0010ffff]++"
    rf"|(?:{_UCN})(?:(?<=[eE])[+-])?)*+"
)
# Only these characters can start a comment, a literal or a directive.
_TRIGGER = re.compile(r"[\"'/#%]")
# What a word or a number glued before a quote can hold (no trigger character among them).
_RUN = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$.+-\\")
# Over such a run, from a token's start: whole identifiers not glued to a quote, whole
# pp-numbers (their separators inside, so they may run past the quote), the rest one by
# one. It stops at the identifier glued to the quote, at the quote, or past the number
# that holds it.
# Compiled on first use (5 ms, the costliest pattern here): only a quote glued to a word or a
# number needs it.
_AHEAD = LazyRegex(
    rf"(?:{_IDENT}(?![\"'])|{_PPNUM}|[+\-.]|\\(?!u[0-9A-Fa-f]{{4}}|U[0-9A-Fa-f]{{8}}))*+"
)
# A backslash escapes the next character, but a line ending: one just before it (what a
# splice leaves when the next line is empty) is the last character of an unclosed literal.
_BODY = r"[^{q}\\\n\r]*+(?:\\[^\n\r][^{q}\\\n\r]*+)*+\\?+"
# A closed literal takes the word glued to it as its suffix (C++11 user-defined literals,
# spelled as gcc reads them): in ``"a"R"(x)"`` that ``R`` opens no raw string.
_SUFFIX = r"(?:[A-Za-z_][0-9A-Za-z_]*+)?"


def _literal(name: str, quote: str) -> str:
    """An ordinary literal from its opening quote: the body (group ``name`` + "b"), then the
    closing quote and its suffix when it closes on its line."""
    body = _BODY.format(q=quote)
    return rf"(?P<{name}>{quote})(?P<{name}b>{body})(?:{quote}{_SUFFIX})?"


# What starts at a trigger (or at the word glued before a quote).
_NEXT = re.compile(
    "|".join(
        [
            r"(?P<line>//[^\n\r]*+)",
            r"(?P<block>/\*(?:[^*]++|\*(?!/))*+(?:\*/)?)",
            _literal("dq", '"'),
            _literal("sq", "'"),
            r'(?P<raw>(?:u8|[uUL])?R)(?=")',
            rf"(?P<word>{_IDENT})",  # any other word glued to a quote
            r"(?P<hash>#|%:)",
        ]
    )
)
_GAP = r"(?:[ \t\f\v]++|/\*(?:[^*]++|\*(?!/))*+\*/)*+"  # blanks and closed comments
# Compiled on first use (2 ms): only a ``#`` or ``%:`` at a line's start needs it.
_INCLUDE = LazyRegex(rf"(?:#|%:){_GAP}(?:include_next|include|import)(?![{_ID}\\]){_GAP}([<\"])")
_SUFFIX_AT = re.compile(_SUFFIX)
# A raw string's delimiter: the basic character set but blanks, parentheses and backslash.
_DELIM = re.compile(r"[0-9A-Za-z_{}\[\]#<>%:;.?*+\-/^&|~!=,\"']{0,16}")
_EOL = re.compile(r"[\n\r]")
_NOT_EOL = re.compile(r"[^\n\r]+")
_ONE_NOT_EOL = re.compile(r"[^\n\r]")


def _spaces(m: re.Match[str]) -> str:
    return " " * (m.end() - m.start())


def blank(segment: str) -> str:
    """``segment`` with every character but ``\\n`` and ``\\r`` turned into a space."""
    if "\n" not in segment and "\r" not in segment:
        return " " * len(segment)
    if len(segment) < 64:  # short (a splice in a literal): no call back per run
        return _ONE_NOT_EOL.sub(" ", segment)
    return _NOT_EOL.sub(_spaces, segment)


class _Spliced:
    """The text with its line splices removed, and the maps between the two index spaces."""

    __slots__ = ("text", "flat_at", "shift", "cut_start", "cut_end")

    def __init__(self, text: str) -> None:
        self.text = text
        spans = [m.span() for m in _SPLICE.finditer(text)] if "\\" in text else []
        self.cut_start = array("q", [a for a, _ in spans])  # where each splice starts, ends
        self.cut_end = array("q", [b for _, b in spans])
        # Characters removed up to and including each splice, and where the character after
        # each splice lands in the spliced text.
        self.shift = array("q", accumulate(b - a for a, b in spans))
        self.flat_at = array("q", map(sub, self.cut_end, self.shift))
        if spans:
            self.text = _SPLICE.sub("", text)

    def orig(self, k: int) -> int:
        """Where the spliced text's character ``k`` is in the text."""
        j = bisect_right(self.flat_at, k)
        return k + self.shift[j - 1] if j else k

    def flat(self, o: int) -> int:
        """Where the text's index ``o`` (not inside a splice) is in the spliced text."""
        j = bisect_right(self.cut_end, o)
        return o - self.shift[j - 1] if j else o

    def count_before(self, o: int) -> int:
        """How many characters of the spliced text come from the text before ``o``."""
        j = bisect_right(self.cut_end, o)
        gone = self.shift[j - 1] if j else 0
        if j < len(self.cut_start) and self.cut_start[j] < o:
            gone += o - self.cut_start[j]
        return o - gone


def _same(k: int) -> int:
    return k


def _raw_end(text: str, q: int) -> tuple[int, int, bool]:
    """The raw string whose ``"`` is at ``q``: where its contents end (its closing ``"``, or
    the end of the text), where it ends, and whether it is well formed (then a suffix may
    follow)."""
    n = len(text)
    d = _DELIM.match(text, q + 1)
    k = d.end() if d else q + 1
    if k < n and text[k] == "(":
        close = text.find(")" + text[q + 1 : k] + '"', k + 1)
        if close < 0:
            return n, n, False
        inner = close + k - q
        return inner, inner + 1, True
    # Not a delimiter: gcc reports the character at k and reads on to the next quote.
    close = text.find('"', k + 1) if k < n else -1
    return (n, n, False) if close < 0 else (close, close + 1, False)


def _line_start(s: str, p: int, comment_end: int, comment_clean: bool) -> bool:
    """Whether only blanks and comments precede ``p`` on its line (``comment_end``: where the
    last block comment ended; ``comment_clean``: whether that held where it began)."""
    j = p
    while j and s[j - 1] in " \t\f\v":
        j -= 1
    return j == 0 or s[j - 1] in "\n\r" or (j == comment_end and comment_clean)


def _other(
    kind: str | None,
    m: re.Match[str],
    text: str,
    sp: _Spliced,
    push: Callable[[str], None],
    copied: int,
    keep: tuple[int, int],
    comment: tuple[int, bool],
) -> tuple[int, int, tuple[int, int], tuple[int, bool]]:
    """A comment, a raw string literal or a directive at ``m`` (of the spliced text): what it
    blanks is pushed after ``text[copied:]``'s part before it. Returns how much of ``text``
    is copied now, where the scan goes on (-1: at the end), the span of an include's operand
    to keep as written (``keep``, or a new one), and where the last block comment ended and
    whether it started a line (``comment``, what :func:`_line_start` reads)."""
    s = sp.text
    joined = s is not text
    orig = sp.orig if joined else _same
    n, size = len(text), len(s)
    p, e = m.start(), m.end()
    if kind == "line":
        a, b = (orig(p), orig(e) if e < size else n) if joined else (p, e)
        push(text[copied:a])
        push(blank(text[a:b]) if joined else " " * (e - p))
        return b, e, keep, comment
    if kind == "block":
        clean = _line_start(s, p, *comment)
        a = orig(p)
        b = orig(e - 1) + 1 if s.endswith("*/", p + 2, e) else n
        push(text[copied:a])
        push(blank(text[a:b]))
        return b, e, keep, (e, clean)
    if kind == "raw":
        q = orig(e)
        inner, end, suffixed = _raw_end(text, q)
        push(text[copied : q + 1])
        push(blank(text[q + 1 : inner]))
        if end >= n:
            return inner, -1, keep, comment
        i = sp.flat(end) if joined else end
        suffix = _SUFFIX_AT.match(s, i) if suffixed else None
        return inner, suffix.end() if suffix is not None else i, keep, comment
    # a "#" or "%:"
    if not _line_start(s, p, *comment):
        return copied, e, keep, comment
    inc = _INCLUDE.compiled.match(s, p)
    if inc is None:
        return copied, e, keep, comment
    keep_from = inc.start(1)
    eol = _EOL.search(s, keep_from)
    eol_at = eol.start() if eol else size
    close = s.find(">" if s[keep_from] == "<" else '"', keep_from + 1, eol_at)
    return copied, e, (keep_from, close + 1 if close >= 0 else eol_at), comment


def _glued(s: str, i: int, j: int) -> tuple[int, bool]:
    """Where what a quote at ``s[j]`` opens starts: the run of word characters glued before
    it (a prefix such as ``u8R``), back to ``i`` at most; and whether the quote is a digit
    separator inside a number instead (then the first is where the number ends)."""
    w = j
    while w > i and (s[w - 1] in _RUN or s[w - 1] >= "\x80"):
        w -= 1
    if w == j:
        return j, False
    run = _AHEAD.compiled.match(s, w)
    k = run.end() if run is not None else w
    return k, k > j


def _literal_ends(sp: _Spliced, p: int, inner: int, n: int) -> tuple[int, int]:
    """The body of the literal from ``p`` to ``inner`` in the spliced text, as offsets of
    the original text (``n`` long)."""
    flat_at, shift = sp.flat_at, sp.shift
    k = bisect_right(flat_at, p)
    a = p + 1 + (shift[k - 1] if k else 0)
    if inner >= len(sp.text):
        return a, n
    k = bisect_right(flat_at, inner, k)
    return a, inner + (shift[k - 1] if k else 0)


def strip_c(text: str, upto: int | None = None) -> str:
    """``text`` with comments and literals blanked (same length, same line endings).

    ``upto``: only the part before this index is needed; the scan stops at the first
    comment or literal that starts at or after it (the rest is returned as it is)."""
    n = len(text)
    sp = _Spliced(text)
    s = sp.text
    joined = s is not text
    if upto is None or upto >= n:
        stop = len(s)
    else:
        stop = sp.count_before(upto) if joined else upto
    out: list[str] = []
    push = out.append
    copied = i = 0  # text[:copied] is in out; the scan goes on at s[i]
    keep = (-1, -1)  # an include operand, kept as written
    comment = (-1, False)  # where the last block comment ended, and whether it began a line
    match, find = _NEXT.match, _TRIGGER.search
    while True:
        t = find(s, i)
        if t is None:
            break
        j = t.start()
        if j >= stop:
            break
        c = s[j]
        if c == "/" or c == "%":
            if not s.startswith(("//", "/*") if c == "/" else "%:", j):
                i = j + 1
                continue
        elif c != "#":  # a quote: what is glued before it decides what it opens
            j, in_number = _glued(s, i, j)
            if in_number:  # a digit separator
                i = j
                continue
        m = match(s, j)
        if m is None:  # never: each trigger starts one of the alternatives
            i = j + 1
            continue
        kind, p = m.lastgroup, m.start()
        if p >= stop:
            break
        if keep[0] <= p < keep[1]:
            i = keep[1]
            continue
        if kind == "dqb" or kind == "sqb":  # a literal (its body is the last group matched)
            inner = m.end(kind)
            i = m.end()
            if joined:
                a, b = _literal_ends(sp, p, inner, n)
                if b > a:
                    push(text[copied:a])
                    push(blank(text[a:b]))
                    copied = b
            elif inner > p + 1:  # without splices, a literal's body holds no line ending
                push(text[copied : p + 1])
                push(" " * (inner - p - 1))
                copied = inner
        elif kind == "word":
            i = m.end()  # the quote after it opens an ordinary literal: the next match reads it
        else:
            copied, i, keep, comment = _other(kind, m, text, sp, push, copied, keep, comment)
            if i < 0:
                break
    if not out:
        return text
    push(text[copied:])
    return "".join(out)
