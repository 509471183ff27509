"""``tools docs check``: documentation checkpoints (docs.rules and docs.spec_now)."""

from __future__ import annotations

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.options import Options


def docs_check(opts: Options) -> None:
    """Judge each commit of merge-base(base, head)..head (merges excluded), one --commit,
    or with --staged the change about to be committed."""
    run_gates(opts, ["docs"])


def register(app: typer.Typer) -> None:
    docs = new_app("Documentation checkpoints: docs.rules and docs.spec_now.")
    gate = command(formats=REPORT, check=True, staged=True, range_=True, commit=True)
    docs.command("check")(gate(docs_check))
    app.add_typer(docs, name="docs")
