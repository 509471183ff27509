"""``--in-place``: arms run in the user's working tree, for builds that cannot move.

Before the first byte changes, the affected files must be clean (no staged or unstaged
change, not untracked or ignored), and their snapshot and a recovery record are written under
``<git dir>/tools/mutate/inplace/`` (fsynced). Before an arm writes its mutant, the record
gains the sha256 of every content the arm will give each file (worked out on a scratch copy
first), so that a restore can tell tools's own mutant from an edit the user made since.

A restore (at the end of each arm, on an interrupt, or by the next invocation) rewrites a
file only while its content is one the arm wrote; a file changed since is left as it is and
becomes an ``inplace-conflict`` (the path, the sha256 before, mutated and now, and where the
original is saved), and the record stays until the user decides (``tools mutate recover
--discard``). The record goes when every file is back as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.git import decode, run_git
from tools.mutate import INPLACE_RECORD_NAME, inplace_record
from tools.mutate.apply import ApplyError, FileState, read_state, write_state

SCHEMA = "tools.mutate-inplace/2"
# /1 records (written before the mutated sha256 was kept) are still recovered, conservatively.
_READABLE = ("tools.mutate-inplace/1", SCHEMA)


def _dir(tools_dir: Path) -> Path:
    return inplace_record(tools_dir).parent


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


class Conflict(NamedTuple):
    """A target whose content is neither its original nor a mutant tools wrote: the user's
    edit, left as it is. ``saved``: where the original's bytes are kept (None: the file did
    not exist before the run)."""

    path: str
    before: str | None
    mutated: str | None
    now: str | None
    saved: str | None

    def message(self) -> str:
        def h(sha: str | None) -> str:
            return sha if sha is not None else "(absent)"

        where = (
            f"the original is saved at {self.saved}"
            if self.saved
            else "the file did not exist before the run"
        )
        return (
            f"{self.path} changed since tools wrote its mutant (sha256 before {h(self.before)}, "
            f"mutated {h(self.mutated)}, now {h(self.now)}): left as it is, not restored; "
            f"{where}; once decided, run `tools mutate recover --discard`"
        )

    def record(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256_before": self.before,
            "sha256_mutated": self.mutated,
            "sha256_now": self.now,
            "saved": self.saved,
        }

    @classmethod
    def from_record(cls, item: dict[str, Any]) -> Conflict:
        return cls(
            str(item["path"]),
            item.get("sha256_before"),
            item.get("sha256_mutated"),
            item.get("sha256_now"),
            item.get("saved"),
        )


@dataclass
class Recovery:
    """What a recovery did: ``notices`` to print, ``conflicts`` left (the record stays), and
    ``busy`` when a live run holds the lock (nothing was touched)."""

    notices: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    busy: bool = False


def _shown(root: Path, path: Path) -> str:
    """``path`` relative to the repository when inside it (what a user can paste)."""
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return str(path)


def _save(root: Path, folder: Path, sha: str | None) -> str | None:
    """Keep the original with this sha256 under ``saved/`` (outliving ``--discard``); where."""
    if sha is None:
        return None
    target = folder / "saved" / sha
    if not target.is_file():
        write_atomic(target, (folder / "blobs" / sha).read_bytes())
    return _shown(root, target)


def _state_of(folder: Path, item: dict[str, Any]) -> FileState:
    """The original state of one record entry, its bytes read (and checked) from the blob."""
    import hashlib

    sha = item["sha256"]
    if sha is None:
        return FileState(None, missing_dirs=tuple(item.get("missing_dirs", ())))
    data = (folder / "blobs" / sha).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha:
        raise ValueError(f"the snapshot of {item['path']} does not match its sha256")
    return FileState(data, int(item["mode"]), bool(item["link"]))


def restore_file(
    root: Path, path: str, before: FileState, mutants: Iterable[str | None]
) -> tuple[str, FileState]:
    """Put ``path`` back to ``before`` only while its content is one of ``mutants`` (the
    sha256 of contents the arm wrote; None: the arm deleted it). (outcome, state now):
    ``unchanged`` (already the original), ``restored`` (rewritten and verified), ``conflict``
    (changed by someone else: left as it is), ``failed`` (the rewrite did not verify)."""
    now = read_state(root, path)
    if now.sha256 == before.sha256:
        if now != before:  # same bytes; a mode, a link or an emptied folder to put back
            write_state(root, path, before)
            now = read_state(root, path)
        return "unchanged", now
    if now.sha256 not in set(mutants):
        return "conflict", now
    write_state(root, path, before)
    now = read_state(root, path)
    return ("restored" if now.sha256 == before.sha256 else "failed"), now


class InPlace:
    """The snapshot and recovery record of one ``--in-place`` run."""

    def __init__(self, root: Path, tools_dir: Path, paths: list[str], plan: str):
        self.root = root
        self.dir = _dir(tools_dir)
        self.paths = paths
        self.plan = plan
        self._fd: int | None = None
        self.states: dict[str, FileState] = {}
        self._record: dict[str, Any] = {}
        self.conflicts: list[Conflict] = []

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
                        "mutated": [],
                    }
                )
            self._record = {
                "schema": SCHEMA,
                "pid": os.getpid(),
                "root": str(self.root),
                "plan": self.plan,
                "arm": None,
                "files": files,
                "conflicts": [],
            }
            self._write()
        except BaseException:
            self._release()
            raise

    def _write(self) -> None:
        write_atomic(self.dir / INPLACE_RECORD_NAME, json.dumps(self._record, indent=1).encode())

    def expect(self, arm: str, mutants: dict[str, list[str | None]]) -> None:
        """Before ``arm`` writes a byte: the sha256 of every content it may give each file
        (the intermediate ones included), so that a restore recognises its own mutant."""
        self._record["arm"] = arm
        for item in self._record["files"]:
            item["mutated"] = list(mutants.get(item["path"], []))
        self._write()

    def also(self, found: dict[str, str | None]) -> None:
        """Contents the arm actually wrote that the scratch copy did not predict."""
        changed = False
        for item in self._record["files"]:
            sha = found.get(item["path"], item["sha256"])
            if sha != item["sha256"] and sha not in item["mutated"]:
                item["mutated"].append(sha)
                changed = True
        if changed:
            self._write()

    def mutants(self, path: str) -> list[str | None]:
        for item in self._record.get("files", []):
            if item["path"] == path:
                return list(item["mutated"])
        return []

    def settle(self, conflicts: list[Conflict], restored: Iterable[str]) -> None:
        """After an arm's restore: the files restored have no mutant pending any more; the
        conflicts are kept (and their originals saved) until the user decides."""
        done = set(restored)
        for item in self._record["files"]:
            if item["path"] in done:
                item["mutated"] = []
        known = {c["path"] for c in self._record["conflicts"]}
        for c in conflicts:
            if c.path not in known:
                self._record["conflicts"].append(c.record())
                self.conflicts.append(c)
        self._write()

    def save(self, path: str) -> str | None:
        return _save(self.root, self.dir, self.states[path].sha256)

    def finish(self) -> None:
        """Every arm restored: drop the record, the snapshot and the lock."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.dir / INPLACE_RECORD_NAME)
        shutil.rmtree(self.dir / "blobs", ignore_errors=True)
        self._release()

    def abandon(self) -> None:
        """A restore failed or met a conflict: keep the record, release the lock."""
        self._release()

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read_record(folder: Path) -> dict[str, Any]:
    record = json.loads((folder / INPLACE_RECORD_NAME).read_bytes())
    if not isinstance(record, dict) or record.get("schema") not in _READABLE:
        raise ValueError(f"schema {record.get('schema') if isinstance(record, dict) else None!r}")
    return record


@contextlib.contextmanager
def _locked(folder: Path) -> Any:
    """The record's lock, or None while a live run holds it."""
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield None
            return
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _pending_record(tools_dir: Path, result: Recovery) -> Any:
    """The folder of a pending record, held under its lock; None when there is none, or
    while a live run holds it (then ``result.busy``)."""
    folder = _dir(tools_dir)
    if not (folder / INPLACE_RECORD_NAME).exists():
        yield None
        return
    with _locked(folder) as fd:
        if fd is None:
            result.busy = True
            yield None
            return
        yield folder


def _drop_record(folder: Path) -> None:
    os.unlink(folder / INPLACE_RECORD_NAME)
    shutil.rmtree(folder / "blobs", ignore_errors=True)


def recover(root: Path, tools_dir: Path) -> Recovery:
    """Complete a pending restore left by an ``--in-place`` run that died: every file still
    holding a mutant tools wrote is restored and verified; a file changed since is left as
    it is, as a conflict (the record then stays). A run still alive holds the lock: its
    files are left alone (``busy``)."""
    result = Recovery()
    with _pending_record(tools_dir, result) as folder:
        if folder is None:
            return result
        where = str(folder / INPLACE_RECORD_NAME)
        try:
            record = _read_record(folder)
            legacy = record["schema"] != SCHEMA
            earlier = {c["path"]: c for c in record.get("conflicts", [])}
            wrong: list[str] = []
            conflicts: list[Conflict] = []
            for item in record["files"]:
                path = item["path"]
                before = _state_of(folder, item)
                mutants = list(item.get("mutated", []))
                if not mutants and not legacy and path not in earlier:
                    continue  # no mutant of this file was pending
                try:
                    outcome, now = restore_file(root, path, before, mutants)
                except (OSError, ApplyError) as exc:
                    raise ValueError(f"{path}: {exc}") from None
                if outcome == "failed":
                    wrong.append(path)
                elif outcome == "restored":
                    result.restored.append(path)
                    item["mutated"] = []
                elif outcome == "unchanged":
                    item["mutated"] = []
                else:
                    last = mutants[-1] if mutants else earlier.get(path, {}).get("sha256_mutated")
                    saved = _save(root, folder, before.sha256)
                    conflicts.append(Conflict(path, before.sha256, last, now.sha256, saved))
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
        plan, pid = record.get("plan"), record.get("pid")
        if result.restored:
            result.notices.append(
                f"completed a pending in-place restore of plan {plan} (process {pid} stopped "
                f"mid-run): {len(result.restored)} file(s) restored, sha256 verified"
            )
        if conflicts:
            record["schema"] = SCHEMA
            record["conflicts"] = [c.record() for c in conflicts]
            write_atomic(folder / INPLACE_RECORD_NAME, json.dumps(record, indent=1).encode())
            result.conflicts = conflicts
            return result
        if not result.restored:
            result.notices.append(
                f"dropped the in-place recovery record of plan {plan} (process {pid}): "
                "no file held a mutant any more"
            )
        _drop_record(folder)
        return result


def discard(root: Path, tools_dir: Path) -> Recovery:
    """Drop the recovery record without touching the working tree (the user has decided).
    The original of every file that differs from it is kept under ``saved/`` first."""
    result = Recovery()
    with _pending_record(tools_dir, result) as folder:
        if folder is None:
            return result
        where = str(folder / INPLACE_RECORD_NAME)
        kept: list[str] = []
        try:
            record = _read_record(folder)
            for item in record["files"]:
                before = _state_of(folder, item)
                try:
                    now = read_state(root, item["path"])
                except ApplyError:
                    now = FileState(None)
                if now.sha256 != before.sha256 and before.sha256 is not None:
                    saved = _save(root, folder, before.sha256)
                    kept.append(f"{item['path']} (original at {saved})")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(
                f"cannot read the in-place recovery record: {exc}", where=where
            ) from None
        _drop_record(folder)
        said = f"; kept as they are: {', '.join(kept)}" if kept else ""
        result.notices.append(
            f"discarded the in-place recovery record of plan {record.get('plan')} "
            f"(process {record.get('pid')}); the working tree was not touched{said}"
        )
        return result


def _record_or_none(tools_dir: Path) -> dict[str, Any] | None:
    path = inplace_record(tools_dir)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_bytes())
        return record if isinstance(record, dict) else {}
    except (OSError, ValueError):
        return {}


def pending_paths(tools_dir: Path) -> list[str] | None:
    """The files a pending in-place restore would rewrite, or None when nothing is pending.

    Read without the lock and without restoring: the gates of preflight and the hooks refuse
    to judge (and so to let anyone commit) a tree that may still hold a mutant. An unreadable
    record still counts as pending, with no paths named. Files in conflict are not listed
    (see :func:`conflicts`).
    """
    record = _record_or_none(tools_dir)
    if record is None:
        return None
    try:
        held = {str(c["path"]) for c in record.get("conflicts", [])}
        files = [item for item in record["files"] if str(item["path"]) not in held]
        if record.get("schema") == SCHEMA:
            mutated = [str(item["path"]) for item in files if item.get("mutated")]
            if mutated or held:
                return mutated
        return [str(item["path"]) for item in files]
    except (KeyError, TypeError, AttributeError):
        return []


def conflicts(tools_dir: Path) -> list[Conflict]:
    """The conflicts a recovery record holds (none when there is no record)."""
    record = _record_or_none(tools_dir)
    try:
        return [Conflict.from_record(c) for c in (record or {}).get("conflicts", [])]
    except (KeyError, TypeError, AttributeError):
        return []
