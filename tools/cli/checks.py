"""The single-gate ``check`` commands of the gates that judge files (conflicts, now)."""

from __future__ import annotations

import typer

from tools.cli.common import command, new_app, run_gates
from tools.options import Options


def register(app: typer.Typer) -> None:
    conflicts = new_app("Conflict markers left in files (rule conflict-marker).")

    @conflicts.command("check")
    @command(check=True, staged=True)
    def conflicts_check(opts: Options) -> None:
        """Every tracked text file, or with --staged every staged blob that differs from HEAD."""
        run_gates(opts, ["conflicts"])

    now = new_app("The resume digest .agents/NOW.md.")

    @now.command("check")
    @command(check=True, staged=True)
    def now_check(opts: Options) -> None:
        """Stamp, staleness, required headings, line budget and entry length of the digest."""
        run_gates(opts, ["now"])

    app.add_typer(conflicts, name="conflicts")
    app.add_typer(now, name="now")
