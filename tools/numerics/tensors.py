"""Tensor files of the goldens: dtype names, ``.npy`` storage (bf16 as uint16 bit patterns)
and element-wise comparison under the three tolerance modes."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tools.numerics.common import num

# Manifest dtype name -> (torch dtype, numpy dtype the .npy file stores).
DTYPES: dict[str, tuple[torch.dtype, np.dtype]] = {
    "float32": (torch.float32, np.dtype(np.float32)),
    "float16": (torch.float16, np.dtype(np.float16)),
    "bfloat16": (torch.bfloat16, np.dtype(np.uint16)),  # stored as its 16-bit patterns
    "int32": (torch.int32, np.dtype(np.int32)),
    "int64": (torch.int64, np.dtype(np.int64)),
    "bool": (torch.bool, np.dtype(np.bool_)),
}
_NAMES = {torch_dtype: name for name, (torch_dtype, _) in DTYPES.items()}
# Same-width integer views for bit-pattern comparison.
_BITS = {
    torch.float32: torch.int32,
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.int32: torch.int32,
    torch.int64: torch.int64,
    torch.bool: torch.uint8,
}
_MANTISSA = {torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}
_MIN_EXP = {torch.float32: -126, torch.float16: -14, torch.bfloat16: -126}


def cpu_capability() -> str:
    """The vector instruction set torch's CPU kernels run with (``ATEN_CPU_CAPABILITY`` can
    lower it): recorded with figures that may differ between CPUs."""
    get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
    return str(get()) if callable(get) else "unknown"


def dtype_name(dtype: torch.dtype) -> str:
    return _NAMES.get(dtype, str(dtype).replace("torch.", ""))


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """The array a ``.npy`` file stores for ``t`` (bf16 as its uint16 bit patterns)."""
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def from_numpy(arr: np.ndarray, dtype_name_: str) -> torch.Tensor:
    torch_dtype, _ = DTYPES[dtype_name_]
    if torch_dtype == torch.bfloat16:
        return torch.from_numpy(arr.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(arr.copy())


def npy_bytes(t: torch.Tensor) -> bytes:
    buf = io.BytesIO()
    np.save(buf, to_numpy(t), allow_pickle=False)
    return buf.getvalue()


def load_npy(path: Path) -> np.ndarray:
    """Load without pickles; any problem is a ValueError with the reason."""
    try:
        arr = np.load(path, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError/OSError/EOFError for a bad file
        raise ValueError(f"not a readable .npy file ({type(exc).__name__}: {exc})") from None
    if not isinstance(arr, np.ndarray):
        raise ValueError("not a single .npy array")
    return arr


# -- comparison -------------------------------------------------------------------------------
@dataclass
class Tolerance:
    mode: str  # "exact" | "bitwise" | "tol"
    atol: float = 0.0
    rtol: float = 0.0

    def describe(self) -> str:
        return self.mode if self.mode != "tol" else f"atol {self.atol!r} rtol {self.rtol!r}"


@dataclass
class Comparison:
    """The verdict on one output and the figures behind it."""

    total: int = 0
    bit_exact: int = 0
    max_abs_err: float = 0.0
    max_ulp: float = 0.0
    worst_margin: float = 0.0
    worst_index: list[int] = field(default_factory=list)
    got: Any = None
    want: Any = None
    problem: str | None = None  # a structural mismatch (dtype, shape, kernel error)

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.worst_margin > 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "total": self.total,
            "bit_exact": self.bit_exact,
            "max_abs_err": num(self.max_abs_err),
            "max_ulp": num(self.max_ulp),
            "worst_margin": num(self.worst_margin),
            "worst_index": self.worst_index,
            "got": num(self.got) if self.got is not None else None,
            "want": num(self.want) if self.want is not None else None,
            "problem": self.problem,
        }


def _ulp(want: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """Spacing of ``dtype`` at each wanted value (for a readable error in units of the golden)."""
    mant = _MANTISSA.get(dtype)
    if mant is None:
        return np.ones_like(want)
    with np.errstate(all="ignore"):
        _, exp = np.frexp(np.abs(want))
        exp = np.maximum(exp - 1, _MIN_EXP[dtype])
        spacing: np.ndarray = np.ldexp(1.0, exp - mant)
        return spacing


def compare(got: Any, want: torch.Tensor, tol: Tolerance) -> Comparison:
    """Compare ``got`` with ``want`` under ``tol``.

    ``exact``: values equal (-0 equals +0), both finite. ``bitwise``: identical bit patterns
    (so identical NaNs pass; -0 and +0 differ). Tolerance: ``|got - want| <= atol + rtol*|want|``
    with both finite. The margin of an element is ``|got - want| / (atol + rtol*|want|)``
    (exact and bitwise use a zero denominator: 0 when the element passes, inf when not).
    """
    cmp = Comparison(total=int(want.numel()))
    if not isinstance(got, torch.Tensor):
        cmp.problem = f"the kernel returned {type(got).__name__}, not a tensor"
        cmp.worst_margin = math.inf
        return cmp
    if tuple(got.shape) != tuple(want.shape):
        cmp.problem = f"shape {list(got.shape)} != golden {list(want.shape)}"
        cmp.worst_margin = math.inf
        return cmp
    got = got.detach().cpu()
    same_dtype = got.dtype == want.dtype
    if same_dtype:
        bits = _BITS[want.dtype]
        bit_eq = (got.contiguous().view(bits) == want.contiguous().view(bits)).numpy()
        cmp.bit_exact = int(bit_eq.sum())
    else:
        bit_eq = np.zeros(tuple(want.shape), dtype=bool)
        cmp.problem = f"dtype {dtype_name(got.dtype)} != golden {dtype_name(want.dtype)}"
    g = got.to(torch.float64).numpy() if got.dtype != torch.bool else got.numpy().astype(float)
    w = want.to(torch.float64).numpy() if want.dtype != torch.bool else want.numpy().astype(float)
    with np.errstate(all="ignore"):
        err = np.abs(g - w)
        finite = np.isfinite(g) & np.isfinite(w)
        # Identical bits are no error (also for equal infinities); else non-finite is inf.
        err_f = np.where(bit_eq, 0.0, np.where(finite, err, np.inf))
        if tol.mode == "bitwise":
            margin = np.where(bit_eq, 0.0, np.inf)
        elif tol.mode == "exact":
            margin = np.where(finite & (g == w), 0.0, np.inf)
        else:
            denom = tol.atol + tol.rtol * np.abs(w)
            margin = np.where(denom > 0, err / np.where(denom > 0, denom, 1.0), np.inf)
            margin = np.where(err == 0, 0.0, margin)
            margin = np.where(finite, margin, np.inf)
        ulps = np.where(bit_eq, 0.0, np.where(finite, err / _ulp(w, want.dtype), np.inf))
    if cmp.total:
        cmp.max_abs_err = float(err_f.max())
        cmp.max_ulp = float(ulps.max())
        # The worst element: the largest margin; among equal margins (every failing element
        # of exact/bitwise is inf) the largest error.
        top = margin.max()
        flat = int(np.argmax(np.where(margin == top, err_f, -1.0)))
        idx = np.unravel_index(flat, margin.shape) if margin.ndim else ()
        cmp.worst_margin = float(margin.reshape(-1)[flat])
        cmp.worst_index = [int(i) for i in idx]
        cmp.got = g.reshape(-1)[flat].item()
        cmp.want = w.reshape(-1)[flat].item()
    return cmp
