"""The gate registry: gate name -> module.

A gate module defines ``NAME``, ``RULES`` (the rule ids it can fire, next to the code that
fires them) and ``run(ctx) -> GateResult``. Modules are imported lazily so that a command
pays only for the gates it runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from tools.context import Context
from tools.report import GateResult, Report

# Every gate of the product, in preflight order. A gate that has not landed yet maps to None:
# preflight reports it as a skip with that reason, never as a pass.
GATES: dict[str, str | None] = {
    "conflicts": "tools.gates.conflicts",
    "index": "tools.gates.index",
    "trailers": "tools.gates.trailers",
    "style": "tools.gates.style",
    "docs": "tools.gates.docs",
    "ratchet": "tools.gates.ratchet",
    "now": "tools.gates.now",
    "spec": "tools.gates.spec",
    "links": "tools.gates.links",
    "ledger": "tools.gates.ledger",
    "merges": "tools.gates.merges",
}


# Gates that are commands of their own, never run by preflight (torch: imported on use).
COMMAND_GATES: dict[str, str] = {
    "golden": "tools.numerics.goldens",
    "grid-tie": "tools.numerics.gridtie",
    "topp-count": "tools.numerics.topp",
}


# Pseudo-gates: reported by preflight and the hooks, never selected with --gate.
PSEUDO_GATES: dict[str, str] = {
    "preflight": "tools.gates.inplace_pending",
    "protocol": "tools.gates.protocol",
    "baseline": "tools.gates.baseline",
}


def all_modules() -> dict[str, str]:
    """Every built gate's module: preflight's, the pseudo-gates' and the command gates'."""
    built = {name: target for name, target in GATES.items() if target}
    return {**built, **PSEUDO_GATES, **COMMAND_GATES}


def module(name: str) -> ModuleType | None:
    target = GATES.get(name)
    return importlib.import_module(target) if target else None


def range_pseudo(ctx: Context) -> list[GateResult]:
    """The pseudo-gates every range run reports after its gates (``protocol``), when they
    have something to say."""
    if not ctx.opts.range_run:
        return []
    from tools.gates import protocol

    result = protocol.run(ctx)
    return [result] if result is not None else []


def run(name: str, ctx: Context) -> GateResult:
    mod = module(name)
    if mod is None:
        return GateResult(name).skip(f"the {name} gate is not built into tools yet")
    return mod.run(ctx)


def judged(ctx: Context, results: list[GateResult]) -> Report:
    """The report of a run: the gates' results, the range pseudo-gates, the configured
    severities (``rules:``), then the findings baseline (debt, new, ``baseline-stale``)."""
    from tools import severities
    from tools.gates import baseline

    report = Report(results + range_pseudo(ctx))
    severities.apply(report, ctx.config)
    baseline.apply(report, ctx)
    report.meta = ctx.describe()
    return report
