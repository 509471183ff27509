"""The brace reading of adoption's declarations (tools/adopt/learn_scopes.py) in linear time,
held to the plain reading it replaced: the text before each brace, joined and searched whole
with Python's matcher (quadratic on a statement of many initializers, or a long text of many
``)``), which this file keeps as the reference."""

from __future__ import annotations

import re
import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools.adopt import learn_scopes

_FUNCTION = re.compile(
    r"\)(?:\s*(?:const|volatile|override|final|mutable|noexcept(?:\s*\([^()]*\))?|&&?"
    r"|->[^;{}=]*))*\s*$|\]\s*(?:mutable\s*)?$|\)\s*(?:const\s*|noexcept\s*)*:(?!:)[^;]*$"
)
_NAMESPACE = re.compile(r"\bnamespace\b|\bextern\s*(?:\"[^\"]*\"\s*)?$")
_TYPE = re.compile(r"\b(?:class|struct|union|enum)\b[^()=]*$")


def _kind(prefix: str, in_function: bool) -> str:
    if in_function:
        return "function"
    text = " ".join(prefix.split())
    if _NAMESPACE.search(text):
        return "namespace"
    if _TYPE.search(text):
        return "type"
    if _FUNCTION.search(text):
        return "function"
    return "initializer"


def reference(body: str) -> dict[tuple[int, int], bool]:
    """Every position of ``body``: inside a function body, by the plain reading."""
    out: dict[tuple[int, int], bool] = {}
    stack: list[tuple[bool, str | None]] = []
    prefix: list[str] = []
    directive = False
    for number, line in enumerate(body.split("\n"), start=1):
        if directive or line.lstrip().startswith("#"):
            directive = line.rstrip().endswith("\\")
            continue
        for col, ch in enumerate(line):
            out[(number, col)] = bool(stack) and stack[-1][0]
            if ch == "{":
                inside = bool(stack) and stack[-1][0]
                before = "".join(prefix)
                kind = _kind(before, inside)
                stack.append((kind == "function", before if kind == "initializer" else None))
                prefix = []
            elif ch == "}":
                closed = stack.pop()[1] if stack else None
                prefix = [] if closed is None else [closed, "{}"]
            elif ch == ";":
                prefix = []
            else:
                prefix.append(ch)
        prefix.append(" ")
    return out


def every_position(body: str) -> dict[int, set[int]]:
    return {n: set(range(len(line))) for n, line in enumerate(body.split("\n"), start=1)}


TOKENS = [
    "class ",
    "struct",
    "union",
    "enum ",
    "namespace",
    "extern",
    '"',
    '" "',
    "(",
    ")",
    "[",
    "]",
    "=",
    ":",
    "::",
    "const",
    " const",
    "noexcept",
    "noexcept(",
    "->",
    "mutable",
    "override",
    "&&",
    "&",
    "{",
    "}",
    "{}",
    ";",
    " ",
    "  ",
    "\n",
    "\t",
    "a",
    "b_",
    "Foo",
    "é",
    "#if X",
    "\\",
    "int ",
    "x",
    "0",
    ",",
]

bodies = st.lists(st.sampled_from(TOKENS), max_size=60).map("".join)

REAL = """namespace vt {
extern "C" {
int plain(int a) { return a; }
}
struct Options { int a{1}; int b = 2; };
enum class Device { kCPU, kCUDA };
constexpr Device kOrder[] = {Device::kCUDA, Device::kCPU};
class Engine : public Base {
 public:
  Engine() : a_{1}, b_(2), c_{} { run(); }
  auto size() const -> int { return n_; }
  bool is_cuda() const noexcept { return d_ == kCUDA; }
  void f() && override {}
  int n_{0};
};
auto lambda = [] { return 1; };
auto counter = [n = 0]() mutable { return ++n; };
}  // namespace vt
"""


@settings(max_examples=3000, deadline=None)
@given(bodies)
# Where namespace and function differ for what is inside (the others read alike): a
# constructor's ``) :`` before ``extern``, with a string after it or not.
@example(") : extern {x}")
@example(') : extern " " {x}')
@example(') : extern  "" {x}')
@example(") : fextern {x}")
@example(') : extern"a"b {x}')
def test_the_linear_reading_is_the_plain_one(body: str) -> None:
    assert learn_scopes._in_function(body, every_position(body)) == reference(body)


def test_real_code_is_read_the_same() -> None:
    expected = reference(REAL)
    assert learn_scopes._in_function(REAL, every_position(REAL)) == expected
    # What the reading is for: a trailing return type's, a lambda's, an inline predicate's
    # and a plain function's bodies are functions; a table, a type and a member's
    # initializer are not. (A constructor whose first member initializer is braced is not
    # read as one: ``) : a_`` makes ``a_{1}`` the body. Kept as it was: findings do not move.)
    lines = REAL.split("\n")

    def inside(needle: str) -> bool:
        number = next(n for n, line in enumerate(lines, start=1) if needle in line)
        return expected[(number, lines[number - 1].index(needle))]

    assert inside("return n_") and inside("d_ == kCUDA") and inside("return a;")
    assert inside("return 1") and inside("++n") and not inside("run()")
    assert not inside("Device::kCPU}") and not inside("kCUDA }") and not inside("int n_")
    assert not inside("int a{1}")


def test_hostile_statements_are_read_in_linear_time() -> None:
    # Each was quadratic in the plain reading (seconds at a few hundred KiB).
    for body in (
        "int a = x" + "{}" * 100_000 + ";\n",
        "class " * 50_000 + "(" + "{",
        "):" * 50_000 + "= {",
        ")->" * 50_000 + "= {",
        'extern "' * 50_000 + "x {",
        ") const" * 30_000 + "x {",
    ):
        start = time.process_time()
        learn_scopes._in_function(body, {1: {0}})
        assert time.process_time() - start < 5, body[:20]
