"""Commit-message trailers, found exactly as ``git interpret-trailers --parse`` finds them.

Pure functions, str in (decode bytes with :func:`tools.git.decode`; non-UTF-8 bytes survive as
surrogates), data out. The block finder mirrors git 2.39's rules with git's defaults
(separator ``:``, comment character ``#``, no ``trailer.*`` configuration):

- the message ends at the first patch divider (a line starting ``---`` and a whitespace
  character) and, within that, before a scissors line; trailing blank lines, comment lines and
  an old-style ``Conflicts:`` block are not part of the trailer block;
- the first paragraph is the title and never holds trailers;
- the block is the last paragraph, found from the end; it counts when all of its lines are
  trailers, or when it holds a git-generated trailer (``Signed-off-by: ``, ``(cherry picked
  from commit ``) and at least 25 % of its lines are trailers;
- a trailer line is ``Key: value`` with ``Key`` of ``[A-Za-z0-9-]`` (spaces or tabs may
  precede the colon); an indented line continues the trailer above it; values may hold
  colons; comment lines inside the block are dropped;
- "whitespace" is git's: space, tab, CR, LF (never ``\\v``, ``\\f`` nor non-ASCII spaces), and
  messages split on ``\\n`` only.

One deliberate extension (:func:`find_block`): GitHub's squash shape -- a trailer paragraph,
a line of four or more dashes (ending that paragraph or standing alone), then a paragraph of
``Co-authored-by`` lines -- is one block. :func:`git_trailers` has no extension: it is the
reference the property test compares with real git.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import NamedTuple

SPACE = " \t\n\r"  # git's isspace(): sane_ctype marks exactly these four
COMMENT = "#"
SCISSORS = "# ------------------------ >8 ------------------------\n"
_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
_DIVIDER = re.compile(r"^---[ \t\n\r]", re.MULTILINE)
_FOLD = re.compile(r"\n[ \t\n\r]*")
_DASHES = re.compile(r"-{4,}[ \t\r]*")
CO_AUTHORED_BY = "co-authored-by"


class Trailer(NamedTuple):
    """One trailer: key as written, value trimmed and unfolded, 1-based line of its key."""

    key: str
    value: str
    line: int

    def has_key(self, key: str) -> bool:
        return self.key.lower() == key.lower()


@dataclass(frozen=True)
class Block:
    """The trailer block of a message; ``start``/``end`` are 1-based lines (None: no block)."""

    trailers: tuple[Trailer, ...] = ()
    start: int | None = None
    end: int | None = None
    squash: bool = False
    _by_key: dict[str, list[Trailer]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for t in self.trailers:
            self._by_key.setdefault(t.key.lower(), []).append(t)

    def get(self, key: str) -> list[Trailer]:
        """The trailers whose key is ``key``, compared case-insensitively as git does."""
        return list(self._by_key.get(key.lower(), ()))


@dataclass(frozen=True)
class Paragraph:
    """A run of non-blank lines; ``start`` is the 1-based line of its first line."""

    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1


# -- lines and paragraphs ------------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """The message's lines, split on ``\\n`` only (a CR stays on its line); no final empty."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def is_blank(line: str) -> bool:
    return not line.strip(SPACE)


def paragraphs(lines: list[str]) -> list[Paragraph]:
    """Runs of non-blank lines (blank: only git whitespace), with their first line number."""
    out: list[Paragraph] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        if is_blank(line):
            if current:
                out.append(Paragraph(start, tuple(current)))
                current = []
        else:
            if not current:
                start = number
            current.append(line)
    if current:
        out.append(Paragraph(start, tuple(current)))
    return out


# -- git's trailer block ---------------------------------------------------------------------


def _next_line(s: str, i: int) -> int:
    j = s.find("\n", i)
    return len(s) if j < 0 else j + 1


def _last_line(s: str, length: int) -> int:
    """Start of the last line of ``s[:length]`` (its final newline belongs to it); -1 if empty."""
    if length == 0:
        return -1
    if length == 1:
        return 0
    return s.rfind("\n", 0, length - 1) + 1


def _blank_at(s: str, i: int) -> bool:
    n = len(s)
    while i < n and s[i] != "\n" and s[i] in SPACE:
        i += 1
    return i >= n or s[i] == "\n"


# git's find_separator(): key characters, then (only after at least one) blanks, then ":".
_SEPARATOR = re.compile(r"(?:[A-Za-z0-9-]+[ \t]*)?:")
_KEYED = re.compile(r"[A-Za-z0-9-]+[ \t]*:")  # the same, with a key of at least one character


def _separator(s: str, i: int) -> int:
    """Offset from ``i`` of the ``:`` ending a well-formed key, 0 if the line starts with it,
    -1 when the line is not ``Key<blanks>:``."""
    m = _SEPARATOR.match(s, i)
    return m.end() - 1 - i if m else -1


def _patch_start(s: str) -> int:
    m = _DIVIDER.search(s)
    return m.start() if m else len(s)


def _cut_line_end(s: str, length: int) -> int:
    """Where a scissors line starts (searched in all of ``s``, as git does), else ``length``."""
    if s.startswith(SCISSORS):
        return 0
    p = s.find("\n" + SCISSORS)
    return p + 1 if p >= 0 else length


def _trailer_end(s: str, length: int) -> int:
    """``length`` less the trailing comments, blank lines and ``Conflicts:`` block."""
    # git 2.39 loops forever when a scissors line lies below the patch divider; bound it.
    cutoff = min(_cut_line_end(s, length), length)
    if cutoff == 0:
        return 0
    # Fast path: a last line that is none of the ignorable kinds ends any trailing run, so
    # the walk below would return ``cutoff``.
    last = s.rfind("\n", 0, cutoff - 1) + 1
    if s[last] not in "#\n\t" and not s.startswith("Conflicts:\n", last):
        return cutoff
    boc = 0  # start of the trailing run to ignore; 0 doubles as "none", as in git
    bol = 0
    in_conflicts = False
    while bol < cutoff:
        j = s.find("\n", bol, length)
        nxt = length if j < 0 else j + 1
        ch = s[bol]
        if ch == COMMENT or ch == "\n":
            if not boc:
                boc = bol
        elif s.startswith("Conflicts:\n", bol):
            in_conflicts = True
            if not boc:
                boc = bol
        elif in_conflicts and ch == "\t":
            pass
        elif boc:
            boc = 0
            in_conflicts = False
        bol = nxt
    return boc if boc else cutoff


def _trailer_start(s: str, length: int) -> int:
    """Start of the trailer block within ``s[:length]``, or ``length`` when there is none."""
    i = 0
    while i < length:  # the first paragraph is the title: never trailers
        if s[i] == COMMENT:
            i = _next_line(s, i)
            continue
        if _blank_at(s, i):
            break
        i = _next_line(s, i)
    end_of_title = i
    if end_of_title >= length:
        return length
    # The lines from the end of the title on, walked from the last one up (a final newline
    # belongs to the last line; it does not start another).
    region = s[end_of_title:length]
    lines = region.split("\n")
    # ``newline``: where the newline ending the current line is (or would be).
    newline = length
    if region.endswith("\n"):
        lines.pop()
        newline -= 1

    only_spaces = True
    recognized = False
    trailers = non_trailers = continuations = 0
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        here, newline = newline, newline - len(line) - 1
        ch = line[0] if line else "\n"
        if ch == COMMENT:
            non_trailers += continuations
            continuations = 0
        elif not line.strip(SPACE):
            if not only_spaces:
                non_trailers += continuations
                if recognized and trailers * 3 >= non_trailers:
                    return here + 1
                if trailers and not non_trailers:
                    return here + 1
                return length
        else:
            only_spaces = False
            if line.startswith(_GIT_GENERATED):
                trailers += 1
                continuations = 0
                recognized = True
            elif ch not in SPACE and _KEYED.match(line):
                trailers += 1
                continuations = 0
            elif ch in SPACE:
                continuations += 1
            else:
                non_trailers += 1 + continuations
                continuations = 0
    return length


def _block_span(s: str) -> tuple[int, int]:
    end = _trailer_end(s, _patch_start(s))
    return _trailer_start(s, end), end


def _parse_span(s: str, start: int, end: int) -> list[Trailer]:
    """The trailers of ``s[start:end]``: continuation lines joined, comments and non-trailer
    lines dropped, values trimmed and unfolded (``--parse`` = ``--only-trailers --unfold``)."""
    if start >= end:
        return []
    chunk = s[start:end]
    pieces = chunk.split("\n")
    if chunk.endswith("\n"):
        pieces.pop()
    out: list[Trailer] = []
    # The trailer being read: its key, the text after its separator, its continuation lines
    # and its first line number. Only a keyed line takes continuations (an indented line
    # under anything else is a line of its own, and not a trailer).
    key: str | None = None
    head = ""
    more: list[str] = []
    first = 0

    def flush() -> None:
        value = head if not more else "\n".join([head, *more])
        value = value.strip(SPACE)
        if "\n" in value:
            value = _FOLD.sub(" ", value).strip(SPACE)
        out.append(Trailer(key or "", value, first))

    match = _KEYED.match
    for number, piece in enumerate(pieces, start=s.count("\n", 0, start) + 1):
        if key is not None and (not piece or piece[0] in SPACE):
            more.append(piece)
            continue
        if key is not None:
            flush()
            key = None
        if not piece or piece[0] == COMMENT:
            continue
        m = match(piece)
        if m is None:
            continue
        sep = m.end() - 1
        key, head, more, first = piece[:sep].strip(SPACE), piece[sep + 1 :], [], number
    if key is not None:
        flush()
    return out


def _c_string(text: str) -> str:
    # git reads the message as a C string: nothing after a NUL byte exists for it.
    nul = text.find("\0")
    return text if nul < 0 else text[:nul]


def git_trailers(text: str) -> list[Trailer]:
    """The trailers ``git interpret-trailers --parse`` prints for ``text``, in order."""
    s = _c_string(text)
    start, end = _block_span(s)
    return _parse_span(s, start, end)


def git_parse_output(text: str) -> str:
    """``git interpret-trailers --parse``'s exact output for ``text``."""
    return "".join(f"{t.key}: {t.value}\n" for t in git_trailers(text))


def _span_lines(s: str, start: int, end: int) -> tuple[int, int]:
    first = s.count("\n", 0, start) + 1
    last = first + s.count("\n", start, end) - (1 if s[end - 1 : end] == "\n" else 0)
    return first, last


@functools.lru_cache(maxsize=8)
def find_block(text: str, *, squash: bool = True) -> Block:
    """The trailer block as git finds it, plus (``squash``) GitHub's squash shape."""
    s = _c_string(text)
    start, end = _block_span(s)
    trailers = _parse_span(s, start, end)
    if not trailers:
        return Block()
    first, last = _span_lines(s, start, end)
    if squash and all(t.key.lower() == CO_AUTHORED_BY for t in trailers):
        merged = _squash_block(s, start, end, trailers, last)
        if merged is not None:
            return merged
    return Block(tuple(trailers), first, last)


def _squash_block(
    s: str, start: int, end: int, co_authors: list[Trailer], last: int
) -> Block | None:
    """A trailer paragraph + dashes + this ``Co-authored-by`` paragraph, as one block."""
    # Every non-comment line of the Co-authored-by paragraph must be one of its trailers
    # (or a continuation): a mixed paragraph is not GitHub's shape.
    for line in s[start:end].split("\n"):
        if line and line[0] not in SPACE and line[0] != COMMENT and _separator(line, 0) < 1:
            return None
    # Walk back over blank lines to the dash line.
    bol = _last_line(s, start)
    while bol >= 0 and _blank_at(s, bol):
        bol = _last_line(s, bol)
    if bol < 0:
        return None
    line_end = _next_line(s, bol)
    if not _DASHES.fullmatch(s[bol:line_end].rstrip("\n")):
        return None
    prefix = s[:bol]
    p_start, p_end = _block_span(prefix)
    head = _parse_span(prefix, p_start, p_end)
    if not head:
        return None
    first, _ = _span_lines(prefix, p_start, p_end)
    return Block(tuple(head) + tuple(co_authors), first, last, squash=True)
