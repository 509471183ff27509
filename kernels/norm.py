"""RMSNorm and the fused residual-add + RMSNorm, with both rounding polarities named.

- ``upstream``: normalise in fp32, narrow to the input dtype, then multiply by the weight in the
  input dtype (the product is computed in fp32 and narrowed again): two roundings, as the
  upstream CUDA kernel ``((T)(x * inv_rms)) * weight`` does. The fused variant also narrows
  the sum ``x + residual`` to the input dtype before the variance is taken.
- ``f32_once``: fp32 all the way (sum, variance, scale, weight), rounded once at the end.

The variance is the mean of squares ``sum(x*x) / hidden`` rounded once to fp32 (summed in
binary64, so it does not depend on the order a CPU's vector width sums in; upstream's fp32 block
reduction has an order of its own), and the scale ``1 / sqrt(var + eps)`` in fp32. Unlike the
upstream kernels these functions do not write in place: they return new tensors.
"""

from __future__ import annotations

import torch

from kernels.registry import check_variant, variants

POLARITIES = ("upstream", "f32_once")


def _inv_rms(x32: torch.Tensor, eps: float) -> torch.Tensor:
    hidden = x32.shape[-1]
    # The squares of fp32 values are exact in binary64 and their sum is exact or within an
    # ulp of binary64 in any order: rounded to fp32 it is the same on every CPU.
    x64 = x32.to(torch.float64)
    variance = ((x64 * x64).sum(dim=-1, keepdim=True) / hidden).to(torch.float32)
    return torch.rsqrt(variance + eps)


def _scale(x32: torch.Tensor, weight: torch.Tensor, eps: float, dtype: torch.dtype, variant: str):
    inv = _inv_rms(x32, eps)
    w32 = weight.to(torch.float32)
    if variant == "upstream":
        return ((x32 * inv).to(dtype).to(torch.float32) * w32).to(dtype)
    return (x32 * inv * w32).to(dtype)


@variants(*POLARITIES)
def rms_norm(
    x: torch.Tensor, weight: torch.Tensor, *, eps: float = 1e-6, variant: str = "upstream"
) -> torch.Tensor:
    """``x / rms(x) * weight`` over the last dimension, with the polarity ``variant``."""
    check_variant(rms_norm, variant)
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"weight shape {tuple(weight.shape)} != hidden {x.shape[-1]}")
    return _scale(x.to(torch.float32), weight, eps, x.dtype, variant)


@variants(*POLARITIES)
def fused_add_rms_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor,
    *,
    eps: float = 1e-6,
    variant: str = "upstream",
) -> dict[str, torch.Tensor]:
    """``residual' = x + residual``; ``out = rms_norm(residual')``. Returns both.

    ``upstream`` narrows the sum to the input dtype first (the stored residual is what the
    variance is taken over); ``f32_once`` keeps the sum in fp32 for the norm and narrows only
    the stored residual and the output.
    """
    check_variant(fused_add_rms_norm, variant)
    if residual.shape != x.shape:
        raise ValueError(f"residual shape {tuple(residual.shape)} != x {tuple(x.shape)}")
    if weight.shape != x.shape[-1:]:
        raise ValueError(f"weight shape {tuple(weight.shape)} != hidden {x.shape[-1]}")
    dtype = x.dtype
    z32 = x.to(torch.float32) + residual.to(torch.float32)
    stored = z32.to(dtype)
    if variant == "upstream":
        z32 = stored.to(torch.float32)
    return {"out": _scale(z32, weight, eps, dtype, variant), "residual": stored}
