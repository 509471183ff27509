"""``tools hooks install`` and ``tools hooks run HOOK [ARGS]…`` (the one entry of every hook).

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Annotated

import typer

from tools.cli.common import TEXT, ResultType, color_wanted, command, emit, new_app, show
from tools.errors import UsageError
from tools.options import Options
from tools.report import Report

HookArg = Annotated[
    str, typer.Argument(help="pre-commit, commit-msg or pre-push; pre-receive or update (server).")
]
ArgsArg = Annotated[
    list[str] | None, typer.Argument(help="What git passed to the hook (e.g. the message file).")
]


def hooks_install(
    opts: Options,
    force: Annotated[
        bool,
        typer.Option("--force", help="Move a hook that is not ours to HOOK.local (run first)."),
    ] = False,
    server: Annotated[
        bool,
        typer.Option("--server", help="In a bare repository: install the pre-receive hook."),
    ] = False,
) -> None:
    """Install the pre-commit, commit-msg and pre-push hooks (each calls `tools hooks run`);
    with --server, in a bare repository, the pre-receive hook."""
    from tools import hooks, server_hooks
    from tools.cli.results.hooks import HooksInstalled
    from tools.git import Git

    git = Git(opts.repo, bare_ok=server)
    done = (server_hooks.install if server else hooks.install)(git, force=force)
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
    from tools import hooks, server_hooks

    started = time.monotonic()
    args = list(args or [])
    if hook in server_hooks.SERVER_HOOKS:
        said = server_hooks.run(opts, hook, args, _stdin_bytes() if hook == "pre-receive" else b"")
        if said.out:
            emit(said.out)
        if said.err:
            emit(said.err, err=True)
        raise typer.Exit(said.code)
    if hook not in hooks.HOOKS:
        known = (*hooks.HOOKS, *server_hooks.SERVER_HOOKS)
        raise UsageError(f"unknown hook {hook!r}", expected="one of " + ", ".join(known))
    # git's pre-push input, read only once the run gets that far (a re-entered run leaves it).
    done = hooks.run_hook(hook, opts, args, _stdin_bytes if hook == "pre-push" else b"")
    if done.report is not None:
        _show(done.report, started, hook, args)
    if done.out:
        emit(done.out)
    if done.err:
        emit(done.err, err=True)
    raise typer.Exit(done.exit_code)


def register(app: typer.Typer) -> None:
    hooks_app = new_app("Git hooks: install them, or run one (what the installed hooks call).")
    installed = ResultType("tools.cli.results.hooks", "HooksInstalled")
    hooks_app.command("install")(command(formats=installed)(hooks_install))
    # The hook's report goes to stderr and its green line to stdout, in text only.
    hooks_app.command(
        "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
    )(command(formats=TEXT)(hooks_run))
    app.add_typer(hooks_app, name="hooks")
