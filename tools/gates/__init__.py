"""The gates: one run by name, and a run's results judged into its report.

The names and modules are data in :mod:`tools.gate_registry` (re-exported here). A gate
module defines ``NAME``, ``RULES`` (the rule ids it can fire, next to the code that fires
them), ``run(ctx) -> GateResult`` and, where it reads git, ``prefetch(ctx)`` (see
:func:`prefetch`). Modules are imported lazily so that a command pays only for the gates it
runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from tools.errors import UsageError
from tools.gate_registry import COMMAND_GATES, GATES, PSEUDO_GATES, all_modules
from tools.git import GitError
from tools.report import GateResult, Report

if TYPE_CHECKING:
    from tools.context import Context
    from tools.findings_baseline import Entry

__all__ = [
    "COMMAND_GATES",
    "GATES",
    "PSEUDO_GATES",
    "all_modules",
    "baseline_entries",
    "judged",
    "module",
    "prefetch",
    "run",
    "run_all",
]


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


# The ratchet's search reads every file of the tree (``git grep`` over 20,000 blobs took
# longer than the gates before the ratchet take to judge): started first, its wait is gone.
_LONG_READS = frozenset({"ratchet"})


def prefetch(names: Sequence[str], ctx: Context) -> None:
    """Let the named gates start the git reads they will need, on threads, before any of
    them runs: git then works while the gates ahead judge. A gate module may define
    ``prefetch(ctx)``; a range run always reads the range (its ``protocol`` pseudo-gate
    does). What a prefetch cannot start (a config or ref error) is left to the gate's run,
    which meets it again where it did before and reports it the same way. The gates whose
    reads keep git longest start first (:data:`_LONG_READS`), ahead of importing the rest."""
    if ctx.opts.range_memo:
        # A kept range (tools.range_memo) is believed only with findings of the rules its gate
        # declares, which a gate does as its module loads: loaded before the range's thread
        # looks for one, or it could find the rules undeclared and read the range whole.
        for name in names:
            module(name)
    if ctx.opts.range_run:
        ctx.prefetch_range()
    for name in sorted(names, key=lambda n: n not in _LONG_READS):  # stable: else in order
        start = getattr(module(name), "prefetch", None)
        if start is not None:
            try:
                start(ctx)
            except (UsageError, GitError):
                pass  # met again, and reported, by the gate's run


def run_all(names: Sequence[str], ctx: Context) -> list[GateResult]:
    """The results of the named gates, in order, their reads started first (:func:`prefetch`)."""
    prefetch(names, ctx)
    return [run(name, ctx) for name in names]


def run(name: str, ctx: Context) -> GateResult:
    mod = module(name)
    if mod is None:
        return GateResult(name).skip(f"the {name} gate is not built into tools yet")
    result: GateResult = mod.run(ctx)
    return result


def baseline_entries(names: Sequence[str], ctx: Context) -> list[Entry]:
    """What the named gates report now that the findings baseline may record, as entries
    (after the configured severities: a rule turned off records nothing). Here rather than
    in the baseline gate, which runs below this package."""
    from tools import severities
    from tools.gates import baseline

    report = Report(run_all(names, ctx))
    severities.apply(report, ctx.config)
    return baseline.entries(report, ctx)


def judged(ctx: Context, results: list[GateResult]) -> Report:
    """The report of a run: the gates' results, the range pseudo-gates, the configured
    severities (``rules:``), then the findings baseline (debt, new, ``baseline-stale``)."""
    from tools import severities
    from tools.gates import baseline

    report = Report(results + range_pseudo(ctx))
    severities.apply(report, ctx.config)
    baseline.apply(report, ctx)
    report.meta = ctx.describe()
    if ctx.opts.fmt in ("sarif", "github", "gitlab"):
        # Only these place findings on paths; the others pay no read for it.
        from tools.report.model import mark_absent

        mark_absent(report, ctx.has_path)
    if ctx.opts.fmt in ("sarif", "gitlab"):
        # Their identities read the judged lines' text (SPEC §13), as the baseline's does.
        report.content = lambda path: baseline.judged_content(ctx, path)
    return report
