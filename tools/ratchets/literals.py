"""The literals every match of a regex contains, read from the pattern's text (the prefilter
of the ``pattern`` kind, see :mod:`tools.ratchets.pattern`).

A small reader of regex syntax of its own (the patterns run on RE2, whose syntax is Python's
for everything read here): it knows runs of plain characters, groups, repeats, alternations
and the zero-width items, and treats everything else as "some character" that breaks a run.
What it does not know for sure (verbose mode, an unknown construct, a POSIX class such as
``[[:alpha:]]``, nesting deeper than :data:`MAX_NESTING`, a pattern longer than
:data:`MAX_LENGTH`, a pattern ``re`` would refuse) gives no prefilter at all, so the condition
stays necessary: it may filter less, never wrongly.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_NESTING = 100  # groups deeper than this: no prefilter (a config regex is never so deep)
MAX_LENGTH = 10_000  # a longer pattern: no prefilter (the reader's time stays bounded)


class _Unsure(Exception):
    """The pattern holds something the reader does not vouch for: no prefilter."""


# One item of a sequence: a plain character, a zero-width assertion (``^``, ``\b``…), some
# character the reader does not name (``.``, ``[a-z]``, ``\w``…), or a sub-expression every
# match goes through, given as its clauses.
class _Char(NamedTuple):
    char: str


class _Zero:
    """A zero-width assertion (one instance, :data:`_ZERO`). Not an empty named tuple: two
    of those would compare equal to each other and to ``()``, and be false."""

    __slots__ = ()


class _Some:
    """Some character the reader does not name (one instance, :data:`_SOME`)."""

    __slots__ = ()


class _Sub(NamedTuple):
    clauses: tuple[frozenset[str], ...]


_Item = _Char | _Zero | _Some | _Sub
_ZERO, _SOME = _Zero(), _Some()

_ZERO_ESCAPES = frozenset("bBAZz")  # RE2 spells the end of the text \z
_CLASS_ESCAPES = frozenset("dDsSwW")
_CONTROL = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
# ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}``, ``{,}``; any other "{" (``{}`` too) is a character.
_QUANTIFIER = re.compile(r"\{(?:[0-9]+(?:,[0-9]*)?|,[0-9]*)\}")
_FLAGS = frozenset("aiLmsux")
_PLAIN = re.compile(r"[^\\\[()|.^$*+?{]+")  # characters that stand for themselves
_HEX = frozenset("0123456789abcdefABCDEF")


def _longest(clauses: list[frozenset[str]] | tuple[frozenset[str], ...]) -> str:
    """The likely rarest single literal (an alternative of a branch stands for its branch)."""
    singles = [next(iter(c)) for c in clauses if len(c) == 1]
    return max(singles, key=lambda lit: (_selectivity((lit,)), len(lit))) if singles else ""


def _clauses(items: list[_Item]) -> list[frozenset[str]]:
    """What every match of the sequence contains: clauses, each a set of literals of which a
    match holds at least one (a run of plain characters is one literal)."""
    clauses: list[frozenset[str]] = []
    run: list[str] = []
    for item in items:
        if isinstance(item, _Char):
            run.append(item.char)
            continue
        if isinstance(item, _Zero):
            continue  # zero-width: the characters around it are still adjacent
        if run:
            clauses.append(frozenset(["".join(run)]))
            run.clear()
        if isinstance(item, _Sub):
            clauses += item.clauses
    if run:
        clauses.append(frozenset(["".join(run)]))
    return clauses


def _branch(alternatives: list[list[_Item]]) -> _Item:
    """One item for ``a|b|…``: what each alternative surely holds, when every one does."""
    if len(alternatives) == 1:
        return _Sub(tuple(_clauses(alternatives[0])))
    picks = [_longest(_clauses(alt)) for alt in alternatives]
    return _Sub((frozenset(picks),)) if all(picks) else _SOME


class _Reader:
    """Reads a pattern's text once, left to right (linear in its length)."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def _peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.text[at] if at < len(self.text) else ""

    def _take(self, prefix: str) -> bool:
        if self.text.startswith(prefix, self.pos):
            self.pos += len(prefix)
            return True
        return False

    def _until(self, stop: str) -> str:
        end = self.text.find(stop, self.pos)
        if end < 0:
            raise _Unsure(f"no closing {stop!r}")
        word, self.pos = self.text[self.pos : end], end + 1
        return word

    def alternatives(self, depth: int) -> list[list[_Item]]:
        """The alternatives up to the ``)`` closing this level (or the end at level 0)."""
        if depth > MAX_NESTING:
            raise _Unsure("nested too deeply")
        alternatives: list[list[_Item]] = [[]]
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == ")":
                if depth == 0:
                    raise _Unsure("unbalanced parenthesis")
                self.pos += 1
                return alternatives
            if c == "|":
                self.pos += 1
                alternatives.append([])
                continue
            sequence = alternatives[-1]
            if c in "*+?" or _QUANTIFIER.match(self.text, self.pos):
                if not sequence:
                    raise _Unsure("nothing to repeat")
                sequence[-1] = self._repeated(sequence[-1])
                continue
            plain = _PLAIN.match(self.text, self.pos)
            if plain is None:
                item = self._atom(depth)
                if item is not None:  # a comment or the pattern's flags: nothing at all
                    sequence.append(item)
                continue
            self.pos = plain.end()
            run = plain.group()
            if len(run) > 1 and self._peek() in ("*", "+", "?", "{"):
                sequence.append(_Char(run[:-1]))  # a quantifier takes the last character only
                run = run[-1]
            sequence.append(_Char(run))
        if depth:
            raise _Unsure("missing )")
        return alternatives

    def _repeated(self, item: _Item) -> _Item:
        """The item under the quantifier at ``pos``: kept when it must occur at least once."""
        c = self.text[self.pos]
        if c in "*+?":
            self.pos += 1
            least = 1 if c == "+" else 0
        else:
            m = _QUANTIFIER.match(self.text, self.pos)
            assert m is not None
            self.pos = m.end()
            least = int(m.group()[1:-1].split(",")[0] or 0)
        if self._peek() in ("?", "+"):  # lazy or possessive: the same characters
            self.pos += 1
        if self._peek() in ("*", "+", "?") or _QUANTIFIER.match(self.text, self.pos):
            raise _Unsure("multiple repeat")
        if least == 0 or isinstance(item, (_Zero, _Some)):
            return _SOME
        return item if isinstance(item, _Sub) else _Sub((frozenset([item.char]),))

    def _atom(self, depth: int) -> _Item | None:
        c = self.text[self.pos]
        self.pos += 1
        if c == "\\":
            return self._escape()
        if c == "[":
            return self._set()
        if c == "(":
            return self._group(depth)
        if c in "^$":
            return _ZERO
        if c == ".":
            return _SOME
        return _Char(c)

    def _escape(self) -> _Item:
        c = self._peek()
        if not c:
            raise _Unsure("trailing backslash")
        self.pos += 1
        if c.isdigit():  # a backreference or an octal escape: its digits go with it
            while self._peek().isdigit():
                self.pos += 1
            return _SOME
        if c in _HEX_DIGITS:
            digits = self.text[self.pos : self.pos + _HEX_DIGITS[c]]
            if len(digits) != _HEX_DIGITS[c] or not all(d in _HEX for d in digits):
                raise _Unsure("bad escape")
            self.pos += len(digits)
            return _Char(chr(int(digits, 16))) if int(digits, 16) <= 0x10FFFF else _SOME
        if c == "N":
            if not self._take("{"):
                raise _Unsure("bad escape")
            self._until("}")
            return _SOME
        if c in _ZERO_ESCAPES:
            return _ZERO
        if c in _CLASS_ESCAPES:
            return _SOME
        if c in _CONTROL:
            return _Char(_CONTROL[c])
        if c.isascii() and c.isalpha():
            raise _Unsure("bad escape")  # re refuses an unknown letter escape
        return _Char(c)

    def _set(self) -> _Item:
        """A ``[…]`` set: some character, or the one plain character it names (``[.]``)."""
        negated = self._take("^")
        first = self.pos
        if self._peek() == "]":  # a leading "]" is a member
            self.pos += 1
        while True:
            c = self._peek()
            if not c:
                raise _Unsure("unterminated set")
            self.pos += 1
            if c == "\\":
                self.pos += 1
            elif c == "[" and self._peek() == ":":
                raise _Unsure("a POSIX class")  # RE2's [[:alpha:]]: the "]" after it is its own
            elif c == "]":
                break
        body = self.text[first : self.pos - 1]
        if not negated and len(body) == 1 and body != "\\":
            return _Char(body)
        return _SOME

    def _group(self, depth: int) -> _Item | None:
        if not self._take("?"):
            return _branch(self.alternatives(depth + 1))
        if self._take(":") or self._take(">"):  # non-capturing, atomic
            return _branch(self.alternatives(depth + 1))
        if self._take("P<"):
            self._until(">")
            return _branch(self.alternatives(depth + 1))
        if self._take("P="):  # a named backreference
            self._until(")")
            return _SOME
        if self._take("#"):
            self._until(")")
            return None
        if self._take("=") or self._take("!") or self._take("<=") or self._take("<!"):
            self.alternatives(depth + 1)  # a lookaround holds no character of the match
            return _SOME
        if self._take("("):  # a conditional: either branch may be taken
            self._until(")")
            self.alternatives(depth + 1)
            return _SOME
        return self._flags(depth)

    def _flags(self, depth: int) -> _Item | None:
        """``(?flags)`` for the whole pattern, or ``(?flags-flags:…)`` for a group."""
        on = off = ""
        while self._peek() in _FLAGS:
            on += self.text[self.pos]
            self.pos += 1
        if self._take("-"):
            while self._peek() in _FLAGS:
                off += self.text[self.pos]
                self.pos += 1
        if "x" in on + off:
            raise _Unsure("verbose mode")  # spaces and "#" mean something else then
        if self._take(")") and not off:
            if "i" in on:
                raise _Unsure("case-insensitive")
            return None
        if not self._take(":"):
            raise _Unsure("unknown group")
        inner = _branch(self.alternatives(depth + 1))
        return _SOME if "i" in on else inner


def _piece(literal: str) -> str:
    # Stripping turns characters into spaces: only a space-free piece is sure to survive.
    return max(re.split(r"[ \n]", literal), key=len)


# Words nearly every source file holds: a clause made of them filters nothing.
_COMMON = frozenset(
    """auto bool break case char class const continue def default define defined delete do
    double elif else endif enum error extern false float for from if ifdef ifndef import
    include inline int long namespace new nullptr pragma private protected public return self
    short signed size_t sizeof static std struct switch template this true typedef typename
    undef union unsigned using virtual void volatile while""".split()
)


def _selectivity(clause: tuple[str, ...]) -> int:
    """How rare a clause's literals are likely to be: the shortest one's length, zero for a
    common word (a guess that only decides which files are read, never what is counted)."""
    return min(0 if lit.strip("#").lower() in _COMMON else len(lit) for lit in clause)


class Needs:
    """A necessary condition for a line to match: every clause holds one of its literals.
    ``anchor`` (the longest single literal, or None) finds the candidate lines of a file;
    ``probe`` (the clause likely rarest, or None) asks git which files to read at all."""

    def __init__(self, clauses: tuple[tuple[str, ...], ...] = (), anchor: str | None = None):
        self.clauses = clauses
        self.anchor = anchor
        ranked = sorted(enumerate(clauses), key=lambda ic: (_selectivity(ic[1]), ic[0]))
        self.probe: tuple[str, ...] | None = ranked[-1][1] if ranked else None
        # The likely rarest clause first: a file that lacks it is rejected after one search.
        self._bytes = [
            tuple(lit.encode("utf-8", "surrogateescape") for lit in clause)
            for _, clause in reversed(ranked)
        ]

    def __repr__(self) -> str:
        return f"Needs({self.clauses!r}, anchor={self.anchor!r})"

    def holds(self, text: str) -> bool:
        return all(any(lit in text for lit in clause) for clause in self.clauses)

    def holds_bytes(self, data: bytes) -> bool:
        for clause in self._bytes:
            for lit in clause:
                if lit in data:
                    break
            else:
                return False
        return True


def required(pattern: str) -> Needs:
    """The necessary condition of ``pattern`` (empty: no prefilter, every line is matched).

    Runs of plain characters, groups, repeats of at least one, and alternations whose every
    branch holds a literal give literals; case-insensitive parts give nothing. Stripping
    inserts spaces, so a literal is cut to its longest space-free piece.
    """
    if len(pattern) > MAX_LENGTH:
        return Needs()
    try:
        found = _clauses([_branch(_Reader(pattern).alternatives(0))])
    except _Unsure:
        return Needs()
    clauses: list[tuple[str, ...]] = []
    for clause in found:
        pieces = tuple(sorted({_piece(lit) for lit in clause}))
        if all(pieces) and pieces not in clauses:
            clauses.append(pieces)
    singles = [c[0] for c in clauses if len(c) == 1]
    return Needs(tuple(clauses), max(singles, key=len) if singles else None)
