"""The numerics gates: goldens (``golden``), the greedy-divergence grid-tie gate
(``grid-tie``) and the top-p kept-count gate (``topp-count``).

These modules are the only part of ``tools`` that imports torch and numpy, and only the
numerics commands import them (inside the command bodies), so ``tools --help`` and every
protocol gate stay torch-free. Their rules are declared in :mod:`tools.numerics.rules`, which
imports neither, so the rule list (docs/rules.md) is built without the numerics extra.
"""

from __future__ import annotations

import importlib.util

# What the `numerics` extra installs and the numerics commands import.
EXTRA = ("torch", "numpy")


def missing() -> list[str]:
    """The modules of the `numerics` extra that are not installed (looked up, not imported)."""
    return [name for name in EXTRA if importlib.util.find_spec(name) is None]
