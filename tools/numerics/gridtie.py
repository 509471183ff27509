"""The greedy-divergence grid-tie gate (``tools numerics grid-tie EVIDENCE.json``).

Decides whether divergent greedy outputs are explained by BF16 logit rounding ties (the
registered rule ``pp4-r12-logit-grid-tie``): for every divergent prompt, the top-N fp32
logprobs at the first divergent position must sit on a power-of-two grid, with the experiment
token at the top and the reference token at most one grid step below. Every failure is a STOP
with its reasons; the gate never computes a finer GCD to rescue an off-grid set, never widens
a tolerance from what it observed, and never infers a grid from an all-equal set.

The tolerance for a gap between logprobs ``a`` and ``b`` is ``ulp32(a) + ulp32(b)``: their
shared normaliser cancels in the difference, leaving each value's own fp32 rounding.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tools.bounded import check_json
from tools.errors import UsageError
from tools.numerics import rules
from tools.numerics.common import fmt, num
from tools.numerics.rules import (
    CLAMP,
    CLAMPED,
    GAP_OVER_STEP,
    GRID_TIE_DERIVED,
    LENGTH_MISMATCH,
    NO_GRID,
    NONFINITE,
    NOT_TOP,
    OFF_GRID,
    STEP_NOT_POWER_OF_TWO,
    STOP_REASONS,
    TOKEN_ABSENT,
    TOO_FEW_VALUES,
    TOO_MANY_DIVERGENT,
)
from tools.report import GateResult
from tools.schema import validate_against

NAME = rules.GRID_TIE
RULES = rules.GRID_TIE_RULES
SCHEMA = "tools.grid-tie/1"
SCHEMA_FILE = "grid-tie.schema.json"
REGISTERED_RULE = "pp4-r12-logit-grid-tie"


def ulp32(x: float) -> float:
    """The fp32 spacing at ``|x|`` (the gap to the next fp32 value away from zero)."""
    return float(np.spacing(np.float32(abs(x))))


def tolerance(a: float, b: float) -> float:
    return ulp32(a) + ulp32(b)


# -- evidence ---------------------------------------------------------------------------------
@dataclass
class Prompt:
    prompt: Any
    diverged: bool
    experiment_token: int | None
    reference_token: int | None
    experiment_tokens: int | None
    reference_tokens: int | None
    top: list[tuple[int, float]] | None


@dataclass
class Evidence:
    top_n: int
    max_divergent: int
    prompts: list[Prompt]


def _no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"duplicate key(s) {dupes}")
    return dict(pairs)


def parse_evidence(text: str, where: str) -> Evidence:
    """Validate the evidence JSON. Malformed evidence is a UsageError (exit 2) naming the field;
    a NaN or Infinity logprob is evidence (judged ``nonfinite``), not malformation."""
    check_json(text, where)
    try:
        data = json.loads(text, object_pairs_hook=_no_dupes)
    except ValueError as exc:
        raise UsageError(f"not JSON: {exc}", where=where) from None
    # Another version is another structure: name the version rather than its first difference.
    if isinstance(data, dict) and data.get("schema", SCHEMA) != SCHEMA:
        raise UsageError(
            f"unknown schema {data['schema']!r}", where=f"{where}: schema", expected=SCHEMA
        )
    validate_against(data, SCHEMA_FILE, where, exact_integers=True)
    # What the schema cannot say: a prompt, and a token id within one top list, appear once.
    prompts = []
    seen: set[Any] = set()
    for i, raw in enumerate(data["prompts"]):
        at = f"{where}: prompts[{i}]"
        pid = raw["prompt"]
        if pid in seen:
            raise UsageError(f"prompt {pid!r} appears twice", where=f"{at}.prompt")
        seen.add(pid)
        top = None
        if "top" in raw:
            top = [(entry["id"], float(entry["logprob"])) for entry in raw["top"]]
            ids = [t for t, _ in top]
            if len(set(ids)) != len(ids):
                raise UsageError("a token id appears twice", where=f"{at}.top")
        fields = {
            key: raw.get(key)
            for key in (
                "experiment_token",
                "reference_token",
                "experiment_tokens",
                "reference_tokens",
            )
        }
        prompts.append(Prompt(pid, raw["diverged"], top=top, **fields))
    return Evidence(data["top_n"], data["max_divergent"], prompts)


# -- judging ----------------------------------------------------------------------------------
@dataclass
class Judged:
    prompt: Any
    diverged: bool
    reasons: list[tuple[str, str]] = field(default_factory=list)  # (rule, detail)
    derived: dict[str, Any] = field(default_factory=dict)

    def stop(self, rule: str, detail: str) -> None:
        self.reasons.append((rule, detail))

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "diverged": self.diverged,
            "verdict": "STOP" if self.reasons else "PASS",
            "reasons": [r for r, _ in self.reasons],
            **{k: num(v) if isinstance(v, float) else v for k, v in self.derived.items()},
        }


def _power_of_two(step: float, tol: float) -> int | None:
    """The ``n <= 0`` with ``|step - 2^n| <= tol``, or None."""
    if step <= 0:
        return None
    guess = math.log2(step)
    for n in sorted({math.floor(guess), math.ceil(guess)}):
        if n <= 0 and abs(step - 2.0**n) <= tol:
            return n
    return None


def judge_prompt(p: Prompt, top_n: int) -> Judged:
    j = Judged(p.prompt, p.diverged)
    if p.experiment_tokens is not None and p.reference_tokens is not None:
        if p.experiment_tokens != p.reference_tokens:
            j.stop(
                LENGTH_MISMATCH.id,
                f"experiment has {p.experiment_tokens} tokens, reference {p.reference_tokens}",
            )
    if not p.diverged:
        return j
    values = _usable_values(j, p, top_n)
    exp_t, ref_t = p.experiment_token, p.reference_token
    exp_v = values.get(exp_t) if exp_t is not None else None
    ref_v = values.get(ref_t) if ref_t is not None else None
    vals = list(values.values())
    if exp_v is not None and vals:
        _check_at_top(j, exp_t, exp_v, max(vals))
    pairs = _pair_gaps(vals)
    step = _read_step(j, pairs, len(vals))
    if step is None:
        return j
    _check_on_grid(j, pairs, step)
    if exp_v is not None and ref_v is not None:
        _check_reference_gap(j, ref_t, exp_v, ref_v, step)
    return j


def _usable_values(j: Judged, p: Prompt, top_n: int) -> dict[int, float]:
    """The top list's finite, unclamped logprobs by token id; a STOP for too few values, a
    non-finite or clamped one, and an experiment or reference token not in the list."""
    top = p.top or []
    if len(top) < top_n:
        j.stop(TOO_FEW_VALUES.id, f"{len(top)} logprobs, top_n is {top_n}")
    bad = [(t, v) for t, v in top if not math.isfinite(v)]
    if bad:
        j.stop(
            NONFINITE.id,
            "non-finite logprob(s) " + ", ".join(f"id {t}: {fmt(v)}" for t, v in bad[:5]),
        )
    clamped = [(t, v) for t, v in top if math.isfinite(v) and v <= CLAMP]
    if clamped:
        j.stop(
            CLAMPED.id, "clamped logprob(s) " + ", ".join(f"id {t}: {v!r}" for t, v in clamped[:5])
        )
    lp = dict(top)
    absent = [
        f"{name} token {t}"
        for name, t in (("experiment", p.experiment_token), ("reference", p.reference_token))
        if t not in lp
    ]
    if absent:
        j.stop(TOKEN_ABSENT.id, " and ".join(absent) + f" not in the top-{len(top)}")
    return {t: v for t, v in top if math.isfinite(v) and v > CLAMP}


def _check_at_top(j: Judged, exp_t: int | None, exp_v: float, top_v: float) -> None:
    gap = top_v - exp_v
    j.derived["experiment_to_top_gap"] = gap
    if gap > tolerance(top_v, exp_v):
        j.stop(
            NOT_TOP.id,
            f"experiment token {exp_t} is {gap!r} below the top "
            f"(tolerance {tolerance(top_v, exp_v)!r})",
        )


def _pair_gaps(vals: list[float]) -> list[tuple[float, float]]:
    """Every pair of values: its gap and its tolerance."""
    arr = np.array(vals, dtype=np.float64)
    pairs = []
    for a in range(len(arr)):
        for b in range(a + 1, len(arr)):
            x, y = float(arr[a]), float(arr[b])
            pairs.append((abs(x - y), tolerance(x, y)))
    return pairs


def _read_step(j: Judged, pairs: list[tuple[float, float]], count: int) -> float | None:
    """The grid step: the smallest positive gap, within its tolerance of 2^n (n <= 0); None
    (with its STOP) when there is no positive gap or it is no such power."""
    positive = [(g, t) for g, t in pairs if g > t]
    if not positive:
        j.stop(NO_GRID.id, f"no positive gap among {count} value(s): no grid is inferred")
        return None
    measured, step_tol = min(positive)
    j.derived["measured_step"] = measured
    n = _power_of_two(measured, step_tol)
    if n is None:
        j.stop(
            STEP_NOT_POWER_OF_TWO.id,
            f"smallest positive gap {measured!r} is not within "
            f"{step_tol!r} of a power of two 2^n with n <= 0",
        )
        return None
    step = 2.0**n
    j.derived["step"] = step
    return step


def _check_on_grid(j: Judged, pairs: list[tuple[float, float]], step: float) -> None:
    worst = 0.0
    off = 0
    for g, t in pairs:
        residual = abs(g - round(g / step) * step)
        worst = max(worst, residual / t)
        if residual > t:
            off += 1
    j.derived["worst_residual_over_tolerance"] = worst
    if off:
        j.stop(
            OFF_GRID.id,
            f"{off} of {len(pairs)} pairwise gaps are not a multiple of the step "
            f"{step!r} (worst residual {worst:.3g}x its tolerance)",
        )


def _check_reference_gap(
    j: Judged, ref_t: int | None, exp_v: float, ref_v: float, step: float
) -> None:
    ref_gap = exp_v - ref_v
    j.derived["reference_gap"] = ref_gap
    j.derived["reference_gap_steps"] = ref_gap / step
    limit = step + tolerance(exp_v, ref_v)
    if ref_gap > limit:
        j.stop(
            GAP_OVER_STEP.id,
            f"reference token {ref_t} is {ref_gap!r} below the "
            f"experiment token: {ref_gap / step:.6g} steps of {step!r} (limit {limit!r})",
        )


def judge(evidence: Evidence, where: str) -> tuple[GateResult, list[Judged]]:
    result = GateResult(NAME)
    judged = [judge_prompt(p, evidence.top_n) for p in evidence.prompts]
    divergent = sum(1 for p in evidence.prompts if p.diverged)
    for j in judged:
        for rule, detail in j.reasons:
            result.add(rule, f"STOP prompt {j.prompt}: {detail}", path=where)
        if j.diverged:
            d = j.derived
            result.add(
                GRID_TIE_DERIVED.id,
                f"prompt {j.prompt}: {'STOP' if j.reasons else 'PASS'}; "
                f"experiment-to-top gap {fmt(d.get('experiment_to_top_gap', 'n/a'))}, "
                f"step {fmt(d.get('step', 'n/a'))} (measured "
                f"{fmt(d.get('measured_step', 'n/a'))}), reference gap "
                f"{fmt(d.get('reference_gap_steps', 'n/a'))} steps, worst all-pairs "
                f"residual/tolerance {fmt(d.get('worst_residual_over_tolerance', 'n/a'))}",
                path=where,
            )
    if divergent > evidence.max_divergent:
        result.add(
            TOO_MANY_DIVERGENT.id,
            f"STOP: {divergent} prompts diverge, max_divergent is {evidence.max_divergent}",
            path=where,
        )
    reasons = sorted(
        {f.rule for f in result.findings if f.severity == "error"}, key=list(STOP_REASONS).index
    )
    result.stats.update(
        {
            "rule": REGISTERED_RULE,
            "verdict": "STOP" if reasons else "PASS",
            "reasons": reasons,
            "prompts_total": len(evidence.prompts),
            "divergent": divergent,
            "max_divergent": evidence.max_divergent,
            "top_n": evidence.top_n,
            "prompts": [j.to_json() for j in judged if j.diverged or j.reasons],
        }
    )
    return result, judged


def run_file(path: Path, where: str) -> GateResult:
    from tools import file_reads

    try:
        text = file_reads.read_file(path, where).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read: {exc}", where=where) from None
    result, _ = judge(parse_evidence(text, where), where)
    return result


# -- synthetic evidence -----------------------------------------------------------------------
def synthetic_prompt(
    prompt: Any,
    logits: Sequence[float],
    experiment_token: int,
    reference_token: int,
    *,
    top_n: int = 20,
    tokens: int = 256,
) -> dict[str, Any]:
    """An explicitly synthetic divergent prompt: ``logits`` are rounded to bf16, the fp32
    log-softmax is taken over them, and its top-``top_n`` (ties: lower id first) is recorded.
    Used for regression cases; marked with a ``note`` so it is never mistaken for a run."""
    import torch

    x = torch.tensor(list(logits), dtype=torch.float32).to(torch.bfloat16).to(torch.float32)
    lp = torch.log_softmax(x, dim=-1)
    ids = torch.sort(lp, descending=True, stable=True).indices[:top_n]
    return {
        "prompt": prompt,
        "diverged": True,
        "experiment_token": experiment_token,
        "reference_token": reference_token,
        "experiment_tokens": tokens,
        "reference_tokens": tokens,
        "top": [{"id": int(i), "logprob": float(lp[i])} for i in ids],
        "note": "synthetic: bf16-rounded logits, fp32 log-softmax, top-N",
    }
