"""The ledger side of a mutation run, shared by ``mutate run`` and ``mutate collect``:
anchoring arms on the control's verdict (UNANCHORED), the run record, and which outcomes make
the command exit 1."""

from __future__ import annotations

from typing import Any

from tools.mutate.plan import Plan

ALWAYS_FAILING = ("ERROR", "UNANCHORED")
# Verdicts a test's exit codes gave, which identical artifacts turn into STALE.
JUDGED_BY_THE_TEST = ("GREEN", "RED", "FLAKY")
TABLE_FORMAT = 2  # the run record's evidence table: sha256 before → mutated → after, …


def _artifact_map(payload: dict[str, Any]) -> dict[str, str] | None:
    arts = payload.get("artifacts")
    if not isinstance(arts, list) or not arts:
        return None
    out = {}
    for a in arts:
        if not isinstance(a, dict) or not isinstance(a.get("sha256"), str):
            return None
        out[str(a.get("path"))] = a["sha256"]
    return out


def judge_stale(payloads: list[dict[str, Any]], control: dict[str, Any] | None) -> None:
    """Decide STALE in place: a mutated arm whose mutation applied, whose test gave a
    verdict, and whose every artifact is byte-identical to the control's (``control``: the
    control's payload or record, of this run or the ledger) did not test its mutation. The
    arm's ``observed`` becomes STALE too (it is the arm's own result, not an anchoring), and
    ``tested`` keeps what the test's exit codes said."""
    if control is None:
        return
    theirs = _artifact_map(control)
    if theirs is None:
        return
    ref = control.get("id")
    for p in payloads:
        if p.get("arm") == control.get("arm") or not p.get("applied"):
            continue
        observed = p.get("observed", p["verdict"])
        if observed not in JUDGED_BY_THE_TEST:
            continue
        mine = _artifact_map(p)
        if mine is None or mine != theirs:
            continue
        where = f" (record {str(ref)[:12]})" if ref else ""
        why = (
            f"its artifacts ({', '.join(sorted(mine))}) are byte-identical to those of the "
            f"control arm {control.get('arm')!r}{where}: the test ran without the mutation, "
            f"its {observed} proves nothing"
        )
        p["tested"] = observed
        p["observed"] = p["verdict"] = "STALE"
        p["observed_reason"] = p["reason"] = why


def anchor(payloads: list[dict[str, Any]], control: str | None) -> None:
    """Decide UNANCHORED in place: when the control arm is among ``payloads`` and its verdict
    is not GREEN, every mutated arm is UNANCHORED (its own runs' verdict stays in
    ``observed``); otherwise each arm's verdict is what it observed. An arm whose control did
    not run is never UNANCHORED."""
    ctrl = next((p for p in payloads if p["arm"] == control), None)
    for p in payloads:
        observed = p.get("observed", p["verdict"])
        if ctrl is not None and p is not ctrl and ctrl["verdict"] != "GREEN":
            p["verdict"] = "UNANCHORED"
            p["reason"] = (
                f"the control arm {control} is {ctrl['verdict']}, not GREEN: this arm's "
                f"{observed} proves nothing"
            )
        elif p["verdict"] == "UNANCHORED":
            p["verdict"] = observed
            p["reason"] = p.get("observed_reason")


def failures(payloads: list[dict[str, Any]]) -> list[str]:
    """Why the run exits 1: an unmet ``expect``, an ERROR or UNANCHORED arm, a TIMEOUT or a
    NOT-APPLIED that was not expected, a restore that did not verify. (FLAKY alone is not a
    failure, nor are NO-BUILD and the five machine verdicts unless an ``expect`` says
    otherwise.)"""
    out: list[str] = []
    for p in payloads:
        name, verdict, want = p["arm"], p["verdict"], p.get("expect")
        if want is not None and verdict != want:
            out.append(f"arm {name}: expected {want}, got {verdict}")
        elif verdict in ALWAYS_FAILING or verdict == "NOT-APPLIED" and want != verdict:
            # NOT-APPLIED: the experiment did not test what it names.
            out.append(f"arm {name}: {verdict}" + (f" ({p['reason']})" if p.get("reason") else ""))
        elif verdict == "TIMEOUT" and want != "TIMEOUT":
            out.append(f"arm {name}: TIMEOUT")
        if p.get("conflicts"):
            from tools.mutate.inplace import Conflict

            for c in p["conflicts"]:
                out.append(f"arm {name}: inplace-conflict: {Conflict.from_record(c).message()}")
        elif p.get("restored") is False:
            out.append(f"arm {name}: the restore did not verify by sha256")
    return out


def run_payload(plan: Plan, arm_records: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``mutation-run`` payload over ``arm_records`` (complete records, in plan order)."""
    return {
        "plan": plan.path,
        "plan_sha256": plan.sha256,
        "base": plan.base,
        "spec": plan.spec,
        "arms": [r["id"] for r in arm_records],
        "verdicts": {r["arm"]: r["verdict"] for r in arm_records},
        "overlay": plan.overlay_entries(),
        "control": plan.control.name if plan.control else None,
        "expect": dict(plan.expect),
        "table_format": TABLE_FORMAT,
    }


def in_plan_order(plan: Plan, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rank = {a.name: i for i, a in enumerate(plan.arms)}
    return sorted(items, key=lambda p: rank[p["arm"]])
