"""Named rounding-polarity variants of an op, so a golden can be explained variant by variant.

An op declares its variants with :func:`variants`; the first name is the default and the one
the op computes when called without ``variant=``. ``tools golden explain`` evaluates every
declared variant of a case's op against the stored golden.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__kernel_variants__"


def variants(*names: str) -> Callable[[F], F]:
    """Declare the variants an op accepts as ``variant=``; the first is its default."""
    if not names or len(set(names)) != len(names):
        raise ValueError("variants() needs distinct names")

    def deco(fn: F) -> F:
        setattr(fn, _ATTR, tuple(names))
        return fn

    return deco


def variants_of(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The declared variants of ``fn`` (empty when the op declares none)."""
    return tuple(getattr(fn, _ATTR, ()))


def check_variant(fn: Callable[..., Any], variant: str) -> None:
    """Refuse a variant the op does not declare (a typo must not fall back silently)."""
    known = variants_of(fn)
    if variant not in known:
        raise ValueError(
            f"{fn.__name__}: unknown variant {variant!r} (declared: {', '.join(known)})"
        )
