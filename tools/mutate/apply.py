"""Applying mutations to a tree (an arm's worktree, or the working tree with ``--in-place``),
and the proofs around it: file states and their sha256, ``+added/-deleted`` against the
state the arm started from, and restoring a snapshot.

Thread-safe: git runs as plain subprocesses (:func:`tools.git.run_git`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.git import GitError, decode, encode, run_git, unquote_c
from tools.mutate.mutation import Mutation


class NotApplied(Exception):
    """The mutation changed nothing (a string not found, a patch that does not apply, a revert
    to identical content). The message says why."""


class ApplyError(Exception):
    """The mutation could not be attempted (a path through a symbolic link, a directory where
    a file is expected, a submodule): the arm is an ERROR."""


class FileState(NamedTuple):
    """A file as it is at one moment: its bytes (the link target for a symbolic link), None
    when absent; its permission bits; whether it is a symbolic link."""

    data: bytes | None
    mode: int = 0o644
    link: bool = False
    # For an absent file: its parent folders that did not exist either (deepest first), so
    # that restoring the absence also removes folders a mutation created.
    missing_dirs: tuple[str, ...] = ()

    @property
    def sha256(self) -> str | None:
        return None if self.data is None else hashlib.sha256(self.data).hexdigest()


ABSENT = FileState(None)


def _full(root: Path, rel: str) -> Path:
    return root / os.fsdecode(encode(rel))


def _inside(root: Path, rel: str, *, parent_only: bool = False) -> Path:
    """The full path of ``rel``, refusing one that a symbolic link leads out of ``root``."""
    full = _full(root, rel)
    probe = full.parent if parent_only else full
    real = Path(os.path.realpath(probe))
    top = Path(os.path.realpath(root))
    if real != top and top not in real.parents:
        raise ApplyError(f"{rel} leads outside the tree through a symbolic link")
    return full


def full_path(root: Path, rel: str) -> Path:
    """The full path of ``rel`` in ``root``, refusing one whose folder a symbolic link leads
    out of the tree (the file itself may be a link: it is replaced, never written through)."""
    return _inside(root, rel, parent_only=True)


def read_state(root: Path, rel: str) -> FileState:
    full = _inside(root, rel, parent_only=True)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        missing = []
        parent = rel.rpartition("/")[0]
        while parent and not _full(root, parent).is_dir():
            missing.append(parent)
            parent = parent.rpartition("/")[0]
        return FileState(None, missing_dirs=tuple(missing))
    if stat.S_ISLNK(st.st_mode):
        return FileState(os.fsencode(os.readlink(full)), 0o777, True)
    if not stat.S_ISREG(st.st_mode):
        raise ApplyError(f"{rel} is not a regular file")
    from tools import file_reads

    return FileState(file_reads.read_file(full, rel, root=root), stat.S_IMODE(st.st_mode))


def write_state(root: Path, rel: str, state: FileState) -> None:
    """Make ``rel`` be ``state`` (deleting it for an absent state)."""
    full = _inside(root, rel, parent_only=True)
    if state.data is None:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(full)
        for folder in state.missing_dirs:
            with contextlib.suppress(OSError):  # not empty: something else lives there now
                os.rmdir(_full(root, folder))
        return
    if full.is_dir() and not full.is_symlink():
        raise ApplyError(f"{rel} is a directory")
    if state.link:
        full.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(full)
        os.symlink(os.fsdecode(state.data), full)
        return
    if full.is_symlink():
        os.unlink(full)  # replace the link itself, never write through it
    try:
        # Through the tree's own .git/tools/tmp: a write killed mid-way leaves no temp file
        # beside the target for `git add -A` to commit.
        write_atomic(full, state.data, mode=state.mode, root=root)
    except UsageError as exc:
        raise ApplyError(f"{rel}: {exc}") from None


# -- which files a mutation touches -------------------------------------------------------------
def _rename_sources(patch: bytes) -> list[str]:
    """Old paths of renames in a git patch (``rename from``), which ``git apply --numstat``
    does not list. Only extended-header lines count: a hunk line starts with one of
    `` +-\\``, so it cannot be one."""
    found: list[str] = []
    in_header = False
    for line in patch.split(b"\n"):
        if line.startswith(b"diff --git "):
            in_header = True
        elif line.startswith((b"@@", b"--- ", b"+++ ")):
            in_header = False
        elif in_header and line.startswith(b"rename from "):
            found.append(decode(unquote_c(line[len(b"rename from ") :].rstrip(b"\r"))))
    return found


def patch_paths(root: Path, patch: bytes) -> list[str]:
    """Every path ``patch`` would change (new and old names), as git parses it; [] for a
    patch git cannot parse (applying it then fails: NOT-APPLIED)."""
    status, out, _ = run_git(root, "apply", "--numstat", "-z", "-", input=patch, ok=(0, 1, 128))
    if status != 0:
        return []
    paths: list[str] = []
    for rec in out.split(b"\0"):
        if rec:
            paths.append(decode(rec.split(b"\t", 2)[-1]))
    for old in _rename_sources(patch):
        if old not in paths:
            paths.append(old)
    return paths


def targets(root: Path, mutation: Mutation) -> list[str]:
    if mutation.kind == "patch":
        assert mutation.patch_bytes is not None
        return patch_paths(root, mutation.patch_bytes)
    return [mutation.path]


# -- applying ----------------------------------------------------------------------------------
def state_at(root: Path, commit: str, rel: str) -> FileState:
    """``rel`` as ``commit`` holds it (ABSENT when it does not)."""
    _, out, _ = run_git(root, "--literal-pathspecs", "ls-tree", "-z", commit, "--", rel)
    for rec in out.split(b"\0"):
        meta, _, name = rec.partition(b"\t")
        if not rec or decode(name) != rel:
            continue
        mode, kind, sha = meta.split()
        if kind != b"blob":
            what = "a submodule" if kind == b"commit" else "a directory"
            raise ApplyError(f"{rel} is {what} at {commit[:12]}, not a file")
        _, data, _ = run_git(root, "cat-file", "blob", sha.decode())
        if mode == b"120000":
            return FileState(data, 0o777, True)
        return FileState(data, 0o755 if mode == b"100755" else 0o644)
    return ABSENT


def apply(root: Path, mutation: Mutation, *, repo: Path | None = None) -> None:
    """Apply one mutation in ``root``; NotApplied when it changes nothing. ``repo``: where
    a revert reads its commit (default ``root``; a scratch copy has no history)."""
    names = targets(root, mutation)
    before = {p: read_state(root, p) for p in names}
    if mutation.kind == "revert":
        assert mutation.commit is not None
        want = state_at(repo or root, mutation.commit, mutation.path)
        if want.data == before[mutation.path].data:
            raise NotApplied(f"{mutation.path} already has its content at {mutation.fields['to']}")
        write_state(root, mutation.path, want)
    elif mutation.kind == "replace":
        _replace(root, mutation, before[mutation.path])
    else:
        assert mutation.patch_bytes is not None
        status, out, err = run_git(
            root, "apply", "--whitespace=nowarn", "-", input=mutation.patch_bytes, ok=range(256)
        )
        if status != 0:
            detail = decode(err or out).strip().splitlines()
            raise NotApplied(
                f"git apply refused {mutation.path}: " + " / ".join(detail[-3:] or ["(no output)"])
            )
    after = {p: read_state(root, p) for p in names}
    # The proof is the content's sha256: a change of permission bits alone is no mutation.
    if names and all(after[p].data == before[p].data for p in names):
        raise NotApplied(f"{mutation.describe()} changed nothing")


def preview(
    repo: Path, mutations: list[Mutation], before: dict[str, FileState]
) -> dict[str, list[str | None]]:
    """The sha256 of every content each of ``before``'s files takes on while ``mutations``
    are applied in turn (None: deleted), worked out on a scratch copy so that the tree itself
    is untouched. Stops where a mutation does not apply, as the real run would."""
    seen: dict[str, list[str | None]] = {p: [] for p in before}
    with tempfile.TemporaryDirectory(prefix="tools-preview-") as tmp:
        scratch = Path(tmp)
        # A repository of its own, so that `git apply` never finds an enclosing one.
        run_git(scratch, "init", "-q")
        for path, state in before.items():
            write_state(scratch, path, state)
        for mutation in mutations:
            try:
                apply(scratch, mutation, repo=repo)
            except (NotApplied, ApplyError, GitError, OSError):
                break
            finally:
                for path in before:
                    with contextlib.suppress(ApplyError, OSError):
                        sha = read_state(scratch, path).sha256
                        if sha != before[path].sha256 and sha not in seen[path]:
                            seen[path].append(sha)
    return seen


def _replace(root: Path, mutation: Mutation, state: FileState) -> None:
    f = mutation.fields
    if state.data is None:
        raise NotApplied(f"{f['path']} is absent")
    if state.link:
        raise NotApplied(f"{f['path']} is a symbolic link")
    old, new = encode(f["old"]), encode(f["new"])
    found = state.data.count(old)
    want = f.get("count")
    if found == 0:
        raise NotApplied(f"{f['old']!r} does not occur in {f['path']}")
    if want is not None and found < want:
        raise NotApplied(f"{f['old']!r} occurs {found} time(s) in {f['path']}, not {want}")
    data = state.data.replace(old, new, want if want is not None else -1)
    write_state(root, f["path"], FileState(data, state.mode))


# -- proofs ---------------------------------------------------------------------------------------
def numstat(before: FileState, after: FileState) -> tuple[int, int, bool]:
    """(added, deleted, binary) lines from ``before`` to ``after``, as ``git diff`` counts."""
    if before == after:
        return 0, 0, False
    with tempfile.TemporaryDirectory(prefix="tools-numstat-") as tmp:
        names = []
        for label, state in (("a", before), ("b", after)):
            if state.data is None:
                names.append(os.devnull)
                continue
            path = Path(tmp) / label
            path.write_bytes(state.data)
            names.append(str(path))
        try:
            _, out, _ = run_git(
                Path(tmp),
                "diff",
                "--no-index",
                "--no-ext-diff",
                "--numstat",
                "-z",
                "--",
                *names,
                ok=(0, 1),
            )
        except GitError:
            return 0, 0, False
    fields = out.split(b"\t", 2)
    if len(fields) < 2 or fields[0] == b"-":
        return 0, 0, True
    return int(fields[0]), int(fields[1]), False


def target_record(
    path: str, before: FileState, mutated: FileState, after: FileState
) -> dict[str, Any]:
    """The contract's target object (a null hash: the file is absent at that point)."""
    return {
        "path": path,
        "sha256_before": before.sha256,
        "sha256_mutated": mutated.sha256,
        "sha256_after": after.sha256,
    }
