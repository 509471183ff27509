"""``tools merges check``: merges that introduce nothing but their merge."""

from __future__ import annotations

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.options import Options


def merges_check(opts: Options) -> None:
    """Recompute git's merge of the parents of each two-parent merge of
    merge-base(base, head)..head (or of one --commit) and compare it with the merge."""
    # Merges are recomputed by git: the range's paths go unused.
    run_gates(opts._replace(range_paths=False), ["merges"])


def register(app: typer.Typer) -> None:
    merges = new_app("Merges that introduce nothing but their merge (evil merges, resolutions).")
    merges.command("check")(
        command(formats=REPORT, check=True, range_=True, commit=True)(merges_check)
    )
    app.add_typer(merges, name="merges")
