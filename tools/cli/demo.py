"""``tools demo``: the first thing a new user runs.

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from tools.cli.common import TEXT, command, emit
from tools.options import Options

_LOOK = """
What to look at
- The preflight report above: each FAIL names the commit and the rule, and the rule id leads
  to its docs (docs/rules.md). That is what `tools preflight --base main` prints in CI, and
  what the hooks of `tools init` refuse at commit time.
- The ratchet's regression names the new device site as file:line; the exempted site is
  listed as ratchet-exempt on every run, so the escape hatch stays visible.
- The replayed arm (step 6): `evidence replay` re-ran it in a fresh worktree and saw what its
  record claims, `evidence sign` signed that, and `ledger verify --require-attested` accepts
  it; the forged copy's id recomputes (the ledger gate passes) but nobody signed it.
- The evidence tables in the spec's Now section, rendered from ledger records (never typed):
"""


KeepOpt = Annotated[
    Path | None,
    typer.Option("--keep", help="Keep the example repository in this (new) folder."),
]


def _say(line: str) -> None:
    emit(line + "\n")
    sys.stdout.flush()


def demo(opts: Options, keep: KeepOpt = None) -> None:
    """Build an example repository in a temp dir and run the gates, a mutation run, an
    attribution, a replayed and signed arm and a grid-tie check on it; nothing is left behind
    unless --keep."""
    # The tour's machinery loads here, not at import: the CLI's start-up stays fast.
    from tools.demo import run_demo

    result = run_demo(keep, _say)
    _show_findings(result.made_by)
    emit(_LOOK)
    tables = result.now or "(no tables: the mutation run and attribution did not run)"
    for line in tables.split("\n"):
        emit(f"    {line}\n")
    _show_next(keep)
    bad = [s for s in result.steps if s.skipped is None and s.code != s.want]
    for s in result.steps:
        if s.skipped is not None:
            emit(f"skipped: {s.title}: {s.skipped}\n")
    if bad:
        for s in bad:
            emit(f"unexpected: `{shlex.join(s.argv)}` exited {s.code}, wanted {s.want}\n")
        raise typer.Exit(1)
    emit("The tour ran as expected.\n")


def _show_findings(made_by: list[tuple[str, str, str]]) -> None:
    if made_by:
        emit("\nEach finding, and the command that made it (rule ids: docs/rules.md)\n")
        width = max(len(f) for f, _, _ in made_by)
        for finding, where, cmd in made_by:
            emit(f"  {finding:<{width}}  {where}  <- {cmd}\n")


def _show_next(keep: Path | None) -> None:
    if keep is None:
        emit("\nRun `tools demo --keep DIR` to keep the repository and explore it.\n")
        return
    where = shlex.quote(str(keep))
    emit(f"\nThe repository stays in {where} (on main); the agent branch's report again:\n")
    emit(f"    git -C {where} checkout -q agent/feature\n")
    emit(f"    tools --repo {where} preflight --base main\n")


def register(app: typer.Typer) -> None:
    app.command("demo")(command(formats=TEXT)(demo))
