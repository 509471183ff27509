"""The console script's entry (``tools``): an installed hook's command line runs without the
CLI framework (:mod:`tools.hook_entry`); every other goes to the typer application
(:mod:`tools.cli.app`), which loads only then. ``tools.cli.main.app`` is that application with
every group (tests, documentation generators)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tools.cli import end_early_interrupts, say_interrupted
from tools.terminal import safe_text

if TYPE_CHECKING:
    import typer


def register(args: Sequence[str] | None = None) -> typer.Typer:
    """The application with what the command line ``args`` needs registered
    (:func:`tools.cli.app.register`)."""
    from tools.cli import app

    return app.register(args)


def __getattr__(name: str) -> typer.Typer:
    # ``tools.cli.main.app``: the application with every group, registered on first use; a
    # command line registers only its own.
    if name == "app":
        return register(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """The console script: run the command, then end the process once its output is out.

    Every resource of ours is released before a command returns (outputs written atomically
    and closed, worktrees removed, locks and git processes closed), so what is left of a
    normal exit is the interpreter finalising every object and module: about 20 ms of each
    invocation, which a pre-commit hook pays on every commit. The process ends directly
    instead, after flushing stdout and stderr, with the same exit code."""
    # The cycle collector runs every 700 allocations by default; a command builds tens of
    # thousands of long-lived objects (an index listing, a parsed document), which each run
    # walks again: 23 ms of a 20,000-file preflight, and 13 ms when it runs every 10,000.
    gc.set_threshold(10_000, 10, 10)
    try:
        # From here on SIGINT is a KeyboardInterrupt, which this function ends. Not at the end
        # of this module's import: the import machinery's own cleanup after it would be
        # interrupted outside any handler (a traceback, exit -2).
        end_early_interrupts()
        from tools import hook_entry

        hooked = hook_entry.run(sys.argv[1:])
        if hooked is None:
            register(sys.argv[1:])(prog_name="tools")
        code = hooked or 0
    except KeyboardInterrupt:  # SIGINT at any moment: one line, exit 130, never a traceback
        say_interrupted()
        code = 130
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # a message as the exit value: shown as Python would, status 1
            sys.stderr.write(safe_text(f"{exc.code}\n"))
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # the output could not be written (a closed pipe): not a pass
    os._exit(code)


if __name__ == "__main__":
    main()
