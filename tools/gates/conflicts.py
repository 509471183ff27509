"""conflicts: merge-conflict markers left in files, and unmerged paths (SPEC §4.6).

While a merge, rebase or cherry-pick is stopped on conflicts, each unmerged path is an error
and its working-tree file (the only place its markers are: it has no stage-0 blob) is
examined, with or without ``--staged``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools import file_reads
from tools.errors import UsageError
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "conflicts"
CONFLICT_MARKER = Rule(
    "conflict-marker",
    "error",
    "a conflict marker at column 0 of a text file",
    example="conflict marker <<<<<<< at column 0",
    fix=(
        "Finish the merge in that file: keep the intended text, delete the "
        "`<<<<<<<`, `=======` and `>>>>>>>` lines, and stage the file again."
    ),
)

CONFLICT_UNMERGED = Rule(
    "conflict-unmerged",
    "error",
    "the index has an unmerged entry for the path",
    example="unmerged: the conflict is not resolved (fix the file, then `git add` it)",
    fix=(
        "Resolve the conflict in the file and `git add` it, or abandon the operation "
        "(`git merge --abort`, `git rebase --abort`, `git cherry-pick --abort`)."
    ),
)

RULES = declare(NAME, [CONFLICT_MARKER, CONFLICT_UNMERGED])

_OPEN, _CLOSE, _MID = b"<<<<<<< ", b">>>>>>> ", b"======="
_BINARY_PROBE = 8192


def is_binary(data: bytes) -> bool:
    """git's heuristic: a NUL byte in the first 8 KiB."""
    return b"\0" in data[:_BINARY_PROBE]


def find_markers(data: bytes) -> list[tuple[int, str]]:
    """(line number, marker description) of every conflict marker in ``data``.

    ``=======`` counts only inside an open ``<<<<<<<`` hunk, so a setext heading underline
    stays quiet.
    """
    if _OPEN not in data and _CLOSE not in data:
        return []
    found: list[tuple[int, str]] = []
    open_hunk = False
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.startswith(_OPEN):
            found.append((number, "<<<<<<<"))
            open_hunk = True
        elif line.startswith(_CLOSE):
            found.append((number, ">>>>>>>"))
            open_hunk = False
        elif open_hunk and line.rstrip(b"\r") == _MID:
            found.append((number, "======="))
    return found


def _read_worktree(ctx: Context, path: str) -> bytes | None:
    """The working-tree file (None: absent or a symlink, which hold no markers)."""
    full = ctx.git.worktree_path(path)
    if full.is_symlink() or not full.exists():
        return None
    return file_reads.read_optional(full, path, root=ctx.root)


def prefetch(ctx: Context) -> None:
    """The index, and under ``--staged`` the staged change: the first reads of a preflight."""
    ctx.git.prefetch_index()
    if ctx.opts.staged:
        ctx.prefetch_staged_changes()


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    git = ctx.git
    unmerged = git.unmerged_paths()
    for path in unmerged:
        result.add(
            CONFLICT_UNMERGED.id,
            "unmerged: the conflict is not resolved (fix the file, then `git add` it)",
            path=path,
        )
    conflicted = set(unmerged)
    if ctx.opts.staged:
        paths = [c.path for c in ctx.staged_changes if c.status not in "DU"]
        modes = git.index_modes(paths)
        what = "staged blobs that differ from HEAD"
    else:
        entries = git.index_entries()
        modes = {e.path: e.mode for e in entries}
        paths = [e.path for e in entries]
        what = "tracked files"
    # An unmerged path has no stage-0 blob: its markers are in the working-tree file.
    paths = [p for p in paths if p not in conflicted] + unmerged
    examined = binary = links = 0
    for path in paths:
        mode = modes.get(path, "100644")
        if mode == "120000":
            links += 1
            continue
        if mode == "160000":
            continue
        if ctx.opts.staged and path not in conflicted:
            data = git.staged_blob(path)
            if data is None:
                raise UsageError(f"{path}: staged blob cannot be read")
        else:
            data = _read_worktree(ctx, path)
            if data is None:
                if git.worktree_path(path).is_symlink():
                    links += 1
                continue
        if is_binary(data):
            binary += 1
            continue
        examined += 1
        for line, marker in find_markers(data):
            result.add(
                CONFLICT_MARKER.id,
                f"conflict marker {marker} at column 0",
                path=path,
                line=line,
            )
    result.stats.update(
        {
            "files": examined,
            "binary_skipped": binary,
            "symlinks_skipped": links,
            "unmerged": len(unmerged),
        }
    )
    if examined == 0 and not result.findings:
        if not paths:
            return result.skip(f"nothing to examine: no {what}")
        return result.skip(f"nothing to examine: every one of the {what} is binary or a link")
    return result
