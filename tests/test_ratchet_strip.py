"""The ratchet engine's pure parts: C/C++ stripping, prefilter literals, line scanning, the
markdown measures, baselines and globs; each parser and regex family against 1 MiB hostile
lines."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tests.gates.test_ratchet import IDX, INDEX, check, counts, findings
from tools.config import defaults, merge
from tools.config_model import protocol_config
from tools.errors import UsageError
from tools.globs import Globs
from tools.ratchets import baseline, engine
from tools.ratchets import markdown_measures as md_kind
from tools.ratchets.cstrip import strip_c
from tools.ratchets.literals import required
from tools.ratchets.pattern import lines_with

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
GUARD_S = 5.0  # generous: a quadratic scan of 1 MiB takes minutes, a linear one milliseconds


def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    elapsed = time.perf_counter() - start
    assert elapsed < GUARD_S, f"{fn.__name__} took {elapsed:.1f} s on a 1 MiB input"
    return out


def _default_detector():
    (ratchet,) = engine.load(protocol_config(defaults()), None)
    return ratchet


# -- stripping ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "kept", "gone"),
    [
        ("int a; // kCUDA\n", "int a;", "kCUDA"),
        ("x /* kCUDA\n kCUDA */ y\n", "y", "kCUDA"),
        ('const char* s = "kCUDA";\n', 's = "', "kCUDA"),
        ("char c = 'k'; auto d = u8'x';\n", "char c = '", "k'"),
        ('auto r = R"xy(kCUDA\n)" kCUDA)xy"; z\n', "z", "kCUDA"),
        ('auto r = LR"(kCUDA)";\n', "auto r = LR", "kCUDA"),
        ("// spliced \\\nkCUDA\nvisible\n", "visible", "kCUDA"),
        ('s = "a\\" kCUDA"; t\n', "t", "kCUDA"),
    ],
)
def test_comments_and_literals_are_blanked(source: str, kept: str, gone: str) -> None:
    out = strip_c(source)
    assert len(out) == len(source)
    assert out.count("\n") == source.count("\n")
    assert kept in out
    assert gone not in out


# Each of these hid its device site from the stripper that judged a quote by the character
# before it (a word character meant a digit separator, so the quote opened nothing and the
# next one opened a literal to the end of the line, or a comment to its end); gcc compiles
# each line and sees the site.
@pytest.mark.parametrize(
    "source",
    [
        "switch (c) { case'\"': kCUDA; }\n",  # keyword `case`, then the literal '"'
        "return'\"'; kCUDA\n",
        "n = sizeof'\"'; kCUDA\n",
        "else'\"'; kCUDA\n",
        "c = x_'\"'; kCUDA\n",  # any identifier ends before a quote
        "c = $a'\"'; kCUDA\n",
        "return'/*'; kCUDA\nkCUDA */\n",  # '/*' is a character literal, no comment
        "cas\\\ne'\"': kCUDA\n",  # a splice inside the keyword
        "x = 1.5e+3'2'\"'; kCUDA\n",  # the number ends at `2`; then the literal '"'
        "x = 1'e+5'\"'; kCUDA\n",  # `1'e` is the number: the `+` is no sign of it
        "// note\rkCUDA\n",  # a lone \r ends the comment, as gcc reads it
        'x = "open\rkCUDA;\n',  # and an ordinary literal
        's = "a"R"(";kCUDA;")";\n',  # `R` is the first literal's suffix: no raw string
    ],
)
def test_a_device_site_after_a_quote_glued_to_a_word_stays_visible(source: str) -> None:
    out = strip_c(source)
    assert out.count("kCUDA") == source.count("kCUDA"), out
    assert len(out) == len(source)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("case'\"': kCUDA\n", "case' ': kCUDA\n"),
        ("u8'a' u'b' U'c' L'd' L\"x\" u8\"y\"\n", "u8' ' u' ' U' ' L' ' L\" \" u8\" \"\n"),
        ('R"d(a\n"b)" )d" kCUDA\n', 'R"   \n       " kCUDA\n'),  # a raw string spans lines
        ('u8R"(\\\n)" k\n', 'u8R"  \n " k\n'),  # no splice inside a raw string
        ('R"a b(x)a b" kCUDA\n', 'R"         " kCUDA\n'),  # a bad delimiter: to the next "
        ('R"(kCUDA\nkCUDA\n', 'R"      \n     \n'),  # never closed: to the end
        (
            "n = 1'000'000; m = 0x1'ff; c = 'x'; kCUDA\n",
            "n = 1'000'000; m = 0x1'ff; c = ' '; kCUDA\n",
        ),
        ("a = .5'0 + 0b1'0 + 1'ee+5+'x'\n", "a = .5'0 + 0b1'0 + 1'ee+5+' '\n"),
        ("a = 1'ee+5'x'\n", "a = 1'ee+5'x'\n"),  # `'x` continues the number: a stray quote
        ("n = 1''2; kCUDA\n", "n = 1''2; kCUDA\n"),  # adjacent separators stay in, as gcc
        ("1\\u120e+'1 kCUDA\n", "1\\u120e+'1 kCUDA\n"),  # gcc: `e+` even at a UCN's end
        ("c = $1'''x'; kCUDA\n", "c = $1''' '; kCUDA\n"),  # `$1` is a word: '' then 'x'
        ("/\\\n/ kCUDA\nv\n", "  \n       \nv\n"),  # a splice inside `//`
        ("// a \\\n kCUDA\nv\n", "      \n      \nv\n"),  # a splice at its end
        ("/\\\n* kCUDA *\\\n/ v\n", "  \n          \n  v\n"),
        ('s = "a\\\nkCUDA"; v\n', 's = "  \n     "; v\n'),
        ("x = 'a\\\\\n\n", "x = '   \n\n"),  # a backslash before a splice to an empty line
        ("#error don't kCUDA\n", "#error don'       \n"),  # gcc: an unclosed literal too
        ('"a"_sfx kCUDA\n', '" "_sfx kCUDA\n'),
    ],
)
def test_stripping_follows_the_lexical_grammar(source: str, expected: str) -> None:
    assert strip_c(source) == expected


def test_include_operands_stay_visible() -> None:
    src = (
        '#include "vt/cuda/launch.h" // note\n  #  include <ops//cuda/x.h>\n#import "a.h"\n'
        '# /* c */ include_next <y//cuda/z.h>\n%:include "q\'.h"\n/* c */ #include "w.h"\n'
        "#include <unclosed//cuda/\n"
    )
    out = strip_c(src)
    assert '"vt/cuda/launch.h"' in out and "note" not in out
    assert "<ops//cuda/x.h>" in out
    assert '"a.h"' in out
    assert "<y//cuda/z.h>" in out and " c " not in out
    assert '"q\'.h"' in out and '"w.h"' in out
    assert "<unclosed//cuda/" in out  # kept to the end of its line, as before


@pytest.mark.parametrize(
    "source",
    [
        'x; #include "kCUDA"\n',  # not first on its line: an ordinary literal
        '/*\n#include "kCUDA"\n*/\n',  # inside a comment
        'R"(\n#include "kCUDA"\n)"\n',  # inside a raw string
        '#define X "kCUDA"\n',
        'a \\\n#include "kCUDA"\n',  # spliced onto the line before
    ],
)
def test_what_is_no_include_operand_is_blanked(source: str) -> None:
    assert "kCUDA" not in strip_c(source)


def test_an_unterminated_literal_ends_at_its_line() -> None:
    out = strip_c('"open kCUDA\nkCUDA\n')
    assert out.splitlines()[1] == "kCUDA"
    assert strip_c("x = ' kCUDA\r\nkCUDA\n").split("\n")[1] == "kCUDA"


def test_an_unclosed_block_comment_runs_to_the_end() -> None:
    assert "kCUDA" not in strip_c("a /* kCUDA\nkCUDA\n")


def test_crlf_line_endings_keep_line_numbers() -> None:
    src = "a // kCUDA\r\nkCUDA;\r\n"
    out = strip_c(src)
    assert out.split("\n")[1] == "kCUDA;\r"
    assert strip_c("/* a\r\nb */ c\r\n") == "    \r\n     c\r\n"


def test_strip_can_stop_early_without_changing_the_part_before() -> None:
    src = "a /* x */ b\n" * 5 + '"s" kCUDA\n'
    full = strip_c(src)
    cut = len("a /* x */ b\n") * 2
    assert strip_c(src, cut)[:cut] == full[:cut]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab/*\"'\\\nR(){}#include u8L1 \r", max_size=200))
def test_stripping_keeps_length_and_every_newline(text: str) -> None:
    out = strip_c(text)
    assert len(out) == len(text)
    assert [i for i, c in enumerate(out) if c in "\r\n"] == [
        i for i, c in enumerate(text) if c in "\r\n"
    ]
    # Only blanking: every character is kept or turned into a space.
    assert all(o == t or o == " " for o, t in zip(out, text, strict=True))


# The reference: the same grammar read one character at a time, as plainly as it can be
# written (the stripper's regexes and index maps must agree with it on every input).
_SPLICE = re.compile(r"\\[ \t\f\v]*(?:\r\n?|\n)")
_UCN = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})")
_ASCII_WORD = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_D_CHARS = _ASCII_WORD | set("{}[]#<>%:;.?*+-/^&|~!=,\"'")


def _word_char(ch: str, first: bool = False) -> bool:
    return ch in _ASCII_WORD and not (first and ch.isdigit()) or ch == "$" or ord(ch) >= 0x80


def _reference_strip(text: str) -> str:
    n = len(text)
    where: list[int] = []  # phase 2: the logical characters and where each one is
    i = 0
    while i < n:
        m = _SPLICE.match(text, i)
        if m:
            i = m.end()
        else:
            where.append(i)
            i += 1
    s = "".join(text[k] for k in where)
    size = len(s)
    out = list(text)

    def at(k: int) -> int:  # where the logical character k is (the end: the text's end)
        return where[k] if k < size else n

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] not in "\r\n":
                out[k] = " "

    def ident_end(k: int) -> int:
        while k < size:
            u = _UCN.match(s, k)
            if u:
                k = u.end()
            elif _word_char(s[k]):
                k += 1
            else:
                break
        return k

    def gap_end(k: int) -> int:  # blanks and closed comments
        while k < size:
            if s[k] in " \t\f\v":
                k += 1
            elif s.startswith("/*", k) and s.find("*/", k + 2) >= 0:
                k = s.find("*/", k + 2) + 2
            else:
                break
        return k

    k = 0
    fresh = True  # only blanks and comments so far on this line
    keep = (-1, -1)
    while k < size:
        c = s[k]
        if keep[0] <= k < keep[1]:
            k = keep[1]
            fresh = False
        elif c in "\r\n":
            fresh = True
            k += 1
        elif c in " \t\f\v":
            k += 1
        elif s.startswith("//", k):
            e = k
            while e < size and s[e] not in "\r\n":
                e += 1
            blank(where[k], at(e))
            k = e
        elif s.startswith("/*", k):
            e = s.find("*/", k + 2)
            end = n if e < 0 else where[e + 1] + 1
            blank(where[k], end)
            k = size if e < 0 else e + 2
        elif c == "#" or s.startswith("%:", k):
            j = gap_end(k + (1 if c == "#" else 2))
            w = ident_end(j)
            if fresh and s[j:w] in ("include", "include_next", "import"):
                o = gap_end(w)
                if o < size and s[o] in '<"':
                    e = o + 1
                    while e < size and s[e] not in "\r\n" and s[e] != (">" if s[o] == "<" else '"'):
                        e += 1
                    keep = (o, e + 1 if e < size and s[e] not in "\r\n" else e)
            fresh = False
            k += 1 if c == "#" else 2
        elif c.isdigit() or (c == "." and s[k + 1 : k + 2].isdigit()):
            fresh = False
            k += 2 if c == "." else 1
            while k < size:
                if s[k] in "eEpP" and s[k + 1 : k + 2] in ("+", "-") and k + 1 < size:
                    k += 2
                elif s[k] == "'":
                    j = k
                    while j < size and s[j] == "'":
                        j += 1
                    if j < size and s[j] in _ASCII_WORD:
                        k = j + 1
                    else:
                        break
                elif _UCN.match(s, k):  # gcc: a sign may follow one spelled with a final e
                    k = _UCN.match(s, k).end()
                    k += s[k - 1] in "eE" and s[k : k + 1] in ("+", "-") and k < size
                elif _word_char(s[k]) or s[k] == ".":
                    k += 1
                else:
                    break
        elif c in "\"'" or _word_char(c, first=True) or _UCN.match(s, k):
            fresh = False
            w = ident_end(k) if c not in "\"'" else k
            if w >= size or s[w] not in "\"'":
                k = max(w, k + 1)
                continue
            q = w
            if keep[0] <= q < keep[1]:  # `#include"a.h"`: the word, then the operand
                k = keep[1]
                continue
            if s[q] == '"' and s[k:w] in ("R", "u8R", "uR", "UR", "LR"):
                quote = where[q]
                d = quote + 1
                while d < n and d - quote - 1 < 16 and text[d] in _D_CHARS and text[d] != "(":
                    d += 1
                if d < n and text[d] == "(":
                    close = text.find(")" + text[quote + 1 : d] + '"', d + 1)
                    inner = n if close < 0 else close + d - quote
                    good = close >= 0
                else:
                    close = text.find('"', d + 1) if d < n else -1
                    inner = n if close < 0 else close
                    good = False
                blank(quote + 1, inner)
                if inner >= n:
                    break
                k = where.index(inner) + 1
                if good and k < size and s[k] in _ASCII_WORD and not s[k].isdigit():
                    while k < size and s[k] in _ASCII_WORD:
                        k += 1
                continue
            e = q + 1
            while e < size and s[e] != s[q] and s[e] not in "\r\n":
                e += 2 if s[e] == "\\" and e + 1 < size and s[e + 1] not in "\r\n" else 1
            blank(where[q] + 1, at(e))
            if e < size and s[e] == s[q]:
                k = e + 1
                if k < size and s[k] in _ASCII_WORD and not s[k].isdigit():
                    while k < size and s[k] in _ASCII_WORD:
                        k += 1
            else:
                k = e
        else:
            fresh = False
            k += 1
    return "".join(out)


_PIECES = ["a", "case", "u8", "u", "L", "R", "u8R", "LR", "x_", "$", "1", "0x", "e", "+", ".",
           "'", '"', "\\", "/", "*", "(", ")", " ", "\t", "\n", "\r", "\r\n", "\\\n", "\\ \n",
           "\\\r", "#", "%:", "include", "import", "<", ">", "//", "/*", "*/", "kCUDA", "d",
           "\\u00e9", "é", "_s", "$1", "1'''", "'a'", '"a"', ".5", "E+", "p-", "\\u120e", "\f",
           "\v"]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_the_stripper_equals_the_plain_reference(text: str) -> None:
    assert strip_c(text) == _reference_strip(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join), st.integers(0, 200))
def test_stopping_early_changes_nothing_before_the_stop(text: str, cut: int) -> None:
    cut = min(cut, len(text))
    assert strip_c(text, cut)[:cut] == strip_c(text)[:cut]


# strip_c alone; tests/test_hostile_inputs.py runs the same shapes as the engine counts a file.
@pytest.mark.parametrize(
    "line",
    [
        "/*" * (MIB // 2),
        "//" + "\\" * MIB,
        '"' * MIB,
        "'" * MIB,
        'R"(' * (MIB // 3),
        'R"' + "x" * 15 + "(" + ")" * MIB,
        "1'" * (MIB // 2),
        "1''" * (MIB // 3),
        '#include "' + "/" * MIB,
        "#include <" + "//" * (MIB // 2),
        '"\\' * (MIB // 2),
        " " * MIB + "#include",
        "u8'" * (MIB // 3),
        "case'\"':" * (MIB // 8),
        'u8R"' * (MIB // 4),
        "\\\n" * (MIB // 2),
        "a\\\n" * (MIB // 3),
        '"\\\n' * (MIB // 3),
        "/\\\n*" * (MIB // 4),
        "#/**/\n" * (MIB // 6),
        "%:" * (MIB // 2),
        "a'" * (MIB // 2),
        '"a"R' * (MIB // 4),
        "//\r" * (MIB // 3),
        "x" * MIB + "'",
        "\\" + " " * MIB + "\n",
    ],
)
def test_stripping_is_linear_on_hostile_lines(line: str) -> None:
    out = _timed(strip_c, line + "\n" + line)
    assert len(out) == 2 * len(line) + 1


DEVICE_RATCHET = r"""ratchets:
  device:
    kind: pattern
    include: ["**/*.cc"]
    strip: c
    buckets:
      is_cuda: 'is_cuda\s*\('
      kcuda: '\bkCUDA\b'
"""
GLUED = (
    "int f(char c, const at::Tensor& x) {\n"  # 1
    "  switch (c) {\n"  # 2
    "    case'\"': if (x.is_cuda()) return 1;\n"  # 3: the site the old stripper hid
    "    case'a': return x.device() == kCUDA;\n"  # 4
    "  }\n"  # 5
    "  return 0;\n"  # 6
    "}\n"  # 7
)


def test_the_cli_counts_a_site_after_a_keyword_glued_to_a_quote(repo: Repo) -> None:
    """Through the real CLI on a real repository: the site on line 3 (gcc compiles it) is
    counted, named as new by the regression, and tighten will not write a lower count."""
    repo.commit(
        "Start\n\nBody.\n",
        {IDX: INDEX, ".agents/protocol.yaml": DEVICE_RATCHET, "src/a.cc": "int f();\n"},
    )
    assert repo.tools("ratchet", "tighten").exit_code == 0
    repo.commit("Baseline\n\nBody.\n")
    repo.branch("topic")
    repo.commit("Glue\n\nBody.\n", {"src/a.cc": GLUED})
    run = check(repo, "--base", "main")
    assert counts(run, "device") == {"is_cuda": 1, "kcuda": 1}
    assert run.exit_code == 1
    regs = {f["message"].split(":")[0]: f for f in findings(run, "ratchet-regression")}
    assert (regs["device.is_cuda"]["path"], regs["device.is_cuda"]["line"]) == ("src/a.cc", 3)
    assert (regs["device.kcuda"]["path"], regs["device.kcuda"]["line"]) == ("src/a.cc", 4)
    # The commit's tree, as CI counts it.
    assert counts(check(repo, "--rev", "HEAD"), "device") == {"is_cuda": 1, "kcuda": 1}


# -- prefilter literals -------------------------------------------------------------------------
def test_required_literals_of_the_default_buckets() -> None:
    needs = {b.name: b.needs for b in _default_detector().detector.buckets}
    assert needs["kcuda"].probe == ("kCUDA",)
    assert needs["is_cuda"].probe == ("is_cuda",)
    assert needs["cuda_include"].probe == ("/cuda/", "cuda_runtime")
    assert needs["vt_macro"].anchor == "VT_"


def test_no_literal_means_no_prefilter() -> None:
    assert required(r"(?i)kcuda").clauses == ()
    assert required(r"\w+\s*[(\[]").clauses == ()
    assert required(r"[(").clauses == ()  # unparsable: no prefilter, never a crash


def test_literals_never_hold_a_space_that_stripping_could_create() -> None:
    needs = required(r"foo     bar")
    assert all(" " not in lit for clause in needs.clauses for lit in clause)
    assert strip_c("foo/**/ bar\n").startswith("foo     bar")


PATTERNS = [
    r"\bkCUDA\b",
    r"is_cuda\s*\(",
    r"^[ \t]*#[ \t]*(?:if|ifdef|elif)\b.*?\bVT_\w",
    r"(?:ab)+c?d",
    r"x(?:yz|yw)q",
    r"a|b",
    r"(?:foo|bar)baz",
    r"^(?:from|import)[ \t]+torch\b",
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(PATTERNS), st.text(alphabet="abcdqwxyz kCUDAis_c(VT#ifelfromtch\t", max_size=60)
)
def test_the_prefilter_never_rejects_a_line_the_regex_matches(pattern: str, line: str) -> None:
    needs = required(pattern)
    if re.search(pattern, line):
        assert needs.holds(line)
        assert needs.holds_bytes(line.encode())
        assert needs.anchor is None or needs.anchor in line
        assert needs.probe is None or any(lit in line for lit in needs.probe)


# The reader of the pattern text, against ``re`` itself: regexes built from every construct
# it knows and several it does not, matched on lines over the same small alphabet.
_ATOMS = st.sampled_from(
    ["a", "b", "ab", "x", " ", ".", "\\.", "[ab]", "[a]", "[^a]", "[]a]", "\\w", "\\b", "^",
     "$", "\\x61", "\\u0062", "\\t", "{", "}", "]", "a{}", "\\-", "(?#c)", "(?s)", "\\Ab"]
)  # fmt: skip
_QUANTS = st.sampled_from(
    ["", "", "*", "+", "?", "{2}", "{0,1}", "{,2}", "{1,}", "+?", "*+", "{,}"]
)


def _wrap(inner: str, kind: str) -> str:
    return {
        "": "(" + inner + ")", ":": "(?:" + inner + ")", "P": "(?P<g>" + inner + ")",
        ">": "(?>" + inner + ")", "=": "(?=" + inner + ")", "!": "(?!" + inner + ")",
        "<": "(?<!a)" + inner, "i": "(?i:" + inner + ")", "-": "(?-i:" + inner + ")",
        "|": inner + "|b", "ref": "(" + inner + ")?\\1", "if": "(a)?(?(1)" + inner + "|b)",
    }[kind]  # fmt: skip


_REGEXES = st.recursive(
    st.tuples(_ATOMS, _QUANTS).map("".join),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4).map("".join),
        st.tuples(inner, st.sampled_from(["", ":", "P", ">", "=", "!", "<", "i", "-", "|", "ref",
                                          "if"]), _QUANTS).map(lambda t: _wrap(t[0], t[1]) + t[2]),
    ),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(_REGEXES, st.text(alphabet="abx .\t{}]-c", max_size=30))
def test_the_literals_read_from_any_regex_are_necessary(pattern: str, line: str) -> None:
    try:
        regex = re.compile(pattern)
    except re.error:
        return
    if regex.search(line):
        needs = required(pattern)
        assert needs.holds(line), (pattern, line, needs)
        assert needs.anchor is None or needs.anchor in line


@pytest.mark.parametrize(
    ("pattern", "clauses"),
    [
        (r"(?>abc)d", (("abc",), ("d",))),  # an atomic group holds its characters
        (r"a++b", (("a",), ("b",))),  # so does a possessive repeat of at least one
        (r"x(?:yz|yw)q", (("x",), ("yw", "yz"), ("q",))),
        (r"a{}b", (("a{}b",),)),  # "{}" is two characters, not a repeat
        (r"a{,2}b", (("b",),)),
        (r"[.]h\x41", ((".hA",),)),
        (r"(?s:ab)(?#note)c", (("ab",), ("c",))),
        (r"(?i:ab)c", (("c",),)),
        (r"(?=ab)cd(?<!x)", (("cd",),)),
        (r"(a)?\1b\101c", (("b",), ("c",))),  # the digits of an escape go with it
        (r"\N{LATIN SMALL LETTER A}b", (("b",),)),
    ],
)
def test_literals_read_from_the_pattern_text(
    pattern: str, clauses: tuple[tuple[str, ...], ...]
) -> None:
    re.compile(pattern)
    assert required(pattern).clauses == clauses


@pytest.mark.parametrize(
    "pattern",
    ["(?x)a b", "(?x:a b)", "(?ix)ab", "a)", "(a", "[a", "a\\", "\\q", "*a", "a**", "(?<n>a)",
     "(?Q)", "\\x4", "(" * 200 + "a" + ")" * 200, "a" * 10_001],
)  # fmt: skip
def test_what_the_reader_does_not_vouch_for_gives_no_prefilter(pattern: str) -> None:
    needs = required(pattern)
    assert (needs.clauses, needs.anchor) == ((), None)


@pytest.mark.parametrize(
    "pattern",
    [
        "(" * MIB + "a" + ")" * MIB,
        "(?:" * (MIB // 3),
        "ab|" * (MIB // 3),
        "[" + "\\]" * (MIB // 2),
        "a" * 9_999,
        "ab|" * 3_333,
        "(?:ab)+" * 1_428,
        "\\x41" * 2_500,
        "(?#" * 3_333 + ")",
        "[^a]" * 2_500,
    ],
)
def test_reading_a_hostile_pattern_is_bounded(pattern: str) -> None:
    _timed(required, pattern)


# -- line scanning ------------------------------------------------------------------------------
def test_lines_with_gives_right_line_numbers() -> None:
    text = "a\nkCUDA x\nb\r\nc kCUDA kCUDA\r\n\nkCUDA"
    assert list(lines_with(text, "kCUDA")) == [(2, "kCUDA x"), (4, "c kCUDA kCUDA"), (6, "kCUDA")]
    assert [n for n, _ in lines_with(text, None)] == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize(
    "line",
    [
        " " * MIB,
        "\t" * MIB + "#",
        "#if " * (MIB // 4),
        "#if " + "a " * (MIB // 2),
        "#if " + "xVT_" * (MIB // 4),
        "#ifdef " + "VT" * (MIB // 2),
        "#include <" + "/cuda/" * (MIB // 6),
        '#include "' + "/cuda" * (MIB // 5),
        "#include <" + "<" * MIB,
        "is_cuda " * (MIB // 8),
        "is_cuda" + " " * MIB,
        "kCUDA" * (MIB // 5),
        "kCUD" * (MIB // 4),
        "DSR-ALLOW(" * (MIB // 10),
        "DSR-ALLOW(" + "x" * MIB,
        "DSR-ALLOW((" * (MIB // 11),
        "#if " + "defined(" * (MIB // 8),
    ],
)
def test_every_default_regex_and_the_allow_marker_are_linear(line: str) -> None:
    ratchet = _default_detector()
    det = ratchet.detector
    data = (line + "\n").encode()
    _timed(det.scan, data)
    for bucket in det.buckets:
        _timed(bucket.regex.search, line)
    assert det.marker is not None
    _timed(lambda s: list(det.marker.regex.finditer(s)), line)


def _own_ratchets() -> list:
    from tools.config import load_file

    own = load_file(ROOT / ".agents/protocol.yaml", display=".agents/protocol.yaml")
    return engine.load(protocol_config(merge(defaults(), own)), ".agents/protocol.yaml")


@pytest.mark.parametrize(
    "line",
    [
        "import " + "a," * (MIB // 2),
        "import " + "a" * MIB,
        "import" + " " * MIB,
        "from " * (MIB // 5),
        "import_module(" * (MIB // 14),
        "__import__(" + " " * MIB,
        ".cuda" * (MIB // 5),
        "device" + " " * MIB + "=",
        "device=" * (MIB // 7),
        "device (" * (MIB // 8),
        "torch.cuda" * (MIB // 10),
        "ALLOW-DEVICE(" * (MIB // 13),
        "ALLOW-DEVICE(" + "x" * MIB,
    ],
)
def test_this_repositorys_own_ratchet_regexes_are_linear(line: str) -> None:
    for ratchet in _own_ratchets():
        det = ratchet.detector
        _timed(det.scan, (line + "\n").encode())
        for bucket in det.buckets:
            _timed(bucket.regex.search, line)
        if det.marker is not None:
            _timed(lambda s, m=det.marker: list(m.regex.finditer(s)), line)


# -- markdown measures --------------------------------------------------------------------------
def test_markdown_measures() -> None:
    long_par = " ".join(["word"] * 30)  # 149 characters
    text = (
        "# Title\n\n## One\n\n"
        f"{long_par}\n{long_par}\n\n"
        "- item one\n- item two\n\n"
        "Setext two\n----------\n\n"
        "| a | b |\n|---|---|\n"
        f"| {'x' * 30} | short |\n\n"
        "```\n## not a heading\n" + "y" * 500 + "\n```\n"
    )
    counts, sites = md_kind.measure(text, paragraph_max=200, cell_max=25)
    assert counts["h2_sections"] == 2
    assert [line for line, _ in sites["h2_sections"]] == [3, 11]
    assert counts["long_paragraphs"] == 1
    assert sites["long_paragraphs"][0][0] == 5
    assert counts["oversized_cells"] == 1
    assert sites["oversized_cells"][0][0] == 16
    assert counts["chars"] == len(text)
    crlf, _ = md_kind.measure(text.replace("\n", "\r\n"), 200, 25)
    assert crlf == counts  # line endings do not change a count


@pytest.mark.parametrize(
    "line",
    ["|" * MIB, "| " + "\\|" * (MIB // 2), "#" * MIB, "`" * MIB, "- " * (MIB // 2), "x" * MIB],
)
def test_markdown_measures_are_linear(line: str) -> None:
    _timed(md_kind.measure, line + "\n" + line + "\n")


# -- baselines ----------------------------------------------------------------------------------
def test_baseline_round_trip() -> None:
    raw = baseline.render("dl", {"kcuda": 3, "vt_macro": 0})
    assert baseline.parse(raw, "b.json", "dl") == {"kcuda": 3, "vt_macro": 0}
    assert raw.endswith(b"\n")


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (b"not json", None),
        (b"[]", "(top level)"),
        (b'{"ratchet": "dl"}', "buckets"),
        (b'{"ratchet": "other", "buckets": {}}', "ratchet"),
        (b'{"ratchet": "dl", "buckets": {"a": -1}}', "buckets.a"),
        (b'{"ratchet": "dl", "buckets": {"a": 1.5}}', "buckets.a"),
        (b'{"ratchet": "dl", "buckets": {"a": true}}', "buckets.a"),
        (b'{"ratchet": "dl", "buckets": {"a": 1, "a": 2}}', "a"),
        (b'{"ratchet": "dl", "buckets": {}, "extra": 1}', "extra"),
        (b'{"ratchet": "dl", "buckets": []}', "buckets"),
        (b"\xff", None),
    ],
)
def test_a_baseline_not_in_the_format_is_a_usage_error(raw: bytes, key: str | None) -> None:
    with pytest.raises(UsageError) as err:
        baseline.parse(raw, ".agents/baselines/dl.json", "dl")
    where = err.value.where or ""
    assert where.startswith(".agents/baselines/dl.json")
    if key:
        assert where.endswith(key)


# -- globs --------------------------------------------------------------------------------------
def test_globs_use_git_wildmatch_semantics() -> None:
    inc = Globs(["**/*.h", "src/*.cc"])
    assert inc.match("a.h") and inc.match("x/y/z.h")
    assert inc.match("src/a.cc") and not inc.match("src/x/a.cc")
    exc = Globs(["**/cuda/**", "third_party/**"])
    assert exc.match("a/cuda/b.h") and exc.match("cuda/b.h") and exc.match("third_party/x/y.h")
    assert not exc.match("a/cudax/b.h")
    negated = Globs(["**/*.h", "!gen/**"])
    assert negated.match("a/b.h") and not negated.match("gen/b.h")
    assert not Globs([]).match("a.h")


@pytest.mark.parametrize(
    ("include", "exclude"),
    [
        (["**/*.h", "**/*.cc"], ["**/cuda/**", "third_party/**"]),
        (["**/*.h"], []),
        (["src/**"], ["!src/keep/**", "src/**/gen/**"]),
        (["**/*.h", "!x/**"], ["y/**"]),
        ([], []),
    ],
)
def test_a_ratchets_scope_is_include_minus_exclude(include: list[str], exclude: list[str]) -> None:
    cfg = {
        "ratchets": {
            "r": {"kind": "pattern", "include": include, "exclude": exclude, "buckets": {"b": "x"}}
        }
    }
    (ratchet,) = engine.load(protocol_config(merge(defaults(), cfg)), None)
    inc, exc = Globs(include), Globs(exclude)
    for path in [
        "a.h",
        "src/a.h",
        "src/keep/a.h",
        "src/x/gen/a.h",
        "a/cuda/b.h",
        "x/a.h",
        "y/a.h",
        "third_party/q.h",
        "b.cc",
        "cuda/z.cc",
        "src/a.txt",
    ]:
        assert ratchet.selects(path) == (inc.match(path) and not exc.match(path)), path
