"""The command-line shell: parse, build a Context, run gates, render, exit.

SIGINT while the CLI is still importing has nothing to clean up, and a KeyboardInterrupt
raised inside an import would print a traceback: until :func:`end_early_interrupts` (called
once ``tools.cli.main`` is imported) it ends the process with the contract's one line and
exit 130. Installed only over Python's own handler in the main thread, so an embedding
program's handler is left alone.
"""

from __future__ import annotations

import os
import signal
import threading


def _interrupted_early(signum: int, frame: object) -> None:
    os.write(2, b"error: interrupted\n")
    os._exit(130)


_EARLY = (
    threading.current_thread() is threading.main_thread()
    and signal.getsignal(signal.SIGINT) is signal.default_int_handler
)
if _EARLY:
    signal.signal(signal.SIGINT, _interrupted_early)


def end_early_interrupts() -> None:
    """Put Python's handler back (SIGINT raises KeyboardInterrupt again)."""
    if signal.getsignal(signal.SIGINT) is _interrupted_early:
        signal.signal(signal.SIGINT, signal.default_int_handler)
