"""``tools preflight``: the configured gates in one process over one read of git."""

from __future__ import annotations

from typing import Annotated

import typer

from tools.cli.common import command, finish
from tools.errors import UsageError
from tools.options import Options
from tools.report import Report


def register(app: typer.Typer) -> None:
    @app.command("preflight")
    @command(check=True, staged=True, range_=True)
    def preflight(
        opts: Options,
        gate: Annotated[
            list[str] | None,
            typer.Option("--gate", help="Run only this gate (repeatable)."),
        ] = None,
        message_file: Annotated[
            str | None,
            typer.Option("--message-file", help="Also judge this commit message ('-': stdin)."),
        ] = None,
    ) -> None:
        """Run the configured gates (config preflight.gates) and print one line per gate."""
        from tools import gates
        from tools.context import Context
        from tools.gates import inplace_pending

        opts.message_file = message_file
        ctx = Context(opts)
        names = list(gate) if gate else list(ctx.config["preflight"]["gates"])
        unknown = [n for n in names if n not in gates.GATES]
        if unknown:
            raise UsageError(
                f"--gate {unknown[0]!r} is not a gate", expected="one of " + ", ".join(gates.GATES)
            )
        # A tree that may still hold a mutant is not judged at all: a mutant is never committed.
        blocked = inplace_pending.run(ctx.git)
        if blocked is not None:
            finish(Report([blocked]), opts, summary=True)
        finish(gates.judged(ctx, [gates.run(name, ctx) for name in names]), opts, summary=True)
