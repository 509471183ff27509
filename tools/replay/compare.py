"""What a record claims beside what its replay observed, field by field (SPEC §11): the
targets' sha256 before / mutated / after, ``compile_rc``, ``run_rc``, ``signal`` and the
verdict, for a ``mutation-arm`` record and for both legs of an ``attribution`` record."""

from __future__ import annotations

from typing import Any

_SHAS = ("sha256_before", "sha256_mutated", "sha256_after")
_STEP = ("compile_rc", "run_rc", "signal")


def _targets(targets: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in targets if isinstance(targets, list) else []:
        if isinstance(t, dict):
            for key in _SHAS:
                out[f"{prefix}{key}[{t.get('path')}]"] = t.get(key)
    return out


def arm_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``mutation-arm`` record's (or a replay payload's) compared fields. The verdict is
    the arm's own (``observed``), not the anchoring on a control that may not have run."""
    out = _targets(payload.get("targets"))
    for key in _STEP:
        out[key] = payload.get(key)
    out["run_rcs"] = payload.get("run_rcs")
    out["verdict"] = payload.get("observed", payload.get("verdict"))
    return out


def attribution_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """An ``attribution`` record's (or a replay's) compared fields: the verdict, the first
    bad commit, and per leg (revert, restore) its step fields and targets."""
    out: dict[str, Any] = {"verdict": payload.get("verdict"), "first_bad": payload.get("first_bad")}
    for leg in ("revert", "restore"):
        part = payload.get(leg)
        part = part if isinstance(part, dict) else {}
        for key in _STEP:
            out[f"{leg}.{key}"] = part.get(key)
        out.update(_targets(part.get("targets"), f"{leg}."))
    return out


def fields(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return arm_fields(payload) if kind == "mutation-arm" else attribution_fields(payload)


def differences(claimed: dict[str, Any], observed: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(field, claimed, observed) for every field whose values differ, in a stable order."""
    keys = list(claimed) + [k for k in observed if k not in claimed]
    return [(k, claimed.get(k), observed.get(k)) for k in keys if claimed.get(k) != observed.get(k)]


def said(diffs: list[tuple[str, Any, Any]]) -> str:
    """``run_rc claimed 0, observed 1; verdict claimed GREEN, observed RED``."""
    return "; ".join(f"{k} claimed {_v(c)}, observed {_v(o)}" for k, c, o in diffs)


def _v(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    return str(value)
