"""``tools now check``: the resume digest .agents/NOW.md."""

from __future__ import annotations

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.options import Options


def now_check(opts: Options) -> None:
    """Stamp, staleness, required headings, line budget and entry length of the digest."""
    run_gates(opts, ["now"])


def register(app: typer.Typer) -> None:
    now = new_app("The resume digest .agents/NOW.md.")
    now.command("check")(command(formats=REPORT, check=True, staged=True)(now_check))
    app.add_typer(now, name="now")
