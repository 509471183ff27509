"""``tools mutate run|matrix|collect|recover`` and ``tools attribute`` (SPEC §6).

Exit codes: 0 every arm completed and every ``expect`` met (FLAKY alone is no error, nor are
NO-BUILD, KILLED, EMPTY, STALE, NO-QUIET-WINDOW and ENV-FAULT without an ``expect``); 1 an
``expect`` unmet, an arm ERROR or UNANCHORED, an unexpected TIMEOUT or NOT-APPLIED, a restore
that did not verify, an ``inplace-conflict``, or a table that could not be rendered; 2 a bad
plan or argument; 130 / 143 when interrupted (every worktree removed, the working tree
restored, nothing recorded).
Everything heavy loads inside the commands, for start-up speed (not to hide an import circle).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import F, ResultType, append_ledger, command, emit, new_app, show
from tools.errors import UsageError
from tools.exits import EXIT_FAIL, environment_error
from tools.options import Options

if TYPE_CHECKING:
    from tools.evidence import Vouched
    from tools.git import Git
    from tools.mutate.plan import Arm, Plan


def _kill_grace(git: Git, opts: Options, *, fallback: bool = False) -> float:
    """``mutate.kill_grace_s``: how long a step's process group has after SIGTERM before
    SIGKILL. ``fallback``: the default when the config cannot be read (ending a killed
    run's groups must not wait for a config that the command itself may refuse later)."""
    from tools.config import load_typed
    from tools.mutate.proc import DEFAULT_KILL_GRACE_S

    try:
        return load_typed(
            git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache
        ).mutate.kill_grace_s
    except (UsageError, OSError):
        if not fallback:
            raise
        return DEFAULT_KILL_GRACE_S


def _end_groups(git: Git, opts: Options) -> None:
    """End the process groups a killed run left running (before anything is restored or
    swept, so that none of them writes into a file afterwards): SIGTERM, the grace, SIGKILL."""
    from tools.mutate.proc import sweep_groups

    grace = _kill_grace(git, opts, fallback=True)
    for notice in sweep_groups(git.tools_dir(), grace):
        emit(f"notice: {notice}\n", err=True)


def _conflicts_out(conflicts: list[Any]) -> None:
    for c in conflicts:
        emit(f"error: inplace-conflict: {c.message()}\n", err=True)


def _prelude(opts: Options) -> Git:
    """Open the repository, then finish what an earlier run left: its process groups, a
    pending in-place restore (said on stderr) and worktrees of a run that was killed. A file
    changed since its mutant was written is an ``inplace-conflict``: exit 1, nothing run."""
    from tools.git import Git
    from tools.mutate import inplace, worktree

    git = Git(opts.repo)
    _end_groups(git, opts)
    recovery = inplace.recover(git.root, git.tools_dir())
    for notice in recovery.notices:
        emit(f"notice: {notice}\n", err=True)
    if recovery.conflicts:
        _conflicts_out(recovery.conflicts)
        raise typer.Exit(EXIT_FAIL)
    for notice in worktree.sweep(git.root, git.tools_dir()):
        emit(f"notice: {notice}\n", err=True)
    return git


def _ledger_path(git: Git, opts: Options) -> tuple[Path, str]:
    from tools.config import load_typed

    cfg = load_typed(git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache)
    rel = cfg.ledger.path
    return git.root / rel, rel


def _vouched_for(
    git: Git, opts: Options, ledger_path: Path
) -> Callable[[list[str]], Vouched | None]:
    """For a table that has the ``vouched`` column (SPEC §11): the principal vouching for
    each of ``ids``, from the signers files the config names (as ``tools spec render``)."""

    def vouched(ids: list[str]) -> Vouched | None:
        from tools.config import load_typed
        from tools.replay.vouched import for_tree

        cfg = load_typed(
            git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache
        ).ledger
        return for_tree(git.root, ledger_path, cfg.allowed_signers, cfg.revoked_signers, ids)

    return vouched


def _outputs_inside(git: Git, *paths: Path | None) -> None:
    """Refuse, before anything runs, an output (ledger, spec, receipt) that is a symbolic
    link or lies below one (exit 2 naming the link; SPEC §10)."""
    from tools.fsio import refuse_links

    for path in paths:
        if path is not None:
            refuse_links(path, git.root)


def _render(
    git: Git, opts: Options, spec: str, record: dict[str, Any], ledger_path: Path,
    new: list[dict[str, Any]],
) -> bool | None:  # fmt: skip
    """Render ``record`` into ``spec``, looking its records up in the ledger and ``new``;
    whether the table changed, or None after printing an error."""
    from tools.mutate import spec_table

    lookup = spec_table.ledger_lookup(ledger_path, new)
    vouched_for = _vouched_for(git, opts, ledger_path)
    try:
        changed = spec_table.render(git.root, spec, record, lookup, vouched_for)
    except spec_table.RendererUnavailable as exc:
        emit(f"error: the evidence table of {spec} was not written: {exc}\n", err=True)
        return None
    except UsageError as exc:
        # The records are appended already: say the table is missing, exit 1 (SPEC §10).
        emit(f"error: the evidence table of {spec} was not written: {exc.render()}\n", err=True)
        return None
    except OSError as exc:
        message = environment_error(exc)
        if message is None:
            raise
        emit(f"error: the evidence table of {spec} was not written: {message}\n", err=True)
        return None
    return changed


def _table(
    git: Git,
    opts: Options,
    spec: str | None,
    record: dict[str, Any],
    ledger_path: Path,
    new: list[dict[str, Any]],
) -> tuple[str | None, bool]:
    """With a ``spec``, render its evidence table: what became of it (``rendered``, ``already
    current``) and False; (None, True) when it could not be written (said on stderr); (None,
    False) without a spec."""
    if not spec:
        return None, False
    changed = _render(git, opts, spec, record, ledger_path, new)
    if changed is None:
        return None, True
    return ("rendered" if changed else "already current"), False


def _exit_code(failures: Sequence[str], table_failed: bool) -> int:
    return EXIT_FAIL if failures or table_failed else 0


def _progress(opts: Options) -> Any:
    from tools.mutate.runner import LiveProgress, Progress

    if opts.fmt == "text" and sys.stderr.isatty():
        return LiveProgress(sys.stderr)
    return Progress(sys.stderr)


def _interrupted(exc: BaseException, what: str) -> typer.Exit:
    from tools.mutate.proc import exit_status

    emit(f"interrupted: {what}\n", err=True)
    return typer.Exit(exit_status(exc))


PlanArg = Annotated[Path, typer.Argument(metavar="PLAN", help="The plan (YAML).")]
ArmOpt = Annotated[list[str] | None, typer.Option("--arm", help="Run only this arm (repeatable).")]
JobsOpt = Annotated[int, typer.Option("-j", "--jobs", min=1, help="Arms run at once (worktrees).")]
InPlaceOpt = Annotated[
    bool, typer.Option("--in-place", help="Run in the working tree (builds that cannot move).")
]
ReceiptOpt = Annotated[
    Path | None,
    typer.Option("--receipt", help="Write the arm records to this file, not the ledger."),
]


def mutate_run(
    opts: Options,
    plan_file: PlanArg,
    arms: ArmOpt = None,
    jobs: JobsOpt = 1,
    in_place: InPlaceOpt = False,
    receipt: ReceiptOpt = None,
) -> None:
    """Run the plan's arms: apply, prove, build, test, restore; record every arm and the
    run in the ledger and render the spec's evidence table."""
    from tools.cli.results.mutate import MutationRun
    from tools.mutate import plan as plan_mod
    from tools.mutate import runner
    from tools.mutate.settle import settle

    git = _prelude(opts)
    plan = plan_mod.load(git, plan_file)
    names = list(arms or [])
    for name in names:
        if plan.arm(name) is None:
            raise UsageError(
                f"the plan has no arm {name!r}",
                where="--arm",
                expected="one of " + ", ".join(a.name for a in plan.arms),
            )
    if in_place and jobs > 1:
        raise UsageError("--in-place runs one arm at a time", where="-j")
    ledger_path, ledger_rel = (None, None) if receipt else _ledger_path(git, opts)
    rec_path = None
    if receipt is not None:
        rec_path = receipt if receipt.is_absolute() else Path.cwd() / receipt
    spec_path = git.root / plan.spec if plan.spec and receipt is None else None
    _outputs_inside(git, ledger_path, spec_path, rec_path)
    payloads = _run_arms(opts, git, plan, runner.order(plan, names or None), in_place, jobs)
    done = settle(
        plan,
        payloads,
        ledger_path=lambda: _ledger_path(git, opts)[0],
        receipt=rec_path,
        root=git.root,
    )
    how = "in place" if in_place else f"worktrees, -j {jobs}"
    failures = done.failures
    if done.run is None:
        code = _exit_code(failures, False)
        run = MutationRun(plan.path, plan.base, how, done.arms, None, failures, code, str(receipt))
        show(run, opts, exit_code=code)
        return
    assert ledger_path is not None and ledger_rel is not None
    run_record, new = done.run, done.new
    append_ledger(git.root, ledger_path, ledger_rel, new)
    table, table_failed = _table(git, opts, plan.spec, run_record, ledger_path, new)
    code = _exit_code(failures, table_failed)
    run = MutationRun(
        plan.path, plan.base, how, done.arms, run_record, failures, code,
        ledger=ledger_rel, spec=plan.spec, table=table,
    )  # fmt: skip
    show(run, opts, exit_code=code)


def _run_arms(
    opts: Options, git: Git, plan: Plan, selected: list[Arm], in_place: bool, jobs: int
) -> list[dict[str, Any]]:
    """Run the selected arms (in place, or in worktrees ``jobs`` at once) and return their
    payloads; an interrupt ends the command, every worktree removed, nothing recorded."""
    from tools.mutate import runner
    from tools.mutate.proc import Interrupted, Registry, interrupts, journal

    registry = Registry(kill_grace_s=_kill_grace(git, opts))
    progress = _progress(opts)
    where: dict[str, Any] = {
        "repo_root": git.root,
        "tools_dir": git.tools_dir(),
        "registry": registry,
        "progress": progress,
    }
    try:
        with interrupts(), journal(git.tools_dir()):
            if in_place:
                payloads = runner.run_in_place(plan, selected, **where)
            else:
                payloads = runner.run_in_worktrees(plan, selected, jobs=jobs, **where)
    except (KeyboardInterrupt, Interrupted) as exc:
        stopped = progress.interrupted()
        progress.close()
        said = "the working tree restored" if in_place else "every worktree removed"
        if in_place:
            from tools.mutate.inplace import conflicts

            held = conflicts(git.tools_dir())
            if held:
                _conflicts_out(held)
                said = "the working tree restored but for the file(s) in conflict"
        arms_said = f"arm(s) {', '.join(stopped)} interrupted; " if stopped else ""
        raise _interrupted(exc, f"{arms_said}{said}; nothing recorded") from None
    progress.close()
    return payloads


def mutate_matrix(opts: Options, plan_file: PlanArg) -> None:
    """Print the arms as a GitHub Actions strategy.matrix: {"arm": [names…]}."""
    from tools.cli.results.mutate import ArmsMatrix
    from tools.mutate import plan as plan_mod
    from tools.mutate.receipts import matrix

    git = _prelude(opts)
    plan = plan_mod.load(git, plan_file)
    show(ArmsMatrix(matrix(plan)), opts)


def mutate_collect(opts: Options, plan_file: PlanArg) -> None:
    """Build the run record from the plan's arm records in the ledger (merged receipts),
    decide UNANCHORED, append, and render the spec's evidence table."""
    from tools.cli.results.mutate import MutationRun
    from tools.mutate import plan as plan_mod
    from tools.mutate import records as rec
    from tools.mutate.receipts import collect

    git = _prelude(opts)
    plan = plan_mod.load(git, plan_file)
    ledger_path, ledger_rel = _ledger_path(git, opts)
    _outputs_inside(git, ledger_path, git.root / plan.spec if plan.spec else None)
    got = collect(plan, ledger_path)
    if got.missing:
        emit(
            f"error: {ledger_rel} has no mutation-arm record of plan {plan.path} "
            f"(sha256 {plan.sha256[:12]}) at base {plan.base[:12]} for arm(s) "
            f"{', '.join(got.missing)}; nothing written\n",
            err=True,
        )
        raise typer.Exit(EXIT_FAIL)
    assert got.run is not None
    append_ledger(git.root, ledger_path, ledger_rel, got.new)
    table, table_failed = _table(git, opts, plan.spec, got.run, ledger_path, got.new)
    failures = rec.failures(got.arms)
    code = _exit_code(failures, table_failed)
    done = MutationRun(
        plan.path,
        plan.base,
        "collected",
        tuple(got.arms),
        got.run,
        tuple(failures),
        code,
        ledger=ledger_rel,
        superseded=got.superseded,
        spec=plan.spec,
        table=table,
    )
    show(done, opts, exit_code=code)


DiscardOpt = Annotated[
    bool,
    typer.Option(
        "--discard",
        help="Drop the recovery record without touching the working tree (once you "
        "have decided what a file in conflict keeps).",
    ),
]


def mutate_recover(opts: Options, discard: DiscardOpt = False) -> None:
    """Finish a pending in-place restore (left by a run that died mid-arm) and say what
    it did; "nothing pending" when there is none. A file changed since its mutant was
    written is left as it is (inplace-conflict, exit 1) until --discard."""
    from tools.cli.results.mutate import Recovered
    from tools.git import Git
    from tools.mutate import inplace

    git = Git(opts.repo)
    tools_dir = git.tools_dir()
    _end_groups(git, opts)
    pending = inplace.pending_paths(tools_dir)
    if pending is None:
        show(Recovered(pending=False), opts)
        return
    done = (inplace.discard if discard else inplace.recover)(git.root, tools_dir)
    if done.busy:
        # A live in-place run holds the lock: its files are its own to restore.
        emit(
            "error: an --in-place run is still in progress in this tree (it holds the "
            f"lock); it restores {', '.join(pending) or 'its files'} itself\n",
            err=True,
        )
        raise typer.Exit(EXIT_FAIL)
    result = Recovered(
        pending=True,
        restored=tuple(done.restored),
        notices=tuple(done.notices),
        conflicts=tuple(c.record() for c in done.conflicts),
        discarded=discard,
    )
    if done.conflicts:
        _conflicts_out(done.conflicts)
    show(result, opts, exit_code=EXIT_FAIL if done.conflicts else 0)


GoodOpt = Annotated[str, typer.Option("--good", help="A commit where the test passes.")]
BadOpt = Annotated[str, typer.Option("--bad", help="A later commit where it fails.")]
TestOpt = Annotated[str, typer.Option("--test", help="Shell command: exit 0 = pass.")]
BuildOpt = Annotated[
    str | None, typer.Option("--build", help="Shell command run before each test.")
]
PathOpt = Annotated[
    list[str] | None,
    typer.Option("--path", help="Paths to revert (default: all the commit touched)."),
]
SpecOpt = Annotated[
    str | None, typer.Option("--spec", help="Render the evidence table into this spec.")
]
TimeoutOpt = Annotated[
    float, typer.Option("--timeout", min=0.001, help="Seconds per build or test step.")
]
ArtifactOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--artifact",
        help="A build output hashed per step; unchanged from another commit's: STALE.",
    ),
]
EmptyWhenOpt = Annotated[
    str | None,
    typer.Option("--empty-when", help="Regex: a passing test matching it ran nothing."),
]
MaxLoadOpt = Annotated[
    float | None,
    typer.Option("--max-load", help="Start a step only at this 1-minute load per CPU."),
]
QuietWaitOpt = Annotated[
    float, typer.Option("--quiet-wait", min=0, help="Seconds a step waits for --max-load.")
]


def attribute(
    opts: Options,
    good: GoodOpt,
    bad: BadOpt,
    test: TestOpt,
    build: BuildOpt = None,
    paths: PathOpt = None,
    spec: SpecOpt = None,
    timeout: TimeoutOpt = 1800.0,
    artifacts: ArtifactOpt = None,
    empty_when: EmptyWhenOpt = None,
    max_load: MaxLoadOpt = None,
    quiet_wait: QuietWaitOpt = 0.0,
) -> None:
    """Bisect good..bad in a worktree (a build failure is a skip), then prove the first bad
    commit both ways at bad: reverting its paths turns the test green, restoring them red."""
    from tools import attribute as attr
    from tools import ledger
    from tools.cli.results.mutate import Attribution
    from tools.mutate.plan import Quiet
    from tools.mutate.proc import Interrupted, interrupts, journal

    git = _prelude(opts)
    quiet = None if max_load is None else Quiet(max_load, quiet_wait)
    job = attr.prepare(
        git, good=good, bad=bad, test=test, build=build, paths=paths, spec=spec,
        artifacts=artifacts, empty_when=empty_when, quiet=quiet,
    )  # fmt: skip
    ledger_path, ledger_rel = _ledger_path(git, opts)

    def progress(line: str) -> None:
        emit(f"attribute: {line}\n", err=True)

    try:
        with interrupts(), journal(git.tools_dir()):
            payload = attr.run(
                job, git, timeout=timeout, note=progress, kill_grace_s=_kill_grace(git, opts)
            )
    except (KeyboardInterrupt, Interrupted) as exc:
        raise _interrupted(exc, "the worktree removed; nothing recorded") from None
    record = ledger.make_record("attribution", payload)
    append_ledger(git.root, ledger_path, ledger_rel, [record])
    table, table_failed = _table(git, opts, spec, record, ledger_path, [record])
    failures = [] if payload["verdict"] == "ATTRIBUTED" else [str(payload["reason"])]
    code = _exit_code(failures, table_failed)
    done = Attribution(record, ledger_rel, tuple(failures), code, spec=spec, table=table)
    show(done, opts, exit_code=code)


def register(app: typer.Typer) -> None:
    mutate = new_app("Mutation-attribution experiments (plans in YAML; SPEC §6).")

    def writes(name: str) -> Callable[[F], F]:
        return command(formats=ResultType("tools.cli.results.mutate", name))

    mutate.command("run")(writes("MutationRun")(mutate_run))
    mutate.command("matrix")(writes("ArmsMatrix")(mutate_matrix))
    mutate.command("collect")(writes("MutationRun")(mutate_collect))
    mutate.command("recover")(writes("Recovered")(mutate_recover))
    app.add_typer(mutate, name="mutate")
    app.command("attribute")(writes("Attribution")(attribute))
