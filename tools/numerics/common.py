"""Helpers shared by the numerics gates: JSON-safe numbers, hashing, resolving ops and
writing ledger records. Imports neither torch nor numpy (callers pass plain Python values)."""

from __future__ import annotations

import hashlib
import importlib
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.errors import UsageError


def num(value: Any) -> Any:
    """A number fit for a JSON report: NaN and infinities become strings, numpy/torch scalars
    become Python ints/floats."""
    if isinstance(value, bool):
        return value
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, int):
        return value
    value = float(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def fmt(value: Any) -> str:
    """A number for a human: shortest repr, NaN/inf spelled out (a string passes through)."""
    if isinstance(value, str):
        return value
    value = num(value)
    return value if isinstance(value, str) else repr(value)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def display(path: Path, root: Path) -> str:
    """``path`` relative to the repository when it lies inside it (for findings)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def import_op(spec: Any, root: Path, *, where: str) -> Callable[..., Any]:
    """Resolve ``module:function``, looking in the repository first (its own ``kernels``).

    Anything that prevents importing it is a UsageError (exit 2): a gate cannot judge a kernel
    it cannot load.
    """
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise UsageError(f"{spec!r} is not `module:function`", where=where)
    module_name, attr = spec.split(":")
    added = str(root) not in sys.path
    if added:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or the module failing while it loads
        raise UsageError(
            f"cannot import {module_name!r}: {type(exc).__name__}: {exc}", where=where
        ) from None
    finally:
        if added:
            sys.path.remove(str(root))
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise UsageError(f"{module_name!r} has no callable {attr!r}", where=where)
    return fn


def ledger_path(config: dict[str, Any], root: Path) -> Path:
    return root / config["ledger"]["path"]


def append_record(path: Path, kind: str, payload: dict[str, Any]) -> tuple[str, list[str]]:
    """Append one ``kind`` record; returns its id and the ledger's notices to print."""
    from tools import ledger

    record = ledger.make_record(kind, payload)
    try:
        written = ledger.append_records(path, [record])
    except OSError as exc:
        raise UsageError(f"cannot append to the ledger: {exc.strerror}", where=str(path)) from None
    return record["id"], list(getattr(written, "notices", []))
