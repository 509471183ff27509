"""Preprocessor guards: which lines of a (stripped) C/C++ file sit inside a conditional that is
taken only when some macro is defined or true (SPEC §4.5 ``outside_guards``).

One forward pass over the file's conditional directives keeps a stack of open ``#if`` groups.
Each frame remembers, per guard set (the ``outside_guards`` regexes of one bucket), whether its
current branch is guarded, and a counter per set says how many open frames are: a line is
guarded for a set while its counter is above zero. So a file is judged in time linear in its
length whatever the nesting depth, and nothing recurses.

What guards a branch, macro ``M`` fully matching one of the set's regexes:

- ``#ifdef M``, ``#elifdef M``;
- ``#if E`` / ``#elif E`` where ``E`` requires ``M``: ``E`` is ``M`` or ``defined(M)`` /
  ``defined M``, or a conjunction (``&&``) of which one conjunct does, parentheses allowed;
  a conjunct that is negated (``!defined(M)``) or compared (``M > 2``) requires nothing, and
  a group joined by ``||`` requires nothing;
- every later branch (``#elif``, ``#else``) of ``#ifndef M``: it is taken only when ``M`` is
  defined.

A directive's own line (and its continuation lines) is judged in the context that encloses
its group: ``#ifdef VT_CUDA`` is not inside itself, nor is its ``#endif``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence

from tools.bounded import ConfigPattern
from tools.lazy_regex import LazyRegex

_DIRECTIVE = LazyRegex(
    r"^[ \t]*#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b([^\n]*)", re.M
)
_DEFINED = LazyRegex(r"\bdefined[ \t]*\([ \t]*([A-Za-z_]\w*)[ \t]*\)|\bdefined[ \t]+([A-Za-z_]\w*)")
# After `defined(M)` became `M`: an identifier, a logical operator, a run of opening or of
# closing parentheses, or a run of anything else (an operator, a number); blanks are skipped.
_TOKEN = LazyRegex(r"([A-Za-z_]\w*)|(&&|\|\|)|(\(+)|(\)+)|([^\sA-Za-z_()&|]+|[&|])")
_IDENT = LazyRegex(r"[A-Za-z_]\w*")
_BLANKS = " \t\r\\"


def _plain(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


def _alone(one: str | int | None, gid: int, atoms: list[tuple[int, str]], sole: list[bool]) -> None:
    """A conjunct of one item ends: an identifier is required by its group ``gid``; a group
    is the sole item of its conjunct."""
    if isinstance(one, str):
        atoms.append((gid, one))
    elif one is not None:
        sole[one] = True


def required_macros(expr: str) -> list[str]:
    """The macros ``expr`` (an ``#if`` condition) is true only if defined or true.

    ``defined(M)`` and ``defined M`` read as ``M`` (both require it). Without parentheses
    this is a split on ``||`` and ``&&``. Otherwise one left-to-right pass over the tokens:
    groups get ids in the order they open (a parent before its children), so whether each
    group passes its requirement up is settled in one more pass over the groups. A malformed
    condition (an unbalanced parenthesis) requires nothing."""
    if "defined" in expr:
        expr = _DEFINED.compiled.sub(_plain, expr)
    if "(" not in expr and ")" not in expr:
        if "||" in expr:
            return []
        out = []
        for part in expr.split("&&"):
            part = part.strip(_BLANKS)
            if _IDENT.compiled.fullmatch(part):
                out.append(part)
        return out
    parent: list[int] = [-1]  # group -> the group it sits in
    sole: list[bool] = [True]  # group -> the only item of its conjunct in its parent
    no_or: list[bool] = [True]  # group -> no `||` directly inside it
    atoms: list[tuple[int, str]] = []  # (group, macro) of identifiers alone in their conjunct
    # The open groups, innermost last: its id, the items of its current conjunct, and the
    # first of them (an identifier, a group id, or None for anything else).
    gids: list[int] = [0]
    items: list[int] = [0]
    first: list[str | int | None] = [None]
    for m in _TOKEN.compiled.finditer(expr):
        kind = m.lastindex
        if kind == 1 or kind == 5:
            if items[-1] == 0:
                first[-1] = m.group(1) if kind == 1 else None
            items[-1] += 1
        elif kind == 2:
            if items[-1] == 1:
                _alone(first[-1], gids[-1], atoms, sole)
            items[-1] = 0
            if m.group(2) == "||":
                no_or[gids[-1]] = False
        elif kind == 3:
            for _ in range(m.end() - m.start()):
                gid = len(parent)
                parent.append(gids[-1])
                sole.append(False)
                no_or.append(True)
                if items[-1] == 0:
                    first[-1] = gid
                items[-1] += 1
                gids.append(gid)
                items.append(0)
                first.append(None)
        else:
            for _ in range(m.end() - m.start()):
                if len(gids) == 1:
                    return []
                if items[-1] == 1:
                    _alone(first[-1], gids[-1], atoms, sole)
                gids.pop()
                items.pop()
                first.pop()
    if len(gids) != 1:
        return []
    if items[-1] == 1:
        _alone(first[-1], 0, atoms, sole)
    ok = [False] * len(parent)
    ok[0] = no_or[0]
    for gid in range(1, len(parent)):
        ok[gid] = ok[parent[gid]] and sole[gid] and no_or[gid]
    # An identifier followed by a group is a function-like macro call: two items of its
    # conjunct, so neither is alone and it requires nothing (as it should).
    return [macro for gid, macro in atoms if ok[gid]]


class GuardSet:
    """The regexes of one bucket's ``outside_guards``, with a memo of the names they match."""

    def __init__(self, patterns: Sequence[ConfigPattern]):
        self.patterns = list(patterns)
        self._memo: dict[str, bool] = {}

    def matches(self, macro: str) -> bool:
        hit = self._memo.get(macro)
        if hit is None:
            hit = any(p.fullmatch(macro) for p in self.patterns)
            self._memo[macro] = hit
        return hit


def _operand(rest: str) -> str | None:
    m = _IDENT.compiled.match(rest.strip(_BLANKS))
    return m.group(0) if m else None


def guarded_lines(
    text: str, sets: Sequence[GuardSet], lines: Sequence[Iterable[int]]
) -> list[set[int]]:
    """For each guard set ``sets[k]``, which of the line numbers ``lines[k]`` (1-based) of
    ``text`` (already stripped of comments and literals) are guarded by it.

    Each open frame holds the bit mask of the sets that guard its current branch or an
    enclosing one (its parent's mask joined with its own), so entering, switching and
    leaving a branch cost the same at any depth."""
    wanted = _askers(lines)
    out: list[set[int]] = [set() for _ in sets]
    if not wanted:
        return out
    asked = sorted(wanted)
    n_asked, ai, last = len(asked), 0, asked[-1]
    mask_of = _Masks(sets).of

    # per open frame: (mask of it and its enclosing branches, the enclosing mask,
    # the macro an `#ifndef` opened it with)
    stack: list[tuple[int, int, str | None]] = []
    current = 0  # the mask of the innermost open branch (0: none guards)
    line, pos, consumed = 1, 0, -1
    count = text.count
    for m in _DIRECTIVE.compiled.finditer(text):
        start = m.start()
        if start <= consumed:
            continue  # a continuation line of the directive before
        line += count("\n", pos, start)
        pos = start
        if line > last:
            break
        name = m.group(1)
        # A directive continued by backslashes takes its following lines with it.
        end = m.end()
        extra = 0
        tail = text[end - 2 : end]
        rest = ""
        if tail.endswith("\\") or tail == "\\\r":
            rest, end, extra = _continued(text, m.group(2), end)
        elif name[0] == "i" or name[:4] == "elif":
            rest = m.group(2)
        closing = name[0] == "e" and bool(stack)  # elif…, else, endif of an open group
        # The lines before this directive are judged in the current branch; the
        # directive's own lines in the context that encloses its group.
        if ai < n_asked and asked[ai] < line:
            ai = _mark(asked, ai, line, current, wanted, out)
        if ai < n_asked and asked[ai] <= line + extra:
            context = stack[-1][1] if closing else current
            ai = _mark(asked, ai, line + extra + 1, context, wanted, out)
        if name == "ifdef":
            macro = _operand(rest)
            stack.append((current | (mask_of([macro]) if macro else 0), current, None))
        elif name == "ifndef":
            stack.append((current, current, _operand(rest)))
        elif name == "if":
            stack.append((current | mask_of(required_macros(rest)), current, None))
        elif closing:
            _, outer, ndef = stack.pop()
            if name != "endif":
                own = [ndef] if ndef else []
                if name == "elifdef":
                    macro = _operand(rest)
                    own += [macro] if macro else []
                elif name == "elif":
                    own += required_macros(rest)
                stack.append((outer | mask_of(own), outer, ndef))
        current = stack[-1][0] if stack else 0
        if extra:
            line += extra
            pos = consumed = end
    # The lines after the last directive, in the branch still open.
    _mark(asked, ai, last + 1, current, wanted, out)
    return out


def _mark(
    asked: list[int],
    ai: int,
    before: int,
    mask: int,
    wanted: dict[int, list[int]],
    out: list[set[int]],
) -> int:
    """Add each asked line from ``asked[ai]`` up to line ``before`` to the sets of ``out``
    whose bit ``mask`` has; returns the index of the first asked line not judged. Called only
    when such lines exist, not per directive; with no mask the lines are skipped by bisection,
    without a visit."""
    if not mask:
        return bisect_left(asked, before, ai)
    n_asked = len(asked)
    while ai < n_asked and asked[ai] < before:
        number = asked[ai]
        for k in wanted[number]:
            if mask >> k & 1:
                out[k].add(number)
        ai += 1
    return ai


def _askers(lines: Sequence[Iterable[int]]) -> dict[int, list[int]]:
    """line number -> the guard sets that ask about it."""
    wanted: dict[int, list[int]] = {}
    for k, numbers in enumerate(lines):
        for number in numbers:
            wanted.setdefault(number, []).append(k)
    return wanted


class _Masks:
    """The bit mask of the guard sets a list of macros satisfies (each macro matched once)."""

    def __init__(self, sets: Sequence[GuardSet]) -> None:
        self.sets = sets
        self.memo: dict[str, int] = {}

    def of(self, macros: list[str]) -> int:
        mask = 0
        for macro in macros:
            bits = self.memo.get(macro)
            if bits is None:
                bits = sum(1 << k for k, s in enumerate(self.sets) if s.matches(macro))
                self.memo[macro] = bits
            mask |= bits
        return mask


def _continued(text: str, piece: str, end: int) -> tuple[str, int, int]:
    """A directive whose first line ``piece`` (ending at ``end``) is continued by
    backslashes: its whole operand joined by spaces, where it ends, and how many more lines
    it takes."""
    ends = len(text)
    pieces: list[str] = []
    extra = 0
    while piece.endswith(("\\", "\\\r")) and end < ends:
        pieces.append(piece.rstrip("\r")[:-1])
        nxt = text.find("\n", end + 1)
        nxt = ends if nxt < 0 else nxt
        piece = text[end + 1 : nxt]
        end = nxt
        extra += 1
    pieces.append(piece)
    return " ".join(pieces), end, extra
