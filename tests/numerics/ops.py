"""Ops and top-p kernels for the numerics tests: each is deliberately right or wrong in one way.

Goldens and plans name them as ``tests.numerics.ops:<name>``.
"""

from __future__ import annotations

import torch

from kernels.sampling import top_p_stock


# -- golden ops ---------------------------------------------------------------------------------
def const(x: torch.Tensor, *, value: float | str, dtype: str = "float32") -> torch.Tensor:
    """A tensor shaped like ``x`` holding ``value`` in ``dtype`` (rounded to it). A string
    goes through ``float()``: YAML's ``.nan`` carries the sign bit, ``float("nan")`` not."""
    return torch.full(x.shape, float(value), dtype=getattr(torch, dtype))


def with_variants(x: torch.Tensor, *, variant: str = "a") -> torch.Tensor:
    """Declares variants by the attribute alone (no kernels.registry import)."""
    return x.to(torch.float32) * (1.0 if variant == "a" else 2.0)


with_variants.__kernel_variants__ = ("a", "b")  # type: ignore[attr-defined]


def broken(x: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("this kernel always fails")


# -- top-p kernels --------------------------------------------------------------------------------
def _canonical(logits: torch.Tensor) -> torch.Tensor:
    return torch.sort(logits, dim=-1, descending=True, stable=True).indices


def plus_four(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Stock, then also keeps the next four tokens of the stable order: D = 4, still a canonical
    prefix and still containing the reference set."""
    out = top_p_stock(logits, p)
    order = _canonical(logits)
    for row in range(logits.shape[0]):
        n = int(torch.isfinite(out[row]).sum())
        extra = order[row, n : n + 4]
        out[row, extra] = logits[row, extra]
    return out


def keep_highest_id_tie(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Keeps exactly one token of a tie at the maximum, but the highest id (not canonical)."""
    out = torch.full_like(logits, float("-inf"))
    for row in range(logits.shape[0]):
        m = logits[row].max()
        last = int(torch.nonzero(logits[row] == m).max())
        out[row, last] = logits[row, last]
    return out


def mutates_input(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    out = top_p_stock(logits, p)
    logits[0, 0] = logits[0, 0] + 1.0  # writes into its input
    return out


def finite_sentinel(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Masks with a large negative finite value instead of -inf."""
    out = top_p_stock(logits, p)
    return torch.where(torch.isfinite(out), out, torch.tensor(-1.0e30))


def nan_tail(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    out = top_p_stock(logits, p)
    return torch.where(torch.isfinite(out), out, torch.tensor(float("nan")))


def keeps_two(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """Keeps at least the two best tokens of every row (wrong for a forced row)."""
    out = top_p_stock(logits, p)
    order = _canonical(logits)[:, :2]
    return out.scatter(1, order, logits.gather(1, order))


def raises(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    raise ValueError("no top-p today")


def wrong_shape(logits: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return top_p_stock(logits, p)[:, :-1]
