"""The ``tools`` application: global options and the command groups.

Command groups live in their own modules (:data:`GROUPS`); each registers on the application
via its ``register``. A command line imports and builds only the group it names
(:func:`register`); ``tools.cli.main.app`` is the application with every group. Nothing here
imports torch: the numerics groups import it inside their commands.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence

import typer

from tools import __version__
from tools.cli import end_early_interrupts, say_interrupted
from tools.cli.common import (
    ConfigFromOpt,
    ConfigOpt,
    FormatOpt,
    RepoOpt,
    RequireProtocolOpt,
    emit,
    new_app,
)

# The modules of tools.cli that register command groups, in the order `tools --help` lists
# them, and the first word of a command line that each one registers.
GROUPS: dict[str, tuple[str, ...]] = {
    "preflight": ("preflight",),
    "file_checks": ("conflicts", "now"),
    "commit_gates": ("trailers", "style"),
    "docs": ("docs",),
    "links": ("links",),
    "merges": ("merges",),
    "spec": ("spec",),
    "ratchet": ("ratchet",),
    "baseline": ("baseline",),
    "config_cmd": ("config", "init"),
    "hooks": ("hooks",),
    "ledgers": ("index", "ledger"),
    "numerics": ("golden", "numerics"),
    "mutate": ("mutate", "attribute"),
    "evidence": ("evidence",),
    "demo": ("demo",),
}
_MODULE_OF = {word: module for module, words in GROUPS.items() for word in words}
# The global options that take a value (``--repo DIR``): the word after one is no command.
VALUED = frozenset({"--repo", "--config", "--config-from", "--format"})

_app = new_app("Mechanical, honest gates for agent-heavy repositories.")


def _version(value: bool) -> None:
    if value:
        emit(f"tools {__version__}\n")
        raise typer.Exit(0)


@_app.callback()
def _globals(
    ctx: typer.Context,
    repo: RepoOpt = None,
    config: ConfigOpt = None,
    config_from: ConfigFromOpt = None,
    fmt: FormatOpt = None,
    require_protocol: RequireProtocolOpt = False,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Global options; each is also accepted after the subcommand."""
    ctx.obj = {
        "repo": repo,
        "config": config,
        "config_from": config_from,
        "fmt": fmt,
        "require_protocol": require_protocol,
    }


def command_word(args: Sequence[str]) -> str | None:
    """The first word of ``args`` that is neither a global option nor its value: the command
    (group) the command line names, or None."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in VALUED:
            i += 2
        elif arg.startswith("-"):  # --opt=value, --version, --help
            i += 1
        else:
            return arg
    return None


def register(args: Sequence[str] | None = None) -> typer.Typer:
    """Register on the application what the command line ``args`` needs, and return it.

    A command's own group is imported and built, not every group: a command's start pays for
    its own module and options only. ``--version`` alone needs none. A bare ``tools``,
    ``--help`` or a word that names no command registers every group, so that help and
    click's "No such command" see them all. None: every group (what tests and the
    documentation generators read)."""
    word = None if args is None else command_word(args)
    if word in _MODULE_OF:
        wanted = [_MODULE_OF[word]]
    elif args is not None and word is None and "--version" in args:
        wanted = []
    else:
        wanted = list(GROUPS)
    for name in wanted:
        if name not in _registered:
            _registered.add(name)
            importlib.import_module(f"tools.cli.{name}").register(_app)
    return _app


_registered: set[str] = set()


def __getattr__(name: str) -> typer.Typer:
    # ``tools.cli.main.app``: the application with every group (tests, documentation
    # generators), registered on first use; a command line registers only its own.
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
        register(sys.argv[1:])(prog_name="tools")
        code = 0
    except KeyboardInterrupt:  # SIGINT at any moment: one line, exit 130, never a traceback
        say_interrupted()
        code = 130
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # a message as the exit value: shown as Python would, status 1
            emit(f"{exc.code}\n", err=True)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1  # the output could not be written (a closed pipe): not a pass
    os._exit(code)


if __name__ == "__main__":
    main()
