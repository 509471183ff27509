"""The rules of the numerics gates, declared without torch or numpy.

The gate modules (:mod:`tools.numerics.goldens`, :mod:`tools.numerics.gridtie`,
:mod:`tools.numerics.topp`) import torch and numpy at module level; their rules live here so
that scripts/rules_doc.py (and anything else that lists rules) can declare them on a machine
without the numerics extra. Each gate module takes its ``NAME`` and ``RULES`` from here and
files findings under these constants' ``.id``. A test imports this module with torch and numpy
blocked.
"""

from __future__ import annotations

from tools.report import Rule, declare

# -- golden -----------------------------------------------------------------------------------
GOLDEN = "golden"

GOLDEN_ABSENT = Rule(
    "golden-absent",
    "info",
    "the goldens folder does not exist: nothing to judge",
    example="goldens does not exist (config goldens.dir): no golden cases",
    fix=(
        "Nothing to fix (an info finding). Create cases under `goldens.dir` with `tools "
        "golden capture`, or point `goldens.dir` at them."
    ),
)

GOLDEN_TAMPERED = Rule(
    "golden-tampered",
    "error",
    "a golden file is missing, or its hash/dtype/shape differs",
    example=(
        "silu_and_mul_bf16_8x256: outputs.out (out.npy) sha256 071661d062deecc8… != "
        "manifest 7a60f92a9b99cedd…"
    ),
    fix=(
        "The case's files are not what its manifest records: restore them from git (`git "
        "checkout -- goldens/CASE`), or regenerate the case with `tools golden capture "
        "CASE --force` when the change is intended."
    ),
)

GOLDEN_MISMATCH = Rule(
    "golden-mismatch",
    "error",
    "the kernel no longer reproduces the golden within tolerance",
    example=(
        "t: output 'out' worst margin 1.5 > 1 at index [0] (got 1001.5, want 1000.0; "
        "atol 0.0 rtol 0.001); max abs err 1.5, bit-exact 0/1"
    ),
    fix=(
        "The kernel no longer reproduces the golden. `tools golden explain CASE` shows "
        "which variant of the op does; fix the kernel back to the rounding the golden "
        "records. Recapture (`tools golden capture CASE --force`) only when the new "
        "numbers are the intended ones, and say why in the commit."
    ),
)

GOLDEN_RESULT = Rule(
    "golden-result",
    "info",
    "one case's figures: bit-exact count, max abs error, margin",
    example=(
        "rms_norm_bf16_4x512: output 'out' (exact): bit-exact 2048/2048, max abs err "
        "0.0, worst margin 0.0 at index [0, 0] (got -1.6171875, want -1.6171875)"
    ),
    fix="Nothing to fix: the figures of one case (info), printed on every run.",
)

GOLDEN_RULES = declare(GOLDEN, [GOLDEN_ABSENT, GOLDEN_TAMPERED, GOLDEN_MISMATCH, GOLDEN_RESULT])

# -- grid-tie ---------------------------------------------------------------------------------
GRID_TIE = "grid-tie"
# A logprob at or below this is a clamp, not a value.
CLAMP = -9999.0

TOO_FEW_VALUES = Rule(
    "too-few-values",
    "error",
    "fewer than top_n logprobs at the first divergent position",
    example="STOP prompt 0: 19 logprobs, top_n is 20",
    fix=(
        "Capture at least `top_n` logprobs at the first divergent position, or lower "
        "`top_n` in the evidence."
    ),
)

NONFINITE = Rule(
    "nonfinite",
    "error",
    "a logprob is NaN or infinite",
    example="STOP prompt 0: non-finite logprob(s) id 19: nan",
    fix=(
        "A NaN or infinite logprob is a defect of the run that produced it: fix that and "
        "capture the evidence again."
    ),
)

CLAMPED = Rule(
    "clamped",
    "error",
    f"a logprob is clamped (<= {CLAMP:g})",
    example="STOP prompt 0: clamped logprob(s) id 19: -9999.0",
    fix=(
        "The probe clamped its logprobs (-9999 or below is a clamp, not a value): "
        "capture the unclamped fp32 logprobs at the divergent position and run the gate "
        "again."
    ),
)

TOKEN_ABSENT = Rule(
    "token-absent",
    "error",
    "the experiment or reference token is not in the top-N",
    example="STOP prompt 0: reference token 77 not in the top-20",
    fix=(
        "Capture the probe with a larger top-N (and raise `top_n`), or check the token "
        "ids: both compared tokens must be among the values the gate reads."
    ),
)

NOT_TOP = Rule(
    "not-top",
    "error",
    "the experiment token is not at the top (gap to the top above tolerance)",
    example=(
        "STOP prompt 0: experiment token 1 is 0.5 below the top (tolerance 1.7881393432617188e-07)"
    ),
    fix=(
        "Not a tie: the experiment chose a token below the top of its own logprobs, "
        "which greedy decoding with these values would not do. Look for the difference "
        "between the runs."
    ),
)

NO_GRID = Rule(
    "no-grid",
    "error",
    "no positive gap among the top-N: no grid can be read (never inferred)",
    example="STOP prompt 0: no positive gap among 20 value(s): no grid is inferred",
    fix=(
        "Every top-N value is equal, so no rounding step can be read (the gate never "
        "infers one). Capture a probe whose top-N holds distinct values, or explain the "
        "divergence another way."
    ),
)

STEP_NOT_POWER_OF_TWO = Rule(
    "step-not-power-of-two",
    "error",
    "the smallest positive gap is not within tolerance of 2^n, n <= 0",
    example=(
        "STOP prompt 0: smallest positive gap 0.2999999999999996 is not within "
        "3.5762786865234375e-07 of a power of two 2^n with n <= 0"
    ),
    fix=(
        "The values are not on a BF16 rounding grid (its steps are powers of two), so "
        "ties do not explain the divergence. Look for the real difference between the "
        "runs."
    ),
)

OFF_GRID = Rule(
    "off-grid",
    "error",
    "a pairwise gap is not an integer multiple of the step within tolerance",
    example=(
        "STOP prompt 0: 19 of 190 pairwise gaps are not a multiple of the step 0.5 "
        "(worst residual 9.87e+04x its tolerance)"
    ),
    fix=(
        "The top-N values do not lie on one rounding grid, so the divergence is not "
        "explained by BF16 logit ties. Look for the real difference; the gate never "
        "computes a finer grid to rescue the set."
    ),
)

GAP_OVER_STEP = Rule(
    "gap-over-step",
    "error",
    "the reference token is more than one step below the experiment token",
    example=(
        "STOP prompt 0: reference token 1 is 0.52 below the experiment token: 1.04 steps "
        "of 0.5 (limit 0.5000000894069672)"
    ),
    fix=(
        "Not a grid tie: the reference token is more than one rounding step below the "
        "experiment's choice, so BF16 rounding does not explain the divergence. Look for "
        "a real difference in the kernels; the gate never widens its tolerance."
    ),
)

LENGTH_MISMATCH = Rule(
    "length-mismatch",
    "error",
    "the experiment and reference outputs have different token counts",
    example="STOP prompt 0: experiment has 256 tokens, reference 255",
    fix=(
        "Compare outputs generated under the same limits (max tokens, stop conditions): "
        "outputs of different lengths are not a tie at one position. If they really "
        "differ in length, the divergence needs another explanation."
    ),
)

TOO_MANY_DIVERGENT = Rule(
    "too-many-divergent",
    "error",
    "more prompts diverge than max_divergent allows",
    example="STOP: 4 prompts diverge, max_divergent is 3",
    fix=(
        "More prompts diverge than ties can plausibly explain: look for a real "
        "difference between the runs. `max_divergent` is part of the claim; raising it "
        "changes the claim."
    ),
)

GRID_TIE_DERIVED = Rule(
    "grid-tie-derived",
    "info",
    "the derived values of one divergent prompt",
    example=(
        "prompt 0: PASS; experiment-to-top gap 0.0, step 0.5 (measured 0.5), reference "
        "gap 0.0 steps, worst all-pairs residual/tolerance 0.0"
    ),
    fix=(
        "Nothing to fix: the values derived for one divergent prompt (info), printed "
        "with every verdict so the reader can check them."
    ),
)

# The STOP reasons, in the order they are reported. Each is a rule id of the gate.
STOP_RULES = (
    TOO_FEW_VALUES,
    NONFINITE,
    CLAMPED,
    TOKEN_ABSENT,
    NOT_TOP,
    NO_GRID,
    STEP_NOT_POWER_OF_TWO,
    OFF_GRID,
    GAP_OVER_STEP,
    LENGTH_MISMATCH,
    TOO_MANY_DIVERGENT,
)
STOP_REASONS = {rule.id: rule.summary for rule in STOP_RULES}
GRID_TIE_RULES = declare(GRID_TIE, [*STOP_RULES, GRID_TIE_DERIVED])

# -- topp-count -------------------------------------------------------------------------------
TOPP_COUNT = "topp-count"

TOPP_COUNT_RULE = Rule(
    "topp-count-rule",
    "error",
    "D <= 3 or 200*D < K does not hold for a batch",
    example="case flat-1000, kernel plus4: D=4, K=800: D <= 3 or 200*D < K fails (200*D = 800)",
    fix=(
        "The kernel's kept counts stray from the native comparator's by more than the "
        "rule allows (`D <= 3 or 200*D < K`): fix how the kernel places its cut."
    ),
)

TOPP_ZERO_COUNT = Rule(
    "topp-zero-count",
    "error",
    "a row's native kept count is zero, or a batch has no rows",
    example=(
        "case dead-row, kernel stock: native kept count is 0 on row(s) [1]: the rule "
        "cannot judge them"
    ),
    fix=(
        "The native comparator keeps nothing on that row (a row of `-inf` or NaN, or an "
        "empty batch), so the count rule cannot judge it: fix the case's input."
    ),
)

TOPP_CONTAINMENT = Rule(
    "topp-containment",
    "error",
    "the kernel drops a token the binary64 reference keeps",
    example=(
        "case p1, kernel stock: row 1: drops 1 of the binary64 reference's 256 tokens "
        "(keeps 255; first dropped id 5)"
    ),
    fix=(
        "The kernel drops a token that exact arithmetic keeps: make its cut err towards "
        "keeping (its kept set must contain the binary64 reference set)."
    ),
)

TOPP_CANONICAL_PREFIX = Rule(
    "topp-canonical-prefix",
    "error",
    "the kept set is not a prefix of the stable order",
    example=(
        "case tie, kernel last: row 0: its 1 kept tokens are not the first 1 of the "
        "stable order (first gap at rank 0)"
    ),
    fix=(
        "Where the cut falls inside a tie, keep the tokens that come first in the stable "
        "order (descending logit, then ascending token id), or keep the tie whole."
    ),
)

TOPP_INPUT_MUTATED = Rule(
    "topp-input-mutated",
    "error",
    "the kernel changed the bytes of its input",
    example="case small, kernel bad: the input logits or p changed",
    fix=(
        "The kernel wrote into its inputs: work on a copy (or an output tensor), never "
        "in place on `logits` or `p`."
    ),
)

TOPP_BITS_CHANGED = Rule(
    "topp-bits-changed",
    "error",
    "a value is neither its input's fp32 bits nor -inf",
    example=(
        "case small, kernel bad: 1578 value(s) are neither their input's fp32 bits nor "
        "-inf; first [0, 0]: input -1.067394733428955, output -1.0000000150474662e+30"
    ),
    fix=(
        "Keep each retained logit's fp32 bits exactly and write `-inf` for the excluded "
        "ones (not a large negative number, not a rescaled value)."
    ),
)

TOPP_NONFINITE_OUTPUT = Rule(
    "topp-nonfinite-output",
    "error",
    "NaN or +inf in the kernel's output",
    example="case small, kernel bad: row 1: 521 NaN/+inf value(s)",
    fix=(
        "The output holds NaN or +inf: retained values are the input's own, excluded "
        "ones `-inf`; find where the kernel produces the others."
    ),
)

TOPP_FORCED = Rule(
    "topp-forced",
    "error",
    "a forced row does not keep exactly its forced token",
    example=(
        "case forced-b4-v154856, kernel two: row 0: keeps 2 finite value(s); the forced "
        "row must keep only token 154842"
    ),
    fix=(
        "A row with one overwhelming logit must keep that token alone: check that the "
        "kernel always keeps the maximum and masks everything below the cut."
    ),
)

TOPP_BAD_OUTPUT = Rule(
    "topp-bad-output",
    "error",
    "the kernel raised, or returned no (batch, vocab) fp32",
    example="case small, kernel bad: returned (3, 2047) float32, expected (3, 2048) float32",
    fix=(
        "The kernel must take `fn(logits, p)` (a `(B, V)` float32 tensor and a `(B,)` "
        "float32 tensor) and return the masked logits as a `(B, V)` float32 tensor; fix "
        "the raise or the shape the message names."
    ),
)

TOPP_BATCH = Rule(
    "topp-batch",
    "info",
    "one batch's D, K and verdict for one kernel",
    example="case small, kernel split: D=0, K=1527: pass (native cpu float32)",
    fix="Nothing to fix: one batch's figures (info), printed for every kernel and case.",
)

TOPP_CAPTURED_MISSING = Rule(
    "topp-captured-missing",
    "info",
    "a captured kernel has no output for a case",
    example="case other: captured kernel 'cuda' has no output for it",
    fix=(
        "Capture that kernel's output for the case on the machine that runs it and add "
        "it to `captured`, or leave the case out of the comparison."
    ),
)

TOPP_RULES = declare(
    TOPP_COUNT,
    [
        TOPP_COUNT_RULE,
        TOPP_ZERO_COUNT,
        TOPP_CONTAINMENT,
        TOPP_CANONICAL_PREFIX,
        TOPP_INPUT_MUTATED,
        TOPP_BITS_CHANGED,
        TOPP_NONFINITE_OUTPUT,
        TOPP_FORCED,
        TOPP_BAD_OUTPUT,
        TOPP_BATCH,
        TOPP_CAPTURED_MISSING,
    ],
)
