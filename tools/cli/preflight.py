"""``tools preflight``: the configured gates in one process over one read of git.

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle. The annotations are evaluated when the module loads (no
postponed annotations), so that typer reads objects, not source text to evaluate again.
"""

from typing import Annotated

import typer

from tools.cli.common import REPORT, command, finish
from tools.errors import UsageError
from tools.options import Options

GateOpt = Annotated[
    list[str] | None, typer.Option("--gate", help="Run only this gate (repeatable).")
]
MessageFileOpt = Annotated[
    str | None,
    typer.Option("--message-file", help="Also judge this commit message ('-': stdin)."),
]


def preflight(opts: Options, gate: GateOpt = None, message_file: MessageFileOpt = None) -> None:
    """Run the configured gates (config preflight.gates) and print one line per gate."""
    # The gates, git and config load here, not at import: the CLI's start-up stays fast.
    from tools import gates
    from tools.context import Context
    from tools.gates import inplace_pending

    opts = opts._replace(message_file=message_file)
    ctx = Context(opts)
    names = list(gate) if gate else list(ctx.config.preflight.gates)
    unknown = [n for n in names if n not in gates.GATES]
    if unknown:
        raise UsageError(
            f"--gate {unknown[0]!r} is not a gate", expected="one of " + ", ".join(gates.GATES)
        )
    # A tree that may still hold a mutant is not judged at all: a mutant is never committed.
    blocked = inplace_pending.run(ctx.git)
    if blocked is not None:
        finish(gates.judged(ctx, [blocked]), opts, summary=True)
    finish(gates.judged(ctx, gates.run_all(names, ctx)), opts, summary=True)


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True, staged=True, range_=True)
    app.command("preflight")(gate(preflight))
