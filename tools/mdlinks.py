"""The links of a markdown document, found by hand in linear time.

Markdown comes from pull requests, so nothing here uses a regex that can backtrack: the only
regexes are single character classes used to hop to the next interesting character. What is
recognised, after CommonMark:

- inline links ``[text](target "title")`` and images ``![alt](target)``, including targets in
  angle brackets (``<a b.md>``, which may hold spaces), balanced parentheses and backslash
  escapes in targets, titles in ``"…"``, ``'…'`` or ``(…)``, and link text spanning lines;
- reference definitions ``[label]: target "title"`` at the start of a paragraph (the
  reference links that use them need no check of their own);
- text that holds no links: fenced and indented code blocks, code spans (a backtick run
  closed by a run of the same length), HTML comments and autolinks ``<scheme:…>`` /
  ``<a@b.c>`` (always external, never fetched).

Also: GitHub's explicit anchors ``<a name="x">`` / ``<a id="x">``, and the resolution of a link
target to a repo-relative path (:func:`resolve`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, unquote_to_bytes

from tools import markdown
from tools.git import decode

# Hops to the next character the inline scan acts on (one character class: no backtracking).
_SPECIAL = re.compile(r"[\\\[\]`<!]")
_TICKS = re.compile(r"`+")
_PARENS = re.compile(r"[()\\]")
# What ends a raw link target: ASCII whitespace and control characters.
_RAW_STOP = re.compile(r"[\x00-\x20\x7f]")
# What ends a would-be autolink.
_ANGLE_STOP = re.compile(r"[\x00-\x20\x7f<>]")
_TITLE_STOP = {'"': re.compile(r'[\\"]'), "'": re.compile(r"[\\']"), ")": re.compile(r"[\\()]")}
_ANGLE_TARGET_STOP = re.compile(r"[\\<>\n]")
# What may not follow the "<" of a comment or an autolink.
_NOT_AFTER_ANGLE = frozenset(["", " ", "\t", "\n", "<", ">"])
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_LABEL_MAX = 999


@dataclass(frozen=True)
class Link:
    """A link target as written (backslash escapes resolved) and the 1-based line it is on."""

    line: int
    target: str
    kind: str  # "link" | "image" | "definition"


def unescape(text: str) -> str:
    """Backslash escapes of ASCII punctuation resolved, as CommonMark does in targets."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in _PUNCT:
            out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# -- blocks ----------------------------------------------------------------------------------
def _comment_block_mask(lines: list[str], mask: list[bool]) -> list[bool]:
    """Lines of HTML comment blocks (a line starting with ``<!--`` up to the line holding
    ``-->``): GitHub renders no link there."""
    out = [False] * len(lines)
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        body = line.lstrip(" ")
        if mask[i] or len(line) - len(body) > 3 or not body.startswith("<!--"):
            i += 1
            continue
        j = i
        at = line.find("-->", line.find("<!--") + 4)
        while at < 0 and j + 1 < n:
            j += 1
            at = lines[j].find("-->")
        for k in range(i, j + 1):
            out[k] = True
        i = j + 1
    return out


def _indented_code_mask(lines: list[str], skip: list[bool]) -> list[bool]:
    """Lines of indented code blocks: four columns of indent after a blank line (or
    continuing such a block), outside a list, where the indent belongs to the item."""
    out = [False] * len(lines)
    in_list = False
    prev_blank = True
    in_code = False
    for i, line in enumerate(lines):
        if skip[i]:
            prev_blank, in_code = False, False
            continue
        if not line.strip(" \t"):
            prev_blank = True
            continue
        indent = markdown.indent(line)
        if indent < 4:
            in_code = False
            if markdown.is_list_item(line):
                in_list = True
            elif indent == 0 and prev_blank:
                in_list = False  # a paragraph at the margin after a blank line ends the list
        elif not in_list and (prev_blank or in_code):
            in_code = True
        out[i] = in_code
        prev_blank = False
    return out


def _blocks(lines: list[str], mask: list[bool]) -> list[list[int]]:
    """Paragraph-like blocks: runs of non-blank lines outside code and comment blocks; a
    heading line is a block of its own. Each block is a list of 0-based line indexes."""
    comments = _comment_block_mask(lines, mask)
    skip = [a or b for a, b in zip(mask, comments, strict=True)]
    indented = _indented_code_mask(lines, skip)
    blocks: list[list[int]] = []
    current: list[int] = []
    for i, line in enumerate(lines):
        if skip[i] or indented[i] or not line.strip(" \t"):
            if current:
                blocks.append(current)
                current = []
            continue
        if markdown.is_heading_line(line):
            if current:
                blocks.append(current)
                current = []
            blocks.append([i])
            continue
        current.append(i)
    if current:
        blocks.append(current)
    return blocks


# -- reference definitions -------------------------------------------------------------------
def _raw_target(text: str, start: int) -> tuple[str, int] | None:
    """A target at ``start``: ``<…>`` or a run without whitespace; (target, end)."""
    n = len(text)
    if start >= n:
        return None
    if text[start] == "<":
        end = _angle_end(text, start)
        return None if end is None else (text[start + 1 : end], end + 1)
    stop = _RAW_STOP.search(text, start)
    end = stop.start() if stop else n
    return (text[start:end], end) if end > start else None


def _angle_end(text: str, start: int) -> int | None:
    """The ``>`` closing an angle-bracketed target opened at ``start`` (no newline and no
    unescaped ``<`` inside), or None."""
    i = start + 1
    while True:
        m = _ANGLE_TARGET_STOP.search(text, i)
        if m is None:
            return None
        ch = m.group()
        if ch == "\\":
            i = m.start() + 2
            continue
        return m.start() if ch == ">" else None


def _definition(line: str, nxt: str | None) -> tuple[str, bool] | None:
    """(target, whether the target sat on the next line) if ``line`` opens a reference
    definition ``[label]: target``."""
    body = line.lstrip(" ")
    if len(line) - len(body) > 3 or not body.startswith("["):
        return None
    i, n = 1, len(body)
    limit = min(n, _LABEL_MAX + 2)
    while i < limit:
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            return None
        if ch == "]":
            break
        i += 1
    if i >= limit or body[i] != "]" or not body[1:i].strip() or body[i + 1 : i + 2] != ":":
        return None
    rest = body[i + 2 :].lstrip(" \t")
    on_next = False
    if not rest:
        if nxt is None:
            return None
        rest, on_next = nxt.lstrip(" \t"), True
    found = _raw_target(rest, 0)
    if found is None:
        return None
    target, end = found
    tail = rest[end:]
    if tail.strip(" \t") and (tail[:1] not in " \t" or tail.lstrip(" \t")[:1] not in "\"'("):
        return None  # text after the target that is no title: a paragraph, not a definition
    return unescape(target), on_next


# -- code spans ------------------------------------------------------------------------------
def _escaped(text: str, pos: int) -> bool:
    """Whether ``text[pos]`` is preceded by an odd run of backslashes."""
    k = pos
    while k > 0 and text[k - 1] == "\\":
        k -= 1
    return (pos - k) % 2 == 1


def code_spans(text: str) -> dict[int, int]:
    """Code spans of a block: opening position -> end (exclusive). A run of backticks opens
    a span closed by the next run of the same length; a backslash before a run escapes its
    first backtick when it would open, never when it closes (code holds no escapes)."""
    runs: list[tuple[int, int]] = [m.span() for m in _TICKS.finditer(text)]
    by_len: dict[int, list[int]] = {}
    for k, (s, e) in enumerate(runs):
        by_len.setdefault(e - s, []).append(k)
    spans: dict[int, int] = {}
    k = 0
    while k < len(runs):
        s, e = runs[k]
        if s > 0 and _escaped(text, s):
            s += 1
        length = e - s
        later = by_len.get(length, [])
        at = bisect.bisect_right(later, k)
        if length == 0 or at == len(later):
            k += 1
            continue
        close = later[at]
        spans[s] = runs[close][1]
        k = close + 1
    return spans


# -- inline links ----------------------------------------------------------------------------
@dataclass
class _Parens:
    """Parenthesis matching over one whitespace-free run, computed once per run."""

    lo: int = -1
    hi: int = -1
    match: dict[int, int] = field(default_factory=dict)
    unmatched: list[int] = field(default_factory=list)


class _Inline:
    """One block's inline scan."""

    def __init__(self, text: str):
        self.t = text
        self.n = len(text)
        self.parens = _Parens()
        self.no_comment_close_after = self.n + 1  # no "-->" at or after this offset

    def _skip_ws(self, i: int) -> int:
        """Past spaces and tabs, at most one line ending, and spaces and tabs again."""
        t, n = self.t, self.n
        while i < n and t[i] in " \t":
            i += 1
        if i < n and t[i] == "\n":
            i += 1
            while i < n and t[i] in " \t":
                i += 1
        return i

    def _run(self, opener: int, start: int) -> _Parens:
        """Matching of the run that starts at ``start`` with ``opener`` as its opening
        parenthesis (the ``(`` itself, or the whitespace before the target)."""
        p = self.parens
        if p.lo <= opener < p.hi and self.t[opener] == "(":
            return p
        stop = _RAW_STOP.search(self.t, start)
        hi = stop.start() if stop else self.n
        p = _Parens(opener, hi)
        stack = [opener]
        skip = -1
        for m in _PARENS.finditer(self.t, start, hi):
            at = m.start()
            if at == skip:
                continue
            ch = m.group()
            if ch == "\\":
                skip = at + 1
            elif ch == "(":
                stack.append(at)
            elif stack:
                p.match[stack.pop()] = at
        p.unmatched = stack
        self.parens = p
        return p

    def target(self, paren: int) -> tuple[str, int, int] | None:
        """The inline link whose ``(`` is at ``paren``: (target, its offset, end)."""
        t, n = self.t, self.n
        j = paren + 1
        if j < n and t[j] in " \t\n":
            j = self._skip_ws(j)
        if j >= n:
            return None
        if t[j] == ")":
            return "", j, j + 1
        if t[j] == "<":
            close = _angle_end(t, j)
            if close is None:
                return None
            target, after = t[j + 1 : close], close + 1
        else:
            opener = paren if j == paren + 1 else j - 1
            run = self._run(opener, j)
            close = run.match.get(opener)
            if close is not None:
                return unescape(t[j:close]), j, close + 1
            if not run.unmatched or run.unmatched[-1] != opener:
                return None  # a parenthesis inside the target is left open
            target, after = t[j : run.hi], run.hi
        k = self._skip_ws(after)
        if k < n and t[k] == ")":
            return unescape(target), j, k + 1
        if k == after or k >= n or t[k] not in "\"'(":
            return None
        end = self._title_end(k)
        if end is None:
            return None
        k = self._skip_ws(end + 1)
        if k < n and t[k] == ")":
            return unescape(target), j, k + 1
        return None

    def _title_end(self, start: int) -> int | None:
        close = ")" if self.t[start] == "(" else self.t[start]
        stop = _TITLE_STOP[close]
        i = start + 1
        while True:
            m = stop.search(self.t, i)
            if m is None:
                return None
            ch = m.group()
            if ch == "\\":
                i = m.start() + 2
            elif ch == close:
                return m.start()
            else:  # an unescaped "(" inside a (…) title
                return None

    def angle(self, i: int) -> int:
        """Where the scan resumes after a ``<`` at ``i``: past an HTML comment or an
        autolink, else just past the ``<``."""
        t = self.t
        if t[i + 1 : i + 2] in _NOT_AFTER_ANGLE:
            return i + 1  # neither a comment nor an autolink can start here
        if t.startswith("<!--", i):
            if i + 4 < self.no_comment_close_after:
                end = t.find("-->", i + 4)
                if end >= 0:
                    return end + 3
                self.no_comment_close_after = i + 4
            return i + 1
        stop = _ANGLE_STOP.search(t, i + 1)
        if stop is None or stop.group() != ">":
            return i + 1
        inner = t[i + 1 : stop.start()]
        colon = inner.find(":")
        scheme = inner[:colon]
        if (
            colon >= 2
            and scheme[0].isascii()
            and scheme[0].isalpha()
            and all(c.isascii() and (c.isalnum() or c in "+.-") for c in scheme)
        ) or ("@" in inner and colon < 0):
            return stop.end()
        return i + 1


def _inline_links(text: str, starts: list[int], lines_at: list[int], out: list[Link]) -> None:
    """Append the inline links and images of one block (``starts``: offset of each line,
    ``lines_at``: its 1-based line number)."""
    scan = _Inline(text)
    spans = code_spans(text)
    openers: list[tuple[int, bool]] = []  # (offset of "[", is an image)
    inactive_before = -1  # a link was made here: earlier "[" can no longer open one
    i = 0  # where the scan resumes: matches before it were consumed by a construct
    for m in _SPECIAL.finditer(text):
        at = m.start()
        if at < i:
            continue
        ch = text[at]
        if ch == "[":
            openers.append((at, False))
            i = at + 1
        elif ch == "]":
            i = at + 1
            if not openers:
                continue
            pos, image = openers.pop()
            if (image or pos > inactive_before) and text.startswith("(", at + 1):
                found = scan.target(at + 1)
                if found is not None:
                    target, start, end = found
                    line = lines_at[bisect.bisect_right(starts, start) - 1]
                    out.append(Link(line, target, "image" if image else "link"))
                    if not image:
                        inactive_before = at
                    i = end
        elif ch == "\\":
            i = at + 2
        elif ch == "`":
            end = spans.get(at)
            i = end if end is not None else _TICKS.match(text, at).end()  # type: ignore[union-attr]
        elif ch == "<":
            i = scan.angle(at)
        elif text.startswith("[", at + 1):  # "!["
            openers.append((at + 1, True))
            i = at + 2
        else:
            i = at + 1


def find_links(lines: list[str], mask: list[bool] | None = None) -> list[Link]:
    """Every link target of a document (inline links, images, reference definitions), in
    order, outside fenced code, code spans, HTML comments and autolinks."""
    if mask is None:
        mask = markdown.code_mask(lines)
    out: list[Link] = []
    for block in _blocks(lines, mask):
        k = 0
        while k < len(block):
            nxt = lines[block[k + 1]] if k + 1 < len(block) else None
            found = _definition(lines[block[k]], nxt)
            if found is None:
                break
            target, on_next = found
            line = block[k + 1 if on_next else k] + 1
            out.append(Link(line, target, "definition"))
            k += 2 if on_next else 1
        rest = block[k:]
        if not rest:
            continue
        starts: list[int] = []
        offset = 0
        for idx in rest:
            starts.append(offset)
            offset += len(lines[idx]) + 1
        text = "\n".join(lines[idx] for idx in rest)
        _inline_links(text, starts, [idx + 1 for idx in rest], out)
    return out


# -- explicit anchors ------------------------------------------------------------------------
def html_anchors(lines: list[str], mask: list[bool] | None = None) -> set[str]:
    """The ``name`` and ``id`` values of ``<a …>`` tags outside fenced code: GitHub keeps
    them as anchors."""
    if mask is None:
        mask = markdown.code_mask(lines)
    found: set[str] = set()
    for i, line in enumerate(lines):
        if mask[i] or "<" not in line:
            continue
        low = line.lower()
        at = low.find("<a")
        while at >= 0:
            end = low.find(">", at)
            if end < 0:
                break
            if low[at + 2 : at + 3] in (" ", "\t"):
                _attributes(line[at + 2 : end], low[at + 2 : end], found)
            at = low.find("<a", end)
    return found


def _attributes(tag: str, low: str, found: set[str]) -> None:
    i, n = 0, len(low)
    while i < n:
        eq = low.find("=", i)
        if eq < 0:
            return
        name = low[i:eq].rstrip(" \t").rpartition(" ")[2].rpartition("\t")[2]
        j = eq + 1
        while j < n and low[j] in " \t":
            j += 1
        if j < n and low[j] in "\"'":
            close = low.find(low[j], j + 1)
            if close < 0:
                return
            value, i = tag[j + 1 : close], close + 1
        else:
            k = j
            while k < n and low[k] not in " \t":
                k += 1
            value, i = tag[j:k], k
        if name in ("name", "id") and value:
            found.add(value)


# -- targets ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """Where a link target points inside the repository."""

    path: str  # repo-relative, "" for the repository root
    fragment: str | None  # after "#", percent-decoded; None when there is no "#"
    directory: bool  # written with a trailing slash


def is_external(target: str) -> bool:
    """A URL with a scheme (``https:``, ``mailto:``…) or protocol-relative (``//host``)."""
    if target.startswith("//"):
        return True
    colon = target.find(":")
    if colon < 1:
        return False
    scheme = target[:colon]
    return (
        scheme[0].isascii()
        and scheme[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c in "+.-") for c in scheme)
    )


def percent_decode(text: str) -> str:
    """``%20`` -> space; bytes that are not UTF-8 survive (as in git paths)."""
    if "%" not in text:
        return text
    return decode(unquote_to_bytes(text))


class Escapes(ValueError):
    """A target that climbs above the repository root."""


def resolve(source: str, target: str) -> Target:
    """Resolve a local ``target`` written in the file ``source`` (both repo-relative), as
    GitHub does: relative to the file's folder, or to the repository root when it starts
    with ``/``; the query is dropped, the path percent-decoded. Raises :class:`Escapes`."""
    path, hash_, fragment = target.partition("#")
    path = path.partition("?")[0]
    frag = unquote(fragment, errors="surrogateescape") if hash_ else None
    if not path:
        return Target(source, frag, False)
    path = percent_decode(path)
    if path.startswith("/"):
        parts: list[str] = []
    else:
        parts = source.split("/")[:-1]
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if not parts:
                raise Escapes(target)
            parts.pop()
            continue
        parts.append(seg)
    return Target("/".join(parts), frag, path.endswith("/"))


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _line_ref(part: str) -> int | None:
    """``L10`` or ``L10C3`` -> 10."""
    if not part.startswith("L"):
        return None
    line, sep, column = part[1:].partition("C")
    if not _digits(line) or (sep and not _digits(column)):
        return None
    return int(line)


def line_anchor(fragment: str) -> tuple[int, int] | None:
    """``L10`` -> (10, 10); ``L10-L20`` -> (10, 20); columns (``L10C3``) allowed; else None."""
    first, dash, second = fragment.partition("-")
    a = _line_ref(first)
    if a is None:
        return None
    if not dash:
        return a, a
    b = _line_ref(second)
    return None if b is None else (a, b)


def code_span_contents(text: str) -> list[str]:
    """The text of each code span of ``text`` (one line or one block), stripped, in order."""
    out: list[str] = []
    for start, end in sorted(code_spans(text).items()):
        ticks = _TICKS.match(text, start)
        width = ticks.end() - start if ticks else 1
        out.append(text[start + width : end - width].strip(" \t\n"))
    return out
