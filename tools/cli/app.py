"""The ``tools`` typer application: global options and the command groups.

Command groups live in their own modules (:data:`GROUPS`); each registers on the application
via its ``register``. A command line imports and builds only the group it names
(:func:`register`); ``tools.cli.main.app`` is the application with every group. Nothing here
imports torch: the numerics groups import it inside their commands. The console script's
entry is :func:`tools.cli.main.main`, which hands an installed hook's command line to
:mod:`tools.hook_entry` before this module (and typer) loads.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

import typer

from tools import __version__
from tools.cli.common import (
    ConfigFromOpt,
    ConfigOpt,
    FormatOpt,
    NoCacheOpt,
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
    no_cache: NoCacheOpt = False,
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
        "no_cache": no_cache,
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
