"""Doc checkpoints the history already keeps: a documentation file that changes together with
an area of code in most of the commits touching that area becomes a ``docs.rules`` entry
(SPEC §9.3).

An area is a top-level folder (``src/**``), a file at the root (``CMakeLists.txt``), or in a
hidden folder the folder or file below it (:func:`area_of`); a documentation file is
markdown, reStructuredText or AsciiDoc, or anything under ``docs/`` or ``doc/``, outside
hidden folders. A documentation file that changed together with an area in at least
``SHARE`` of the window's commits touching the area, and in at least ``MIN_COMMITS`` of them,
gets one rule triggered by every such area; an area touched by fewer commits is named as
undecided rather than guessed. Only files that exist today are required. The thresholds are
ours and documented in docs/adoption.md.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from tools.git import Commit

SHARE = 0.6
MIN_COMMITS = 10
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".adoc")
DOC_FOLDERS = frozenset({"docs", "doc"})
FEW_SHOWN = 8  # undecided areas named in the evidence line, the rest counted


class DocsLearned(NamedTuple):
    """The proposed ``docs.rules`` entries and one evidence line per decision."""

    rules: list[dict[str, object]]
    evidence: list[str]


def is_doc(path: str) -> bool:
    """Whether ``path`` is documentation: by suffix or under ``docs/``/``doc/``, never in a
    hidden folder (``.agents/state.md`` is the agents' bookkeeping, ``.github/`` the forge's
    configuration: neither is what a reader of the repository opens)."""
    top = path.split("/", 1)[0]
    if top.startswith(".") and "/" in path:
        return False
    return path.lower().endswith(DOC_SUFFIXES) or top in DOC_FOLDERS


def area_of(path: str) -> str | None:
    """The area ``path`` belongs to, as a glob: its top-level folder (``src/**``); in a hidden
    folder, the folder below it (``.github/workflows/**``) or the file itself
    (``.agents/state.md``: such folders hold records that move with the code, one by one);
    a file at the root is its own area (``CMakeLists.txt``). None for documentation and for
    hidden files at the root (``.gitignore``: configuration)."""
    if is_doc(path):
        return None
    top, sep, rest = path.partition("/")
    if not sep:
        return None if top.startswith(".") else top
    if not top.startswith("."):
        return f"{top}/**"
    sub, sep, _ = rest.partition("/")
    return f"{top}/{sub}/**" if sep else path


def _rule_name(doc: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", doc.lower()).strip("-") or "doc"


def _kept(together: int, touching: int) -> bool:
    return together >= SHARE * touching and together >= MIN_COMMITS


def _counts(commits: list[Commit]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    touching: Counter[str] = Counter()
    together: Counter[tuple[str, str]] = Counter()
    for commit in commits:
        paths = {c.path for c in commit.changes}
        areas = {a for p in paths if (a := area_of(p)) is not None}
        docs = {p for p in paths if is_doc(p)}
        touching.update(areas)
        together.update((a, d) for a in areas for d in docs)
    return touching, together


def learn_docs(commits: list[Commit], existing: set[str]) -> DocsLearned:
    """The doc checkpoints ``commits`` (newest first, merges excepted, with their changed
    paths) keep, for documentation files in ``existing`` (today's tracked paths): one rule
    per documentation file, triggered by every area it follows (a commit that touches two of
    them and misses the file is one finding, not two)."""
    touching, together = _counts(commits)
    out = DocsLearned([], [])
    follows: dict[str, list[str]] = {}
    few = sorted(a for a, n in touching.items() if n < MIN_COMMITS)
    for area in sorted(a for a, n in touching.items() if n >= MIN_COMMITS):
        n = touching[area]
        kept = sorted(
            (d for (a, d), k in together.items() if a == area and _kept(k, n) and d in existing),
            key=lambda d: (-together[(area, d)], d),
        )
        if not kept:
            best = max(((k, d) for (a, d), k in together.items() if a == area), default=None)
            most = f"most: {best[1]}, {best[0]}" if best else "none changes with it at all"
            out.evidence.append(
                f"{area} ({n} commits): no documentation file changes with it in "
                f"{SHARE:.0%} of them ({most}) → no doc checkpoint"
            )
            continue
        for doc in kept:
            follows.setdefault(doc, []).append(area)
            out.evidence.append(
                f"{doc} changed with {area} in {together[(area, doc)]} of {n} commits "
                f"→ docs rule {_rule_name(doc)}"
            )
    for doc in sorted(follows):
        rule: dict[str, object] = {
            "name": _rule_name(doc),
            "when_changed": follows[doc],
            "require_changed": [doc],
        }
        out.rules.append(rule)
    if few:
        shown = ", ".join(few[:FEW_SHOWN]) + (
            f" and {len(few) - FEW_SHOWN} more" if len(few) > FEW_SHOWN else ""
        )
        out.evidence.append(
            f"{shown}: fewer than {MIN_COMMITS} commits each → no doc checkpoint proposed "
            "(too few to decide; add one by hand if it is kept)"
        )
    return out
