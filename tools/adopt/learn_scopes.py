"""What a device ratchet's scan holds that is no device branching (SPEC §9.3), read from the
tree: programs built on the shared code, and sites that declare rather than branch.

- **Programs.** A folder below the root with a build file of its own (``CMakeLists.txt``,
  ``meson.build``, a ``Makefile``, a Bazel ``BUILD``) in which every folder holding C/C++
  translation units holds one defining ``main``, and at least :data:`PROGRAMS_MIN` of them, is
  a set of programs built on the shared code (examples, tools), as ``tests/`` is: excluded.
- **Declarations.** A site of a code bucket (not a preprocessor line) outside every function
  body declares the device rather than branching on it: an enumerator (``enum class Device
  { kCPU, kCUDA }``), a table (``constexpr Device kOrder[] = {kCUDA, kCPU}``), a registration
  (``const Registrar kFooCuda{Device::kCUDA, …}``), a predicate's own declaration (``bool
  is_cuda() const``). So is every site on a line that holds such a declaration (the body of
  ``bool is_cuda() const { return type() == kCUDA; }``, defined where it is declared). Those
  of today become the file's ``exempt_files`` allowance, so a new declaration still counts.

Function bodies are told from other braces by what precedes the brace on the stripped text:
after a parameter list (``)``, with qualifiers or a trailing return type) a brace opens a
function or lambda body; after ``namespace``/``extern`` a namespace; after ``class``,
``struct``, ``union`` or ``enum`` a type; anything else is an initializer. A brace inside a
function body is the function's. Preprocessor lines are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from tools.ratchets.cstrip import strip_c
from tools.ratchets.pattern import Detector

PROGRAMS_MIN = 2  # programs a folder must build to be a folder of programs
BUILD_FILES = frozenset({"CMakeLists.txt", "meson.build", "Makefile", "BUILD", "BUILD.bazel"})
UNITS = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm")
_MAIN = re.compile(rb"^[ \t]*(?:int|auto)[ \t]+main[ \t]*\(", re.MULTILINE)
# What precedes a brace, read on the text since the last ``;``, ``{`` or ``}`` (its whitespace
# runs made one space), each test linear in that text however it is built (it comes from
# the tree: hostile input). A function: a parameter list, then qualifiers or a trailing return
# type (RE2: Python's matcher backtracks over each ``)`` of a long text); a lambda's capture
# list alone (``[] {``); or a constructor's member initializers (``) : a_(1), b_{}``: one
# colon, any text after it, as the text holds no ``;``).
_PARAMETERS = (
    r"\)(?:\s*(?:const|volatile|override|final|mutable|noexcept(?:\s*\([^()]*\))?|&&?"
    r"|->[^;{}=]*))*\s*$"
)
_CAPTURE = re.compile(r"\]\s*(?:mutable\s*)?$")
_INITIALIZERS = re.compile(r"\)\s*(?:const\s*|noexcept\s*)*:(?!:)")
# A namespace anywhere, or ``extern`` (a string's contents are blanked, its quotes kept:
# ``extern "C" {`` reads ``extern " " {``) at the end; a type's keyword after the last of
# ``(``, ``)`` and ``=``.
_NAMESPACE = re.compile(r"\bnamespace\b")
_EXTERN = re.compile(r"(?<!\w)extern$")
_TYPE = re.compile(r"\b(?:class|struct|union|enum)\b")
_SHOWN = 4  # sites named in an evidence line


def programs(paths: list[str], read: Callable[[str], bytes | None]) -> dict[str, int]:
    """Folders of programs (see the module's doc): folder -> how many programs it builds.
    A folder inside another one found is covered by it."""
    units: dict[str, list[str]] = {}
    for path in paths:
        if path.lower().endswith(UNITS):
            units.setdefault(path.rpartition("/")[0], []).append(path)
    builds = {
        p.rpartition("/")[0] for p in paths if "/" in p and p.rpartition("/")[2] in BUILD_FILES
    }
    below: dict[str, list[str]] = {}  # build folder -> the folders of units at or below it
    for folder in units:
        parts = folder.split("/")
        for depth in range(1, len(parts) + 1):
            above = "/".join(parts[:depth])
            if above in builds:
                below.setdefault(above, []).append(folder)
    found: dict[str, int] = {}
    for folder in sorted(below):
        if any(folder.startswith(f + "/") for f in found):
            continue
        inside = below[folder]
        if len(inside) < PROGRAMS_MIN:
            continue
        if all(any(_MAIN.search(read(p) or b"") for p in units[f]) for f in inside):
            found[folder] = len(inside)
    return found


def _kind(prefix: str, in_function: bool) -> str:
    """What a ``{`` opens, from the text since the last ``;``, ``{`` or ``}``."""
    if in_function:
        return "function"
    text = " ".join(prefix.split())
    if _NAMESPACE.search(text) or _extern(text):
        return "namespace"
    # A type's keyword counts only after the last ``(``, ``)`` or ``=``.
    cut = max(text.rfind("("), text.rfind(")"), text.rfind("="))
    if _TYPE.search(text, cut + 1):
        return "type"
    if _function_head(text) or _INITIALIZERS.search(text):
        return "function"
    return "initializer"


def _extern(text: str) -> bool:
    """``extern``, then a string, at the end of ``text`` (whose spaces are single)."""
    if text.endswith('"'):
        opened = text.rfind('"', 0, len(text) - 1)
        if opened < 0:
            return False
        text = text[:opened].rstrip()
    return bool(_EXTERN.search(text[-7:]))


def _function_head(text: str) -> bool:
    """A parameter list with its qualifiers, or a capture list, ends ``text``."""
    close = text.rfind("]")
    if close >= 0 and _CAPTURE.match(text, close):
        return True
    from tools.bounded import fixed_pattern

    return fixed_pattern(_PARAMETERS).search(text) is not None


def _in_function(body: str, wanted: dict[int, set[int]]) -> dict[tuple[int, int], bool]:
    """For each (1-based line, 0-based column) of ``wanted``: whether the stripped ``body``
    is inside a function body there. Each brace is read from the text since the last brace
    or ``;``: an initializer's closed braces, kept as part of that text once, never changed
    what a later brace opened (an initializer's text holds nothing that any test reads:
    tests/test_learn_scopes_linear.py holds the two readings to the same answers). So a
    constructor whose first member initializer is braced (``Foo() : a_{1} {``) is read with
    ``a_{1}`` as its body, and its own body as an initializer's."""
    out: dict[tuple[int, int], bool] = {}
    stack: list[bool] = []  # per open brace: whether it is inside a function body
    prefix: list[str] = []
    directive = False  # a preprocessor line continues on the next
    for number, line in enumerate(body.split("\n"), start=1):
        if directive or line.lstrip().startswith("#"):
            directive = line.rstrip().endswith("\\")
            continue
        columns = wanted.get(number, set())
        for col, ch in enumerate(line):
            if col in columns:
                out[(number, col)] = bool(stack) and stack[-1]
            if ch == "{":
                inside = bool(stack) and stack[-1]
                stack.append(_kind("".join(prefix), inside) == "function")
                prefix = []
            elif ch in "};":
                if ch == "}" and stack:
                    stack.pop()
                prefix = []
            else:
                prefix.append(ch)
        prefix.append(" ")
    return out


class Declarations(NamedTuple):
    """Sites that declare a device (see the module's doc): per file, per bucket, how many;
    and the sites, as ``path:line``, for the evidence."""

    exempt: dict[str, dict[str, int]]
    sites: list[str]


def declarations(
    detector: Detector, files: Iterable[tuple[str, bytes]], strip: str | None
) -> Declarations:
    """The declaration sites of ``files`` (path, bytes) under ``detector``'s code buckets."""
    out = Declarations({}, [])
    if strip != "c":
        return out  # not C: no braces to read
    for path, data in files:
        scan = detector.scan(data)
        if scan is None or not scan.sites:
            continue
        text = data.decode("utf-8", "surrogateescape")
        lines = strip_c(text).split("\n")
        starts: dict[tuple[str, int], int] = {}  # (bucket, line) -> column of its match
        for bucket in detector.buckets:
            for number, found in scan.sites.get(bucket.name, []):
                if found.lstrip().startswith("#"):
                    continue  # a preprocessor site: a guard, an include
                line = lines[number - 1] if number <= len(lines) else ""
                hit = bucket.regex.search(line)
                if hit is not None:
                    starts[(bucket.name, number)] = max(line.find(hit.group(0) or ""), 0)
        if not starts:
            continue
        wanted: dict[int, set[int]] = {}
        for (_, number), col in starts.items():
            wanted.setdefault(number, set()).add(col)
        inside = _in_function("\n".join(lines), wanted)
        declaring = {n for (_, n), col in starts.items() if not inside.get((n, col), True)}
        for name, number in sorted(starts, key=lambda k: (k[1], k[0])):
            if number in declaring:
                per = out.exempt.setdefault(path, {})
                per[name] = per.get(name, 0) + 1
                site = f"{path}:{number}"
                if site not in out.sites:
                    out.sites.append(site)
    return out


def shown(sites: list[str]) -> str:
    """The first sites of an evidence line, and how many more."""
    more = len(sites) - _SHOWN
    return ", ".join(sites[:_SHOWN]) + (f" and {more} more" if more > 0 else "")
