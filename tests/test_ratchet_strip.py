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


def test_include_operands_stay_visible() -> None:
    src = '#include "vt/cuda/launch.h" // note\n  #  include <ops//cuda/x.h>\n#import "a.h"\n'
    out = strip_c(src)
    assert '"vt/cuda/launch.h"' in out and "note" not in out
    assert "<ops//cuda/x.h>" in out
    assert '"a.h"' in out


def test_digit_separators_and_apostrophes_in_words_open_no_literal() -> None:
    src = "long n = 1'000'000; kCUDA\n#error don't kCUDA\nauto h = 0xFF'FF; kCUDA\n"
    assert strip_c(src).count("kCUDA") == 3


def test_an_unterminated_literal_ends_at_its_line() -> None:
    out = strip_c('"open kCUDA\nkCUDA\n')
    assert out.splitlines()[1] == "kCUDA"


def test_an_unclosed_block_comment_runs_to_the_end() -> None:
    assert "kCUDA" not in strip_c("a /* kCUDA\nkCUDA\n")


def test_crlf_line_endings_keep_line_numbers() -> None:
    src = "a // kCUDA\r\nkCUDA;\r\n"
    out = strip_c(src)
    assert out.split("\n")[1] == "kCUDA;\r"


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
    assert [i for i, c in enumerate(out) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    # Only blanking: every character is kept or turned into a space.
    assert all(o == t or o == " " for o, t in zip(out, text, strict=True))


_INCLUDE_LINE = re.compile(r"[ \t]*#[ \t]*(?:include_next|include|import)[ \t]*([<\"])")


def _plain_strip(text: str) -> str:
    """The plain scan the fast one must equal: one token at a time, the include operand of
    the current line looked up afresh for every token."""
    from tools.ratchets import cstrip

    out, copied, i, n = [], 0, 0, len(text)
    while True:
        m = re.compile(r"/[/*]|[\"']").search(text, i)
        if m is None:
            break
        p = m.start()
        line_start = text.rfind("\n", 0, p) + 1
        inc = _INCLUDE_LINE.match(text, line_start)
        if inc is not None:
            q = inc.start(1)
            eol = text.find("\n", q)
            eol = n if eol < 0 else eol
            close = text.find(">" if inc.group(1) == "<" else '"', q + 1, eol)
            end = close + 1 if close >= 0 else eol
            if q <= p < end:
                i = end
                continue
        tok = m.group()
        if tok == "//":
            end = cstrip._line_comment_end(text, p)
            out += [text[copied:p], cstrip.blank(text[p:end])]
        elif tok == "/*":
            close = text.find("*/", p + 2)
            end = n if close < 0 else close + 2
            out += [text[copied:p], cstrip.blank(text[p:end])]
        else:
            if tok == "'" and not cstrip._char_prefix(text, p):
                i = p + 1
                continue
            raw = cstrip._raw_string_end(text, p) if tok == '"' else None
            if raw is not None:
                end, inner = raw[0], raw[0] - 1 if raw[1] else raw[0]
            else:
                inner = cstrip._BODY[tok].match(text, p + 1).end()
                end = inner + 1 if inner < n and text[inner] == tok else inner
            out += [text[copied : p + 1], cstrip.blank(text[p + 1 : inner]), text[inner:end]]
        copied = i = end
    out.append(text[copied:])
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                " ",
                "\t",
                "\n",
                "\r",
                "/",
                "*",
                '"',
                "'",
                "\\",
                "R",
                "u8",
                "L",
                "(",
                ")",
                "#",
                "include",
                "<",
                ">",
                "1",
                "x(",
                ")x",
                "kCUDA",
            ]
        ),
        max_size=60,
    ).map("".join)
)
def test_the_fast_stripper_equals_the_plain_one(text: str) -> None:
    assert strip_c(text) == _plain_strip(text)


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
        '#include "' + "/" * MIB,
        "#include <" + "//" * (MIB // 2),
        '"\\' * (MIB // 2),
        " " * MIB + "#include",
        "u8'" * (MIB // 3),
    ],
)
def test_stripping_is_linear_on_hostile_lines(line: str) -> None:
    out = _timed(strip_c, line + "\n" + line)
    assert len(out) == 2 * len(line) + 1


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
