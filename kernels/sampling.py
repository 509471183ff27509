"""Sampling-side kernels: fp32 logprobs with a top-n gather, and top-k / top-p masking.

Top-k / top-p come in two variants that must agree on what they keep (the ``topp-count`` gate
holds them to it):

- ``stock``: the native sort-based algorithm. Sort ascending, top-k masks values below the k-th
  largest, fp32 softmax, cumulative sum, mask the lower tail ``cum <= 1 - p``, always keep the
  maximum, scatter back. Ties are ordered so that the kept set is a canonical prefix
  (descending logit, then ascending token id): the ascending order lists a tie's highest ids
  first, so the masked tail drops those first.
- ``split``: a threshold search that never sorts the vocabulary. It works in probability
  space: ``e = exp(x - max)`` (fp32) is monotone in the logit, so a threshold on the bits of
  ``e`` is a threshold on the logit. A 65,536-bucket mass histogram over the high 16 bits of
  ``e`` finds the bucket where the dropped mass crosses the budget ``(1 - p) * sum(e)``; only
  that bucket's members (a few hundred per row) are ordered to place the cut exactly. The
  budget is shrunk by a relative 1e-5, so rounding in fp32 ``exp`` can only make it keep more
  (the kept set contains the exact one). A cut never splits equal values, so ties are kept
  whole and the maximum is always kept. ``p >= 1`` drops only tokens whose probability is
  exactly zero in binary64 (fp32 underflow alone does not drop a token).

Both return new tensors (the input is never written) with excluded entries set to ``-inf``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kernels.registry import check_variant, variants

TOPK_TOPP_VARIANTS = ("stock", "split")
# Relative slack on split's drop budget: covers fp32 exp error (a few ulp) with room to spare.
SPLIT_BUDGET_SLACK = 1e-5
_BUCKETS = 1 << 16
_NEG_INF = float("-inf")


@variants("f32")
def logprobs(logits: torch.Tensor, *, top_n: int, variant: str = "f32") -> dict[str, torch.Tensor]:
    """fp32 log-softmax over the last dim; the ``top_n`` best ids (ties: lower id first)."""
    check_variant(logprobs, variant)
    lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
    if not 0 < top_n <= lp.shape[-1]:
        raise ValueError(f"top_n must be in 1..{lp.shape[-1]}, got {top_n}")
    ids = torch.sort(lp, dim=-1, descending=True, stable=True).indices[..., :top_n]
    return {"top_ids": ids, "top_logprobs": lp.gather(-1, ids)}


def _check_inputs(logits: torch.Tensor, k: torch.Tensor | None, p: torch.Tensor | None) -> None:
    if logits.dim() != 2:
        raise ValueError(f"logits must be (batch, vocab), got {tuple(logits.shape)}")
    for name, t in (("k", k), ("p", p)):
        if t is not None and t.shape != logits.shape[:1]:
            raise ValueError(f"{name} must be ({logits.shape[0]},), got {tuple(t.shape)}")


# -- stock -------------------------------------------------------------------------------------
def _stock(logits: torch.Tensor, k: torch.Tensor | None, p: torch.Tensor | None) -> torch.Tensor:
    if k is None and p is None:
        return logits.clone()
    # Stable descending then reversed: ascending values, a tie's highest ids first.
    desc, desc_idx = torch.sort(logits, dim=-1, descending=True, stable=True)
    logits_sort, logits_idx = desc.flip(-1), desc_idx.flip(-1)
    if k is not None:
        kth = logits_sort.gather(1, (logits_sort.shape[1] - k.to(torch.long)).unsqueeze(1))
        logits_sort.masked_fill_(logits_sort < kth, _NEG_INF)
    if p is not None:
        probs_sum = torch.cumsum(logits_sort.softmax(dim=-1), dim=-1)
        mask = probs_sum <= 1 - p.unsqueeze(1)
        mask[:, -1] = False  # always keep the maximum
        logits_sort.masked_fill_(mask, _NEG_INF)
    return logits_sort.scatter(1, logits_idx, logits_sort)


# -- split -------------------------------------------------------------------------------------
def _cut(
    hi: torch.Tensor,
    lo_of: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    w: torch.Tensor,
    budget: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, the cut ``(hi, lo)``: drop every element whose 32-bit key ``hi:lo`` is below it.

    The dropped set is the longest run of lowest keys whose weight stays within ``budget``,
    taken in whole key groups (equal keys never split). ``hi`` holds the high 16 bits
    (int64, in 0..65535), ``lo_of(rows, cols)`` gives the low 16 bits of chosen elements,
    ``w`` the non-negative float64 weights.
    """
    rows = hi.shape[0]
    hist = torch.zeros(rows, _BUCKETS, dtype=torch.float64).scatter_add_(1, hi, w)
    cum = hist.cumsum(1)
    b = (cum <= budget.unsqueeze(1)).sum(1)  # first bucket that does not fit whole
    full = b >= _BUCKETS
    b = b.clamp(max=_BUCKETS - 1)
    below = torch.where(b > 0, cum.gather(1, (b - 1).clamp(min=0).unsqueeze(1)).squeeze(1), 0.0)
    # Only the crossing bucket's members are ordered: (row, low bits) as one sort key.
    r, c = (hi == b.unsqueeze(1)).nonzero(as_tuple=True)
    lo = lo_of(r, c)
    if r.numel() == 0:  # no row has a member in its crossing bucket: every cut is whole
        return torch.where(full, b + 1, b), torch.zeros_like(b)
    key, order = torch.sort(r * _BUCKETS + lo)
    wk = w[r, c][order]
    groups, inverse = torch.unique_consecutive(key, return_inverse=True)
    gw = torch.zeros(groups.shape[0], dtype=torch.float64).index_add_(0, inverse, wk)
    grow = groups // _BUCKETS
    glo = groups % _BUCKETS
    gcum = gw.cumsum(0)
    # Weight of the row's earlier groups: the running total just before the row's first group.
    first = torch.ones_like(grow, dtype=torch.bool)
    first[1:] = grow[1:] != grow[:-1]
    start = torch.cummax(torch.where(first, torch.arange(len(grow)), 0), 0).values
    row_base = (gcum - gw)[start]
    fits = below[grow] + (gcum - row_base) <= budget[grow]
    t_lo = torch.full((rows,), _BUCKETS, dtype=torch.long)
    t_lo.scatter_reduce_(0, grow, torch.where(fits, _BUCKETS, glo), reduce="amin")
    t_hi = b.clone()
    whole = (t_lo >= _BUCKETS) | full  # the crossing bucket fits after all (rounding)
    t_hi = torch.where(whole, t_hi + 1, t_hi)
    t_lo = torch.where(whole, 0, t_lo)
    return t_hi, t_lo


def _split(logits: torch.Tensor, k: torch.Tensor | None, p: torch.Tensor | None) -> torch.Tensor:
    if k is None and p is None:
        return logits.clone()
    rows, vocab = logits.shape
    x = logits + 0.0  # -0.0 -> +0.0: equal logits must get equal keys
    m = x.max(dim=1, keepdim=True).values
    finite_rows = torch.isfinite(m).squeeze(1)
    m = torch.where(torch.isfinite(m), m, 0.0)
    keep_logit = None
    if k is not None:
        bits = x.view(torch.int32).to(torch.int64)
        key = torch.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)  # ordered like the values
        hi = (key >> 16) + (_BUCKETS // 2)
        ones = torch.ones(1, dtype=torch.float64).expand(rows, vocab)
        t_hi, t_lo = _cut(
            hi, lambda r, c: key[r, c] & 0xFFFF, ones, (vocab - k.to(torch.long)).to(torch.float64)
        )
        kth = ((t_hi - _BUCKETS // 2) << 16) | t_lo
        keep_logit = key >= kth.unsqueeze(1)
        del bits, key, hi
    if p is None:
        keep = keep_logit
    else:
        e = torch.exp(x - m)
        if keep_logit is not None:
            e = torch.where(keep_logit, e, 0.0)
        ebits = e.view(torch.int32)  # e >= 0: its bits are ordered like e, hence like x
        w = e.to(torch.float64)
        budget = (1.0 - p.to(torch.float64)) * w.sum(1) * (1.0 - SPLIT_BUDGET_SLACK)
        # p >= 1 rows are decided below; an infinite budget lets every bucket "fit", so those
        # rows cost no member ordering here.
        budget = torch.where(p >= 1, float("inf"), budget)
        t_hi, t_lo = _cut(
            (ebits >> 16).to(torch.int64), lambda r, c: ebits[r, c].long() & 0xFFFF, w, budget
        )
        cut = torch.minimum((t_hi << 16) | t_lo, torch.tensor(0x3F800000))  # e(max) == 1.0
        keep = ebits >= cut.to(torch.int32).unsqueeze(1)
        whole = p >= 1
        if bool(whole.any()):
            # p >= 1 drops only what has probability exactly zero even in binary64 (tokens at
            # -inf, or more than ~745 below the maximum); fp32 underflow is no reason to drop.
            d = x[whole].to(torch.float64) - m[whole].to(torch.float64)
            keep[whole] = torch.exp(d) > 0
        if keep_logit is not None:
            keep &= keep_logit
    keep |= ~finite_rows.unsqueeze(1)
    return torch.where(keep, logits, _NEG_INF)


@variants(*TOPK_TOPP_VARIANTS)
def top_k_top_p(
    logits: torch.Tensor,
    k: torch.Tensor | None = None,
    p: torch.Tensor | None = None,
    *,
    variant: str = "stock",
) -> torch.Tensor:
    """Mask ``logits`` (batch, vocab) to the top-k (``k``: (batch,) ints in 1..vocab) and/or the
    top-p (``p``: (batch,) fp32 in (0, 1]) set; excluded entries become ``-inf``."""
    check_variant(top_k_top_p, variant)
    _check_inputs(logits, k, p)
    if k is not None and bool(((k < 1) | (k > logits.shape[1])).any()):
        raise ValueError(f"k must be in 1..{logits.shape[1]}")
    return (_stock if variant == "stock" else _split)(logits, k, p)


def top_p_stock(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Top-p, native sort-based algorithm (the plan's ``fn(logits, p)`` signature)."""
    return top_k_top_p(logits, None, p, variant="stock")


def top_p_split(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Top-p, sort-free threshold search (the plan's ``fn(logits, p)`` signature)."""
    return top_k_top_p(logits, None, p, variant="split")
