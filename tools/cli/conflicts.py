"""``tools conflicts check``: conflict markers left in files."""

from __future__ import annotations

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.options import Options


def conflicts_check(opts: Options) -> None:
    """Every tracked text file, or with --staged every staged blob that differs from HEAD."""
    run_gates(opts, ["conflicts"])


def register(app: typer.Typer) -> None:
    conflicts = new_app("Conflict markers left in files (rule conflict-marker).")
    conflicts.command("check")(command(formats=REPORT, check=True, staged=True)(conflicts_check))
    app.add_typer(conflicts, name="conflicts")
