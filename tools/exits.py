"""What a failure exits with and says, for every entry of the command line (the typer
application and the hook entry, which runs without it): one ``error:`` line, exit 2 for what
the command could not judge, exit 3 for a bug of ours."""

from __future__ import annotations

import errno
import os

EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 1, 2, 3

# What a failing environment raises on a write: exit 2 with the path, never exit 3.
_ENVIRONMENT_ERRNOS = {
    errno.ENOSPC,
    errno.EACCES,
    errno.EPERM,
    errno.EROFS,
    errno.EDQUOT,
    errno.EFBIG,
}


def environment_error(exc: OSError) -> str | None:
    """The one-line message for a failing environment (a full disk, a read-only or immutable
    file, a file-size limit), or None when ``exc`` is something else."""
    if exc.errno not in _ENVIRONMENT_ERRNOS:
        return None
    what = exc.strerror or os.strerror(exc.errno or 0)
    where = exc.filename if exc.filename is not None else "a file being written"
    return f"{where}: {what}"


def internal_error(exc: BaseException) -> str:
    """The line of a bug of ours (exit 3); the traceback goes to stderr first when
    ``TOOLS_DEBUG`` is set."""
    if os.environ.get("TOOLS_DEBUG"):
        import traceback  # only when asked: its import is most of this module's cost

        traceback.print_exception(exc)
    name = type(exc).__name__
    return f"error: internal error: {name}: {exc} (set TOOLS_DEBUG=1 for the traceback)\n"
