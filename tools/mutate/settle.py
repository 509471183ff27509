"""What ``mutate run`` does once its arms have ended: the cross-arm verdicts (STALE against the
control of this run or, when it did not run, the ledger's; then UNANCHORED), the arm records in
plan order, why the run exits 1, and either the receipt file or the run record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools import ledger
from tools.mutate import records as rec
from tools.mutate.plan import Plan
from tools.mutate.receipts import ledger_control, write_receipt


@dataclass(frozen=True)
class Settled:
    """The run's ``arms`` (complete ``mutation-arm`` records, in plan order), its ``run``
    record (None when the arms went to a receipt), and its ``failures`` (exit 1)."""

    arms: tuple[dict[str, Any], ...]
    run: dict[str, Any] | None
    failures: tuple[str, ...]

    @property
    def new(self) -> list[dict[str, Any]]:
        """The records to append to the ledger: the arms, then the run."""
        return [*self.arms, *([self.run] if self.run is not None else [])]


def settle(
    plan: Plan,
    payloads: list[dict[str, Any]],
    *,
    ledger_path: Callable[[], Path],
    receipt: Path | None = None,
    root: Path | None = None,
) -> Settled:
    """Judge ``payloads`` (the arms' own payloads) against the control and make their
    records. ``ledger_path``: where the ledger is, asked only when the control did not run
    with the arms and the plan has artifacts (its newest control record lends them).
    ``receipt``: write the arm records there (inside ``root``) and make no run record."""
    control = plan.control.name if plan.control else None
    ctrl = next((p for p in payloads if p["arm"] == control), None)
    if ctrl is None and plan.artifacts:
        ctrl = ledger_control(plan, ledger_path())
    rec.judge_stale(payloads, ctrl)
    rec.anchor(payloads, control)
    arms = [ledger.make_record("mutation-arm", p) for p in rec.in_plan_order(plan, payloads)]
    failures = tuple(rec.failures(arms))
    if receipt is not None:
        write_receipt(receipt, arms, root=root)
        return Settled(tuple(arms), None, failures)
    run = ledger.make_record("mutation-run", rec.run_payload(plan, arms))
    return Settled(tuple(arms), run, failures)
