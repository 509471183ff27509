"""``tools golden check|explain|capture`` and ``tools numerics grid-tie|topp-count``.

These are the only commands that import torch and numpy, and only inside their bodies: this
module itself imports neither, so ``tools --help`` and every other command stay torch-free.
Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import REPORT, ResultType, command, emit, finish, new_app, show
from tools.errors import UsageError
from tools.options import Options
from tools.report import GateResult, Report

if TYPE_CHECKING:
    from tools.context import Context


def _need_numerics() -> None:
    """The numerics commands need torch and numpy; say so in one line when they are missing."""
    import importlib.util

    missing = [m for m in ("torch", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"the numerics commands need {' and '.join(missing)}, which is not installed",
            expected="pip install torch==2.13.0 numpy (or the `numerics` extra)",
        )


def _context(opts: Options) -> Context:
    # Loaded here, not at import: the CLI shell stays free of the git layer and jsonschema.
    from tools.context import Context

    return Context(opts)


def _judged(ctx: Context, result: GateResult) -> Report:
    # The one path of every report: configured severities, the findings baseline, metadata.
    from tools import gates

    return gates.judged(ctx, [result])


NoRecord = Annotated[
    bool,
    typer.Option("--no-record", help="Judge only: append no record to the evidence ledger."),
]


def _append(ctx: Context, kind: str, payload: dict[str, Any]) -> tuple[str, str]:
    """Append one record to the evidence ledger; notices go to stderr. (id, ledger path)."""
    from tools.numerics.common import append_record, display, ledger_path

    path = ledger_path(ctx.config, ctx.root)
    rid, notices = append_record(path, kind, payload, root=ctx.root)
    for notice in notices:
        emit(f"notice: {notice}\n", err=True)
    return rid, display(path, ctx.root)


def _record(ctx: Context, result: GateResult, kind: str, payload: dict[str, Any]) -> None:
    """Append the run's ledger record; its id goes into the stats."""
    rid, ledger = _append(ctx, kind, payload)
    result.stats["ledger_record"] = {"kind": kind, "id": rid, "ledger": ledger}


def golden_check(
    opts: Options,
    cases: Annotated[
        list[str] | None, typer.Argument(help="Case names (default: every case).")
    ] = None,
) -> None:
    """Verify hashes and shapes, recompute each case with the current kernel, compare."""
    _need_numerics()
    from tools.numerics import goldens

    ctx = _context(opts)
    finish(_judged(ctx, goldens.check(ctx.config, ctx.root, list(cases or []))), opts)


CaseArg = Annotated[str, typer.Argument(help="The case name.")]


def golden_explain(opts: Options, case: CaseArg) -> None:
    """Evaluate every registered variant of the case's op: which reproduces the golden
    bit-exactly, and each one's max abs error and worst margin."""
    _need_numerics()
    from tools.numerics import goldens

    ctx = _context(opts)
    result, evaluations = goldens.explain(ctx.config, ctx.root, case)
    if opts.fmt == "text" and evaluations:
        emit(
            goldens.polarity_table(
                case, str(result.stats.get("op")), result.stats.get("variant"), evaluations
            )
        )
    finish(_judged(ctx, result), opts)


ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite a captured case.")]


def golden_capture(opts: Options, case: CaseArg, force: ForceOpt = False) -> None:
    """(Re)generate a case from its seed and record a golden-capture ledger record."""
    _need_numerics()
    from tools.cli.results.golden import GoldenCaptured
    from tools.numerics import goldens

    ctx = _context(opts)
    payload = goldens.capture(ctx.config, ctx.root, case, force=force)
    rid, ledger = _append(ctx, "golden-capture", payload)
    files = tuple(payload["files"].items())
    variant, seed, generator = payload["variant"], payload["seed"], payload["generator"]
    show(GoldenCaptured(case, payload["op"], variant, seed, generator, files, rid, ledger), opts)


_GRID_TIE_STATS = ("verdict", "reasons", "divergent", "max_divergent", "top_n", "prompts")

# A judge of one input file: (the gate result, what its ledger record holds), given the
# context and the file as the report names it; the record is built only when it is appended.
Verdict = tuple[GateResult, Callable[[], dict[str, Any]]]
Judge = Callable[["Context", str], Verdict]
EvidenceArg = Annotated[Path, typer.Argument(help="Evidence JSON (tools.grid-tie/1).")]
PlanArg = Annotated[Path, typer.Argument(help="The plan (YAML).")]


def _admission(opts: Options, path: Path, kind: str, no_record: bool, judge: Judge) -> None:
    """Judge one input file, append the run's ledger record unless --no-record, report."""
    _need_numerics()
    from tools.numerics.common import display

    ctx = _context(opts)
    result, payload = judge(ctx, display(path, ctx.root))
    if not no_record:
        _record(ctx, result, kind, payload())
    finish(_judged(ctx, result), opts)


def grid_tie(opts: Options, evidence: EvidenceArg, no_record: NoRecord = False) -> None:
    """PASS only if every divergent prompt is explained by a BF16 logit grid tie."""

    def judge(ctx: Context, where: str) -> Verdict:
        from tools.numerics import gridtie
        from tools.numerics.common import sha256_file

        result = gridtie.run_file(evidence, where)
        return result, lambda: {
            "evidence": where,
            "evidence_sha256": sha256_file(evidence),
            "rule": gridtie.REGISTERED_RULE,
            **{k: result.stats[k] for k in _GRID_TIE_STATS},
        }

    _admission(opts, evidence, "grid-tie", no_record, judge)


def topp_count(opts: Options, plan: PlanArg, no_record: NoRecord = False) -> None:
    """Kept counts of each kernel against the native comparator, plus the safety checks."""

    def judge(ctx: Context, where: str) -> Verdict:
        from tools.numerics import topp

        result, payload = topp.run_file(plan, ctx.root, where)
        return result, lambda: payload

    _admission(opts, plan, "topp-count", no_record, judge)


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True)
    golden = new_app("Golden cases of the repository's kernels (goldens/<case>/manifest.yaml).")
    golden.command("check")(gate(golden_check))
    golden.command("explain")(gate(golden_explain))
    captured = ResultType("tools.cli.results.golden", "GoldenCaptured")
    golden.command("capture")(command(formats=captured)(golden_capture))
    numerics = new_app("Numerical admission gates (grid-tie, top-p kept counts).")
    numerics.command("grid-tie")(gate(grid_tie))
    numerics.command("topp-count")(gate(topp_count))
    app.add_typer(golden, name="golden")
    app.add_typer(numerics, name="numerics")
