"""Helpers shared by the numerics gates: JSON-safe numbers, hashing, importing ops from the
repository under judgement and writing ledger records. Imports neither torch nor numpy
(callers pass plain Python values)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from tools.config_model import ProtocolConfig
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
    """``path`` relative to the repository when it lies inside it (for findings): the path
    as named below the root, links not followed (a link that leaves the repository is
    named by where it is, not by its target)."""
    import os

    here = Path(os.path.abspath(path))
    for top in (Path(os.path.abspath(root)), root.resolve()):
        try:
            return here.relative_to(top).as_posix()
        except ValueError:
            continue
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


class RepoOps:
    """Imports the ops that manifests and plans name from the repository under judgement.

    Used as a context manager around everything that imports or calls an op. An op
    ``module:function`` must come from ``root``: the module's top-level package (or module)
    must exist at the repository's root, and it is imported from there afresh, even when a
    module of that name is installed or was imported earlier in this process (it is set aside
    for the duration, then put back). The repository's root is first on ``sys.path`` while the
    ops load and run, so what they import in turn is looked for there first. On exit every
    module loaded from the repository is forgotten again, and no bytecode is written into it.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._tops: set[str] = set()
        self._set_aside: dict[str, ModuleType] = {}
        self._before: set[str] = set()
        self._bytecode = sys.dont_write_bytecode

    def __enter__(self) -> RepoOps:
        self._before = set(sys.modules)
        self._bytecode = sys.dont_write_bytecode
        sys.dont_write_bytecode = True  # never leave __pycache__ in the judged working tree
        sys.path.insert(0, str(self.root))
        importlib.invalidate_caches()  # files written since the last import must be seen
        return self

    def __exit__(self, *exc: object) -> None:
        for name in list(sys.modules):
            if name.partition(".")[0] in self._tops or (
                name not in self._before and self._inside(sys.modules[name])
            ):
                del sys.modules[name]
        sys.modules.update(self._set_aside)
        self._set_aside.clear()
        self._tops.clear()
        if str(self.root) in sys.path:
            sys.path.remove(str(self.root))
        sys.dont_write_bytecode = self._bytecode

    def _inside(self, module: ModuleType | None) -> bool:
        """Whether ``module`` was loaded from the judged repository."""
        spec = getattr(module, "__spec__", None)
        places = [getattr(spec, "origin", None)] if spec is not None else []
        places += list(getattr(spec, "submodule_search_locations", None) or [])
        for place in places:
            if isinstance(place, str) and place not in ("built-in", "frozen"):
                try:
                    Path(place).resolve().relative_to(self.root)
                except (OSError, ValueError):
                    continue
                return True
        return False

    def op(self, spec: Any, *, where: str) -> Callable[..., Any]:
        """Resolve ``module:function`` from the repository; a UsageError (exit 2) naming
        ``where`` when it cannot be: a gate cannot judge a kernel it cannot load."""
        if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
            raise UsageError(f"{spec!r} is not `module:function`", where=where)
        module_name, attr = spec.split(":")
        top = module_name.partition(".")[0]
        if top == __name__.partition(".")[0]:
            raise UsageError(
                f"{module_name!r}: {top!r} is the name of this program's own package; the "
                "repository's ops must live in a package of another name",
                where=where,
            )
        if top not in self._tops:
            try:
                found = importlib.machinery.PathFinder.find_spec(top, [str(self.root)])
            except (ImportError, ValueError):
                found = None
            if found is None:
                raise UsageError(
                    f"cannot import {module_name!r} from the repository under judgement: it has "
                    f"no package or module {top!r} at its root ({self.root})",
                    where=where,
                )
            # Whatever this name means elsewhere in the process is set aside, not used.
            for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
                self._set_aside[name] = sys.modules.pop(name)
            self._tops.add(top)
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # ImportError, or the module failing while it loads
            raise UsageError(
                f"cannot import {module_name!r}: {type(exc).__name__}: {exc}", where=where
            ) from None
        if not self._inside(module):
            raise UsageError(
                f"{module_name!r} resolved to {getattr(module, '__file__', None) or module!r}, "
                f"outside the repository under judgement ({self.root})",
                where=where,
            )
        fn: object = getattr(module, attr, None)
        if not callable(fn):
            raise UsageError(f"{module_name!r} has no callable {attr!r}", where=where)
        return fn


def ledger_path(config: ProtocolConfig, root: Path) -> Path:
    return root / config.ledger.path


def append_record(
    path: Path, kind: str, payload: dict[str, Any], *, root: Path | None = None
) -> tuple[str, list[str]]:
    """Append one ``kind`` record; returns its id and the ledger's notices to print.
    ``root``: the repository (a link on the way to the ledger is refused)."""
    from tools import ledger

    record = ledger.make_record(kind, payload)
    try:
        written = ledger.append_records(path, [record], root=root)
    except OSError as exc:
        raise UsageError(f"cannot append to the ledger: {exc.strerror}", where=str(path)) from None
    return record["id"], list(getattr(written, "notices", []))
