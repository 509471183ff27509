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

import contextlib
import functools
import gc
import itertools
import operator
import re
from collections.abc import Iterator
from typing import NamedTuple

SPACE = " \t\n\r"  # git's isspace(): sane_ctype marks exactly these four
COMMENT = "#"
SCISSORS = "# ------------------------ >8 ------------------------\n"
_GIT_GENERATED = ("Signed-off-by: ", "(cherry picked from commit ")
_DIVIDER = re.compile(r"^---[ \t\n\r]", re.MULTILINE)
_DASHES = re.compile(r"-{4,}[ \t\r]*")
CO_AUTHORED_BY = "co-authored-by"


class Trailer(NamedTuple):
    """One trailer: key as written, value trimmed and unfolded, 1-based line of its key."""

    key: str
    value: str
    line: int

    def has_key(self, key: str) -> bool:
        return self.key.lower() == key.lower()


class Block:
    """The trailer block of a message; ``start``/``end`` are 1-based lines (None: no block).
    Read-only once made: :func:`find_block` hands one block to every caller of the same text."""

    __slots__ = ("trailers", "start", "end", "squash", "_by_key", "_lowered")

    def __init__(
        self,
        trailers: tuple[Trailer, ...] = (),
        start: int | None = None,
        end: int | None = None,
        squash: bool = False,
    ) -> None:
        self.trailers = trailers
        self.start = start
        self.end = end
        self.squash = squash
        # The trailers of each key, and every trailer's key lower-cased: a block of a few
        # trailers is grouped by every key when made; one of many only by the keys a gate
        # asks for, on the first ``get`` of each, in one C-level pass.
        self._by_key: dict[str, list[Trailer]] = {}
        self._lowered: list[str] = []
        if len(trailers) <= _FEW_TRAILERS:  # grouped by every key at once, in one loop
            for trailer in trailers:
                self._by_key.setdefault(trailer.key.lower(), []).append(trailer)

    def get(self, key: str) -> list[Trailer]:
        """The trailers whose key is ``key``, compared case-insensitively as git does."""
        low = key.lower()
        found = self._by_key.get(low)
        if found is None:
            if len(self.trailers) <= _FEW_TRAILERS:
                return []  # every key of the block is grouped already
            if not self._lowered:
                self._lowered.extend(map(str.lower, map(_TRAILER_KEY, self.trailers)))
            found = list(itertools.compress(self.trailers, map(low.__eq__, self._lowered)))
            self._by_key[low] = found
        return list(found)


_TRAILER_KEY = operator.itemgetter(0)
# A block of up to this many trailers groups them all by key when made (an ordinary message's
# handful); a longer one groups only the keys asked for, each in one C-level pass.
_FEW_TRAILERS = 16


class Paragraph(NamedTuple):
    """A run of non-blank lines; ``start`` is the 1-based line of its first line."""

    start: int
    lines: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1


# -- lines and paragraphs ------------------------------------------------------------------


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
    # The lines from the end of the title on (a final newline belongs to the last line; it
    # does not start another). git walks them from the last one up: past blank and comment
    # lines, then over the last paragraph to the blank line above it.
    region = s[end_of_title:length]
    if region.endswith("\n"):
        region = region[:-1]
    at = _block_start(region)
    return length if at is None else end_of_title + at


# A message up to this many characters is read with the cycle collector on (see
# :func:`find_block`): a few trailers allocate too little for it to cost.
SHORT_REGION = 4096


def _block_start(region: str) -> int | None:
    """Where the trailer block starts in ``region`` (None: no block): git's walk from the last
    line up -- past blank and comment lines, over the last paragraph -- done as C-level passes
    (a regex, a count) over the text, with no Python step per line, so that a message of a
    million lines stays linear. The paragraph counts when all of its lines are trailers, or
    when it holds a git-generated line and trailers are at least a quarter of its lines."""
    backwards = region[::-1]  # the last line first, each line reversed
    skipped = _SKIP_BACKWARDS.match(backwards)  # blank and comment lines at the end
    below = skipped.end() if skipped else 0
    if below >= len(backwards):
        return None
    above = _BLANK_BACKWARDS.search(backwards, below)  # the blank line above the paragraph
    if above is None:
        return None
    at = len(region) - above.start()  # where the paragraph starts
    # Its lines down to its last line of content (the blank and comment lines below it count
    # for nothing); none of them is blank.
    block = region[at : len(region) - below]
    lines = block.count("\n") + 1
    comments = _starts(block, "#")
    continuations = _starts(block, " ") + _starts(block, "\t") + _starts(block, "\r")
    # Runs of trailers, each with the continuation lines right below it (a continuation line
    # under anything else counts as a non-trailer).
    runs = "".join(_TRAILER_RUNS.findall(block))
    grouped = runs.count("\n") + (1 if runs and not runs.endswith("\n") else 0)
    absorbed = _starts(runs, " ", 0) + _starts(runs, "\t", 0) + _starts(runs, "\r", 0)
    trailers = grouped - absorbed
    non_trailers = lines - comments - continuations - trailers + (continuations - absorbed)
    recognized = any(block.startswith(g) or "\n" + g in block for g in _GIT_GENERATED)
    if recognized and trailers * 3 >= non_trailers:
        return at
    if trailers and not non_trailers:
        return at
    return None


def _starts(text: str, prefix: str, first: int = 1) -> int:
    """How many lines of ``text`` start with ``prefix`` (``first=0``: not counting the first)."""
    return text.count("\n" + prefix) + (first if text.startswith(prefix) else 0)


# The regexes below use possessive quantifiers and atomic alternatives (Python 3.11): none
# gives back what it has read, so each line is read once, and without the bookkeeping of a
# backtracking repeat (several times faster on a million lines).
# Read backwards (the text reversed, each line reversed): the blank lines and comment lines
# at the end (a comment line reversed ends with "#"), and the blank line above them.
_SKIP_BACKWARDS = re.compile(r"(?:[ \t\r]*+(?:\n|\Z)|[^\n]*+(?<=#)(?:\n|\Z))*+")
_BLANK_BACKWARDS = re.compile(r"\n[ \t\r]*+(?=\n|\Z)")
_KEY = r"[A-Za-z0-9-]++[ \t]*+:"
# Runs of trailer lines, each with the indented lines below it.
_TRAILER_RUNS = re.compile(
    rf"(?:^(?:{_KEY}|Signed-off-by: |\(cherry picked from commit )[^\n]*+"
    r"(?:\n[ \t\r][^\n]*+)*+(?:\n|\Z))++",
    re.MULTILINE,
)


def _block_span(s: str) -> tuple[int, int]:
    end = _trailer_end(s, _patch_start(s))
    return _trailer_start(s, end), end


def _parse_span(s: str, start: int, end: int) -> list[Trailer]:
    """The trailers of ``s[start:end]``: continuation lines joined, comments and non-trailer
    lines dropped, values trimmed and unfolded (``--parse`` = ``--only-trailers --unfold``)."""
    if start >= end:
        return []
    # One regex pass cuts the span into pieces that cover it end to end: a trailer (its
    # ``Key:`` line and the continuation lines below it: indented or empty; only a keyed line
    # takes continuations) or a run of other lines (comments, lines that are no trailer,
    # indented lines under them). The rest are C-level maps: no Python step per line.
    pieces = _SPAN_PIECES.findall(s, start, end)
    keys = list(map(_PIECE_KEY, pieces))
    is_trailer = list(map(bool, keys))
    rests = list(map(_PIECE_REST, pieces))
    newlines = map(
        operator.add,
        map(str.count, rests, itertools.repeat("\n")),
        map(str.count, map(_PIECE_OTHER, pieces), itertools.repeat("\n")),
    )
    numbers = itertools.accumulate(newlines, initial=s.count("\n", 0, start) + 1)
    values = list(map(str.strip, itertools.compress(rests, is_trailer), itertools.repeat(SPACE)))
    folded = map(operator.contains, values, itertools.repeat("\n"))
    for k in itertools.compress(range(len(values)), folded):
        values[k] = _unfold(values[k])
    rows = zip(
        itertools.compress(keys, is_trailer),
        values,
        itertools.compress(numbers, is_trailer),
        strict=True,
    )
    # tuple.__new__ is what Trailer._make calls, without a Python call per trailer.
    return list(map(tuple.__new__, itertools.repeat(Trailer), rows))


def _unfold(value: str) -> str:
    """A trimmed value with each newline and the whitespace after it made one space: git's
    unfolding, without a regex step per line."""
    lines = map(str.lstrip, value.split("\n"), itertools.repeat(SPACE))
    return " ".join(filter(None, lines)).strip(SPACE)


_SPAN_PIECES = re.compile(
    r"([A-Za-z0-9-]++)[ \t]*+:([^\n]*+(?:\n[ \t\r][^\n]*+|\n)*+)"  # a trailer
    rf"|((?:(?!{_KEY})[^\n]*+\n)++|[^\n]++)"  # other lines; the last one, without a newline
)
_PIECE_KEY, _PIECE_REST, _PIECE_OTHER = (operator.itemgetter(k) for k in range(3))


def _c_string(text: str) -> str:
    # git reads the message as a C string: nothing after a NUL byte exists for it.
    nul = text.find("\0")
    return text if nul < 0 else text[:nul]


def git_trailers(text: str) -> list[Trailer]:
    """The trailers ``git interpret-trailers --parse`` prints for ``text``, in order."""
    s = _c_string(text)
    start, end = _block_span(s)
    with _no_cycle_collector():
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
    if len(text) <= SHORT_REGION:  # a few trailers: nothing for the collector to cost
        return _find_block(text, squash)
    with _no_cycle_collector():
        return _find_block(text, squash)


@contextlib.contextmanager
def _no_cycle_collector() -> Iterator[None]:
    """The cycle collector off while a block is read: a message of many trailers allocates a
    tuple per trailer and keeps them all, and the collector, run every few hundred
    allocations over what is kept, would cost more than the reading itself. The trailers
    hold no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _find_block(text: str, squash: bool) -> Block:
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
