"""The C stripper against the compiler's own lexer: gcc must find code exactly where
:func:`tools.ratchets.cstrip.strip_c` leaves it (SPEC §10, "The C stripper is a C lexer").

How gcc is asked. ``-fpreprocessed -E`` (gcc's lexer without directives) does not splice
lines, and ``-P`` output loses where each token was, so neither says where code is. Instead:
``g++ -x c++ -std=c++17 -undef -nostdinc -E -fdebug-cpp`` lexes with every phase (splices,
raw strings, digit separators; C++17 has no trigraphs) and prints, before each token it
outputs, that token's line and byte column. So that it outputs every token where it stands,
nothing may be a directive or a macro: each ``#`` and ``%:`` of the input becomes ``@``
(``@:``), the macros gcc still predefines under ``-undef`` are undefined (``-U``), and the
built-in macros and operators (``__LINE__``, ``_Pragma``, ``__has_include`` …) get their first
character changed. Every change keeps the length and the lexing of everything else, and both
sides read the changed text, so the include operands (kept by the stripper, a rule of its
own) are not what this compares: tests/test_ratchet_strip.py covers them.

What is compared, per file. A character is *code* for gcc when it belongs to a token gcc
outputs, except the contents of a literal: for a character or string literal, its prefix,
opening quote, closing quote and suffix are code, what lies between the quotes is not (a raw
string's delimiter and parentheses included); a literal gcc leaves unclosed at the end of its
line has only its prefix and quote. A raw string never closed is an error that gcc reports
("unterminated raw string") and drops; its prefix and quote, from the error's position, are
code. Comments and blanks are never code. A character is code for the stripper when it
leaves it neither blanked nor blank. The backslash of a line splice is left out of both (gcc
removes it; the stripper keeps it outside comments and literals). Two figures, both must be
zero: the characters where the two disagree, and the lines (as gcc counts them: ``\\n``,
``\\r\\n`` or a lone ``\\r`` ends one) that keep code for one side and not the other — "which
lines keep code after comments are removed", the ratchet's own unit.

What is generated (seeded, :func:`generate`): identifiers and keywords glued to quotes, every
encoding and raw prefix, character and string literals with escapes and with quotes,
slashes and stars inside, raw strings with good and bad delimiters, closed or not, spanning
lines, pp-numbers with digit separators, exponents and suffixes (``1'e+5``, ``0e+'1``,
``1''2``, ``0xR``), universal character names, stray quotes and backslashes, comments of both
kinds holding quotes, and line splices (with blanks after the backslash, and ``\\r\\n`` or a
lone ``\\r``) dropped anywhere, inside words, numbers, comment openers and literals; lines end
in ``\\n``, ``\\r\\n`` or a lone ``\\r``. Stray quotes are in: gcc outputs one as a token
that runs to the end of its line (with a warning, "missing terminating ' character"), which
is where the stripper must end it too; so are unclosed comments and raw strings (gcc's
errors, "unterminated comment", "unterminated raw string": the rest of the file is no code).
Left out, with the reason: ``#`` and ``%`` (a directive would be run, not output; ``%`` could
form ``%:``), and non-ASCII bytes outside UCNs (gcc reads an invalid UTF-8 byte as a stray
character where the stripper reads every non-ASCII character as a letter; that differs only
in code gcc rejects).

The real tree is /usr/include (a sample here; bench/bench_cstrip_differential.py runs all of
it and 10,000 generated files). Without gcc the tests skip, saying so.
"""

from __future__ import annotations

import functools
import os
import random
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools.ratchets.cstrip import strip_c

GXX = shutil.which("g++")
REAL_TREE = Path("/usr/include")
BATCH = 400  # files per gcc invocation

# -- what gcc is given --------------------------------------------------------------------------
_BUILTINS = re.compile(
    r"\b(?:__FILE__|__LINE__|__DATE__|__TIME__|__TIMESTAMP__|__COUNTER__|__INCLUDE_LEVEL__"
    r"|__BASE_FILE__|__FILE_NAME__|_Pragma|__has_\w+|__VA_OPT__)\b"
)


def neutralize(src: str) -> str:
    """``src`` with nothing gcc would run (directives, built-in macros), same length."""
    src = src.replace("#", "@").replace("%:", "@:")
    return _BUILTINS.sub(lambda m: "Q" + m.group()[1:], src)


@functools.cache
def gcc_command() -> tuple[str, ...]:
    assert GXX is not None
    base = (GXX, "-x", "c++", "-std=c++17", "-undef", "-nostdinc")
    out = subprocess.run(
        [*base, "-dM", "-E", os.devnull], capture_output=True, text=True, check=True
    ).stdout
    undef = tuple(f"-U{m.group(1)}" for m in re.finditer(r"^#define (\w+)", out, re.M))
    return (
        *base,
        *undef,
        "-E",
        "-fdebug-cpp",
        "-w",
        "-fdiagnostics-column-unit=byte",
        "-fno-diagnostics-show-caret",
    )


# -- reading gcc's answer -----------------------------------------------------------------------
_RECORD = re.compile(r"\{P:([^;{}]*);F:[^;{}]*;L:(\d+);C:(\d+);[^{}]*\}")
_DROPPED = re.compile(r"^(.*?):(\d+):(\d+): error: unterminated raw string$", re.M)
_LINE_END = re.compile(r"\r\n?|\n")
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\r\n?|\n)")
_QUOTE = re.compile(r"[\"']")
_UCN = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_WHITE = bytes(0 if b in b" \t\n\v\f\r" else 1 for b in range(256))  # 1: not blank


@dataclass
class Tokens:
    """What gcc output for one file: (line, column, text) of each token, and the positions
    of the raw strings it reported unterminated and dropped."""

    tokens: list[tuple[int, int, str]] = field(default_factory=list)
    dropped: list[tuple[int, int]] = field(default_factory=list)


def run_gcc(paths: list[Path]) -> dict[str, Tokens]:
    """Every token gcc outputs for each of ``paths`` (one invocation)."""
    proc = subprocess.run([*gcc_command(), *map(str, paths)], capture_output=True, check=False)
    out = proc.stdout.decode("latin-1")
    err = proc.stderr.decode("latin-1")
    found = {str(p): Tokens() for p in paths}
    parts = _RECORD.split(out)
    for k in range(1, len(parts), 4):
        where, line, col, text = parts[k], int(parts[k + 1]), int(parts[k + 2]), parts[k + 3]
        tokens = found.get(where)
        text = text.rstrip(" \t\n\r\f\v")
        if tokens is None or not text or text.lstrip().startswith("# "):
            continue  # another file, a line change, a line marker (the input has no "#")
        tokens.tokens.append((line, col, text))
    for m in _DROPPED.finditer(err):
        if m.group(1) in found:
            found[m.group(1)].dropped.append((int(m.group(2)), int(m.group(3))))
    return found


def _code_point(m: re.Match[str]) -> int:
    return int(m.group(1) or m.group(2), 16)


def _spliced(src: str, i: int, count: int) -> tuple[str, list[int]]:
    """The next ``count`` characters from ``i`` with splices skipped, and where each is."""
    where: list[int] = []
    while len(where) < count and i < len(src):
        m = _SPLICE.match(src, i)
        if m is not None:
            i = m.end()
            continue
        where.append(i)
        i += 1
    return "".join(src[k] for k in where), where


def _walk(src: str, pos: int, tok: str, body: tuple[int, int] | None) -> list[int] | None:
    """The source index of each character of ``tok`` (gcc's spelling, splices removed)
    starting at ``pos``; None when they do not line up. ``body``: a raw string's (opening,
    closing) quote in ``tok``, between which gcc restores the splices, as backslash, one
    space if there were blanks, and ``\\n``."""
    if src.startswith(tok, pos):
        return list(range(pos, pos + len(tok)))
    at: list[int] = []
    i, j, n = pos, 0, len(src)
    while j < len(tok):
        raw = body is not None and body[0] < j <= body[1]
        m = _SPLICE.match(src, i)
        if m is not None and not raw:
            i = m.end()
            continue
        if m is not None:
            blanks = m.group().rstrip("\r\n") != "\\"
            spelled = "\\ \n" if blanks else "\\\n"
            if not tok.startswith(spelled, j):
                return None
            at.extend(
                [m.start(), m.start() + 1, m.end() - 1] if blanks else [m.start(), m.end() - 1]
            )
            i, j = m.end(), j + len(spelled)
            continue
        if i >= n:
            return None
        ch = tok[j]
        if ch == "\n" and src[i] == "\r":  # a line ending as gcc spells it
            at.append(i)
            i += 2 if src.startswith("\r\n", i) else 1
            j += 1
            continue
        ucn = _UCN.match(tok, j) if ch == "\\" else None
        if ucn is not None:
            # gcc spells an extended character of an identifier \\UXXXXXXXX: each of its
            # characters stands for one of the source's (splices skipped), the last ones for
            # its last.
            # The source may spell it as a UCN or in UTF-8 (here one character a byte).
            chars, where = _spliced(src, i, 10)
            mine = _UCN.match(chars)
            utf8 = chr(_code_point(ucn)).encode("utf-8", "surrogatepass").decode("latin-1")
            if mine is not None and _code_point(ucn) == _code_point(mine):
                width = mine.end()
            elif chars.startswith(utf8):
                width = len(utf8)
            else:
                return None
            at.extend(where[min(k, width - 1)] for k in range(ucn.end() - j))
            i, j = where[width - 1] + 1, ucn.end()
            continue
        if src[i] != ch:
            return None
        at.append(i)
        i += 1
        j += 1
    return at


def _closing(tok: str, first: int) -> int:
    """Where an ordinary literal whose opening quote is at ``first`` closes (-1: never)."""
    quote, j = tok[first], first + 1
    while j < len(tok):
        if tok[j] == "\\":
            j += 2
        elif tok[j] == quote:
            return j
        else:
            j += 1
    return -1


@dataclass
class Verdict:
    """One file compared: its lines, the characters and lines where the two disagree, and
    gcc tokens that could not be placed (each is a failure too)."""

    lines: int = 0
    chars: int = 0
    char_diffs: list[int] = field(default_factory=list)
    line_diffs: list[int] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)


def gcc_mask(src: str, found: Tokens, line_starts: list[int]) -> tuple[bytearray, list[str]]:
    """1 where gcc says a character is code."""
    mask = bytearray(len(src))
    unplaced: list[str] = []
    for line, col, tok in found.tokens:
        if col == 0 or line > len(line_starts):
            unplaced.append(f"{line}:{col}: {tok[:40]!r} (no column)")
            continue
        pos = line_starts[line - 1] + col - 1
        number = tok[0].isdigit() or (tok[0] == "." and tok[1:2].isdigit())
        q = None if number else _QUOTE.search(tok)
        if q is None:  # an identifier, a number, a punctuator, a stray character
            if src.startswith(tok, pos):
                mask[pos : pos + len(tok)] = b"\x01" * len(tok)
                continue
            at = _walk(src, pos, tok, None)
            if at is None:
                unplaced.append(f"{line}:{col}: {tok[:40]!r}")
                continue
            for k in at:
                mask[k] = 1
            continue
        first = q.start()
        raw = tok[first] == '"' and tok[:first].endswith("R")
        close = tok.rfind('"') if raw else _closing(tok, first)
        at = _walk(src, pos, tok, (first, close) if raw else None)
        if at is None:
            unplaced.append(f"{line}:{col}: {tok[:40]!r}")
            continue
        code = list(range(first + 1))
        if close > first:
            code += range(close, len(tok))
        for k in code:
            mask[at[k]] = 1
    for line, col in found.dropped:  # an unterminated raw string: its prefix and quote
        pos = line_starts[line - 1] + col - 1
        i = pos
        while i < len(src):
            m = _SPLICE.match(src, i)
            if m is not None:
                i = m.end()
                continue
            mask[i] = 1
            i += 1
            if src[i - 1] == '"':
                break
    return mask, unplaced


def strip_mask(stripped: str) -> bytearray:
    """1 where the stripper left a character that is not blank."""
    return bytearray(stripped.encode("latin-1").translate(_WHITE))


def line_starts_of(src: str) -> list[int]:
    """Where each line starts, lines as gcc counts them."""
    starts = [0] + [m.end() for m in _LINE_END.finditer(src)]
    if starts[-1] == len(src) and len(starts) > 1:
        starts.pop()
    return starts


def compare(src: str, found: Tokens, stripped: str | None = None) -> Verdict:
    """``src`` as gcc read it (``found``) against ``stripped`` (by default, what
    :func:`strip_c` makes of it)."""
    line_starts = line_starts_of(src)
    ours = strip_mask(strip_c(src) if stripped is None else stripped)
    theirs, unplaced = gcc_mask(src, found, line_starts)
    for m in _SPLICE.finditer(src):
        ours[m.start()] = theirs[m.start()] = 0
    verdict = Verdict(lines=len(line_starts), chars=len(src), unplaced=unplaced)
    if ours != theirs:
        verdict.char_diffs = [k for k in range(len(src)) if ours[k] != theirs[k]]
        ends = line_starts[1:] + [len(src)]
        for number, (a, b) in enumerate(zip(line_starts, ends, strict=True), start=1):
            if (ours.find(1, a, b) >= 0) != (theirs.find(1, a, b) >= 0):
                verdict.line_diffs.append(number)
    return verdict


@dataclass
class Tally:
    files: int = 0
    lines: int = 0
    chars: int = 0
    char_diffs: int = 0
    line_diffs: int = 0
    unplaced: int = 0
    dropped_raw: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, name: str, src: str, found: Tokens, verdict: Verdict) -> None:
        self.files += 1
        self.lines += verdict.lines
        self.chars += verdict.chars
        self.char_diffs += len(verdict.char_diffs)
        self.line_diffs += len(verdict.line_diffs)
        self.unplaced += len(verdict.unplaced)
        self.dropped_raw += len(found.dropped)
        if (verdict.char_diffs or verdict.unplaced) and len(self.examples) < 5:
            k = verdict.char_diffs[0] if verdict.char_diffs else 0
            self.examples.append(
                f"{name}: lines {verdict.line_diffs[:5]} chars {verdict.char_diffs[:5]} "
                f"unplaced {verdict.unplaced[:3]} near {src[max(0, k - 60) : k + 60]!r}"
            )

    @property
    def clean(self) -> bool:
        return self.char_diffs == 0 and self.line_diffs == 0 and self.unplaced == 0


def differential(sources: Iterable[tuple[str, str]], tally: Tally | None = None) -> Tally:
    """Compare the stripper with gcc on each (name, text) — the text as a C/C++ file would
    be read byte for byte (latin-1 here, so a character is a byte and a column a byte)."""
    tally = tally or Tally()
    with tempfile.TemporaryDirectory() as tmp:
        batch: list[tuple[str, str, Path]] = []

        def flush() -> None:
            found = run_gcc([path for _, _, path in batch])
            for name, src, path in batch:
                tally.add(name, src, found[str(path)], compare(src, found[str(path)]))
            batch.clear()

        for k, (name, text) in enumerate(sources):
            src = neutralize(text)
            path = Path(tmp) / f"f{k}.cc"
            path.write_bytes(src.encode("latin-1"))
            batch.append((name, src, path))
            if len(batch) >= BATCH:
                flush()
        if batch:
            flush()
    return tally


# -- generated files ----------------------------------------------------------------------------
_IDENTS = ["a", "b1", "x_", "case", "return", "sizeof", "else", "kCUDA", "is_cuda", "u", "U",
           "L", "R", "u8", "u8R", "uR", "UR", "LR", "Lu", "RR", "_R", "Ru8", "$d", "e", "E", "p",
           "P", "x1e", "\\u00e9", "a\\u00e9", "\\U0001F600x", "\\u12"]  # fmt: skip
_NUMBERS = ["0", "1", "12", "1'000", "1'000'000", "0x1'ff", "0xFF'FF", "0b1'0", "1.5", "1.5e+3",
            "1.5e+3'2", ".5", ".5'0", "1.", "1e", "1e-", "1'e+5", "0x1'e+5", "1'ee+5", "0e+'1",
            "1u8", "0xR", "1''2", "1'''a", "1$", "1_a", "1\\u00e9", "0x1p-3", "1.'a", "1..2",
            "1'", "1'_", "1'$", "1e'+3"]  # fmt: skip
_CHARS = ["'a'", "'\"'", "'\\''", "'\\\\'", "'//'", "'/*'", "'*/'", "'ab'", "''", "u8'a'",
          "u'b'", "U'c'", "L'd'", "'\\n'", "'a'_x"]  # fmt: skip
_STRINGS = ['"abc"', '"a\\"b"', "\"'\"", '"//"', '"/*"', '"*/"', '"\\\\"', '""', '"a\\\\"',
            'u8"s"', 'L"w"', 'u"x"', 'U"y"', '"R\\"(x)\\""', '"kCUDA"', '"s"_sfx']  # fmt: skip
_PUNCT = [";", ":", "(", ")", "{", "}", "+", "-", "*", "/", ".", "...", "<", ">", "=", ",", "?",
          "!", "&", "|", "~", "^", "[", "]", "@", "`", "\\", "->", "::", "<:", ":>"]  # fmt: skip
_STRAY = ["'", '"']
_RAW_PREFIX = ["R", "u8R", "uR", "UR", "LR"]
_DELIMS = ["", "x", "ab", '"', "'", "a)b", "abcdefghijklmnop", "abcdefghijklmnopq", "a b",
           "a\\b", "$", "a\tb", "a(b", "ab\n"]  # fmt: skip
_RAW_BITS = ["x", ")", ")x", '"', "'", "\n", "\\\n", "//", "/*", "*/", "\\", 'R"(', ')"', " "]
_COMMENT_BITS = ["x", " ", "'", '"', "*", "/", "\\", "kCUDA", 'R"(', "*/x", "//"]
_SPLICES = ["\\\n", "\\ \n", "\\\t\n", "\\\r\n", "\\\r", "\\  \r\n", "\\\f\v\n"]
_ENDS = ["\n"] * 16 + ["\r\n"] * 3 + ["\r"]


def _raw(rng: random.Random) -> str:
    delim = rng.choice(_DELIMS)
    body = "".join(rng.choice(_RAW_BITS) for _ in range(rng.randrange(6)))
    close = "" if rng.random() < 0.1 else ")" + delim + '"'
    return rng.choice(_RAW_PREFIX) + '"' + delim + "(" + body + close


def _comment(rng: random.Random) -> str:
    body = "".join(rng.choice(_COMMENT_BITS) for _ in range(rng.randrange(6)))
    if rng.random() < 0.5:
        return "//" + body
    if rng.random() < 0.02:
        return "/*" + body  # never closed: the rest of the file is comment
    middle = "".join(rng.choice([body, "\n", " "]) for _ in range(rng.randrange(3)))
    return "/*" + body + middle + "*/"


def _token(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.22:
        return rng.choice(_IDENTS)
    if kind < 0.36:
        return rng.choice(_NUMBERS)
    if kind < 0.50:
        return rng.choice(_CHARS)
    if kind < 0.62:
        return rng.choice(_STRINGS)
    if kind < 0.68:
        return _raw(rng)
    if kind < 0.76:
        return _comment(rng)
    if kind < 0.80:
        return rng.choice(_STRAY)
    return rng.choice(_PUNCT)


def generate(seed: int) -> str:
    """One adversarial C++ file (see the module docstring for what it holds)."""
    rng = random.Random(seed)
    parts: list[str] = []
    for _ in range(rng.randrange(10, 80)):
        parts.append(_token(rng))
        gap = rng.random()
        parts.append(
            ""
            if gap < 0.45
            else " "
            if gap < 0.8
            else rng.choice("\t\f\v")
            if gap < 0.85
            else rng.choice(_ENDS)
        )
    text = "".join(parts)
    # Splices anywhere: inside words, numbers, comment openers and literals.
    cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randrange(6))))
    for at in reversed(cuts):
        text = text[:at] + rng.choice(_SPLICES) + text[at:]
    return text + rng.choice(["", "\n", "\n"])


def generated(count: int, seed: int = 0) -> Iterator[tuple[str, str]]:
    for k in range(count):
        yield f"generated seed {seed + k}", generate(seed + k)


# -- the real tree ------------------------------------------------------------------------------
def tree_files(root: Path, every: int = 1, max_bytes: int | None = None) -> Iterator[Path]:
    """The regular files under ``root`` (sorted; each ``every``-th), text only (no NUL)."""
    paths = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for path in paths[::every]:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            continue
        yield path


def tree_sources(paths: Iterable[Path], skipped: list[str]) -> Iterator[tuple[str, str]]:
    for path in paths:
        data = path.read_bytes()
        text = data.decode("latin-1")
        if b"\0" in data or "{P:" in text:  # binary, or text that reads as gcc's records
            skipped.append(str(path))
            continue
        yield str(path), text


# -- tests --------------------------------------------------------------------------------------
needs_gcc = pytest.mark.skipif(GXX is None, reason="g++ is not installed: no compiler to compare")


def _assert_clean(tally: Tally) -> None:
    assert tally.files > 0
    assert tally.clean, "\n".join(
        [f"{tally.char_diffs} chars, {tally.line_diffs} lines differ", *tally.examples]
    )


@needs_gcc
def test_the_stripper_finds_code_where_gcc_does_on_generated_files() -> None:
    tally = differential(generated(400, seed=1))
    _assert_clean(tally)
    assert tally.lines > 4000
    assert tally.dropped_raw > 0  # unterminated raw strings were among them


@needs_gcc
@pytest.mark.skipif(not REAL_TREE.is_dir(), reason="no /usr/include on this machine")
def test_the_stripper_finds_code_where_gcc_does_on_a_real_tree() -> None:
    skipped: list[str] = []
    tally = differential(tree_sources(tree_files(REAL_TREE, every=40, max_bytes=200_000), skipped))
    _assert_clean(tally)
    assert tally.files >= 100


@needs_gcc
def test_the_comparison_sees_a_hole() -> None:
    """The comparison itself: the old stripper read ``case'`` as a digit separator, so
    ``/*`` opened a comment that hid line 2's site and line 3; both figures catch it."""
    src = "switch (c) {\ncase'/*': kCUDA;\n}\n*/ x\n"
    a, b = src.index("/*"), src.index("*/") + 2
    hole = src[:a] + re.sub(r"[^\n]", " ", src[a:b]) + src[b:]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hole.cc"
        path.write_bytes(src.encode())
        found = run_gcc([path])[str(path)]
    theirs, unplaced = gcc_mask(src, found, line_starts_of(src))
    assert not unplaced
    code = "".join(c if theirs[k] or c == "\n" else " " for k, c in enumerate(src))
    assert [line.rstrip() for line in code.splitlines()] == [
        "switch (c) {", "case'  ': kCUDA;", "}", "*/ x"
    ]  # fmt: skip
    caught = compare(src, found, hole)
    assert caught.line_diffs == [3] and len(caught.char_diffs) == len("':kCUDA;}*/")
    assert compare(src, found).char_diffs == []
