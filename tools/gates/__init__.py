"""The gates: one run by name, and a run's results judged into its report.

The names and modules are data in :mod:`tools.gate_registry` (re-exported here). A gate
module defines ``NAME``, ``RULES`` (the rule ids it can fire, next to the code that fires
them) and ``run(ctx) -> GateResult``. Modules are imported lazily so that a command pays only
for the gates it runs.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from tools.gate_registry import COMMAND_GATES, GATES, PSEUDO_GATES, all_modules
from tools.report import GateResult, Report

if TYPE_CHECKING:
    from tools.context import Context

__all__ = ["COMMAND_GATES", "GATES", "PSEUDO_GATES", "all_modules", "judged", "module", "run"]


def module(name: str) -> ModuleType | None:
    """The module of gate ``name`` (imported now; None: a gate not built yet)."""
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
    result: GateResult = mod.run(ctx)
    return result


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
