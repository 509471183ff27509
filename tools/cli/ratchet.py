"""``tools ratchet check [NAME…]`` and ``tools ratchet tighten [NAME…]`` (SPEC §4.5).

The counting engine loads inside the commands, so registering them costs start-up nothing
(for speed, not to hide an import circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import REPORT, ResultType, command, emit, new_app, show
from tools.errors import UsageError
from tools.exits import EXIT_FAIL
from tools.options import Options, RatchetRequest

if TYPE_CHECKING:
    from tools.cli.results.ratchet import RatchetsTightened

NamesArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[NAME]...",
        help="Ratchets to judge (default: every configured one).",
        show_default=False,
    ),
]
RevOpt = Annotated[
    str | None,
    typer.Option("--rev", help="Count this commit's tree (default: the working tree)."),
]
BaseOpt = Annotated[
    str | None,
    typer.Option("--base", help="Base ref for naming new sites (default: config `base`)."),
]


def _select(
    opts: Options, names: list[str] | None, rev: str | None, base: str | None, report: bool
) -> Options:
    if rev is not None and opts.staged:
        raise UsageError("--rev and --staged name different trees; give one")
    # With --rev, the counted tree is the head whose merge base holds the baselines.
    head = rev if rev is not None and opts.config_from == "base" else opts.head
    request = RatchetRequest(tuple(names or ()), rev, report)
    return opts._replace(base=base, head=head, ratchet=request)


def _per_file_table(stats: dict[str, Any]) -> str:
    lines: list[str] = []
    for name, info in (stats.get("ratchets") or {}).items():
        per_file = info.get("per_file") or {}
        lines.append(f"{name}: {len(per_file)} file(s) with counted sites")
        for path in sorted(per_file):
            counts = ", ".join(f"{b} {n}" for b, n in per_file[path].items())
            lines.append(f"  {path}: {counts}")
    return "\n".join(lines) + "\n" if lines else ""


ReportOpt = Annotated[bool, typer.Option("--report", help="Add a per-file table of the counts.")]


def ratchet_check(
    opts: Options,
    names: NamesArg = None,
    rev: RevOpt = None,
    base: BaseOpt = None,
    report: ReportOpt = False,
) -> None:
    """Count each ratchet's buckets over a whole tree and compare them with the
    baselines: a rise names its new sites, a fall must be tightened in the same change."""
    from tools import gates
    from tools.context import Context
    from tools.report import render

    opts = _select(opts, names, rev, base, report)
    ctx = Context(opts)
    (result,) = gates.run_all(["ratchet"], ctx)
    # Severities and the findings baseline judge it as preflight does.
    out = gates.judged(ctx, [result])
    emit(render(out, opts.fmt, summary=False))
    if report and opts.fmt == "text":
        emit(_per_file_table(result.stats))
    raise typer.Exit(out.exit_code(fail_on_skip=opts.fail_on_skip))


def ratchet_tighten(opts: Options, names: NamesArg = None, rev: RevOpt = None) -> None:
    """Lower the baselines to the current counts (create a missing one); refuse, writing
    nothing, when any bucket would rise or a detector is unarmed (exit 1)."""
    done = _tighten(_select(opts, names, rev, None, False))
    show(done, opts, exit_code=EXIT_FAIL if done.status == "refused" else 0)


def register(app: typer.Typer) -> None:
    ratchet = new_app("Counts that may only go down: pattern and markdown ratchets.")
    ratchet.command("check")(command(formats=REPORT, check=True, staged=True)(ratchet_check))
    tightened = ResultType("tools.cli.results.ratchet", "RatchetsTightened")
    ratchet.command("tighten")(command(formats=tightened, staged=True)(ratchet_tighten))
    app.add_typer(ratchet, name="ratchet")


def _tighten(opts: Options) -> RatchetsTightened:
    """Write the lowered baselines; what was done, or why nothing was."""
    from tools.cli.results.ratchet import RatchetsTightened
    from tools.context import Context
    from tools.gates.ratchet import read_baseline, tree_for
    from tools.ratchets import baseline as baseline_mod
    from tools.ratchets import engine
    from tools.ratchets.tree import Tree

    ctx = Context(opts)
    ratchets = engine.load(
        ctx.config, ctx.config_source, list(opts.ratchet.names if opts.ratchet else ())
    )
    tree = tree_for(ctx)
    disk = Tree(ctx.git)  # the baseline files tighten rewrites
    refusals: list[str] = []
    for r in ratchets:
        for bucket, problems in engine.unarmed(r).items():
            refusals += [f"{r.name}.{bucket} is unarmed: it {p}" for p in problems]
    plans: list[dict[str, Any]] = []
    if not refusals:
        counts, _ = engine.count(tree, ratchets, ctx.config.index.path)
        for r in ratchets:
            before = read_baseline(disk, r)
            now = dict(counts[r.name].counts)
            if before is not None:
                refusals += [
                    f"{r.name}.{b} would rise from {before[b]} to {n}"
                    for b, n in now.items()
                    if b in before and n > before[b]
                ]
            plans.append({"ratchet": r, "before": before, "after": now})
    if refusals:
        return RatchetsTightened("refused", refusals=tuple(refusals))
    done: list[dict[str, Any]] = []
    for plan in plans:
        r, before, after = plan["ratchet"], plan["before"], plan["after"]
        written = before != after
        if written:
            baseline_mod.write(ctx.git.worktree_path(r.baseline), r.name, after, root=ctx.root)
        done.append(
            {
                "ratchet": r.name,
                "path": r.baseline,
                "written": written,
                "before": before,
                "after": after,
            }
        )
    return RatchetsTightened("ok", ratchets=tuple(done))
