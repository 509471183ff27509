"""Writing files so that a reader never sees half of one: the one atomic write every command
uses for its stated outputs, and the best-effort variant for caches under ``.git``.

Writes into a repository stay inside it (SPEC §10): given the repository's root, a write
refuses a target that is a symbolic link or lies below one (exit 2 naming the link), and its
temp file lives under ``.git/tools/tmp/``, where a write killed mid-way leaves nothing that
``git add -A`` would commit.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from pathlib import Path

from tools.errors import UsageError

TMP_DIR = ("tools", "tmp")  # under the git directory


def refuse_links(path: Path, root: Path) -> None:
    """UsageError naming the first symbolic link among ``path``'s components below ``root``
    (``path`` itself included); components that do not exist yet are no links."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return  # not below the repository: not ours to judge
    here = Path(os.path.abspath(root))
    for part in rel.parts:
        here = here / part
        if here.is_symlink():
            shown = here.relative_to(os.path.abspath(root)).as_posix()
            raise UsageError(
                f"is a symbolic link: tools never writes through one, nor below one "
                f"(writing {rel.as_posix()})",
                where=shown,
            )


def git_tmp_dir(root: Path) -> Path | None:
    """``.git/tools/tmp`` of the work tree at ``root`` (a linked worktree's own git
    directory), or None when ``root`` has no git directory."""
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git.joinpath(*TMP_DIR)
    if dot_git.is_file():
        try:
            line = dot_git.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:") :].strip())
            return (target if target.is_absolute() else root / target).joinpath(*TMP_DIR)
    return None


def write_atomic(
    path: Path, data: bytes, *, mode: int | None = None, root: Path | None = None
) -> None:
    """Replace ``path`` with ``data`` through a temp file (fsynced, then renamed): the file is
    the old bytes or the new, never a mix. Keeps the existing file's mode unless ``mode`` is
    given (new files get 0o644). ``root``: the repository the file belongs to; then a link on
    the way is refused and the temp file lives under its ``.git/tools/tmp/``."""
    tmp_dir = None
    if root is not None:
        refuse_links(path, root)
        tmp_dir = git_tmp_dir(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    if tmp_dir is not None:
        try:
            tmp_dir.mkdir(parents=True, exist_ok=True)
        except OSError:
            tmp_dir = None
        else:
            _sweep(tmp_dir)
    try:
        try:
            _write_via(tmp_dir or path.parent, path, data, mode)
        except OSError as exc:
            if tmp_dir is None or exc.errno != errno.EXDEV:
                raise
            _write_via(path.parent, path, data, mode)  # .git on another file system
    except OSError as exc:
        # The same error (its errno, so callers and the CLI edge judge it as before), naming
        # the file asked for rather than the temp file, or nothing, as the failing call did.
        raise OSError(exc.errno, exc.strerror, str(path)) from None


STALE_S = 3600  # a temp file this old belongs to a killed write, not a running one


def _sweep(folder: Path) -> None:
    """Remove what killed writes left in ``folder`` (best effort)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name.endswith(".tools-tmp"):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_S:
                        os.unlink(entry.path)


def _write_via(folder: Path, path: Path, data: bytes, mode: int | None) -> None:
    import tempfile  # here, not at the top: the commands that write nothing skip ~2 ms

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tools-tmp", dir=folder)
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
