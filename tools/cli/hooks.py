"""``tools hooks install`` and ``tools hooks run HOOK [ARGS]…`` (the one entry of every hook).

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from tools.cli.common import TEXT, ResultType, color_wanted, command, emit, new_app, show
from tools.errors import UsageError
from tools.options import Options
from tools.report import GateResult, Report

if TYPE_CHECKING:
    from tools.git import Git

HookArg = Annotated[str, typer.Argument(help="pre-commit, commit-msg or pre-push.")]
ArgsArg = Annotated[
    list[str] | None, typer.Argument(help="What git passed to the hook (e.g. the message file).")
]


def hooks_install(
    opts: Options,
    force: Annotated[
        bool,
        typer.Option("--force", help="Move a hook that is not ours to HOOK.local (run first)."),
    ] = False,
) -> None:
    """Install the pre-commit, commit-msg and pre-push hooks (each calls `tools hooks run`)."""
    from tools import hooks
    from tools.cli.results.hooks import HooksInstalled
    from tools.git import Git

    git = Git(opts.repo)
    done = hooks.install(git, force=force)
    steps = tuple((item.verb, os.path.relpath(item.path, git.root)) for item in done)
    result = HooksInstalled(steps, refused=any(item.refused for item in done))
    show(result, opts, exit_code=1 if result.refused else 0)


def _stdin_bytes() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode()


def _show(report: Report, started: float, hook: str, args: list[str]) -> None:
    """Print what the hook says (quiet when green: :func:`tools.hooks.said`)."""
    from tools import hooks

    said = hooks.said(
        hook, report, hooks.elapsed_since(started), args=args, color=color_wanted(sys.stderr)
    )
    if said.out:
        emit(said.out)
    if said.err:
        emit(said.err, err=True)


def hooks_run(opts: Options, hook: HookArg, args: ArgsArg = None) -> None:
    """Run one hook's gates: what every installed hook calls. Quiet when green."""
    from tools import hooks
    from tools.git import Git

    started = time.monotonic()
    args = list(args or [])
    if hook not in hooks.HOOKS:
        raise UsageError(f"unknown hook {hook!r}", expected="one of " + ", ".join(hooks.HOOKS))
    git = Git(opts.repo)
    if hooks.reentered(git, hook, os.environ):
        emit(hooks.reentry_line(hook))
        raise typer.Exit(0)
    stdin = _stdin_bytes() if hook == "pre-push" else b""
    status = hooks.run_local(git, hook, args, stdin)
    if status != 0:
        emit(f"tools: {hook}.local (your own hook) failed with exit {status}\n", err=True)
        raise typer.Exit(1)
    blocked = hooks.pending(git)
    if blocked is not None:
        _show(Report([blocked]), started, hook, args)
        raise typer.Exit(1)
    if hook == "commit-msg" and len(args) != 1:
        raise UsageError("the commit-msg hook takes one argument: the message file")
    if hook != "pre-push" and opts.config is None and not hooks.staged_has_protocol(git):
        emit(hooks.NO_PROTOCOL)
        raise typer.Exit(0)
    if hook == "pre-commit":
        report = hooks.judge(opts._replace(staged=True), hooks.CONTENT_GATES)
    elif hook == "commit-msg":
        opts = opts._replace(
            message_file=args[0], range_paths=False, message_only=True, filled=True
        )
        report = hooks.judge(opts, hooks.MESSAGE_GATES)
    else:
        judged = _pre_push(git, opts, stdin)
        if judged is None:
            emit(hooks.NO_PROTOCOL)
            raise typer.Exit(0)
        report = judged
    _show(report, started, hook, args)
    raise typer.Exit(report.exit_code())


def _pre_push(git: Git, opts: Options, stdin: bytes) -> Report | None:
    """The report over every pushed ref; None when no pushed ref holds a protocol (each one
    deleted, or made before adoption), so nothing was judged."""
    from tools import hooks

    results: list[GateResult] = []
    unjudged = judged = 0
    for ref in hooks.parse_push_lines(stdin) or hooks.pre_commit_framework_ref(os.environ):
        ref_opts = hooks.push_options(git, opts, ref)
        if ref_opts is None:
            continue  # a deleted ref: nothing to judge
        if opts.config is None and not hooks.commit_has_protocol(git, ref.local_sha):
            unjudged += 1  # a branch made before adoption: no protocol judges it
            continue
        judged += 1
        report = hooks.judge(ref_opts, hooks.PUSH_GATES)
        for result in report.gates:
            result.stats["ref"] = ref.local_ref
        results.extend(report.gates)
    if unjudged and not judged:
        return None
    return Report(results)


def register(app: typer.Typer) -> None:
    hooks_app = new_app("Git hooks: install them, or run one (what the installed hooks call).")
    installed = ResultType("tools.cli.results.hooks", "HooksInstalled")
    hooks_app.command("install")(command(formats=installed)(hooks_install))
    # The hook's report goes to stderr and its green line to stdout, in text only.
    hooks_app.command(
        "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
    )(command(formats=TEXT)(hooks_run))
    app.add_typer(hooks_app, name="hooks")
