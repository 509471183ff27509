"""The top-p kept-count gate (``tools numerics topp-count PLAN.yaml``).

For each case of the plan (a batch of fp32 logits drawn from a seed, and ``p``) the native
comparator -- sort ascending, fp32 softmax, cumulative sum, mask ``cum <= 1 - p``, always keep
the maximum, scatter back -- gives kept counts; every kernel under test gives its own. With
``D = max |native - kernel|`` and ``K = max native`` over the batch, a batch passes iff
``D <= 3 or 200*D < K`` (integers). Safety checks on every row, independent of the counts:
the kernel keeps everything the binary64 reference keeps (containment), its kept set is a
prefix of the stable order (descending logit, ascending id), the input bytes are unchanged,
retained values keep their fp32 bits, excluded values are -inf, no NaN or +inf comes out,
and a forced row keeps exactly its forced token.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tools.errors import UsageError
from tools.numerics import rules
from tools.numerics.common import RepoOps, num, sha256_bytes
from tools.numerics.rules import (
    TOPP_BAD_OUTPUT,
    TOPP_BATCH,
    TOPP_BITS_CHANGED,
    TOPP_CANONICAL_PREFIX,
    TOPP_CAPTURED_MISSING,
    TOPP_CONTAINMENT,
    TOPP_COUNT_RULE,
    TOPP_FORCED,
    TOPP_INPUT_MUTATED,
    TOPP_NONFINITE_OUTPUT,
    TOPP_ZERO_COUNT,
)
from tools.numerics.tensors import cpu_capability, load_npy
from tools.report import GateResult
from tools.schema import validate_against
from tools.yaml_files import read_yaml

NAME = rules.TOPP_COUNT
RULES = rules.TOPP_RULES
RULE_RULE = "D <= 3 or 200*D < K"
# exp(d) is exactly 0.0 in binary64 for d below this: every other token of a row whose forced
# value leads by more has probability exactly zero at any precision.
FORCE_GAP = 746.0
SCHEMA = "topp-plan.schema.json"
_U = 2.0**-53


# -- the plan ---------------------------------------------------------------------------------
@dataclass
class Forced:
    row: int
    token: int
    value: float


@dataclass
class Case:
    name: str
    batch: int
    vocab: int
    seed: int
    scale: float
    p: list[float]
    forced: list[Forced]
    fill: list[tuple[int, float]]


@dataclass
class Plan:
    path: Path
    device: str
    kernels: dict[str, str]
    captured: dict[str, dict[str, Path]]
    cases: list[Case]


def _int(value: Any, where: str, lo: int, hi: int | None = None) -> int:
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or value < lo
        or (hi is not None and value > hi)
    ):
        bound = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise UsageError(f"{value!r} is not an integer {bound}", where=where)
    return value


def _float(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise UsageError("is a boolean", where=where, expected="a number")
    if isinstance(value, str):  # YAML 1.1 reads `1e9` (no dot) as a string
        try:
            value = float(value)
        except ValueError:
            raise UsageError(f"{value!r} is not a number", where=where) from None
    if not isinstance(value, (int, float)):
        raise UsageError(f"{value!r} is not a number", where=where)
    return float(value)


def _fp32(value: float) -> float:
    return float(np.float32(value))


def load_plan(path: Path, where: str) -> Plan:
    data = read_yaml(path, where)
    validate_against(data, SCHEMA, where, exact_integers=True)
    # The schema has checked keys and types; what follows relates values to each other.
    comp = data.get("comparator") or {}
    device = comp.get("device", "cpu")
    if not (device == "cpu" or device.startswith("cuda")):
        raise UsageError(
            f"{device!r} is not a device",
            where=f"{where}: comparator.device",
            expected="cpu or cuda[:N]",
        )
    kernels = data.get("kernels") or {}
    if not all(isinstance(k, str) for k in kernels):
        raise UsageError("is not a mapping name -> `module:function`", where=f"{where}: kernels")
    captured: dict[str, dict[str, Path]] = {}
    for name, files in (data.get("captured") or {}).items():
        at = f"{where}: captured.{name}"
        if name in kernels:
            raise UsageError("a captured name must differ from every kernel name", where=at)
        if not all(isinstance(k, str) for k in files):
            raise UsageError("is not a mapping case -> .npy path", where=at)
        captured[str(name)] = {case: path.parent / rel for case, rel in files.items()}
    if not kernels and not captured:
        raise UsageError("names no kernel and no captured output", where=where)
    cases = [_case(raw, f"{where}: cases[{i}]") for i, raw in enumerate(data["cases"])]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise UsageError("two cases share a name", where=f"{where}: cases")
    for name, files in captured.items():
        for case in files:
            if case not in names:
                raise UsageError(f"names no case {case!r}", where=f"{where}: captured.{name}")
    return Plan(path, device, dict(kernels), captured, cases)


def _case(raw: dict[str, Any], at: str) -> Case:
    name = raw["name"]
    batch = raw["batch"]
    vocab = raw["vocab"]
    seed = raw["seed"]
    scale = _float(raw.get("scale", 1.0), f"{at}.scale")
    if not math.isfinite(scale):
        raise UsageError(f"{scale!r} is not finite", where=f"{at}.scale")
    raw_p = raw["p"]
    values = raw_p if isinstance(raw_p, list) else [raw_p] * batch
    if len(values) != batch:
        raise UsageError(f"lists {len(values)} values for {batch} rows", where=f"{at}.p")
    p = []
    for i, v in enumerate(values):
        f = _fp32(_float(v, f"{at}.p"))
        if not 0.0 < f <= 1.0:
            raise UsageError(
                f"{v!r} is not in (0, 1]" + (f" (row {i})" if len(set(values)) > 1 else ""),
                where=f"{at}.p",
            )
        p.append(f)
    forced = []
    for i, entry in enumerate(raw.get("forced") or []):
        fw = f"{at}.forced[{i}]"
        forced.append(
            Forced(
                _int(entry["row"], f"{fw}.row", 0, batch - 1),
                _int(entry["token"], f"{fw}.token", 0, vocab - 1),
                _float(entry["value"], f"{fw}.value"),
            )
        )
    fill = []
    for i, entry in enumerate(raw.get("fill") or []):
        fw = f"{at}.fill[{i}]"
        fill.append(
            (_int(entry["row"], f"{fw}.row", 0, batch - 1), _float(entry["value"], f"{fw}.value"))
        )
    return Case(name, batch, vocab, seed, scale, p, forced, fill)


def make_logits(case: Case, where: str) -> torch.Tensor:
    """``scale * randn(batch, vocab)`` in fp32 from the seed, then the fills, then the forced
    values. NaN or +inf in the result is refused: the comparison is undefined on them."""
    gen = torch.Generator().manual_seed(case.seed)
    logits = torch.randn(case.batch, case.vocab, generator=gen, dtype=torch.float32)
    logits.mul_(case.scale)
    for row, value in case.fill:
        logits[row] = value
    for f in case.forced:
        logits[f.row, f.token] = f.value
    bad = torch.isnan(logits) | torch.isposinf(logits)
    if bool(bad.any()):
        r, t = (int(i) for i in bad.nonzero()[0])
        raise UsageError(
            f"case {case.name!r}: logit [{r}, {t}] is {float(logits[r, t])}: NaN "
            "and +inf inputs are refused",
            where=where,
        )
    return logits


# -- the native comparator and the binary64 reference ----------------------------------------
def native(logits: torch.Tensor, p: torch.Tensor, device: str) -> torch.Tensor:
    """The native algorithm, on ``device`` in fp32 (torch's CPU cumsum accumulates in double
    and rounds each prefix to fp32, unlike a sequential fp32 scan: the device is recorded)."""
    x = logits.to(device)
    logits_sort, logits_idx = x.sort(dim=-1, descending=False)
    probs_sum = logits_sort.softmax(dim=-1).cumsum(dim=-1)
    mask = probs_sum <= 1 - p.to(device).unsqueeze(1)
    mask[:, -1] = False
    logits_sort.masked_fill_(mask, float("-inf"))
    return logits_sort.scatter(-1, logits_idx, logits_sort).cpu()


def stable_order(row: np.ndarray) -> np.ndarray:
    """Token ids by descending logit, ties by ascending id (-0.0 equals +0.0)."""
    return np.argsort(-row.astype(np.float64), kind="stable")


def _exact_int(values: np.ndarray) -> int:
    """``sum(values) * 2**1074`` exactly (every binary64 is an integer multiple of 2**-1074)."""
    total = 0
    for v in values.tolist():
        n, d = float(v).as_integer_ratio()
        total += n * ((1 << 1074) // d)
    return total


def reference_count(row32: np.ndarray, p32: float, order: np.ndarray) -> tuple[int, int]:
    """The binary64 reference kept count of one row, and how many comparisons needed the
    exact tie-break.

    ``e = exp(x - max)`` in binary64 in the stable order; the normaliser ``Z = fsum(e)``; the
    ascending prefix ``S_i`` is a compensated (TwoSum) cumulative sum. Token ``i`` of the
    ascending order is dropped iff ``S_i <= (1 - p) * Z``; a comparison within rounding of
    equality is decided exactly with integers/fractions. The maximum is always kept.
    """
    xs = row32.astype(np.float64)[order]
    m = xs[0]
    if not math.isfinite(m):  # an all -inf row: nothing to keep
        return 0, 0
    with np.errstate(under="ignore"):
        ea = np.exp(xs - m)[::-1]  # ascending
    z = math.fsum(ea.tolist())
    t_exact = (Fraction(1) - Fraction(p32)) * Fraction(z)
    t = float(t_exact)
    s = np.cumsum(ea)
    prev = np.concatenate(([0.0], s[:-1]))
    bv = s - prev
    err = (prev - (s - bv)) + (ea - bv)  # TwoSum: the exact rounding error of each step
    comp = s + np.cumsum(err)
    # |comp - S| <= 2u*S (TwoSum errors are exact, their sum's error is second order) and
    # |t - T| <= u*T: a relative band of 8u decides every comparison outside it. An exactly
    # zero prefix (tokens at -inf, or exp underflowing to 0) is exact: S = 0 <= T.
    bound = 8 * _U * np.maximum(comp, t)
    sure_drop = (comp + bound < t) | (comp == 0.0)
    ambiguous = np.flatnonzero(~sure_drop & ~(comp - bound > t))
    dropped = int(sure_drop.sum())
    if ambiguous.size:
        # Exact prefix sums over the (contiguous) ambiguous band; S is non-decreasing.
        first = int(ambiguous[0])
        running = _exact_int(ea[:first])
        limit = t_exact * (1 << 1074)
        for i in range(first, int(ambiguous[-1]) + 1):
            running += _exact_int(ea[i : i + 1])
            if running <= limit:
                dropped = max(dropped, i + 1)
    dropped = min(dropped, len(xs) - 1)
    return len(xs) - dropped, int(ambiguous.size)


# -- judging ----------------------------------------------------------------------------------
@dataclass
class KernelRun:
    name: str
    spec: str
    out: torch.Tensor | None = None
    seconds: float | None = None
    error: str | None = None
    input_unchanged: bool | None = None


@dataclass
class BatchVerdict:
    kernel: str
    d: int | None = None
    k: int | None = None
    ok: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)


def count_rule(native_counts: list[int], kernel_counts: list[int]) -> tuple[int, int, bool]:
    """``D``, ``K`` and whether ``D <= 3 or 200*D < K`` holds. Empty input or a zero native
    count cannot pass (the rule would judge nothing)."""
    if not native_counts or len(native_counts) != len(kernel_counts):
        return 0, 0, False
    d = max(abs(a - b) for a, b in zip(native_counts, kernel_counts, strict=True))
    k = max(native_counts)
    ok = min(native_counts) > 0 and (d <= 3 or 200 * d < k)
    return d, k, ok


def run_kernel(
    name: str, spec: str, fn: Callable[..., Any], logits: torch.Tensor, p: torch.Tensor
) -> KernelRun:
    run = KernelRun(name, spec)
    x, pp = logits.clone(), p.clone()  # an independent clone of identical bytes
    before = (x.numpy().tobytes(), pp.numpy().tobytes())
    start = time.perf_counter()
    try:
        out = fn(x, pp)
    except Exception as exc:
        run.error = f"raised {type(exc).__name__}: {exc}"
        return run
    run.seconds = time.perf_counter() - start
    run.input_unchanged = (x.numpy().tobytes(), pp.numpy().tobytes()) == before
    if not isinstance(out, torch.Tensor):
        run.error = f"returned {type(out).__name__}, not a tensor"
    elif tuple(out.shape) != tuple(logits.shape) or out.dtype != torch.float32:
        run.error = (
            f"returned {tuple(out.shape)} {str(out.dtype).replace('torch.', '')}, "
            f"expected {tuple(logits.shape)} float32"
        )
    else:
        run.out = out.detach().cpu().contiguous()
    return run


def _forced_rows(case: Case, logits: np.ndarray) -> dict[int, int]:
    """Rows whose forced value leads every other logit by more than FORCE_GAP."""
    rows: dict[int, int] = {}
    for f in case.forced:
        row = logits[f.row].astype(np.float64)
        lead = float(row[f.token])
        others = np.delete(row, f.token)
        if math.isfinite(lead) and (others.size == 0 or float(others.max()) < lead - FORCE_GAP):
            rows[f.row] = f.token
    return rows


@dataclass
class _Output:
    """One kernel's output over the batch, as the row checks read it: which values it kept
    (finite), and per row whether every kept value has its input's bits (``preserved``) and
    every excluded one is -inf (``clean``)."""

    kept: np.ndarray
    preserved: np.ndarray
    clean: np.ndarray


def judge_batch(
    case: Case,
    logits: torch.Tensor,
    p: torch.Tensor,
    native_out: torch.Tensor,
    runs: list[KernelRun],
) -> tuple[list[int], list[int], int, list[BatchVerdict]]:
    """Counts of the native comparator and the binary64 reference, how many reference
    comparisons needed the exact tie-break, and each kernel's verdict."""
    x = logits.numpy()
    native_counts = [int(c) for c in torch.isfinite(native_out).sum(1).tolist()]
    forced = _forced_rows(case, x)
    verdicts = [BatchVerdict(run.name) for run in runs]
    outputs: dict[str, _Output] = {}
    for run, v in zip(runs, verdicts, strict=True):
        output = _check_output(run, v, x)
        if output is not None:
            outputs[run.name] = output
    ref_counts = []
    ambiguous_total = 0
    for row in range(case.batch):
        order = stable_order(x[row])
        ref, amb = reference_count(x[row], float(p[row]), order)
        ref_counts.append(ref)
        ambiguous_total += amb
        for run, v in zip(runs, verdicts, strict=True):
            if run.name in outputs:
                _judge_row(
                    v, outputs[run.name], row, order, ref, native_counts[row], forced.get(row)
                )
    native_kept = np.isfinite(native_out.numpy())
    for run, v in zip(runs, verdicts, strict=True):
        if run.name in outputs:
            _judge_counts(v, run, outputs[run.name].kept, native_counts, native_kept)
    return native_counts, ref_counts, ambiguous_total, verdicts


def _check_output(run: KernelRun, v: BatchVerdict, x: np.ndarray) -> _Output | None:
    """The checks on a kernel's whole output: it exists, left its input alone, holds no NaN
    or +inf and no value other than its input's bits or -inf. None: no output to judge."""
    if run.error or run.out is None:
        v.failures[TOPP_BAD_OUTPUT.id] = [run.error or "no output"]
        return None
    out = run.out.numpy()
    if run.input_unchanged is False:
        v.failures[TOPP_INPUT_MUTATED.id] = ["the input logits or p changed"]
    finite = np.isfinite(out)
    bad = np.isnan(out) | np.isposinf(out)
    if bad.any():
        rows = sorted({int(r) for r in np.nonzero(bad)[0]})
        v.failures[TOPP_NONFINITE_OUTPUT.id] = [
            f"row {r}: {int(bad[r].sum())} NaN/+inf value(s)" for r in rows[:5]
        ]
    changed = finite & (out.view(np.int32) != x.view(np.int32))
    if changed.any():
        r, t = (int(i) for i in np.argwhere(changed)[0])
        v.failures[TOPP_BITS_CHANGED.id] = [
            f"{int(changed.sum())} value(s) are neither their input's fp32 bits nor -inf; "
            f"first [{r}, {t}]: input {float(x[r, t])!r}, output {float(out[r, t])!r}"
        ]
    return _Output(finite, ~changed.any(axis=1), ~bad.any(axis=1))


def _judge_row(
    v: BatchVerdict,
    output: _Output,
    row: int,
    order: np.ndarray,
    ref: int,
    native_count: int,
    forced_token: int | None,
) -> None:
    """One row of one kernel: its counts, containment of the binary64 reference's kept set,
    the canonical prefix and, on a forced row, that only the forced token is kept."""
    in_order = output.kept[row][order]
    n = int(in_order.sum())
    containment = bool(in_order[:ref].all())
    prefix = bool(in_order[:n].all())
    v.rows.append(
        {
            "row": row,
            "native": native_count,
            "kernel": n,
            "binary64": ref,
            "containment": containment,
            "canonical_prefix": prefix,
            "bits_preserved": bool(output.preserved[row]),
            "excluded_are_neg_inf": bool(output.clean[row]),
        }
    )
    if not containment:
        missing = int((~in_order[:ref]).sum())
        v.failures.setdefault(TOPP_CONTAINMENT.id, []).append(
            f"row {row}: drops {missing} of the binary64 reference's {ref} tokens "
            f"(keeps {n}; first dropped id {int(order[:ref][~in_order[:ref]][0])})"
        )
    if not prefix:
        v.failures.setdefault(TOPP_CANONICAL_PREFIX.id, []).append(
            f"row {row}: its {n} kept tokens are not the first {n} of the stable order "
            f"(first gap at rank {int(np.argmin(in_order[:n]))})"
        )
    if forced_token is not None:
        only = n == 1 and bool(output.kept[row][forced_token])
        if not only:
            v.failures.setdefault(TOPP_FORCED.id, []).append(
                f"row {row}: keeps {n} finite value(s); the forced row must keep only "
                f"token {forced_token}"
            )


def _judge_counts(
    v: BatchVerdict,
    run: KernelRun,
    kept: np.ndarray,
    native_counts: list[int],
    native_kept: np.ndarray,
) -> None:
    """The batch's count rule (D and K over its rows), the diagnostics and the verdict."""
    counts = [r["kernel"] for r in v.rows]
    v.d, v.k, rule_ok = count_rule(native_counts, counts)
    zero = [r for r, c in enumerate(native_counts) if c == 0]
    if zero or not native_counts:
        v.failures.setdefault(TOPP_ZERO_COUNT.id, []).append(
            f"native kept count is 0 on row(s) {zero[:10]}: the rule cannot judge them"
            if zero
            else "the batch has no rows"
        )
    elif not rule_ok:
        v.failures[TOPP_COUNT_RULE.id] = [
            f"D={v.d}, K={v.k}: {RULE_RULE} fails (200*D = {200 * v.d})"
        ]
    sym = (kept ^ native_kept).sum(1)
    v.diagnostics = {
        "rows_equal_native_count": sum(1 for r in v.rows if r["kernel"] == r["native"]),
        "rows_equal_binary64_count": sum(1 for r in v.rows if r["kernel"] == r["binary64"]),
        "symmetric_difference_vs_native": {"max": int(sym.max()), "sum": int(sym.sum())},
        "seconds": run.seconds,
        "input_unchanged": run.input_unchanged,
    }
    v.ok = not v.failures


def _captured_run(name: str, path: Path, case: Case, where: str) -> KernelRun:
    run = KernelRun(name, str(path))
    try:
        arr = load_npy(path)
    except ValueError as exc:
        raise UsageError(str(exc), where=f"{where}: captured.{name}.{case.name}") from None
    if arr.dtype != np.float32 or arr.shape != (case.batch, case.vocab):
        run.error = (
            f"captured {arr.shape} {arr.dtype}, expected ({case.batch}, {case.vocab}) float32"
        )
        return run
    run.out = torch.from_numpy(np.ascontiguousarray(arr))
    return run


def run_plan(plan: Plan, root: Path, where: str) -> tuple[GateResult, dict[str, Any]]:
    """Judge every case of the plan; the gate result and the ledger payload."""
    if plan.device != "cpu" and not torch.cuda.is_available():
        raise UsageError(
            f"device {plan.device!r} is not available", where=f"{where}: comparator.device"
        )
    with RepoOps(root) as ops:
        fns = {
            name: ops.op(spec, where=f"{where}: kernels.{name}")
            for name, spec in plan.kernels.items()
        }
        return _judge_plan(plan, fns, where)


def _judge_plan(
    plan: Plan, fns: dict[str, Callable[..., Any]], where: str
) -> tuple[GateResult, dict[str, Any]]:
    result = GateResult(NAME)
    comparator = {
        "device": plan.device,
        "dtype": "float32",
        "torch": torch.__version__,
        "cpu_capability": cpu_capability(),
    }
    result.stats["comparator"] = comparator
    result.stats["rule"] = RULE_RULE
    cases_out = [_judge_case(plan, fns, case, result, where) for case in plan.cases]
    result.stats["cases"] = cases_out
    payload = {
        "plan": where,
        "plan_sha256": sha256_bytes(plan.path.read_bytes()),
        "comparator": comparator,
        "rule": RULE_RULE,
        "verdict": result.status,
        "kernels": plan.kernels,
        "cases": [_case_summary(c) for c in cases_out],
    }
    return result, payload


def _judge_case(
    plan: Plan, fns: dict[str, Callable[..., Any]], case: Case, result: GateResult, where: str
) -> dict[str, Any]:
    """Run every kernel (and read every captured output) on one case, judge the batch, add
    the findings to ``result``; the case's record."""
    logits = make_logits(case, where)
    p = torch.tensor(case.p, dtype=torch.float32)
    native_out = native(logits, p, plan.device)
    runs = [run_kernel(name, plan.kernels[name], fn, logits, p) for name, fn in fns.items()]
    for name, files in plan.captured.items():
        if case.name in files:
            runs.append(_captured_run(name, files[case.name], case, where))
        else:
            result.add(
                TOPP_CAPTURED_MISSING.id,
                f"case {case.name}: captured kernel {name!r} has no output for it",
                path=where,
            )
    native_counts, ref_counts, exact_ties, verdicts = judge_batch(case, logits, p, native_out, runs)
    del native_out, runs
    for v in verdicts:
        _add_findings(result, case, v, plan.device, where)
    return {
        "name": case.name,
        "batch": case.batch,
        "vocab": case.vocab,
        "seed": case.seed,
        "scale": case.scale,
        "p": case.p,
        "forced": [{"row": f.row, "token": f.token, "value": num(f.value)} for f in case.forced],
        "fill": [{"row": r, "value": num(val)} for r, val in case.fill],
        "logits_sha256": sha256_bytes(logits.numpy().tobytes()),
        "p_sha256": sha256_bytes(p.numpy().tobytes()),
        "native_counts": native_counts,
        "binary64_counts": ref_counts,
        "binary64_exact_tiebreaks": exact_ties,
        "kernels": {
            v.kernel: {
                "D": v.d,
                "K": v.k,
                "verdict": "pass" if v.ok else "fail",
                "failures": sorted(v.failures),
                "rows": v.rows,
                "diagnostics": {
                    k: num(x) if isinstance(x, float) else x for k, x in v.diagnostics.items()
                },
            }
            for v in verdicts
        },
    }


def _add_findings(result: GateResult, case: Case, v: BatchVerdict, device: str, where: str) -> None:
    """One kernel's failures on a case (ten per rule, then how many more) and its verdict."""
    for rule, messages in v.failures.items():
        for message in messages[:10]:
            result.add(rule, f"case {case.name}, kernel {v.kernel}: {message}", path=where)
        if len(messages) > 10:
            result.add(
                rule,
                f"case {case.name}, kernel {v.kernel}: {len(messages) - 10} more row(s) like these",
                path=where,
            )
    dk = f"D={v.d}, K={v.k}" if v.d is not None else "no counts"
    result.add(
        TOPP_BATCH.id,
        f"case {case.name}, kernel {v.kernel}: {dk}: "
        f"{'pass' if v.ok else 'FAIL'} (native {device} float32)",
        path=where,
    )


_SUMMARY_KEYS = ("name", "batch", "vocab", "seed", "scale", "p", "logits_sha256", "p_sha256")


def _case_summary(case: dict[str, Any]) -> dict[str, Any]:
    """What the ledger record keeps of a case: its inputs and each kernel's D, K, verdict."""
    return {k: case[k] for k in _SUMMARY_KEYS} | {
        "kernels": {
            n: {"D": kv["D"], "K": kv["K"], "verdict": kv["verdict"]}
            for n, kv in case["kernels"].items()
        }
    }


def run_file(path: Path, root: Path, where: str) -> tuple[GateResult, dict[str, Any]]:
    return run_plan(load_plan(path, where), root, where)
