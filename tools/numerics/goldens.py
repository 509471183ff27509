"""Golden cases: ``goldens/<case>/manifest.yaml`` + ``.npy`` files, checked, explained and
captured.

A manifest names the op (``module:function``), its ``variant`` and ``args``, the input and
output tensors (``file``, ``sha256``, ``dtype``, ``shape``; inputs also carry the ``init``
recipe capture draws them from), a ``tolerance`` per output (``exact``, ``bitwise`` or
``{atol, rtol}``), the ``seed``, the ``generator`` (torch version) and the ``oracle`` (the
upstream source and commit whose semantics the op follows).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml

from tools import file_reads
from tools.config_model import ProtocolConfig
from tools.errors import UsageError
from tools.fsio import refuse_links, write_atomic
from tools.numerics import rules, tensors
from tools.numerics.common import RepoOps, display, fmt, sha256_bytes, sha256_file
from tools.numerics.rules import GOLDEN_ABSENT, GOLDEN_MISMATCH, GOLDEN_RESULT, GOLDEN_TAMPERED
from tools.numerics.tensors import DTYPES, Comparison, Tolerance
from tools.report import GateResult
from tools.schema import validate_against
from tools.yaml_files import read_yaml

NAME = rules.GOLDEN
RULES = rules.GOLDEN_RULES
MANIFEST = "manifest.yaml"
SCHEMA = "golden-manifest.schema.json"
# Each distribution's parameters and their defaults.
_INIT: dict[str, dict[str, float | int]] = {
    "randn": {"scale": 1.0, "shift": 0.0},
    "uniform": {"low": 0.0, "high": 1.0},
    "randint": {"low": 0, "high": 2},
    "full": {"value": 0.0},
}


# -- manifest ---------------------------------------------------------------------------------
@dataclass
class TensorSpec:
    name: str
    file: str
    sha256: str | None
    dtype: str | None
    shape: list[int] | None
    init: dict[str, Any] | None = None

    def to_yaml(self, *, with_init: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "file": self.file,
            "sha256": self.sha256,
            "dtype": self.dtype,
            "shape": self.shape,
        }
        if with_init and self.init is not None:
            out["init"] = self.init
        return out


@dataclass
class Case:
    name: str
    dir: Path
    op: str
    variant: str | None
    args: dict[str, Any]
    inputs: dict[str, TensorSpec]
    outputs: dict[str, TensorSpec]
    tolerance: dict[str, Tolerance]
    seed: int
    generator: str | None
    oracle: dict[str, Any]
    raw_tolerance: dict[str, Any] = field(default_factory=dict)

    @property
    def manifest(self) -> Path:
        return self.dir / MANIFEST


def _number(value: Any, where: str) -> float:
    # YAML 1.1 reads `1e-6` (no dot) as a string: accept a string that is a plain number.
    if isinstance(value, bool):
        raise UsageError("is a boolean", where=where, expected="a number")
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise UsageError(f"{value!r} is not a number", where=where) from None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise UsageError(f"{value!r} is not a finite number >= 0", where=where)
    return float(value)


def _tolerance(value: Any, where: str) -> Tolerance:
    # The schema has checked the shape: `exact`, `bitwise` or a non-empty {atol, rtol}.
    if isinstance(value, str):
        return Tolerance(value)
    return Tolerance(
        "tol",
        _number(value.get("atol", 0), f"{where}.atol"),
        _number(value.get("rtol", 0), f"{where}.rtol"),
    )


def _tensor(
    name: str, value: dict[str, Any], where: str, *, recipe: bool, is_input: bool
) -> TensorSpec:
    # The schema has checked keys and types; what remains depends on the file system or on
    # whether this is a recipe (capture fills in files, hashes and output dtypes/shapes).
    file = value.get("file", f"{name}.npy" if recipe else None)
    if not isinstance(file, str) or file.startswith("/") or ".." in Path(file).parts:
        raise UsageError(
            f"{file!r} is not a file name inside the case folder", where=f"{where}.file"
        )
    sha = value.get("sha256")
    if sha is None and not recipe:
        raise UsageError("missing", where=f"{where}.sha256", expected="the file's sha256 hex")
    dtype = value.get("dtype")
    if dtype is None and (not recipe or is_input):
        raise UsageError("missing", where=f"{where}.dtype", expected=", ".join(DTYPES))
    shape = value.get("shape")
    if shape is None and (not recipe or is_input):
        raise UsageError("missing", where=f"{where}.shape", expected="a list of sizes")
    init = value.get("init")
    if init is not None:
        init = _init(init, f"{where}.init")
    return TensorSpec(name, file, sha, dtype, shape, init)


def _init(value: dict[str, Any], where: str) -> dict[str, Any]:
    # The schema has checked the dist and its keys; defaults and numbers-as-strings are here.
    out: dict[str, Any] = {"dist": value["dist"]}
    for key, default in _INIT[value["dist"]].items():
        raw = value.get(key, default)
        if isinstance(default, int):
            out[key] = raw
        else:
            try:
                out[key] = float(raw)
            except ValueError:
                raise UsageError(f"{raw!r} is not a number", where=f"{where}.{key}") from None
    return out


def load_case(case_dir: Path, root: Path, *, recipe: bool = False) -> Case:
    """Parse and validate a case's manifest (``recipe``: files and hashes may be absent)."""
    path = case_dir / MANIFEST
    where = display(path, root)
    if not path.exists() and not path.is_symlink():
        raise UsageError("no manifest.yaml", where=display(case_dir, root))
    # A case folder or manifest linked out of the repository is refused, never read or quoted.
    data = read_yaml(path, where, root=root)
    validate_against(data, SCHEMA, where, exact_integers=True)
    # What a schema cannot say: keyword names are strings, `variant` is not an argument.
    args = data.get("args") or {}
    if not all(isinstance(k, str) for k in args):
        raise UsageError("is not a mapping of keyword arguments", where=f"{where}: args")
    if "variant" in args:
        raise UsageError(
            "name the variant with the top-level `variant` key", where=f"{where}: args.variant"
        )
    op, variant, seed = data["op"], data.get("variant"), data["seed"]
    generator, oracle = data.get("generator"), data["oracle"]
    specs: dict[str, dict[str, TensorSpec]] = {}
    for section in ("inputs", "outputs"):
        specs[section] = {
            str(name): _tensor(
                str(name),
                value,
                f"{where}: {section}.{name}",
                recipe=recipe,
                is_input=section == "inputs",
            )
            for name, value in data[section].items()
        }
    files = [s.file for sec in specs.values() for s in sec.values()]
    if len(set(files)) != len(files):
        raise UsageError("two tensors share one file", where=f"{where}: inputs/outputs")
    tol_block = data["tolerance"]
    if set(tol_block) != set(specs["outputs"]):
        raise UsageError(
            f"names {sorted(tol_block)}, outputs are {sorted(specs['outputs'])}",
            where=f"{where}: tolerance",
            expected="one tolerance per output",
        )
    tolerance = {name: _tolerance(v, f"{where}: tolerance.{name}") for name, v in tol_block.items()}
    return Case(
        case_dir.name,
        case_dir,
        op,
        variant,
        args,
        specs["inputs"],
        specs["outputs"],
        tolerance,
        seed,
        generator,
        oracle,
        raw_tolerance=dict(tol_block),
    )


def variants_of(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The variants an op declares (``kernels.registry.variants`` stores them on the function
    as ``__kernel_variants__``; an op from elsewhere may set the attribute itself)."""
    names = getattr(fn, "__kernel_variants__", ())
    return tuple(str(n) for n in names) if isinstance(names, (tuple, list)) else ()


def goldens_dir(config: ProtocolConfig, root: Path) -> Path:
    return root / config.goldens.dir


def case_dirs(base: Path, names: list[str], root: Path) -> list[Path]:
    """The named cases (each must exist), or every case folder under ``base``."""
    if names:
        out = []
        for name in names:
            path = base / name
            if not (path / MANIFEST).is_file():
                raise UsageError(f"no golden case {name!r} (no {display(path / MANIFEST, root)})")
            out.append(path)
        return out
    return sorted(p for p in base.iterdir() if (p / MANIFEST).is_file())


# -- running an op ----------------------------------------------------------------------------
def call_op(
    fn: Callable[..., Any], case: Case, inputs: dict[str, torch.Tensor], variant: str | None
) -> dict[str, Any]:
    """``fn(**inputs, **args[, variant=])`` as a dict keyed like the manifest's outputs.

    Raises RuntimeError with a readable message when the kernel fails or returns the wrong
    structure (the caller reports it as a mismatch, not as a crash).
    """
    kwargs = dict(case.args)
    if variant is not None:
        kwargs["variant"] = variant
    clones = {k: v.clone() for k, v in inputs.items()}
    try:
        result = fn(**clones, **kwargs)
    except Exception as exc:
        raise RuntimeError(f"the kernel raised {type(exc).__name__}: {exc}") from None
    if isinstance(result, torch.Tensor):
        if len(case.outputs) != 1:
            raise RuntimeError(
                f"the kernel returned one tensor; the manifest lists {len(case.outputs)} outputs"
            )
        return {next(iter(case.outputs)): result}
    if isinstance(result, dict):
        missing = set(case.outputs) - set(result)
        if missing:
            raise RuntimeError(f"the kernel's result lacks output(s) {sorted(missing)}")
        return {name: result[name] for name in case.outputs}
    raise RuntimeError(f"the kernel returned {type(result).__name__}, not a tensor or dict")


def _load_tensors(
    case: Case, root: Path, result: GateResult | None
) -> dict[tuple[str, str], Any] | None:
    """Verify every file against the manifest; the loaded tensors, or None when tampered."""
    loaded: dict[tuple[str, str], Any] = {}
    tampered = False
    where = display(case.manifest, root)
    for section, specs in (("inputs", case.inputs), ("outputs", case.outputs)):
        for spec in specs.values():
            path = case.dir / spec.file
            problem = None
            arr = None
            if file_reads.outside(path, root):
                problem = "is a symbolic link (or lies below one) that leaves the repository"
            elif not path.is_file():
                problem = "is missing"
            else:
                actual = sha256_file(path)
                if actual != spec.sha256:
                    problem = f"sha256 {actual[:16]}… != manifest {str(spec.sha256)[:16]}…"
                else:
                    try:
                        arr = tensors.load_npy(path)
                    except ValueError as exc:
                        problem = str(exc)
            if arr is not None:
                storage = DTYPES[str(spec.dtype)][1]
                if arr.dtype != storage:
                    problem = f"stores {arr.dtype}, manifest dtype {spec.dtype} needs {storage}"
                elif list(arr.shape) != spec.shape:
                    problem = f"shape {list(arr.shape)} != manifest {spec.shape}"
            if problem:
                tampered = True
                if result is not None:
                    result.add(
                        GOLDEN_TAMPERED.id,
                        f"{case.name}: {section}.{spec.name} ({spec.file}) {problem}",
                        path=where,
                    )
            elif arr is not None:  # no problem found: the file was read
                loaded[(section, spec.name)] = tensors.from_numpy(arr, str(spec.dtype))
    return None if tampered else loaded


@dataclass
class Evaluation:
    variant: str | None
    outputs: dict[str, Comparison]
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.ok for c in self.outputs.values())

    @property
    def bit_exact(self) -> bool:
        return self.error is None and all(
            c.problem is None and c.bit_exact == c.total for c in self.outputs.values()
        )

    def totals(self) -> tuple[int, int, float, float, float]:
        n = sum(c.total for c in self.outputs.values())
        exact = sum(c.bit_exact for c in self.outputs.values())
        if self.error:
            return exact, n, math.inf, math.inf, math.inf
        err = max((c.max_abs_err for c in self.outputs.values()), default=0.0)
        ulp = max((c.max_ulp for c in self.outputs.values()), default=0.0)
        margin = max((c.worst_margin for c in self.outputs.values()), default=0.0)
        return exact, n, err, ulp, margin

    def to_json(self) -> dict[str, Any]:
        from tools.numerics.common import num

        exact, n, err, ulp, margin = self.totals()
        return {
            "variant": self.variant,
            "ok": self.ok,
            "bit_exact": exact,
            "total": n,
            "max_abs_err": num(err),
            "max_ulp": num(ulp),
            "worst_margin": num(margin),
            "error": self.error,
            "outputs": {k: c.to_json() for k, c in self.outputs.items()},
        }


def evaluate(
    fn: Callable[..., Any], case: Case, loaded: dict[tuple[str, str], Any], variant: str | None
) -> Evaluation:
    inputs = {name: loaded[("inputs", name)] for name in case.inputs}
    try:
        got = call_op(fn, case, inputs, variant)
    except RuntimeError as exc:
        return Evaluation(variant, {}, error=str(exc))
    outputs = {
        name: tensors.compare(got[name], loaded[("outputs", name)], case.tolerance[name])
        for name in case.outputs
    }
    return Evaluation(variant, outputs)


def _mismatch_message(case: Case, name: str, c: Comparison) -> str:
    tol = case.tolerance[name]
    text = f"{case.name}: output {name!r}"
    if c.problem:
        text += f": {c.problem};"
    text += (
        f" worst margin {fmt(c.worst_margin)} > 1 at index {c.worst_index} "
        f"(got {fmt(c.got)}, want {fmt(c.want)}; {tol.describe()}); max abs err "
        f"{fmt(c.max_abs_err)}, bit-exact {c.bit_exact}/{c.total}"
    )
    return text


def check_case(case: Case, root: Path, result: GateResult, ops: RepoOps) -> dict[str, Any]:
    """Verify files, recompute with the current kernel, add findings; the case's stats."""
    stats: dict[str, Any] = {"op": case.op, "variant": case.variant}
    loaded = _load_tensors(case, root, result)
    if loaded is None:
        stats["tampered"] = True
        return stats
    fn = ops.op(case.op, where=f"{display(case.manifest, root)}: op")
    ev = evaluate(fn, case, loaded, case.variant)
    stats.update(ev.to_json())
    where = display(case.manifest, root)
    if ev.error:
        result.add(GOLDEN_MISMATCH.id, f"{case.name}: {ev.error}", path=where)
    for name, c in ev.outputs.items():
        if not c.ok:
            result.add(GOLDEN_MISMATCH.id, _mismatch_message(case, name, c), path=where)
        else:
            result.add(
                GOLDEN_RESULT.id,
                f"{case.name}: output {name!r} ({case.tolerance[name].describe()}): bit-exact "
                f"{c.bit_exact}/{c.total}, max abs err {fmt(c.max_abs_err)}, worst margin "
                f"{fmt(c.worst_margin)} at index {c.worst_index} (got {fmt(c.got)}, want "
                f"{fmt(c.want)})",
                path=where,
            )
    return stats


def check(config: ProtocolConfig, root: Path, names: list[str]) -> GateResult:
    result = GateResult(NAME)
    base = goldens_dir(config, root)
    if not base.is_dir():
        if names:
            raise UsageError(f"no goldens folder {display(base, root)} (config goldens.dir)")
        result.add(
            GOLDEN_ABSENT.id,
            f"{display(base, root)} does not exist (config goldens.dir): no golden cases",
        )
        result.stats["cases"] = 0
        return result
    dirs = case_dirs(base, names, root)
    cases = [load_case(d, root) for d in dirs]  # every manifest parses before any is judged
    result.stats["cases"] = len(cases)
    result.stats["cpu_capability"] = tensors.cpu_capability()
    with RepoOps(root) as ops:
        result.stats["results"] = {case.name: check_case(case, root, result, ops) for case in cases}
    return result


# -- explain ----------------------------------------------------------------------------------
def explain(config: ProtocolConfig, root: Path, name: str) -> tuple[GateResult, list[Evaluation]]:
    """Evaluate every registered variant of the case's op against its golden."""
    result = GateResult(NAME)
    case_dir = case_dirs(goldens_dir(config, root), [name], root)[0]
    case = load_case(case_dir, root)
    loaded = _load_tensors(case, root, result)
    if loaded is None:
        return result, []
    with RepoOps(root) as ops:
        fn = ops.op(case.op, where=f"{display(case.manifest, root)}: op")
        names: list[str | None] = [*variants_of(fn)] or [case.variant]
        if case.variant not in names:
            names.insert(0, case.variant)
        evaluations = [evaluate(fn, case, loaded, v) for v in names]
    where = display(case.manifest, root)
    result.stats.update(
        {
            "case": case.name,
            "op": case.op,
            "variant": case.variant,
            "variants": [ev.to_json() for ev in evaluations],
        }
    )
    exact = [str(ev.variant) for ev in evaluations if ev.bit_exact]
    result.stats["bit_exact_variants"] = exact
    for ev in evaluations:
        mine = ev.variant == case.variant
        if mine and not ev.ok:
            if ev.error:
                result.add(GOLDEN_MISMATCH.id, f"{case.name}: {ev.error}", path=where)
            for out, c in ev.outputs.items():
                if not c.ok:
                    result.add(GOLDEN_MISMATCH.id, _mismatch_message(case, out, c), path=where)
    return result, evaluations


def polarity_table(
    case_name: str, op: str, manifest_variant: str | None, evaluations: list[Evaluation]
) -> str:
    """The human table ``golden explain`` prints."""
    head = ("variant", "bit-exact", "max abs err", "max ulp", "worst margin", "verdict")
    rows = [head]
    for ev in evaluations:
        exact, n, err, ulp, margin = ev.totals()
        if ev.error:
            verdict = f"error: {ev.error}"
        elif ev.bit_exact:
            verdict = "reproduces the golden bit-exactly"
        elif ev.ok:
            verdict = "within tolerance, not bit-exact"
        else:
            problems = [c.problem for c in ev.outputs.values() if c.problem]
            worst = max(ev.outputs.items(), key=lambda kv: kv[1].worst_margin)
            verdict = (
                f"mismatch: {'; '.join(problems) + '; ' if problems else ''}worst "
                f"{worst[0]}{worst[1].worst_index} got {fmt(worst[1].got)} want "
                f"{fmt(worst[1].want)}"
            )
        label = str(ev.variant) + (" *" if ev.variant == manifest_variant else "")
        rows.append((label, f"{exact}/{n}", fmt(err), fmt(ulp), fmt(margin), verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = [f"golden {case_name}: {op} (* = the manifest's variant)"]
    for r in rows:
        lines.append(
            "  " + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        )
    return "\n".join(lines) + "\n"


# -- capture ----------------------------------------------------------------------------------
def _generate(spec: TensorSpec, gen: torch.Generator) -> torch.Tensor:
    init = spec.init or {"dist": "randn", "scale": 1.0, "shift": 0.0}
    torch_dtype = DTYPES[str(spec.dtype)][0]
    shape = tuple(spec.shape or ())
    dist = init["dist"]
    if dist == "randint":
        t = torch.randint(init["low"], init["high"], shape, generator=gen, dtype=torch.int64)
        return t.to(torch_dtype)
    if dist == "full":
        base = torch.full(shape, init["value"], dtype=torch.float64)
    elif dist == "uniform":
        base = torch.rand(shape, generator=gen, dtype=torch.float32).to(torch.float64)
        base = init["low"] + (init["high"] - init["low"]) * base
    else:
        base = torch.randn(shape, generator=gen, dtype=torch.float32).to(torch.float64)
        base = base * init["scale"] + init["shift"]
    # Through fp32 first: the recipe is "an fp32 draw narrowed to the dtype".
    return base.to(torch.float32).to(torch_dtype)


def capture(config: ProtocolConfig, root: Path, name: str, *, force: bool) -> dict[str, Any]:
    """(Re)generate a case from its seed; returns the ledger payload. Refuses to overwrite."""
    case_dir = case_dirs(goldens_dir(config, root), [name], root)[0]
    case = load_case(case_dir, root, recipe=True)
    where = display(case.manifest, root)
    specs = list(case.inputs.values()) + list(case.outputs.values())
    # Every file it will write, before any op runs: none may be, or lie below, a link.
    for target in [case_dir / s.file for s in specs] + [case.manifest]:
        refuse_links(target, root)
    existing = [s.file for s in specs if (case_dir / s.file).exists()]
    if existing and not force:
        raise UsageError(
            f"case {name!r} is already captured ({', '.join(existing)} exist); "
            "pass --force to regenerate it",
            where=where,
        )
    gen = torch.Generator().manual_seed(case.seed)
    inputs = {spec.name: _generate(spec, gen) for spec in case.inputs.values()}
    with RepoOps(root) as ops:
        fn = ops.op(case.op, where=f"{where}: op")
        try:
            got = call_op(fn, case, inputs, case.variant)
        except RuntimeError as exc:
            raise UsageError(f"cannot capture: {exc}", where=where) from None
    blobs = {spec.file: tensors.npy_bytes(inputs[spec.name]) for spec in case.inputs.values()}
    for spec in case.outputs.values():
        blobs[spec.file] = _output_blob(spec, got[spec.name], where)
    for spec in specs:
        spec.sha256 = sha256_bytes(blobs[spec.file])
    case.generator = f"torch {torch.__version__}"
    # Data first, manifest last: an interrupted capture leaves a manifest that does not match
    # its files (golden-tampered), never a matching manifest over half-written data.
    for spec in specs:
        write_atomic(case_dir / spec.file, blobs[spec.file], root=root)
    write_atomic(case.manifest, _manifest_text(case).encode("utf-8"), root=root)
    return {
        "case": case.name,
        **_recipe(case),
        "cpu_capability": tensors.cpu_capability(),
        "files": {s.file: s.sha256 for s in specs},
        "manifest_sha256": sha256_file(case.manifest),
    }


def _output_blob(spec: TensorSpec, t: object, where: str) -> bytes:
    """The .npy bytes of one captured output, which must be a tensor of a dtype goldens store
    and of the manifest's dtype and shape where it gives them (then filled in from ``t``)."""
    if not isinstance(t, torch.Tensor):
        raise UsageError(f"output {spec.name!r} is not a tensor", where=where)
    actual = tensors.dtype_name(t.dtype)
    if actual not in DTYPES:
        raise UsageError(
            f"output {spec.name!r} has dtype {actual}, which no golden stores", where=where
        )
    if spec.dtype is not None and spec.dtype != actual:
        raise UsageError(
            f"output {spec.name!r} is {actual}, manifest says {spec.dtype}",
            where=f"{where}: outputs.{spec.name}.dtype",
        )
    if spec.shape is not None and spec.shape != list(t.shape):
        raise UsageError(
            f"output {spec.name!r} has shape {list(t.shape)}, manifest says {spec.shape}",
            where=f"{where}: outputs.{spec.name}.shape",
        )
    spec.dtype, spec.shape = actual, list(t.shape)
    return tensors.npy_bytes(t)


def _recipe(case: Case) -> dict[str, Any]:
    """What makes a case, as both its manifest and its capture record say it."""
    return {
        "op": case.op,
        "variant": case.variant,
        "args": case.args,
        "seed": case.seed,
        "generator": case.generator,
        "oracle": case.oracle,
    }


def _manifest_text(case: Case) -> str:
    """The manifest a capture writes: the recipe, then every file with its hash."""
    manifest = {
        **_recipe(case),
        "inputs": {s.name: s.to_yaml(with_init=True) for s in case.inputs.values()},
        "outputs": {s.name: s.to_yaml(with_init=False) for s in case.outputs.values()},
        "tolerance": case.raw_tolerance,
    }
    if case.variant is None:
        del manifest["variant"]
    return (
        "# Written by `tools golden capture`: files and hashes are generated; edit the op,\n"
        "# args, init recipes, seed, tolerance or oracle and capture again with --force.\n"
        + yaml.safe_dump(manifest, sort_keys=False, default_flow_style=None, width=100)
    )
