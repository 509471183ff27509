"""Limits on the shape of a YAML or JSON document, checked before it is built into data.

Configs, plans and manifests come from pull requests. A deeply nested document makes the
recursive parts of PyYAML and jsonschema run out of stack (a crash, exit 3) and an alias bomb
("billion laughs") expands a few hundred bytes into gigabytes. PyYAML's event parser is
iterative, so one pass over its events measures nesting and the size the aliases would expand
to, in linear time and without building anything. JSON (baselines, receipts, evidence,
ledger lines) has no aliases; its nesting and its nodes are measured on its brackets and
separators outside strings, by C-level passes (a regex, ``bytes.translate``,
``itertools.accumulate``, ``bytes.count``), never by recursion.
"""

from __future__ import annotations

import functools
import json
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
from typing import Any, Protocol

from tools.errors import UsageError

MAX_DEPTH = 100
MAX_NODES = 100_000


class _Open:
    """A collection being read: its anchor (if any) and the nodes it expands to so far."""

    __slots__ = ("anchor", "nodes")

    def __init__(self, anchor: str | None) -> None:
        self.anchor = anchor
        self.nodes = 1


def check_yaml(text: str, where: str) -> None:
    """Refuse ``text`` (exit 2 naming ``where``) when nesting exceeds :data:`MAX_DEPTH` or the
    document with its aliases expanded exceeds :data:`MAX_NODES` nodes. A YAML syntax error is
    left for the loader, which reports it with its line."""
    import yaml  # here, not at import: the JSON readers of this module never need it

    # libyaml's event parser, where PyYAML was built with it: the pure-Python scanner reads
    # far ahead on a deeply nested line (about 0.3 s on 100,000 levels; libyaml a few ms).
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            _measure(text, where, fast)
            return
        except yaml.YAMLError:
            pass  # what libyaml refuses, the pure-Python loader may accept: measure with it
    try:
        _measure(text, where, yaml.SafeLoader)
    except yaml.YAMLError:
        return


def _measure(text: str, where: str, loader: Any) -> None:
    """One pass over ``loader``'s events of ``text``; a YAML error propagates."""
    import yaml

    stack: list[_Open] = []
    sizes: dict[str, int] = {}
    expanded = 0  # nodes of the document as built, aliases expanded
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            stack.append(_Open(event.anchor))
            expanded += 1
            if len(stack) > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise UsageError(
                    f"nesting deeper than {MAX_DEPTH} levels (line {line})",
                    where=where,
                    expected=f"a document nested at most {MAX_DEPTH} deep",
                )
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            done = stack.pop()
            if done.anchor is not None:
                sizes[done.anchor] = done.nodes
            size = done.nodes
        elif isinstance(event, yaml.ScalarEvent):
            size = 1
            expanded += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            size = sizes.get(str(event.anchor), 1)
            expanded += size
        else:
            continue
        if stack:
            stack[-1].nodes += size
        if expanded > MAX_NODES:
            raise UsageError(
                f"the document expands to more than {MAX_NODES:,} nodes (aliases expanded)",
                where=where,
                expected="a document without alias bombs",
            )


# An escape inside a JSON string (outside one a backslash is not JSON): dropped first, so that
# every quote left opens or closes a string.
_JSON_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# Brackets as signed steps (array "b": 1 opens, 0xFF = -1 closes); every other character goes.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def _outside_strings(raw: bytes) -> bytes:
    """``raw`` read as JSON with every string literal dropped (its quotes too)."""
    if b'"' not in raw:
        return raw
    if b"\\" in raw:
        raw = _JSON_ESCAPE.sub(b"", raw)
    return b"".join(raw.split(b'"')[::2])


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of ``text`` read as JSON (0 for a scalar), in linear time. Text
    that is not JSON gets a number too; the parser then reports what is wrong with it."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if b"[" not in raw and b"{" not in raw:
        return 0
    steps = _outside_strings(raw).translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(array("b", steps)), default=0)


# What separates JSON's nodes: every value and key but the document's own follows one of these.
# Separators kept, white space dropped, anything else (a scalar's bytes) one placeholder, so
# that a container holding only a scalar does not look empty.
_SCALARS = bytes(c if c in b"[]{},:" else ord("x") for c in range(256))
_WHITE = b" \t\r\n"
_MARKS = (b",", b":", b"[", b"{")
_PIECE = 1 << 20  # bytes measured at a time, so a document far past the bound stops early


def json_nodes(text: str | bytes) -> int:
    """The nodes of ``text`` read as JSON (every container, scalar and key counts one, as the
    YAML bound counts them), or a number past :data:`MAX_NODES` once the count passes it (a
    document of a million entries is refused after its first pieces). Linear time; text that
    is not JSON gets a number too, and the parser then reports what is wrong with it."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    bound = 1 + sum(raw.count(m) for m in _MARKS)  # separators in strings too: an upper bound
    return bound if bound <= MAX_NODES else count_nodes(raw, MAX_NODES)


def count_nodes(raw: bytes, stop: int) -> int:
    """The nodes of JSON ``raw``, counted exactly until the count passes ``stop``: one more
    than the commas, the colons and the containers that hold something, outside strings."""
    return _measure_json(raw, stop, None)[0]


def _measure_json(raw: bytes, stop: int, deepest: int | None) -> tuple[int, int]:
    """(nodes, depth) of JSON ``raw`` read piece by piece, until the nodes pass ``stop`` or,
    when ``deepest`` is given, the depth passes it: whichever the document passes first."""
    nodes, depth, in_string, last, at = 1, 0, False, b"", 0
    while at < len(raw) and nodes <= stop and (deepest is None or depth <= deepest):
        end = min(len(raw), at + _PIECE)
        piece = raw[at:end]
        run = len(piece) - len(piece.rstrip(b"\\"))
        if run % 2 and end < len(raw):  # never cut an escape in two
            end += 1
            piece = raw[at:end]
        at = end
        if b"\\" in piece:
            piece = _JSON_ESCAPE.sub(b"", piece)
        parts = piece.split(b'"')
        # Each string becomes one placeholder: `["a"]` holds something.
        outside = (b"x" if in_string else b"") + b"x".join(parts[1 if in_string else 0 :: 2])
        in_string ^= (len(parts) - 1) % 2 == 1
        kept = outside.translate(_SCALARS, _WHITE)
        joined = last + kept
        nodes += sum(kept.count(m) for m in _MARKS) - joined.count(b"[]") - joined.count(b"{}")
        last = kept[-1:] or last
        if deepest is not None:
            steps = array("b", kept.translate(_STEPS, _NOT_BRACKETS))
            levels = list(accumulate(steps, initial=depth))
            depth_here = max(levels)
            if depth_here > deepest:
                return nodes, depth_here
            depth = levels[-1]
    return nodes, depth


def json_too_deep(text: str | bytes) -> bool:
    """Whether ``text`` read as JSON nests deeper than :data:`MAX_DEPTH` (a document with
    fewer opening brackets than that is answered by two counts)."""
    opened = (
        text.count("[") + text.count("{")
        if isinstance(text, str)
        else text.count(b"[") + text.count(b"{")
    )
    if opened <= MAX_DEPTH:
        return False
    return json_depth(text) > MAX_DEPTH


def check_json(text: str | bytes, where: str) -> None:
    """Refuse ``text`` (exit 2 naming ``where``) when its nesting exceeds :data:`MAX_DEPTH`
    or it holds more than :data:`MAX_NODES` nodes, before anything is built."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if json_nodes(raw) <= MAX_NODES and not json_too_deep(raw):
        return  # within both bounds (the quick counts settle most documents)
    # One pass that stops at whichever bound the document passes first.
    nodes, depth = _measure_json(raw, MAX_NODES, MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise UsageError(
            f"nesting deeper than {MAX_DEPTH} levels",
            where=where,
            expected=f"a JSON document nested at most {MAX_DEPTH} deep",
        )
    if nodes > MAX_NODES:
        raise UsageError(
            f"the document holds more than {MAX_NODES:,} nodes",
            where=where,
            expected=f"a JSON document of at most {MAX_NODES:,} nodes",
        )


def json_object(
    raw: bytes,
    where: str,
    keys: frozenset[str],
    bad: Callable[..., UsageError],
    *,
    pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> dict[str, Any]:
    """``raw`` read as one bounded JSON object with no key but ``keys``; every refusal is
    ``bad(message[, key])`` (a file's own reader names its format)."""
    check_json(raw, where)
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs_hook)
    except UnicodeDecodeError as exc:
        raise bad(f"not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise bad(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise bad(f"wrong type ({type(data).__name__})", "(top level)")
    extra = sorted(set(data) - keys)
    if extra:
        raise bad("unknown key", extra[0])
    return data


# -- patterns from the config -------------------------------------------------------------------
# Every config pattern compiled through RE2 here (SPEC §10, "Patterns from a pull request run in
# linear time"): `trailers.assisted_by_format`, `style.subject_pattern`, the ratchets' bucket
# regexes, `outside_guards` and `allow_marker`, `docs.rules[].when_added_line` and
# `docs.spec_now[].spec_link`. Python's `re` backtracks: `(a|aa)+$` against 44 `a` and a `b`
# takes minutes, and under `--config-from head` the pattern is the pull request's. RE2 (the
# `google-re2` package) matches in time linear in the text; what it cannot express
# (backreferences, lookaround, possessive repeats, atomic groups, verbose mode) is exit 2 naming
# the key. Its cost per byte still grows with the compiled program (a pattern whose DFA blows
# up runs on RE2's NFA, every instruction live at every byte), so a program of more than
# MAX_PATTERN_PROGRAM instructions is refused too: at that size the worst pattern we could build
# judges 1 MiB in under a second (bench/bench_hostile.py), the real ones in milliseconds.
# Matching goes through RE2's own `re`-like API (`re2.compile`): about 1 µs a search here.

MAX_PATTERN_PROGRAM = 200  # RE2 instructions: `\bkCUDA\b` is 11, `.{24}` 196, `\pL` 1,200
PATTERN_MEMORY = 8 << 20  # RE2's memory budget per pattern (its own default, stated here)
PATTERN_EXPECTED = "an RE2 regular expression: no backreferences, lookaround or atomic groups"
_SHOWN = 80  # characters of a refused pattern quoted in its error


class PatternMatch(Protocol):
    """One match of a :class:`ConfigPattern`: the text of its groups."""

    def group(self, key: int | str = 0, /) -> str | None: ...


class ConfigPattern:
    """A config pattern compiled by RE2, with the part of ``re.Pattern`` the gates use.

    A lone surrogate (a byte git could not decode) is matched as U+FFFD, one character for
    one, as ``re`` matches it as one character (a group holding one gives U+FFFD back).
    RE2's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are ASCII (``re.ASCII``)."""

    __slots__ = ("pattern", "groupindex", "_regex")

    def __init__(self, pattern: str, regex: Any) -> None:
        self.pattern = pattern
        self.groupindex: dict[str, int] = dict(regex.groupindex)
        self._regex = regex

    def __repr__(self) -> str:
        return f"ConfigPattern({self.pattern!r})"

    def search(self, text: str) -> PatternMatch | None:
        """The leftmost match in ``text``, or None."""
        found: PatternMatch | None = self._regex.search(_valid(text))
        return found

    def fullmatch(self, text: str) -> PatternMatch | None:
        """The match of the whole of ``text``, or None."""
        found: PatternMatch | None = self._regex.fullmatch(_valid(text))
        return found

    def finditer(self, text: str) -> list[PatternMatch]:
        """Every match in ``text``, left to right, none overlapping another."""
        return list(self._regex.finditer(_valid(text)))


def _valid(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (RE2 reads UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return re.sub("[\ud800-\udfff]", "\ufffd", text)
    return text


def config_pattern(pattern: str, where: str) -> ConfigPattern:
    """``pattern``, the config's value at ``where`` (its file and key path), compiled by RE2
    (once per pattern). A pattern RE2 refuses, or one that compiles to more than
    :data:`MAX_PATTERN_PROGRAM` instructions, is a UsageError naming ``where``."""
    compiled = _compiled(pattern)
    if isinstance(compiled, str):
        shown = pattern if len(pattern) <= _SHOWN else pattern[:_SHOWN] + "…"
        raise UsageError(f"bad value {shown!r}: {compiled}", where=where, expected=PATTERN_EXPECTED)
    return compiled


@functools.lru_cache(maxsize=16)
def fixed_pattern(pattern: str) -> ConfigPattern:
    """One of the package's own patterns compiled by RE2, for text from the tree that
    Python's backtracking matcher could take quadratic time over (RE2 is linear in the text).
    RE2's classes are ASCII, as :class:`ConfigPattern` says: for patterns that do not care."""
    re2 = _re2()
    options = re2.Options()
    options.max_mem = PATTERN_MEMORY
    return ConfigPattern(pattern, re2.compile(_re2_spelling(pattern), options=options))


def _re2() -> Any:
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    return re2


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> ConfigPattern | str:
    """``pattern`` compiled, or why it is refused."""
    re2 = _re2()

    try:
        spelled = _re2_spelling(pattern)
        spelled.encode("utf-8")
    except UnicodeEncodeError:
        return "not UTF-8 text"
    options = re2.Options()
    options.max_mem = PATTERN_MEMORY
    options.log_errors = False  # RE2 would print its refusal on stderr; ours is one line
    try:
        regex = re2.compile(spelled, options=options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    size = regex.programsize
    if size > MAX_PATTERN_PROGRAM:
        return f"RE2 compiles it to {size:,} instructions, more than {MAX_PATTERN_PROGRAM:,}"
    return ConfigPattern(pattern, regex)


def _re2_spelling(pattern: str) -> str:
    """``pattern`` as RE2 spells it: Python's ``\\Z`` (the very end of the text) is ``\\z``."""
    if "\\Z" not in pattern:
        return pattern
    return re.sub(r"\\(.)", _end_of_text, pattern, flags=re.DOTALL)


def _end_of_text(escape: re.Match[str]) -> str:
    return "\\z" if escape.group(1) == "Z" else escape.group(0)
