"""The command-line shell: parse, build a Context, run gates, render, exit.

SIGINT while the CLI is still importing has nothing to clean up, and a KeyboardInterrupt
raised inside an import would print a traceback: until :func:`end_early_interrupts` (called
first thing in ``tools.cli.main.main``) it ends the process with the contract's one line and
exit 130. Installed only over Python's own handler in the main thread, so an embedding
program's handler is left alone.

Afterwards SIGINT is a KeyboardInterrupt that ``main()`` ends, except where Python cannot
raise it: inside a destructor (an object finalised at any collection) it would print
"Exception ignored" with a traceback and go on. ``sys.unraisablehook`` ends those the same
way, with one line and exit 130; every other unraisable error keeps Python's own report.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any


def say_interrupted() -> None:
    """The one line of an interrupt, written to fd 2 itself after what is buffered, so that
    no stream wrapper's state (an interrupted write, a wrapper of its own) can lose it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):
            pass
    try:
        os.write(2, b"error: interrupted\n")
    except OSError:
        pass


def _interrupted_early(signum: int, frame: object) -> None:
    os.write(2, b"error: interrupted\n")
    os._exit(130)


_EARLY = (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
)
if _EARLY:
    signal.signal(signal.SIGINT, _interrupted_early)


def _unraisable(unraisable: Any) -> None:
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        say_interrupted()
        os._exit(130)
    sys.__unraisablehook__(unraisable)


if _EARLY and sys.unraisablehook is sys.__unraisablehook__:
    sys.unraisablehook = _unraisable


def end_early_interrupts() -> None:
    """Put Python's handler back (SIGINT raises KeyboardInterrupt again)."""
    if signal.getsignal(signal.SIGINT) is _interrupted_early:
        signal.signal(signal.SIGINT, signal.default_int_handler)
