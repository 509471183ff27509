"""Where the specs live (SPEC §9.3): the folder named ``specs`` or ``spec`` (at any depth,
``.agents/specs`` included) that holds the most markdown files today.

The default folder wins when it holds specs; where no folder of that name holds markdown,
the default is kept and the evidence says there is nothing for the spec gate to judge yet.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

SPEC_FOLDER_NAMES = frozenset({"specs", "spec"})


class SpecsLearned(NamedTuple):
    """``specs.dir`` when it differs from the default, and the evidence line."""

    dir: str | None
    evidence: str


def learn_specs(paths: Iterable[str], default: str) -> SpecsLearned:
    """The spec folder of a tree listing ``paths`` (today's tracked files)."""
    held: Counter[str] = Counter()
    for path in paths:
        if not path.lower().endswith(".md"):
            continue
        parts = path.split("/")[:-1]
        for depth, part in enumerate(parts):
            if part in SPEC_FOLDER_NAMES:
                held["/".join(parts[: depth + 1])] += 1
    default = default.rstrip("/")
    if held.get(default):
        return SpecsLearned(None, f"{default}/ holds {held[default]} specs → specs.dir: {default}")
    if not held:
        return SpecsLearned(
            None,
            f"no folder named specs or spec holds markdown → specs.dir: {default} (the "
            "default; the spec gate has nothing to judge until specs are written there)",
        )
    # Most files first; a tie goes to the shallower folder, then by name, so the choice is
    # the same on every machine.
    best = min(held, key=lambda d: (-held[d], d.count("/"), d))
    others = ", ".join(f"{d}/ {held[d]}" for d in sorted(held) if d != best)
    also = f"; also {others}" if others else ""
    return SpecsLearned(
        best, f"{best}/ holds {held[best]} specs ({default}/ none{also}) → specs.dir: {best}"
    )
