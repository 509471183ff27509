"""``tools conflicts check`` and ``tools now check``: the gates that judge files of the tree
(or, with --staged, the staged blobs) and take no options of their own."""

from __future__ import annotations

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.options import Options


def conflicts_check(opts: Options) -> None:
    """Every tracked text file, or with --staged every staged blob that differs from HEAD."""
    run_gates(opts, ["conflicts"])


def now_check(opts: Options) -> None:
    """Stamp, staleness, required headings, line budget and entry length of the digest."""
    run_gates(opts, ["now"])


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True, staged=True)
    conflicts = new_app("Conflict markers left in files (rule conflict-marker).")
    conflicts.command("check")(gate(conflicts_check))
    app.add_typer(conflicts, name="conflicts")
    now = new_app("The resume digest .agents/NOW.md.")
    now.command("check")(gate(now_check))
    app.add_typer(now, name="now")
