"""Many machines: the CI matrix of a plan, receipt files (arm records written to a file
instead of the ledger) and ``collect``, which builds the run record from the arm records of a
plan and base found in the ledger once the receipts are merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools import ledger
from tools.fsio import write_atomic
from tools.mutate import records as rec
from tools.mutate.plan import Plan

# Payload keys a derived record does not copy from the record it re-judges.
_NOT_COPIED = set(ledger.RESERVED)


def matrix(plan: Plan) -> dict[str, list[str]]:
    """A GitHub Actions ``strategy.matrix``: one job per arm."""
    return {"arm": [a.name for a in plan.arms]}


def write_receipt(path: Path, records: list[dict[str, Any]], *, root: Path | None = None) -> None:
    """A JSON list of complete records, one canonical record a line (``tools ledger merge``
    reads it). ``root``: the repository; a receipt inside it is never written through a link."""
    body = ",\n".join(ledger.canonical_json(r).decode("utf-8") for r in records)
    write_atomic(path, f"[\n{body}\n]\n".encode(), root=root)


class Collected:
    """What ``collect`` found and built: ``arms`` (the records of the run, in plan order),
    ``new`` (records to append: re-judged arms, then the run record), ``run``, ``missing``."""

    def __init__(self) -> None:
        self.arms: list[dict[str, Any]] = []
        self.new: list[dict[str, Any]] = []
        self.run: dict[str, Any] | None = None
        self.missing: list[str] = []
        self.superseded = 0


def latest_arm_records(plan: Plan, ledger_path: Path, base: str) -> dict[str, dict[str, Any]]:
    """The newest ``mutation-arm`` record per arm of this plan (same path and sha256) and
    base; records that ``collect`` derived are left out (it derives them afresh)."""
    found: dict[str, dict[str, Any]] = {}
    names = {a.name for a in plan.arms}
    for _, item in ledger.read_records(ledger_path, verify=True):
        if not isinstance(item, dict) or item.get("kind") != "mutation-arm":
            continue
        if (
            item.get("plan") != plan.path
            or item.get("plan_sha256") != plan.sha256
            or item.get("base") != base
            or item.get("arm") not in names
            or "derived_from" in item
        ):
            continue
        have = found.get(item["arm"])
        if have is None or (item["created"], item["id"]) > (have["created"], have["id"]):
            found[item["arm"]] = item
    return found


def ledger_control(plan: Plan, ledger_path: Path) -> dict[str, Any] | None:
    """The newest control arm record of this plan (path and sha256), base and overlay in
    the ledger, for judging STALE when the control did not run with the arms; or None."""
    if plan.control is None:
        return None
    found = latest_arm_records(plan, ledger_path, plan.base).get(plan.control.name)
    if found is None or found.get("overlay") != plan.overlay_entries():
        return None
    return found


def collect(plan: Plan, ledger_path: Path) -> Collected:
    """The run record of ``plan`` at its base from the ledger's arm records. An arm whose
    verdict changes once the control's is known (UNANCHORED, or no longer) gets a derived arm
    record (``derived_from`` the original's id), so the run's table and its arm records say
    the same thing."""
    out = Collected()
    found = latest_arm_records(plan, ledger_path, plan.base)
    out.missing = [a.name for a in plan.arms if a.name not in found]
    if out.missing:
        return out
    payloads = []
    for arm in plan.arms:
        original = found[arm.name]
        payload = {k: v for k, v in original.items() if k not in _NOT_COPIED}
        payload.setdefault("observed", original["verdict"])
        payloads.append((original, payload))
    control = plan.control.name if plan.control else None
    if control is not None:
        rec.judge_stale([p for _, p in payloads], found[control])
    rec.anchor([p for _, p in payloads], control)
    for original, payload in payloads:
        if payload["verdict"] == original["verdict"]:
            out.arms.append(original)
            continue
        payload["derived_from"] = original["id"]
        # Dated by what it is derived from, so collecting again derives the same record
        # (same id: the ledger keeps one) instead of a new one per collect.
        assert control is not None
        created = max(original["created"], found[control]["created"])
        derived = ledger.make_record("mutation-arm", payload, created=created)
        out.new.append(derived)
        out.arms.append(derived)
        out.superseded += 1
    out.run = ledger.make_record("mutation-run", rec.run_payload(plan, out.arms))
    out.new.append(out.run)
    return out


def dumps(records: list[dict[str, Any]]) -> str:
    return json.dumps(records, ensure_ascii=False)
