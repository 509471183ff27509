"""Which of the protocol's own files a repository keeps (SPEC §9.3): the NOW digest, the
issue index and the C ratchets are adopted only where the tree has them (a digest or an index
at any path, C or C++ sources the default ratchet reads) or the maintainer asks with
``--with now,index,ratchet``; otherwise their gates are left out of ``preflight.gates`` (or the
ratchets emptied), so adoption writes no file the repository retired or never had.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from tools.globs import Globs

WITH_CHOICES = ("now", "index", "ratchet")


class FilesLearned(NamedTuple):
    """The config values that differ from the defaults, and one evidence line per choice."""

    values: dict[str, dict[str, Any]]
    evidence: list[str]


def _found(paths: list[str], default: str) -> str | None:
    """``default`` if tracked, else the one tracked file with its name (any folder, any case)."""
    if default in paths:
        return default
    name = default.rsplit("/", 1)[-1].lower()
    named = sorted(p for p in paths if p.rsplit("/", 1)[-1].lower() == name)
    return named[0] if len(named) == 1 else None


def _sources(paths: list[str], ratchet: dict[str, Any]) -> int:
    """How many of ``paths`` the ratchet reads (its include less its exclude)."""
    include, exclude = Globs(ratchet.get("include", [])), Globs(ratchet.get("exclude", []))
    return sum(1 for p in paths if include.match(p) and not exclude.match(p))


def learn_files(tracked: Iterable[str], defaults: dict[str, Any], wanted: set[str]) -> FilesLearned:
    """The protocol files ``tracked`` (today's paths) keeps, given the defaults and ``wanted``
    (``--with``)."""
    paths = sorted(tracked)
    gates = list(defaults["preflight"]["gates"])
    out = FilesLearned({}, [])
    for gate, key in (("now", "now"), ("index", "index")):
        default = defaults[key]["path"]
        found = _found(paths, default)
        if found is not None:
            if found != default:
                out.values[key] = {"path": found}
            out.evidence.append(f"{found} is tracked → {key}.path: {found}, gate {gate} kept")
        elif gate in wanted:
            out.evidence.append(f"--with {gate} → {default} written, gate {gate} kept")
        else:
            gates.remove(gate)
            out.evidence.append(
                f"no {default.rsplit('/', 1)[-1]} in the tree → gate {gate} left out of "
                f"preflight.gates (`--with {gate}` writes one)"
            )
    ratchets = defaults["ratchets"]
    sources = {name: _sources(paths, r) for name, r in ratchets.items()}
    for name, n in sources.items():
        if n or "ratchet" in wanted:
            out.evidence.append(f"{n} file(s) match ratchet {name}'s include → ratchet kept")
    if not any(sources.values()) and "ratchet" not in wanted:
        out.values["ratchets"] = {}
        out.evidence.append(
            f"no file matches the include of ratchet(s) {', '.join(sources)} → ratchets: {{}} "
            "(`--with ratchet` keeps them)"
        )
    if gates != list(defaults["preflight"]["gates"]):
        out.values["preflight"] = {"gates": gates}
    return out
