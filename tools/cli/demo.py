"""``tools demo``: the first thing a new user runs."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from tools.cli.common import command, emit
from tools.options import Options

_LOOK = """
What to look at
- The preflight report above: each FAIL names the commit and the rule, and the rule id leads
  to its docs (docs/rules.md). That is what `tools preflight --base main` prints in CI, and
  what the hooks of `tools init` refuse at commit time.
- The ratchet's regression names the new device site as file:line; the exempted site is
  listed as ratchet-exempt on every run, so the escape hatch stays visible.
- The evidence tables in the spec's Now section, rendered from ledger records (never typed):
"""


def register(app: typer.Typer) -> None:
    @app.command("demo")
    @command()
    def demo(
        opts: Options,
        keep: Annotated[
            Path | None,
            typer.Option("--keep", help="Keep the example repository in this (new) folder."),
        ] = None,
    ) -> None:
        """Build an example repository in a temp dir and run the gates, a mutation run, an
        attribution and a grid-tie check on it; nothing is left behind unless --keep."""
        from tools.demo import run_demo

        def say(line: str) -> None:
            emit(line + "\n")
            sys.stdout.flush()

        result = run_demo(keep, say)
        if result.made_by:
            emit("\nEach finding, and the command that made it (rule ids: docs/rules.md)\n")
            width = max(len(f) for f, _, _ in result.made_by)
            for finding, where, cmd in result.made_by:
                emit(f"  {finding:<{width}}  {where}  <- {cmd}\n")
        emit(_LOOK)
        for line in (
            result.now or "(no tables: the mutation run and attribution did not run)"
        ).split("\n"):
            emit(f"    {line}\n")
        if keep is not None:
            where = shlex.quote(str(keep))
            emit(f"\nThe repository stays in {where} (on main); the agent branch's report again:\n")
            emit(f"    git -C {where} checkout -q agent/feature\n")
            emit(f"    tools --repo {where} preflight --base main\n")
        else:
            emit("\nRun `tools demo --keep DIR` to keep the repository and explore it.\n")
        bad = [s for s in result.steps if s.skipped is None and s.code != s.want]
        skipped = [s for s in result.steps if s.skipped is not None]
        for s in skipped:
            emit(f"skipped: {s.title}: {s.skipped}\n")
        if bad:
            for s in bad:
                emit(f"unexpected: `{shlex.join(s.argv)}` exited {s.code}, wanted {s.want}\n")
            raise typer.Exit(1)
        emit("The tour ran as expected.\n")
