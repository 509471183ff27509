"""``tools hooks run HOOK [ARGS]…`` without the CLI framework.

git runs an installed hook on every commit, and every hook is one ``exec`` of ``tools hooks run
HOOK "$@"``: that command line is dispatched here before typer (most of the imports of a
start) loads. Every other command line, ``hooks run`` with an option before the hook's name or
``--help`` included, goes to the typer application, whose ``hooks run`` calls :func:`hook_said`
too, so both paths decide and print the same. The options are the typer command's defaults
(text, ``--config-from`` from ``TOOLS_CONFIG_FROM``): an installed hook passes none.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple, TextIO

from tools.errors import UsageError
from tools.exits import EXIT_INTERNAL, EXIT_USAGE, environment_error, internal_error
from tools.options import CONFIG_FROM, Options
from tools.terminal import color_wanted, safe_text


class Said(NamedTuple):
    """What a hook run exits with and prints."""

    code: int
    out: str
    err: str


def bare_hook_run(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(hook, its arguments) when ``argv`` is ``hooks run HOOK [ARGS]…`` with no option before
    the hook's name (what an installed hook runs); None for any other command line."""
    if len(argv) < 3 or argv[0] != "hooks" or argv[1] != "run" or argv[2].startswith("-"):
        return None
    return argv[2], list(argv[3:])


def stdin_bytes() -> bytes:
    """What git wrote to the hook's stdin (pre-push and pre-receive read it)."""
    stream = getattr(sys.stdin, "buffer", None)
    return stream.read() if stream is not None else sys.stdin.read().encode()


def hook_said(opts: Options, hook: str, args: list[str], stdin: Callable[[], bytes]) -> Said:
    """Run one hook, client or server side, and say what it prints (quiet when green)."""
    from tools import hooks

    started = time.monotonic()
    if hook not in hooks.HOOKS:
        # The server side's module loads only for its hooks (the two sets share no name).
        from tools import server_hooks

        if hook in server_hooks.SERVER_HOOKS:
            done = server_hooks.run(opts, hook, args, stdin() if hook == "pre-receive" else b"")
            return Said(done.code, done.out, done.err)
        known = (*hooks.HOOKS, *server_hooks.SERVER_HOOKS)
        raise UsageError(f"unknown hook {hook!r}", expected="one of " + ", ".join(known))
    # git's pre-push input, read only once the run gets that far (a re-entered run leaves it).
    run = hooks.run_hook(hook, opts, args, stdin if hook == "pre-push" else b"")
    out, err = "", ""
    if run.report is not None:
        said = hooks.said(
            hook,
            run.report,
            hooks.elapsed_since(started),
            args=args,
            color=color_wanted(sys.stderr),
        )
        out, err = said.out, said.err
    return Said(run.exit_code, out + run.out, err + run.err)


def _write(text: str, stream: TextIO) -> None:
    if text:
        stream.write(safe_text(text))


def run(argv: Sequence[str]) -> int | None:
    """Run a bare ``hooks run`` command line and return its exit status; None when ``argv``
    is another command line (the caller hands it to the typer application)."""
    found = bare_hook_run(argv)
    if found is None:
        return None
    hook, args = found
    from tools import file_reads

    file_reads.configure(file_reads.DEFAULT_LIMITS)
    try:
        config_from = os.environ.get("TOOLS_CONFIG_FROM") or "head"
        if config_from not in CONFIG_FROM:
            raise UsageError(
                f"--config-from {config_from!r} (or TOOLS_CONFIG_FROM)", expected="base or head"
            )
        said = hook_said(Options(config_from=config_from), hook, args, stdin_bytes)
    except UsageError as exc:
        _write(f"error: {exc.render()}\n", sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        message = environment_error(exc)
        _write(internal_error(exc) if message is None else f"error: {message}\n", sys.stderr)
        return EXIT_USAGE if message is not None else EXIT_INTERNAL
    except Exception as exc:  # a bug of ours: one line, the trace only on request
        _write(internal_error(exc), sys.stderr)
        return EXIT_INTERNAL
    _write(said.out, sys.stdout)
    _write(said.err, sys.stderr)
    return said.code
