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
--discard``). The record goes when every file is back as it was. A restore is atomic against
the user's saves: it never replaces the file by name (see :func:`restore_file` and the steps
above it), so a save made while it runs is kept, in any interleaving.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tools.errors import UsageError
from tools.fsio import refuse_links, write_atomic
from tools.git import decode, run_git
from tools.mutate import INPLACE_RECORD_NAME, inplace_record
from tools.mutate import apply as ap
from tools.mutate.apply import ApplyError, FileState, read_state

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
    # Content found in the way of a restore that saves raced (not tools's own): where kept.
    kept: tuple[str, ...] = ()

    def message(self) -> str:
        def h(sha: str | None) -> str:
            return sha if sha is not None else "(absent)"

        where = (
            f"the original is saved at {self.saved}"
            if self.saved
            else "the file did not exist before the run"
        )
        also = f"; also kept, found in the way: {', '.join(self.kept)}" if self.kept else ""
        return (
            f"{self.path} changed since tools wrote its mutant (sha256 before {h(self.before)}, "
            f"mutated {h(self.mutated)}, now {h(self.now)}): left as it is, not restored; "
            f"{where}{also}; once decided, run `tools mutate recover --discard`"
        )

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "sha256_before": self.before,
            "sha256_mutated": self.mutated,
            "sha256_now": self.now,
            "saved": self.saved,
        }
        if self.kept:
            out["kept"] = list(self.kept)
        return out

    @classmethod
    def from_record(cls, item: dict[str, Any]) -> Conflict:
        return cls(
            str(item["path"]),
            item.get("sha256_before"),
            item.get("sha256_mutated"),
            item.get("sha256_now"),
            item.get("saved"),
            tuple(str(k) for k in item.get("kept", ())),
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
    sha = item["sha256"]
    if sha is None:
        return FileState(None, missing_dirs=tuple(item.get("missing_dirs", ())))
    data = (folder / "blobs" / sha).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha:
        raise ValueError(f"the snapshot of {item['path']} does not match its sha256")
    return FileState(data, int(item["mode"]), bool(item["link"]))


# -- the restore, atomic against the user's saves ----------------------------------------------
#
# A restore must never replace a save the user makes while it runs, in any interleaving. POSIX
# has no "replace this name only while it still names that file", so the restore never
# replaces a name at all. It moves the file away and puts the original only where nothing is:
#
# 1. check: the file holds a mutant tools wrote (its identity and sha256 are noted);
# 2. stage: the original is written and fsynced as a file of its own beside it (in the in-place
#    folder, or next to the target when that folder is on another file system);
# 3. aside: ``rename(target, aside)``, one atomic step. Whatever the name held at that instant
#    goes aside whole: a save done before it (written into the file, or renamed over it) is in
#    the aside; a save after it finds no file at the name, and creates a new one there (or, if
#    it will not create one, fails in the editor's hands: nothing is lost);
# 4. verify: the aside is the very file of step 1 (device, inode, size, mtime) with the same
#    content. If not, a save landed between 1 and 3: the aside is linked back to the name
#    (``link`` never replaces), so the save is where the user left it: ``inplace-conflict``;
# 5. place: ``link(staged, target)``, which fails if a save has created the name since 3: the
#    save stays, ``inplace-conflict``;
# 6. recheck: the aside is unchanged since 4, ctime included. A process that had the file open
#    before step 3 writes into the aside's inode, not the name: if it did, the exchange is
#    undone the same way (the placed original goes aside, is verified as ours, and the
#    written-to file is linked back to the name) and it is ``inplace-conflict``;
# 7. the aside goes, and the name is checked to hold the placed file with the original's
#    content; a save that lands after step 5 (into the placed file, or over it) is
#    ``inplace-conflict`` too, the save kept.
#
# Nothing that is not tools's own content (a mutant or the original) is ever deleted: a file
# that is neither, left in the way by two saves racing the restore, goes to ``saved/`` and the
# conflict names it. A restore killed between steps 3 and 5 leaves the name empty and the
# file aside under a fixed name: the next restore of the path (every ``tools mutate``
# invocation runs one first) links it back before anything else. What no restore can do: a
# process that keeps the file open through the whole restore and writes through that
# descriptor only after step 6 writes into a file that no longer has a name, exactly as after
# an editor's own save by rename.


class Restored(NamedTuple):
    """What :func:`restore_file` did: ``outcome`` (``unchanged``, ``restored``, ``conflict``
    or ``failed``), the file's state ``now``, and where content found in the way of the
    restore was ``kept`` (under ``saved/``; it belongs to the user)."""

    outcome: str
    now: FileState
    kept: tuple[str, ...] = ()


class _Seen(NamedTuple):
    """One look at a path: the file's identity as stat gives it, and its state. ``steady``:
    the identity did not change while the content was read."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    state: FileState
    steady: bool

    def same_file(self, other: _Seen) -> bool:
        """The same file, with the same content, unwritten since (a rename or a link changes
        only the ctime)."""
        return (
            self.steady
            and other.steady
            and (self.dev, self.ino, self.size, self.mtime_ns)
            == (other.dev, other.ino, other.size, other.mtime_ns)
            and self.state == other.state
        )

    def untouched(self, other: _Seen) -> bool:
        """:meth:`same_file`, and not even its metadata changed since ``other``."""
        return self.same_file(other) and self.ctime_ns == other.ctime_ns


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _look(full: Path) -> _Seen | None:
    """The file at ``full`` (never followed if it is a link), or None when there is none."""
    for _ in range(3):
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            if stat.S_ISLNK(st.st_mode):
                data = os.fsencode(os.readlink(full))
                steady = _identity(os.lstat(full)) == _identity(st)
                state = FileState(data, 0o777, True)
            elif stat.S_ISREG(st.st_mode):
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                with os.fdopen(fd, "rb") as handle:
                    first = os.fstat(handle.fileno())
                    data = handle.read()
                    last = os.fstat(handle.fileno())
                steady = _identity(st) == _identity(first) == _identity(last)
                state = FileState(data, stat.S_IMODE(first.st_mode))
            else:
                raise ApplyError(f"{full} is not a regular file")
        except OSError as exc:
            if exc.errno not in _MOVED:
                raise
            continue  # replaced between the lstat and the read: look again
        return _Seen(
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, state, steady
        )
    raise ApplyError(f"{full} keeps changing while it is read")


_MOVED = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


class _CrossDevice(Exception):
    """The work folder is on another file system than the target: nothing was changed."""


class _Places(NamedTuple):
    """Where one path's restore stages the original and puts files aside (fixed names, so
    that the next restore finds what a killed one left)."""

    folder: Path
    stage: Path
    aside: Path
    back: Path


def _places(folder: Path, full: Path, path: str) -> list[_Places]:
    """In the in-place folder (never seen by ``git add``); else, for a tree whose git
    directory is on another file system, next to the target under hidden names."""
    key = hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    work = folder / "work"
    beside = full.parent
    hidden = f".{full.name}.tools-"
    return [
        _Places(work, work / f"{key}.stage", work / f"{key}.aside", work / f"{key}.back"),
        _Places(
            beside, beside / f"{hidden}stage", beside / f"{hidden}aside", beside / f"{hidden}back"
        ),
    ]


def _stage(where: Path, state: FileState) -> _Seen | None:
    """Write ``state`` (a present one) as the file ``where``, fsynced; its look, or None
    when what was written does not read back as ``state``."""
    assert state.data is not None
    with contextlib.suppress(FileNotFoundError):
        os.unlink(where)
    if state.link:
        os.symlink(os.fsdecode(state.data), where)
    else:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(where, flags, 0o600), "wb") as handle:
            handle.write(state.data)
            handle.flush()
            os.fchmod(handle.fileno(), state.mode)
            os.fsync(handle.fileno())
    seen = _look(where)
    if seen is None or seen.state != FileState(state.data, state.mode, state.link):
        return None
    return seen


def _link(source: Path, target: Path) -> bool:
    """Give ``source``'s file the name ``target`` too, only if ``target`` does not exist:
    False when it does. On a file system without hard links, a copy made with ``O_EXCL``
    (a symbolic link is made anew, which never replaces either)."""
    try:
        os.link(source, target, follow_symlinks=False)
        return True
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
    try:
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
            return True
        st = os.lstat(source)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(source, "rb") as src, os.fdopen(os.open(target, flags, 0o600), "wb") as dst:
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fchmod(dst.fileno(), stat.S_IMODE(st.st_mode))
            os.fsync(dst.fileno())
        return True
    except FileExistsError:
        return False


def _put_back(aside: Path, full: Path) -> bool:
    """The file set aside gets its name back, unless something has taken the name since."""
    if not _link(aside, full):
        return False
    os.unlink(aside)
    return True


def _exchange(
    full: Path,
    expect: _Seen,
    incoming: Path | None,
    aside: Path,
    step: Callable[[str], None],
) -> str:
    """Steps 3 to 6 (see above): move the file at ``full`` to ``aside``, check that it is
    ``expect``'s, put ``incoming`` (None: nothing) in its place only while the name is free,
    and recheck the aside. ``done``: and the aside is gone; ``vanished`` (no file to move),
    ``refused`` (not ``expect``'s: linked back if the name is still free), ``raced`` (the
    name was taken before the placing) and ``late`` (the aside was written to after its
    check) leave what is left for :func:`_tidy`. An error or an interrupt between the aside
    and the placing links the aside back first."""
    try:
        os.rename(full, aside)
    except FileNotFoundError:
        return "vanished"
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            raise _CrossDevice() from None
        raise
    placed = False
    try:
        step("aside")
        seen = _look(aside)
        if seen is None or not seen.same_file(expect):
            _put_back(aside, full)
            return "refused"
        step("verified")
        if incoming is not None:
            if not _link(incoming, full):
                return "raced"
            os.unlink(incoming)
        placed = True
        step("placed")
        again = _look(aside)
        if again is not None and again.untouched(seen):
            os.unlink(aside)
            step("rechecked")
            return "done"
        return "late"
    except BaseException:
        if not placed:
            with contextlib.suppress(OSError):
                _put_back(aside, full)
        raise


def _keep(root: Path, folder: Path, leftover: Path, seen: _Seen) -> str:
    """Move ``leftover`` (content that is not tools's own) under ``saved/``; where."""
    sha = seen.state.sha256
    assert sha is not None
    saved = folder / "saved"
    saved.mkdir(parents=True, exist_ok=True)
    dest = saved / sha
    if os.path.lexists(dest):
        os.unlink(leftover)  # the same bytes are kept already
        return _shown(root, dest)
    try:
        os.rename(leftover, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        assert seen.state.data is not None
        write_atomic(dest, seen.state.data)
        os.unlink(leftover)
    return _shown(root, dest)


def _tidy(root: Path, folder: Path, full: Path, path: str, own: set[str | None]) -> list[str]:
    """Settle what a restore (this one, or one killed mid-way) left beside ``full``: a file
    set aside goes back to the name when the name is empty; one that is the same file as the
    name's, or holds tools's own content (``own``: the original and the mutants), goes; any
    other is the user's and is kept under ``saved/``. Where kept ones are."""
    kept: list[str] = []
    for places in _places(folder, full, path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(places.stage)  # a copy of the original, which the snapshot has
        for leftover in (places.aside, places.back):
            seen = _look(leftover)
            if seen is None:
                continue
            try:
                there = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                there = None
            if there is None:
                full.parent.mkdir(parents=True, exist_ok=True)
                if _put_back(leftover, full):
                    continue
            elif (there.st_dev, there.st_ino) == (seen.dev, seen.ino):
                os.unlink(leftover)  # a second name of the file the path holds
                continue
            if seen.steady and seen.state.sha256 in own:
                os.unlink(leftover)
                continue
            kept.append(_keep(root, folder, leftover, seen))
    return kept


def _no_pause(step: str) -> None:
    pass


def restore_file(
    root: Path,
    path: str,
    before: FileState,
    mutants: Iterable[str | None],
    *,
    folder: Path,
    between: Callable[[str], None] | None = None,
) -> Restored:
    """Put ``path`` back to ``before`` only while it holds one of ``mutants`` (the sha256 of
    contents the arm wrote; None: the arm deleted it), atomically against the user's saves
    (see the steps above). ``folder``: the in-place folder (work files, ``saved/``).
    ``between``: called with each step's name once it is done (``checked``, ``staged``,
    ``aside``, ``verified``, ``placed``, ``rechecked``), so that a test can save the file at
    every step boundary. Outcomes: ``unchanged`` (already the original), ``restored`` (put
    back, verified), ``conflict`` (changed by someone else: left as they left it), ``failed``
    (the original could not be staged as it was: nothing touched)."""
    full = ap.full_path(root, path)
    try:
        refuse_links(full.parent, root)
    except UsageError as exc:
        raise ApplyError(f"{path}: {exc.render()}") from None
    step = between or _no_pause
    mutants = set(mutants)
    own = mutants | {before.sha256}
    # What an earlier restore of this path, killed mid-way, left: the file back first.
    kept = _tidy(root, folder, full, path, own)
    try:
        outcome, now = _restore(root, path, full, before, mutants, folder, step)
    finally:
        kept += _tidy(root, folder, full, path, own)
    if kept and outcome != "conflict":
        outcome, now = "conflict", ap.read_state(root, path)
    return Restored(outcome, now, tuple(kept))


def _restore(
    root: Path,
    path: str,
    full: Path,
    before: FileState,
    mutants: set[str | None],
    folder: Path,
    step: Callable[[str], None],
) -> tuple[str, FileState]:
    now = _look(full)
    state = now.state if now is not None else ap.read_state(root, path)
    if now is not None and not now.steady:
        return "conflict", state  # being written this very moment
    if state.sha256 == before.sha256:
        if state == before:
            return "unchanged", state
        if now is None or (now.state.link == before.link and not before.link):
            # Folders to remove, or permission bits: no content is replaced.
            if now is None:
                _remove_dirs(root, before)
            else:
                os.chmod(full, before.mode)
            return "unchanged", ap.read_state(root, path)
        label = "unchanged"  # the same bytes as a link, or the other way round
    elif state.sha256 in mutants:
        label = "restored"
    else:
        return "conflict", state
    step("checked")
    for places in _places(folder, full, path):
        try:
            return _swap_in(root, path, full, before, now, places, label, step)
        except _CrossDevice:
            continue
        finally:
            with contextlib.suppress(OSError):
                os.unlink(places.stage)
    raise ApplyError(f"{path}: no folder on its file system to restore it through")


def _swap_in(
    root: Path,
    path: str,
    full: Path,
    before: FileState,
    now: _Seen | None,
    places: _Places,
    label: str,
    step: Callable[[str], None],
) -> tuple[str, FileState]:
    """Steps 2 to 7 through ``places``; raises :class:`_CrossDevice` before any change when
    they are on another file system than the target."""
    places.folder.mkdir(parents=True, exist_ok=True)
    staged = None
    if before.data is not None:
        full.parent.mkdir(parents=True, exist_ok=True)  # the arm may have removed it
        staged = _stage(places.stage, before)
        if staged is None:
            return "failed", now.state if now is not None else ap.read_state(root, path)
    step("staged")
    if now is None:
        # The arm deleted the file: the original goes in only where nothing has appeared.
        assert staged is not None
        try:
            placed = _link(places.stage, full)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                raise _CrossDevice() from None
            raise
        if not placed:
            return "conflict", ap.read_state(root, path)
        step("placed")
        return _verified(root, path, full, staged, label)
    swap = _exchange(full, now, places.stage if staged else None, places.aside, step)
    if swap == "late" and staged is not None:
        # Written to through an open descriptor after it was set aside: that write is the
        # user's, so it goes back to the name in place of the original, the same way.
        _exchange(full, staged, places.aside, places.back, lambda s: step(f"undo-{s}"))
    if swap != "done":
        return "conflict", ap.read_state(root, path)
    if staged is None:
        _remove_dirs(root, before)
        there = _look(full)
        if there is not None:
            return "conflict", there.state  # created since the mutant was removed
        return label, ap.read_state(root, path)
    return _verified(root, path, full, staged, label)


def _remove_dirs(root: Path, before: FileState) -> None:
    """The folders an absent original did not have (never a file: only empty folders go)."""
    for parent in before.missing_dirs:
        with contextlib.suppress(OSError, ApplyError):  # not empty: something lives there now
            os.rmdir(ap.full_path(root, parent))


def _verified(
    root: Path, path: str, full: Path, staged: _Seen, label: str
) -> tuple[str, FileState]:
    """Step 7: the name holds the placed file, with the original's content."""
    there = _look(full)
    if there is not None and there.same_file(staged):
        return label, there.state
    return "conflict", there.state if there is not None else ap.read_state(root, path)


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
        with contextlib.suppress(OSError):  # empty once every restore has settled
            os.rmdir(self.dir / "work")
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
    with contextlib.suppress(OSError):
        os.rmdir(folder / "work")


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
                    outcome, now, kept = restore_file(root, path, before, mutants, folder=folder)
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
                    kept += tuple(earlier.get(path, {}).get("kept", ()))
                    conflicts.append(Conflict(path, before.sha256, last, now.sha256, saved, kept))
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


def _set_aside(root: Path, folder: Path, path: str) -> list[str]:
    """Files a restore killed mid-way left aside for ``path``, moved under ``saved/`` without
    touching the working tree (``--discard``); where they are now."""
    try:
        full = ap.full_path(root, path)
    except ApplyError:
        return []
    moved = []
    for places in _places(folder, full, path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(places.stage)
        for leftover in (places.aside, places.back):
            seen = _look(leftover)
            if seen is not None:
                moved.append(_keep(root, folder, leftover, seen))
    return moved


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
                for moved in _set_aside(root, folder, item["path"]):
                    kept.append(f"{item['path']} (as a restore stopped mid-way found it: {moved})")
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
