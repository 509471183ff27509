"""The device layer a ratchet must not count (SPEC §9.3): device-specific folders and files,
and includes that a device guard already makes legal in a build without that device.

- A path component, a file extension, or a token of a file's name that names a device
  (:data:`DEVICE_WORDS`: ``src/vt/cuda/``, ``kernels.cu``, ``platforms/cuda.cpp``) makes the
  file part of the device layer: it is excluded.
- A folder with at least two device-named subfolders (``src/vt/{cpu,cuda,metal}``) is a library
  split per device, dispatch included: the whole folder is excluded.
- The macros that guard the code, as the scanned files use them, become the ``outside_guards``
  of the ratchet's include buckets (a bucket whose examples are all ``#include`` lines), so an
  include a build without the device never compiles is not counted: each macro named in a
  condition enclosing such an include (``#ifdef VT_MARLIN`` around ``#include
  "vt/cuda/marlin.h"``), and each macro in any condition that names a device
  (``VLLM_CPP_CUDA``, ``__CUDACC__``: a ``_``-separated token starting with a device word).
- Folders of programs with a build of their own, and sites that declare a device rather than
  branch on it, as :mod:`tools.adopt.learn_scopes` reads them; an allow marker the tree
  already uses, as :mod:`tools.adopt.learn_allow` reads it.
Nothing here names a repository's paths or macros; every choice is printed with its count.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from tools import config as config_mod
from tools.adopt.learn_allow import AllowLearned
from tools.adopt.learn_scopes import declarations, programs, shown
from tools.bounded import config_pattern
from tools.config_model import protocol_config
from tools.globs import Globs
from tools.ratchets import engine
from tools.ratchets.pattern import Detector

DEVICE_WORDS = frozenset(
    {"cuda", "cu", "cuh", "hip", "rocm", "metal", "vulkan", "spirv", "spv", "xpu", "sycl"}
)
# Macro tokens: the short extensions (cu, cuh, spv) would match ordinary words (CURL, CUT).
MACRO_WORDS = ("CUDA", "HIP", "ROCM", "METAL", "VULKAN", "SPIRV", "XPU", "SYCL")
LIBRARY_LEGS = 2  # device-named subfolders that make a folder a per-device library
_CONDITION = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b(.*)$", re.M)
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)")
_INCLUDE = re.compile(r"^\s*#\s*include")


class RatchetsLearned(NamedTuple):
    """The ratchets to write (None: the defaults stand), and one evidence line per choice."""

    ratchets: dict[str, Any] | None
    evidence: list[str]


def _device_file(path: str) -> bool:
    *folders, name = path.lower().split("/")
    if any(part in DEVICE_WORDS for part in folders):
        return True
    stem, dot, ext = name.rpartition(".")
    if dot and ext in DEVICE_WORDS:
        return True
    return any(token in DEVICE_WORDS for token in re.split(r"[_.\-]+", stem if dot else name))


def _libraries(paths: list[str]) -> list[str]:
    """Folders with at least :data:`LIBRARY_LEGS` device-named subfolders."""
    legs: dict[str, set[str]] = {}
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts)):
            if parts[depth].lower() in DEVICE_WORDS:
                legs.setdefault("/".join(parts[:depth]), set()).add(parts[depth].lower())
    found = sorted(folder for folder, names in legs.items() if len(names) >= LIBRARY_LEGS)
    # A library inside another is covered by the outer one.
    return [f for f in found if not any(f.startswith(o + "/") for o in found if o != f)]


def _device_macros(texts: Iterable[bytes]) -> list[str]:
    macros: Counter[str] = Counter()
    for text in texts:
        for condition in _CONDITION.findall(text):
            for ident in _IDENT.findall(condition):
                name = ident.decode("ascii")
                tokens = [t for t in name.upper().split("_") if t]
                if any(t.startswith(MACRO_WORDS) for t in tokens):
                    macros[name] += 1
    return sorted(macros)


def _enclosing(text: str, sites: Callable[[str], bool]) -> set[str]:
    """The macros named in the conditions that enclose the lines ``sites`` picks."""
    stack: list[list[str]] = []
    found: set[str] = set()
    for line in text.split("\n"):
        directive = _DIRECTIVE.match(line)
        if directive is None:
            if stack and sites(line):
                found.update(name for frame in stack for name in frame)
            continue
        kind, rest = directive.groups()
        names = [n for n in re.findall(r"[A-Za-z_]\w*", rest) if n != "defined"]
        if kind.startswith("if"):
            stack.append(names)
        elif kind == "endif":
            if stack:
                stack.pop()
        elif stack and kind != "else":
            stack[-1] = names
    return found


def _include_buckets(ratchet: dict[str, Any]) -> list[str]:
    return [
        name
        for name, bucket in ratchet.get("buckets", {}).items()
        if bucket.get("examples") and all(_INCLUDE.match(e) for e in bucket["examples"])
    ]


def _detector(name: str, ratchet: dict[str, Any]) -> Detector | None:
    """The detector ``ratchet`` (a definition) counts with, compiled as the gate compiles it."""
    data = config_mod.defaults()
    data["ratchets"] = {name: ratchet}
    return engine.load(protocol_config(data), None, [name])[0].detector


def learn_ratchet(
    name: str,
    ratchet: dict[str, Any],
    paths: list[str],
    read: Callable[[str], bytes | None],
    allow: AllowLearned | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """``ratchet`` (a default's definition) scoped to what ``paths`` show, and the evidence."""
    include, exclude = Globs(ratchet.get("include", [])), Globs(ratchet.get("exclude", []))
    scanned = [p for p in paths if include.match(p) and not exclude.match(p)]
    out = copy.deepcopy(ratchet)
    evidence: list[str] = []
    device = [p for p in scanned if _device_file(p)]
    libraries = _libraries(paths)
    in_library = [p for p in scanned if any(p.startswith(f + "/") for f in libraries)]
    out["exclude"] = list(ratchet.get("exclude", [])) + [f"{f}/**" for f in libraries]
    out["exclude"] += sorted(set(device) - set(in_library))
    for folder in libraries:
        n = sum(1 for p in in_library if p.startswith(folder + "/"))
        evidence.append(
            f"{folder}/ holds device-named folders: a per-device library, {n} file(s) "
            f"→ {name} excludes {folder}/**"
        )
    if device:
        evidence.append(
            f"{len(device)} file(s) name a device in a folder, extension or file name (e.g. "
            f"{device[0]}) → {name} excludes them"
        )
    left = [p for p in scanned if p not in set(device) and p not in set(in_library)]
    for folder, n in programs(paths, read).items():
        inside = [p for p in left if p.startswith(folder + "/")]
        if not inside:
            continue
        out["exclude"].append(f"{folder}/**")
        left = [p for p in left if p not in set(inside)]
        evidence.append(
            f"{folder}/ has a build of its own and {n} program(s) (each folder defines main), "
            f"{len(inside)} scanned file(s): programs built on the shared code, as tests are "
            f"→ {name} excludes {folder}/**"
        )
    read_left = [(p, t) for p, t in zip(left, map(read, left), strict=True) if t is not None]
    texts = [t for _, t in read_left]
    macros = _device_macros(texts)
    buckets = _include_buckets(ratchet)
    patterns = [
        config_pattern(ratchet["buckets"][b]["regex"], f"ratchets.{name}.buckets.{b}.regex")
        for b in buckets
    ]
    for text in texts:
        decoded = text.decode("utf-8", "replace")
        macros = sorted(
            set(macros) | _enclosing(decoded, lambda line: any(p.search(line) for p in patterns))
        )
    if macros and buckets:
        guards = [re.escape(m) for m in macros]
        for bucket in buckets:
            out["buckets"][bucket]["outside_guards"] = guards
        evidence.append(
            f"{len(macros)} macro(s) name a device or guard a device include in the "
            f"{len(left)} scanned file(s) "
            f"({', '.join(macros[:6])}{', …' if len(macros) > 6 else ''}) → outside_guards "
            f"of {', '.join(buckets)}"
        )
    evidence += _exempt_declarations(name, out, read_left)
    if allow is not None and "allow_marker" in ratchet:
        out["allow_marker"] = allow.marker
        if allow.sources:
            out["allow_tags_from"] = allow.sources
    return out, evidence


def _exempt_declarations(
    name: str, out: dict[str, Any], read_left: list[tuple[str, bytes]]
) -> list[str]:
    """Write the sites that declare a device (outside every function body) into ``out``'s
    ``exempt_files``; the evidence line, if any."""
    detector = _detector(name, out)
    if detector is None:
        return []
    declared = declarations(detector, read_left, out.get("strip"))
    if not declared.sites:
        return []
    exempt = dict(out.get("exempt_files") or {})
    for path, per in declared.exempt.items():
        exempt[path] = {**exempt.get(path, {}), **per}
    out["exempt_files"] = exempt
    n = sum(sum(per.values()) for per in declared.exempt.values())
    return [
        f"{n} site(s) on {len(declared.sites)} line(s) outside every function body "
        f"declare a device rather than branch on it (an enumerator, a table, a "
        f"registration, a predicate's own declaration: {shown(declared.sites)}) → "
        f"{name}.exempt_files for {len(declared.exempt)} file(s)"
    ]


def learn_ratchets(
    defaults: dict[str, Any],
    paths: Iterable[str],
    read: Callable[[str], bytes | None],
    allow: AllowLearned | None = None,
) -> RatchetsLearned:
    """Each default ratchet scoped to the device layer the tree shows, with the allow marker
    ``allow`` learned; None when no choice differs from the defaults."""
    listed = sorted(paths)
    learned: dict[str, Any] = {}
    evidence: list[str] = [] if allow is None else list(allow.evidence)
    for name, ratchet in defaults.items():
        scoped, lines = learn_ratchet(name, ratchet, listed, read, allow)
        learned[name] = scoped
        evidence += lines
    if learned == defaults:
        shipped = "no device layer beyond the defaults' → ratchets as shipped"
        return RatchetsLearned(None, [*evidence, shipped])
    return RatchetsLearned(learned, evidence)
