"""The kernels' rounding polarities, checked against expectations derived here: bf16 rounding
is re-implemented on the bit patterns (round to nearest, ties to even), independent of torch's
own conversion, and the sampling masks are worked out by hand.

CPU independence: each expectation is derived from the same process's fp32 activation (or from
integer inputs whose sums are exact), so it holds whatever the vector width; the sampling tests
use hand-worked rows whose cuts lie far from ``1 - p``, or compare counts with room (``<= 3``)
for the last-ulp differences of fp32 softmax. ``test_cpu_independence.py`` checks that the
kernels' bytes themselves do not change with the vector width."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kernels import variants_of
from kernels.activation import gelu_and_mul, gelu_f32, silu_and_mul, silu_f32
from kernels.norm import fused_add_rms_norm, rms_norm
from kernels.sampling import logprobs, top_k_top_p, top_p_split, top_p_stock


def bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to bf16 (RNE on the bit pattern), returned as float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def f32(t: torch.Tensor) -> np.ndarray:
    return t.to(torch.float32).numpy()


def _gate_up(seed: int = 3, n: int = 4096) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(4, 2 * n, generator=g) * 3).to(torch.bfloat16)


@pytest.mark.parametrize("op,act", [(silu_and_mul, silu_f32), (gelu_and_mul, gelu_f32)])
def test_gated_polarities_match_their_definitions(op, act) -> None:
    x = _gate_up()
    d = x.shape[-1] // 2
    a = f32(act(x[:, :d]))  # the fp32 activation, the variants' common start
    up = f32(x[:, d:])
    want_upstream = bf16(bf16(a) * up)  # narrow the activation, then the product
    want_once = bf16(a * up)  # one rounding
    want_narrow = bf16(a) * up  # narrowed activation, product kept in fp32
    got_up = op(x)
    assert got_up.dtype == torch.bfloat16
    assert np.array_equal(f32(got_up).view(np.uint32), want_upstream.view(np.uint32))
    got_once = op(x, variant="f32_once")
    assert np.array_equal(f32(got_once).view(np.uint32), want_once.view(np.uint32))
    got_narrow = op(x, variant="narrow_act")
    assert got_narrow.dtype == torch.float32
    assert np.array_equal(f32(got_narrow), want_narrow)
    # The data discriminates: double and single rounding differ somewhere.
    assert (want_upstream != want_once).any()


def test_upstream_silu_is_what_torch_bf16_arithmetic_computes() -> None:
    # silu evaluated in fp32 and narrowed to bf16, then a bf16 * bf16 product: the upstream
    # kernel's polarity expressed with torch's own bf16 tensors.
    x = _gate_up(seed=11, n=256)
    gate, up = x[:, :256], x[:, 256:]
    expected = silu_f32(gate).to(torch.bfloat16) * up
    assert torch.equal(silu_and_mul(x).view(torch.int16), expected.view(torch.int16))


def test_float32_inputs_make_the_polarities_agree() -> None:
    x = _gate_up().to(torch.float32)
    outs = [silu_and_mul(x, variant=v) for v in variants_of(silu_and_mul)]
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant 'f64'"):
        silu_and_mul(_gate_up(), variant="f64")
    assert variants_of(silu_and_mul) == ("upstream", "f32_once", "narrow_act")
    assert variants_of(top_k_top_p) == ("stock", "split")


def test_gelu_tanh_is_a_different_function() -> None:
    x = _gate_up(n=64)
    assert not torch.equal(gelu_and_mul(x), gelu_and_mul(x, approximate="tanh"))
    with pytest.raises(ValueError):
        gelu_and_mul(x, approximate="fast")


def _norm_inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    # Small integers: the sum of squares is exact in fp32, so the scale is one rsqrt.
    x = torch.randint(-8, 9, (4, 256), generator=g).to(torch.bfloat16)
    w = (1.0 + 0.1 * torch.randn(256, generator=g)).to(torch.bfloat16)
    return x, w


def test_rms_norm_polarities() -> None:
    x, w = _norm_inputs()
    eps = 1e-6
    xs = f32(x)
    var = (xs.astype(np.float64) ** 2).sum(axis=1, keepdims=True) / xs.shape[1]
    inv = torch.rsqrt(torch.tensor(var, dtype=torch.float32) + eps).numpy()
    normed = (xs * inv).astype(np.float32)
    want_upstream = bf16(bf16(normed) * f32(w))
    want_once = bf16((normed * f32(w)).astype(np.float32))
    got = rms_norm(x, w, eps=eps)
    assert np.array_equal(f32(got).view(np.uint32), want_upstream.view(np.uint32))
    got = rms_norm(x, w, eps=eps, variant="f32_once")
    assert np.array_equal(f32(got).view(np.uint32), want_once.view(np.uint32))
    assert (want_upstream != want_once).any()


def test_fused_add_rms_norm_narrows_the_sum_first() -> None:
    x, w = _norm_inputs()
    r = (torch.randn(4, 256, generator=torch.Generator().manual_seed(9)) / 3).to(torch.bfloat16)
    out = fused_add_rms_norm(x, r, w)
    stored = bf16(f32(x) + f32(r))
    assert np.array_equal(f32(out["residual"]), stored)
    # upstream normalises the *stored* (rounded) residual: the same as rms_norm of it
    again = rms_norm(torch.from_numpy(stored).to(torch.bfloat16), w)
    assert torch.equal(out["out"], again)
    once = fused_add_rms_norm(x, r, w, variant="f32_once")
    assert torch.equal(once["residual"], out["residual"])
    assert not torch.equal(once["out"], out["out"])


def test_logprobs_by_hand() -> None:
    logits = torch.tensor([[0.0, math.log(3.0), 0.0]])
    res = logprobs(logits, top_n=2)
    assert res["top_ids"].tolist() == [[1, 0]]  # the tie 0/2 resolves to the lower id
    assert res["top_logprobs"].tolist()[0] == pytest.approx(
        [math.log(0.6), math.log(0.2)], abs=1e-6
    )


@pytest.mark.parametrize("fn", [top_p_stock, top_p_split])
def test_top_p_by_hand(fn) -> None:
    logits = torch.log(torch.tensor([[0.3, 0.5, 0.05, 0.15]]))
    # ascending 0.05, 0.15, 0.3, 0.5: cumulative 0.05, 0.2, 0.5, 1; 1-p = 0.3 drops two
    out = fn(logits, torch.tensor([0.7]))
    assert torch.isfinite(out).tolist() == [[True, True, False, False]]
    assert torch.equal(out[torch.isfinite(out)], logits[0, :2])
    assert torch.isneginf(out[~torch.isfinite(out)]).all()


@pytest.mark.parametrize("variant", ["stock", "split"])
def test_top_k_keeps_ties_with_the_kth(variant) -> None:
    logits = torch.tensor([[1.0, 3.0, 2.0, 2.0, 0.5]])
    out = top_k_top_p(logits, torch.tensor([2]), None, variant=variant)
    assert torch.isfinite(out).tolist() == [[False, True, True, True, False]]


def test_split_agrees_with_stock_on_random_rows() -> None:
    g = torch.Generator().manual_seed(123)
    logits = torch.randn(16, 20000, generator=g) * 2
    p = torch.rand(16, generator=g) * 0.9 + 0.05
    k = torch.randint(1, 20000, (16,), generator=g)
    for kk in (None, k):
        a = top_k_top_p(logits, kk, p, variant="stock")
        b = top_k_top_p(logits, kk, p, variant="split")
        ca, cb = torch.isfinite(a).sum(1), torch.isfinite(b).sum(1)
        assert int((ca - cb).abs().max()) <= 3
        assert torch.equal(b[torch.isfinite(b)], logits[torch.isfinite(b)])
    only_k = [top_k_top_p(logits, k, None, variant=v) for v in ("stock", "split")]
    assert torch.equal(only_k[0], only_k[1])


@pytest.mark.parametrize("fn", [top_p_stock, top_p_split])
def test_top_p_never_writes_its_input(fn) -> None:
    logits = torch.randn(3, 1000)
    before = logits.clone()
    fn(logits, torch.full((3,), 0.9))
    assert torch.equal(before, logits)
