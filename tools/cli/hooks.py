"""``tools hooks install`` and ``tools hooks run HOOK [ARGS]…`` (the one entry of every hook).

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from tools.cli.common import TEXT, ResultType, command, emit, new_app, show
from tools.options import Options

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


def hooks_run(opts: Options, hook: HookArg, args: ArgsArg = None) -> None:
    """Run one hook's gates: what every installed hook calls. Quiet when green."""
    from tools.hook_entry import hook_said, stdin_bytes

    said = hook_said(opts, hook, list(args or []), stdin_bytes)
    if said.out:
        emit(said.out)
    if said.err:
        emit(said.err, err=True)
    raise typer.Exit(said.code)


def register(app: typer.Typer) -> None:
    hooks_app = new_app("Git hooks: install them, or run one (what the installed hooks call).")
    installed = ResultType("tools.cli.results.hooks", "HooksInstalled")
    hooks_app.command("install")(command(formats=installed)(hooks_install))
    # The hook's report goes to stderr and its green line to stdout, in text only.
    hooks_app.command(
        "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
    )(command(formats=TEXT)(hooks_run))
    app.add_typer(hooks_app, name="hooks")
