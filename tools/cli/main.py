"""The ``tools`` application: global options and the command groups.

Command groups live in their own modules; each registers on ``app`` via ``register``.
Nothing here imports torch: the numerics groups import it inside their commands.
"""

from __future__ import annotations

import typer

from tools import __version__
from tools.cli import (
    checks,
    commit_gates,
    config_cmd,
    demo,
    docs,
    ledgers,
    links,
    mutate,
    numerics,
    preflight,
    ratchet,
    spec,
)
from tools.cli.common import ConfigOpt, FormatOpt, RepoOpt, emit, new_app

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
    fmt: FormatOpt = None,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Global options; each is also accepted after the subcommand."""
    ctx.obj = {"repo": repo, "config": config, "fmt": fmt}


for _module in (
    preflight,
    checks,
    commit_gates,
    docs,
    links,
    spec,
    ratchet,
    config_cmd,
    ledgers,
    numerics,
    mutate,
    demo,
):
    _module.register(app)


def main() -> None:
    app(prog_name="tools")


if __name__ == "__main__":
    main()
