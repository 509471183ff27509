"""The ledger side of a mutation run, shared by ``mutate run`` and ``mutate collect``: the arm
payload built from an :class:`~tools.mutate.arm_result.ArmResult`, the cross-arm verdicts
(STALE, UNANCHORED) applied to payloads once the control's outcome is known (decided by
:func:`tools.mutate.arm_result.against_control`), the run record, and which outcomes make the
command exit 1."""

from __future__ import annotations

from typing import Any

from tools.mutate.arm_result import (
    ArmResult,
    Classification,
    Control,
    Verdict,
    against_control,
    verdict_of,
)
from tools.mutate.mutation import describe_all
from tools.mutate.plan import Arm, Plan

ALWAYS_FAILING = (Verdict.ERROR, Verdict.UNANCHORED)
TABLE_FORMAT = 2  # the run record's evidence table: sha256 before → mutated → after, …


def _arm_identity(plan: Plan, arm: Arm) -> dict[str, Any]:
    """What every arm record says of the experiment and the arm, whatever happened to it."""
    return {
        "plan": plan.path,
        "plan_sha256": plan.sha256,
        "base": plan.base,
        "arm": arm.name,
        "mutation": describe_all(arm.mutations),
        "mutations": [m.record() for m in arm.mutations],
        "overlay": plan.overlay_entries(),
    }


def arm_payload(
    plan: Plan, arm: Arm, result: ArmResult, verdict: Classification, mode: str
) -> dict[str, Any]:
    """The arm's ``mutation-arm`` payload: what ``result`` observed, judged ``verdict``
    (before the control's outcome is known: ``observed`` is the verdict)."""
    assert verdict.verdict is not None
    word = verdict.verdict.value
    build, tests = result.build, result.tests
    rcs = result.run_rcs
    arts = result.artifacts
    return {
        **_arm_identity(plan, arm),
        "targets": [t.record() for t in result.targets],
        # An arm that never started (no quiet window) neither applied nor failed to.
        "applied": None if verdict.verdict is Verdict.NO_QUIET_WINDOW else result.applied,
        "numstat": [dict(n) for n in result.numstat],
        "build": plan.build,
        "test": plan.test,
        "compile_rc": None if build is None else build.rc,
        "run_rc": rcs[0] if rcs else None,
        "run_rcs": rcs,
        "verdict": word,
        "expect": plan.expect.get(arm.name),
        "restored": result.restored,
        "observed": word,
        "reason": verdict.reason,
        "observed_reason": verdict.reason,
        "repeat": plan.repeat,
        "timeout": plan.timeout,
        "mode": mode,
        "tails": {"build": None if build is None else build.tail, "test": [t.tail for t in tests]},
        "durations": dict(result.durations),
        "signal": result.signal,
        "matched": verdict.match.record() if verdict.match else None,
        "artifacts": None if arts is None else [{"path": p, "sha256": s} for p, s in arts],
        "quiet": None if result.quiet is None else dict(result.quiet),
        "conditions": None if result.conditions is None else dict(result.conditions),
        **({"conflicts": [dict(c) for c in result.conflicts]} if result.conflicts else {}),
    }


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


def _own(payload: dict[str, Any]) -> Classification:
    """The arm's own verdict, as its payload or record keeps it."""
    observed = verdict_of(payload.get("observed", payload["verdict"]))
    why = payload.get("observed_reason")
    return Classification(observed, why, None, observed, why)


def judge_stale(payloads: list[dict[str, Any]], control: dict[str, Any] | None) -> None:
    """Apply STALE in place (the rule is :func:`~tools.mutate.arm_result.against_control`'s;
    ``control``: the control's payload or record, of this run or the ledger). The arm's
    ``observed`` becomes STALE too (it is the arm's own result, not an anchoring), and
    ``tested`` keeps what the test's exit codes said."""
    if control is None:
        return
    # Anchoring is :func:`anchor`'s: here the control only lends its artifacts.
    ctl = Control(
        str(control.get("arm")),
        str(control.get("verdict")),
        _artifact_map(control),
        control.get("id"),
        ran_with=False,
    )
    for p in payloads:
        got = against_control(
            _own(p),
            arm=str(p.get("arm")),
            applied=bool(p.get("applied")),
            artifacts=_artifact_map(p),
            control=ctl,
        )
        if got.verdict is Verdict.STALE and got.tested is not None:
            p["tested"] = got.tested.value
            p["observed"] = p["verdict"] = got.verdict.value
            p["observed_reason"] = p["reason"] = got.reason


def anchor(payloads: list[dict[str, Any]], control: str | None) -> None:
    """Apply UNANCHORED in place (the rule is :func:`~tools.mutate.arm_result.
    against_control`'s): with the control arm among ``payloads``, a mutated arm becomes
    UNANCHORED when the control is not GREEN (its own verdict stays in ``observed``);
    otherwise an arm that was UNANCHORED gets back what it observed."""
    ctrl = next((p for p in payloads if p["arm"] == control), None)
    ctl = None if ctrl is None else Control(str(control), str(ctrl["verdict"]))
    for p in payloads:
        got = against_control(
            _own(p), arm=str(p["arm"]), applied=False, artifacts=None, control=ctl
        )
        if got.verdict is Verdict.UNANCHORED:
            p["verdict"], p["reason"] = got.verdict.value, got.reason
        elif p["verdict"] == Verdict.UNANCHORED:
            p["verdict"] = p.get("observed", p["verdict"])
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
        elif verdict in ALWAYS_FAILING or verdict == Verdict.NOT_APPLIED and want != verdict:
            # NOT-APPLIED: the experiment did not test what it names.
            out.append(f"arm {name}: {verdict}" + (f" ({p['reason']})" if p.get("reason") else ""))
        elif verdict == Verdict.TIMEOUT and want != Verdict.TIMEOUT:
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
