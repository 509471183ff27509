"""Writing files so that a reader never sees half of one: the one atomic write every command
uses for its stated outputs, and the best-effort variant for caches under ``.git``."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` through a temp file in the same folder (fsynced, then
    renamed): the file is the old bytes or the new, never a mix. Keeps the existing file's
    mode unless ``mode`` is given (new files get 0o644)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tools-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_cache(path: Path, data: bytes) -> None:
    """Best effort: a cache that cannot be written only costs the next run its work again."""
    with contextlib.suppress(OSError):
        write_atomic(path, data)
