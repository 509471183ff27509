"""The ``tools`` application: global options and the command groups.

Command groups live in their own modules; each registers on ``app`` via ``register``.
Nothing here imports torch: the numerics groups import it inside their commands.
"""

from __future__ import annotations

import os
import sys

import typer

from tools import __version__
from tools.cli import (
    baseline,
    commit_gates,
    config_cmd,
    conflicts,
    demo,
    docs,
    end_early_interrupts,
    hooks,
    ledgers,
    links,
    merges,
    mutate,
    now,
    numerics,
    preflight,
    ratchet,
    say_interrupted,
    spec,
)
from tools.cli.common import (
    ConfigFromOpt,
    ConfigOpt,
    FormatOpt,
    RepoOpt,
    emit,
    new_app,
)

app = new_app("Mechanical, honest gates for agent-heavy repositories.")


def _version(value: bool) -> None:
    if value:
        emit(f"tools {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _globals(
    ctx: typer.Context,
    repo: RepoOpt = None,
    config: ConfigOpt = None,
    config_from: ConfigFromOpt = None,
    fmt: FormatOpt = None,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Global options; each is also accepted after the subcommand."""
    ctx.obj = {"repo": repo, "config": config, "config_from": config_from, "fmt": fmt}


for _module in (
    preflight,
    conflicts,
    now,
    commit_gates,
    docs,
    links,
    merges,
    spec,
    ratchet,
    baseline,
    config_cmd,
    hooks,
    ledgers,
    numerics,
    mutate,
    demo,
):
    _module.register(app)


def main() -> None:
    """The console script: run the command, then end the process once its output is out.

    Every resource of ours is released before a command returns (outputs written atomically
    and closed, worktrees removed, locks and git processes closed), so what is left of a
    normal exit is the interpreter finalising every object and module: about 20 ms of each
    invocation, which a pre-commit hook pays on every commit. The process ends directly
    instead, after flushing stdout and stderr, with the same exit code."""
    try:
        # From here on SIGINT is a KeyboardInterrupt, which this function ends. Not at the end
        # of this module's import: the import machinery's own cleanup after it would be
        # interrupted outside any handler (a traceback, exit -2).
        end_early_interrupts()
        app(prog_name="tools")
        code = 0
    except KeyboardInterrupt:  # SIGINT at any moment: one line, exit 130, never a traceback
        say_interrupted()
        code = 130
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # a message as the exit value: shown as Python would, status 1
            emit(f"{exc.code}\n", err=True)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # the output could not be written (a closed pipe): not a pass
    os._exit(code)


if __name__ == "__main__":
    main()
