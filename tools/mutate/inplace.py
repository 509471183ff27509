"""``--in-place``: arms run in the user's working tree, for builds that cannot move.

Before the first byte changes, the affected files must be clean (no staged or unstaged
change, not untracked or ignored), and their snapshot and a recovery record are written under
``<git dir>/tools/mutate/inplace/`` (fsynced). Each arm restores the files and proves it by
sha256; the record goes when every arm has restored. If the process dies in between, the next
``tools mutate`` or ``tools attribute`` invocation finds the record unlocked, restores the
files from the snapshot, verifies them and says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.git import decode, run_git
from tools.mutate.apply import ApplyError, FileState, read_state, write_state

SCHEMA = "tools.mutate-inplace/1"


def _dir(tools_dir: Path) -> Path:
    return tools_dir / "mutate" / "inplace"


def dirty_paths(root: Path, paths: list[str]) -> list[str]:
    """The ``paths`` that differ from HEAD in the index or the working tree, or are untracked
    or ignored files (read without refreshing the index)."""
    if not paths:
        return []
    _, out, _ = run_git(
        root,
        "--literal-pathspecs",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignored=matching",
        "--no-renames",
        "--",
        *paths,
    )
    found = []
    for rec in out.split(b"\0"):
        if len(rec) > 3:
            found.append(decode(rec[3:]))
    return found


class InPlace:
    """The snapshot of the affected files of one ``--in-place`` run."""

    def __init__(self, root: Path, tools_dir: Path, paths: list[str], plan: str):
        self.root = root
        self.dir = _dir(tools_dir)
        self.paths = paths
        self.plan = plan
        self._fd: int | None = None
        self.states: dict[str, FileState] = {}

    def begin(self) -> None:
        """Refuse dirty files, take the lock, write the snapshot and the recovery record."""
        dirty = dirty_paths(self.root, self.paths)
        if dirty:
            shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
            raise UsageError(
                f"--in-place refused: the affected file(s) {shown} are not clean",
                expected="commit or stash them first, or run without --in-place",
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UsageError("another --in-place run is in progress in this tree") from None
        self._fd = fd
        try:
            files: list[dict[str, Any]] = []
            for path in self.paths:
                state = read_state(self.root, path)
                self.states[path] = state
                if state.data is not None:
                    write_atomic(self.dir / "blobs" / str(state.sha256), state.data)
                files.append(
                    {
                        "path": path,
                        "sha256": state.sha256,
                        "mode": state.mode,
                        "link": state.link,
                        "missing_dirs": list(state.missing_dirs),
                    }
                )
            record = {
                "schema": SCHEMA,
                "pid": os.getpid(),
                "root": str(self.root),
                "plan": self.plan,
                "files": files,
            }
            write_atomic(self.dir / "record.json", json.dumps(record, indent=1).encode())
        except BaseException:
            self._release()
            raise

    def finish(self) -> None:
        """Every arm restored: drop the record, the snapshot and the lock."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dir / "record.json")
        shutil.rmtree(self.dir / "blobs", ignore_errors=True)
        self._release()

    def abandon(self) -> None:
        """A restore failed: keep the record for the next invocation, release the lock."""
        self._release()

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _restore_from(root: Path, folder: Path, record: dict[str, Any]) -> list[str]:
    """Restore every file of ``record``; the paths whose sha256 then differs from the snapshot."""
    wrong: list[str] = []
    for item in record["files"]:
        path, sha = item["path"], item["sha256"]
        if sha is None:
            state = FileState(None, missing_dirs=tuple(item.get("missing_dirs", ())))
        else:
            data = (folder / "blobs" / sha).read_bytes()
            if hashlib.sha256(data).hexdigest() != sha:
                wrong.append(path)
                continue
            state = FileState(data, int(item["mode"]), bool(item["link"]))
        try:
            write_state(root, path, state)
            if read_state(root, path).sha256 != sha:
                wrong.append(path)
        except (OSError, ApplyError):
            wrong.append(path)
    return wrong


def recover(root: Path, tools_dir: Path) -> list[str]:
    """Complete a pending restore left by an ``--in-place`` run that died; notices to print.
    A run still alive holds the lock: its files are left alone."""
    folder = _dir(tools_dir)
    if not (folder / "record.json").exists():
        return []
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []
        where = str(folder / "record.json")
        try:
            record = json.loads((folder / "record.json").read_bytes())
            if record.get("schema") != SCHEMA:
                raise ValueError(f"schema {record.get('schema')!r}")
            wrong = _restore_from(root, folder, record)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"cannot complete the pending in-place restore: {exc}", where=where
            ) from None
        if wrong:
            raise UsageError(
                "the pending in-place restore did not verify for "
                + ", ".join(wrong)
                + "; the snapshot stays for another try",
                where=where,
            )
        n = len(record["files"])
        os.unlink(folder / "record.json")
        shutil.rmtree(folder / "blobs", ignore_errors=True)
        return [
            f"completed a pending in-place restore of plan {record.get('plan')} "
            f"(process {record.get('pid')} stopped mid-run): {n} file(s) restored, "
            "sha256 verified"
        ]
    finally:
        os.close(fd)


def pending_paths(tools_dir: Path) -> list[str] | None:
    """The files a pending in-place restore would rewrite, or None when nothing is pending.

    Read without the lock and without restoring: the gates of preflight and the hooks refuse
    to judge (and so to let anyone commit) a tree that may still hold a mutant. An unreadable
    record still counts as pending, with no paths named.
    """
    path = _dir(tools_dir) / "record.json"
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_bytes())
        return [str(item["path"]) for item in record["files"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
