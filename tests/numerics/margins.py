"""How far a row's top-p cut lies from ``1 - p`` in exact arithmetic, so that a test can show its
verdict cannot depend on the CPU.

The native algorithm (and stock) sums fp32 probabilities whose rounding depends on the CPU's
vector width: measured at vocab 154,856 under ATen's default, AVX2 and AVX-512 kernels, the fp32
cumulative mass near the cut differs from the exact one by up to 5.3e-8. A row whose exact
cumulative masses on both sides of the cut lie further than ``FP32_SPREAD`` (ten times that)
from ``1 - p`` is cut at the same place by the native algorithm, stock and the binary64
reference on every CPU; split keeps tokens up to ``(1 - p) * SPLIT_BUDGET_SLACK`` past the
cut by design, so for it to agree as well the margin below must also exceed that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from kernels.sampling import SPLIT_BUDGET_SLACK
from tools.numerics import topp

FP32_SPREAD = 5e-7

# A flat row (scale 0: every logit is +-0.0) of FLAT_N tokens: each fp32 probability is
# q = float32(1 / FLAT_N), which rounds down, and the native cumulative mass of j tokens is
# float32(j * q). Every step (exp(0) = 1, a sum of ones, one division, a sum in double) is exact
# or one correctly rounded operation on the same operands, so it is the same on every CPU.
# 1 - FLAT_P lies between float32(2 * q) and the exact 2 / FLAT_N.
FLAT_N = 1801
FLAT_P = 0.9988895058631897


def boundary_margins(row: np.ndarray, p: float, k: int | None = None) -> tuple[float, float]:
    """``(below, above)`` for one fp32 row: how far below ``t = 1 - p`` (computed in fp32, as the
    native algorithm does) the exact cumulative mass of the last token the reference drops
    lies, and how far above it that of the first token it keeps. ``inf`` where there is no
    such token (nothing dropped; only the maximum kept). ``k``: top-k is applied first."""
    xs = np.sort(np.asarray(row, dtype=np.float32).astype(np.float64))
    if k is not None:
        xs = np.where(xs < xs[len(xs) - k], -np.inf, xs)
    t = float(np.float32(1) - np.float32(p))
    with np.errstate(under="ignore"):
        e = np.exp(xs - xs[-1])
    cum = np.cumsum(e) / math.fsum(e.tolist())  # error ~1e-16 * vocab: far below FP32_SPREAD
    first_kept = int(np.argmax(cum > t)) if (cum > t).any() else len(xs) - 1
    first_kept = min(first_kept, len(xs) - 1)  # the maximum is always kept
    above = cum[first_kept] - t if first_kept < len(xs) - 1 else math.inf
    below = t - cum[first_kept - 1] if first_kept > 0 else math.inf
    return float(below), float(above)


def plan_logits(case: dict) -> tuple[np.ndarray, list[float]]:
    """The logits and per-row ``p`` the gate draws for a test's plan case (its own code)."""
    raw_p = case["p"]
    ps = [float(np.float32(v)) for v in (raw_p if isinstance(raw_p, list) else [raw_p])]
    parsed = topp.Case(
        case["name"],
        case["batch"],
        case["vocab"],
        case["seed"],
        float(case.get("scale", 1.0)),
        ps if len(ps) == case["batch"] else ps * case["batch"],
        [topp.Forced(f["row"], f["token"], float(f["value"])) for f in case.get("forced", [])],
        [(f["row"], float(f["value"])) for f in case.get("fill", [])],
    )
    return topp.make_logits(parsed, "test case").numpy(), parsed.p


def assert_clear_of_the_cut(
    case: dict, rows: Iterable[int], *, kept_side_only: bool = False
) -> None:
    """Assert that every listed row of ``case`` is cut alike on every CPU: native, stock, split
    and the reference (``kept_side_only``: only that native and stock keep every token the
    reference keeps, which is what stock's containment verdict rests on)."""
    logits, ps = plan_logits(case)
    for row in rows:
        below, above = boundary_margins(logits[row], ps[row])
        t = float(np.float32(1) - np.float32(ps[row]))
        assert above > FP32_SPREAD, f"{case['name']} row {row}: kept side only {above:.3g} clear"
        if not kept_side_only:
            need = FP32_SPREAD + t * SPLIT_BUDGET_SLACK
            assert below > need, f"{case['name']} row {row}: dropped side only {below:.3g} clear"
