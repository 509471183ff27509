"""Gated activations ``act(gate) * up`` over ``x = [gate | up]`` (last dim ``2*d``).

The rounding polarity is the point of these kernels, so it is explicit and named:

- ``upstream``: what the upstream CUDA kernel computes for a 16-bit input dtype ``T``: the
  activation is evaluated in fp32 and narrowed to ``T`` *before* the multiply, and the product
  (computed in fp32, exact for two 16-bit operands) is narrowed again:
  ``T(f32(T(act_f32(gate))) * f32(up))`` -- two roundings.
- ``f32_once``: activation and multiply in fp32, one rounding at the end:
  ``T(act_f32(gate) * f32(up))``.
- ``narrow_act``: the activation is narrowed to ``T``, the multiply is done in fp32 and the
  product is *kept* in fp32 (the result dtype is float32): what a fused consumer that reads the
  product at fp32 sees.

For a float32 input the three agree (narrowing to float32 is the identity).

"Evaluated in fp32" means the fp32 value of the activation, rounded once: the formula is
evaluated in binary64 and narrowed to fp32. Evaluating it with fp32 ``exp``/``erf`` makes the
result depend on the CPU (torch's vectorised and MKL's transcendental functions differ in the
last ulp between vector widths, and ``1 + erf(x)`` cancels for negative ``x``, so one ulp of
``erf`` can move GELU's tail by its whole value). In binary64, written without cancellation,
the error is a few binary64 ulps, so the fp32 result is the same on every CPU unless it lies
that close to an fp32 rounding boundary (about one value in 2**28); the tests check every bf16
value, a million fp32 values and the shipped goldens under every vector width. Upstream's CUDA
``expf``/``erff`` may differ from this in the last fp32 ulp, and its erf form by more in the
tail where it cancels.
"""

from __future__ import annotations

import math

import torch

from kernels.registry import check_variant, variants

POLARITIES = ("upstream", "f32_once", "narrow_act")

# fp32 constants, as the CUDA source spells them (double literals narrowed to float).
_SQRT1_2 = float(torch.tensor(math.sqrt(0.5), dtype=torch.float32))
_GELU_TANH_BETA = float(
    torch.tensor(math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, dtype=torch.float32)
)
_GELU_TANH_KAPPA = float(torch.tensor(0.044715, dtype=torch.float32))


def _split(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(f"gated activation needs an even last dimension, got {tuple(x.shape)}")
    d = x.shape[-1] // 2
    return x[..., :d], x[..., d:]


def silu_f32(gate: torch.Tensor) -> torch.Tensor:
    """``g / (1 + exp(-g))`` evaluated in binary64, rounded once to fp32."""
    g = gate.to(torch.float32).to(torch.float64)
    return (g / (1.0 + torch.exp(-g))).to(torch.float32)


def gelu_f32(gate: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """GELU (exact erf form, or the tanh approximation) evaluated in binary64 with upstream's
    fp32 constants, rounded once to fp32.

    The erf form is written ``f * 0.5 * erfc(-f * sqrt(1/2))`` and the tanh form
    ``f / (1 + exp(-2 * inner))``: the same functions as ``f * 0.5 * (1 + erf(...))`` and
    ``0.5 * f * (1 + tanh(inner))``, without their cancellation for negative ``f``.
    """
    f = gate.to(torch.float32).to(torch.float64)
    if approximate == "none":
        return (f * 0.5 * torch.erfc(-f * _SQRT1_2)).to(torch.float32)
    if approximate == "tanh":
        inner = _GELU_TANH_BETA * (f + _GELU_TANH_KAPPA * (f * f * f))
        return (f / (1.0 + torch.exp(-2.0 * inner))).to(torch.float32)
    raise ValueError(f"gelu approximate must be 'none' or 'tanh', got {approximate!r}")


def _gated(act: torch.Tensor, up: torch.Tensor, dtype: torch.dtype, variant: str) -> torch.Tensor:
    up32 = up.to(torch.float32)
    if variant == "upstream":
        return (act.to(dtype).to(torch.float32) * up32).to(dtype)
    if variant == "f32_once":
        return (act * up32).to(dtype)
    # narrow_act: the narrowed activation times up, product kept at fp32
    return act.to(dtype).to(torch.float32) * up32


@variants(*POLARITIES)
def silu_and_mul(x: torch.Tensor, *, variant: str = "upstream") -> torch.Tensor:
    """``silu(gate) * up`` with the rounding polarity ``variant``."""
    check_variant(silu_and_mul, variant)
    gate, up = _split(x)
    return _gated(silu_f32(gate), up, x.dtype, variant)


@variants(*POLARITIES)
def gelu_and_mul(
    x: torch.Tensor, *, approximate: str = "none", variant: str = "upstream"
) -> torch.Tensor:
    """``gelu(gate) * up`` (erf, or ``approximate="tanh"``) with the polarity ``variant``."""
    check_variant(gelu_and_mul, variant)
    gate, up = _split(x)
    return _gated(gelu_f32(gate, approximate), up, x.dtype, variant)
