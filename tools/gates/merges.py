"""merges: a merge introduces nothing but its merge (SPEC §4.11).

For each two-parent merge of the range, git's own merge of the parents is recomputed
(``git merge-tree --write-tree``, git >= 2.38, which also does git's rename detection) and
compared with the merge commit's tree path by path:

- a path git merged cleanly whose content or mode differs, and a path the merge alone adds
  or deletes, is ``merge-evil``;
- a path git left in conflict is ``merge-resolved`` (info) with the resolution's ``+N/-M``
  against each parent; where git wrote conflict hunks into the file, the lines outside them
  are git's automatic result, and a resolution that changes those is ``merge-evil`` too;
- paths whose ``merge`` attribute (as the merge's own tree sets it; under
  ``--config-from base``, as the merge base's tree does) is ``union`` or ``agent-index``
  are the index gate's (each parent's rows kept), not judged here; git's own merge of the
  parents reads its attributes from that same tree under ``--config-from base``;
- an octopus merge is ``merge-octopus`` (info) and not judged.

A staged change is never a merge commit: with ``--staged`` the gate judges nothing (merges
are judged over committed ranges, by CI and the pre-push hook), so the pre-commit hook's cost
is unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from tools.gates.commit_range import RANGE_EMPTY, range_commits
from tools.git import (
    Commit,
    FilePatch,
    Git,
    Hunk,
    MergeTree,
    MergeTreeUnsupported,
    RawChange,
    decode,
)
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "merges"
MERGE_EVIL = Rule(
    "merge-evil",
    "error",
    "a merge changes what git merged without conflict, or adds or deletes a path alone",
    example=(
        "the merge changes lines git merged without conflict: line 9 is 'evil 9' "
        "(+1/-1 against git's merge of the parents)"
    ),
    fix=(
        "Move the change out of the merge: redo the merge (`git merge` again, taking "
        "git's result for every path it merged by itself and resolving only the "
        "conflicts), then commit the extra change as an ordinary commit of its own, "
        "where its diff is reviewed. To see what the merge added, compare it with "
        "git's own merge: `git diff $(git merge-tree --write-tree P1 P2 | head -1) M "
        "-- PATH` (P1, P2: the merge's parents; M: the merge)."
    ),
)

MERGE_RESOLVED = Rule(
    "merge-resolved",
    "info",
    "a path git left in conflict, as the merge resolved it",
    example=(
        "git's merge of the parents left c.txt in conflict; the merge resolved it: "
        "+0/-0 (that parent's version) against 865fc61f10be (first parent), +2/-2 "
        "against 87e663b92737"
    ),
    fix=(
        "Nothing to fix: it lists the conflicts the merge decided, for the reviewer. "
        "`+0/-0` against a parent means the merge took that parent's version whole; "
        "check that dropping the other side's change there was meant."
    ),
)

MERGE_OCTOPUS = Rule(
    "merge-octopus",
    "info",
    "a merge of more than two parents: not judged",
    example=(
        "an octopus merge of 3 parents: not judged (git's merge-tree recomputes "
        "merges of two parents only)"
    ),
    fix=(
        "Nothing to fix; it says that this merge was not judged. To have it judged, "
        "merge the branches one at a time (each merge then has two parents)."
    ),
)

RULES = declare(NAME, [MERGE_EVIL, MERGE_RESOLVED, MERGE_OCTOPUS, RANGE_EMPTY])

MIN_GIT = (2, 38)
# Merge drivers whose results the index gate judges (each parent's rows kept).
INDEX_DRIVERS = frozenset({"union", "agent-index"})
_ABSENT_MODE = "000000"
_FILE_MODES = frozenset({"100644", "100755"})
_QUOTE_MAX = 100


def _quote(line: bytes) -> str:
    text = decode(line.rstrip(b"\r"))
    return repr(text if len(text) <= _QUOTE_MAX else text[:_QUOTE_MAX] + "…")


def _counts(added: int, removed: int) -> str:
    return f"+{added}/-{removed}"


def split_lines(data: bytes) -> list[bytes]:
    """``data`` as lines split on ``\\n`` only, each keeping its ``\\n`` (CRLF stays whole)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


# -- conflict hunks -----------------------------------------------------------------------------
def _is_marker(line: bytes, char: bytes, label: bytes) -> bool:
    """Whether ``line`` is a conflict marker of ``char`` git wrote with ``label`` (a parent's
    full sha, alone or as ``sha:path`` after a rename): at least seven marker characters, a
    space, the label. Content cannot forge it without holding the parent's sha."""
    body = line.rstrip(b"\r\n")
    run = len(body) - len(body.lstrip(char))
    if run < 7 or body[run : run + 1] != b" ":
        return False
    rest = body[run + 1 :]
    return rest == label or rest.startswith(label + b":")


def conflict_regions(lines: list[bytes], ours: str, theirs: str) -> list[tuple[int, int]]:
    """The conflict hunks git wrote into a merged file, as (first, last) line numbers
    (1-based, marker lines included), from the opening marker labelled ``ours`` to the
    closing one labelled ``theirs``."""
    open_label, close_label = ours.encode("ascii"), theirs.encode("ascii")
    regions: list[tuple[int, int]] = []
    start: int | None = None
    for number, line in enumerate(lines, 1):
        if start is None:
            if line[:1] == b"<" and _is_marker(line, b"<", open_label):
                start = number
        elif line[:1] == b">" and _is_marker(line, b">", close_label):
            regions.append((start, number))
            start = None
    return regions


def outside_kept(lines: list[bytes], regions: list[tuple[int, int]], text: bytes) -> bool:
    """Whether ``text`` holds every line outside the conflict ``regions`` unchanged and in
    order, each run of them contiguous, with anything at all in place of each region: the
    resolution then changed nothing git merged by itself. Runs are matched leftmost, which
    finds a fit whenever one exists."""
    blocks: list[bytes] = []
    prev = 0
    for first, last in regions:
        blocks.append(b"".join(lines[prev : first - 1]))
        prev = last
    blocks.append(b"".join(lines[prev:]))
    head, *middle, tail = blocks
    if not text.startswith(head):
        return False
    pos = len(head)
    framed = b"\n" + text  # a run must start at a line start: after a newline, or at 0
    for block in middle:
        if not block:
            continue
        found = framed.find(b"\n" + block, pos)
        if found < 0:
            return False
        pos = found + len(block)
    return text.endswith(tail) and len(text) - len(tail) >= pos


def _inside(hunk: Hunk, regions: list[tuple[int, int]]) -> bool:
    """Whether a patch hunk from git's conflicted file to the merge's touches only lines of
    one conflict region (an insertion may also sit at either edge of it)."""
    if hunk.old_count == 0:
        return any(first - 1 <= hunk.old_start <= last for first, last in regions)
    end = hunk.old_start + hunk.old_count - 1
    return any(first <= hunk.old_start and end <= last for first, last in regions)


# -- findings -----------------------------------------------------------------------------------
def _first_difference(hunks: list[Hunk]) -> tuple[int | None, str]:
    """The first line of the merge's version that differs, and how it differs."""
    hunk = hunks[0]
    if hunk.new_count > 0:
        return hunk.new_start, f"line {hunk.new_start} is {_quote(hunk.added[0])}"
    after = hunk.new_start
    first = _quote(hunk.removed[0]) if hunk.removed else "''"
    where = f"after line {after}" if after else "at the top"
    return max(after, 1), f"{where} it drops {hunk.old_count} line(s) of git's, first {first}"


def _sums(hunks: list[Hunk]) -> tuple[int, int]:
    return sum(h.new_count for h in hunks), sum(h.old_count for h in hunks)


class _Merge(NamedTuple):
    commit: Commit
    tree: str
    auto: MergeTree

    @property
    def sha(self) -> str:
        return self.commit.sha

    @property
    def ours(self) -> str:
        return self.commit.parents[0]

    @property
    def theirs(self) -> str:
        return self.commit.parents[1]


def _evil_clean(result: GateResult, m: _Merge, change: RawChange, patch: FilePatch) -> None:
    """merge-evil for a path git merged without conflict (or did not touch at all)."""
    path = change.path
    added, removed = _sums(patch.hunks)
    if change.old_mode == _ABSENT_MODE:
        size = "binary" if patch.binary else _counts(added, 0)
        result.add(
            MERGE_EVIL.id,
            f"the merge adds {path}, which neither parent brings: git's merge of the parents "
            f"has no such path ({size})",
            commit=m.sha,
            path=path,
            line=1 if added else None,
        )
        return
    if change.new_mode == _ABSENT_MODE:
        size = "binary" if patch.binary else _counts(0, removed)
        result.add(
            MERGE_EVIL.id,
            f"the merge deletes {path}, which neither parent deleted: git's merge of the "
            f"parents keeps it ({size})",
            commit=m.sha,
            path=path,
        )
        return
    if patch.binary:
        result.add(
            MERGE_EVIL.id,
            f"the merge's content of binary file {path} differs from git's merge of the "
            "parents, which merged it without conflict",
            commit=m.sha,
            path=path,
        )
        return
    if not patch.hunks:
        result.add(
            MERGE_EVIL.id,
            f"the merge changes the mode of {path} from {change.old_mode} to "
            f"{change.new_mode}; git's merge of the parents keeps {change.old_mode}",
            commit=m.sha,
            path=path,
        )
        return
    line, how = _first_difference(patch.hunks)
    result.add(
        MERGE_EVIL.id,
        f"the merge changes lines git merged without conflict: {how} "
        f"({_counts(added, removed)} against git's merge of the parents)",
        commit=m.sha,
        path=path,
        line=line,
    )


def _evil_outside(
    result: GateResult, m: _Merge, path: str, regions: list[tuple[int, int]], patch: FilePatch
) -> None:
    """merge-evil for a conflict resolution that also changed lines outside the hunks."""
    outside = [h for h in patch.hunks if not _inside(h, regions)] or patch.hunks
    added, removed = _sums(outside)
    line, how = _first_difference(outside)
    result.add(
        MERGE_EVIL.id,
        f"resolving the conflict, the merge also changes lines outside its {len(regions)} "
        f"conflict hunk(s), which git merged by itself: {how} ({_counts(added, removed)} "
        "against git's merge outside the hunks)",
        commit=m.sha,
        path=path,
        line=line,
    )


def _against(stat: dict[str, tuple[int, int] | None], path: str, kept: bool) -> str:
    if path not in stat:
        return "+0/-0 (that parent's version)" if kept else "absent in both"
    counts = stat[path]
    return "binary, differs" if counts is None else _counts(*counts)


def _resolved(
    result: GateResult, git: Git, m: _Merge, paths: list[str], changes: dict[str, RawChange]
) -> None:
    """merge-resolved for each path git left in conflict, against each parent."""
    if not paths:
        return
    ours, theirs = git.numstat(m.ours, m.sha, paths), git.numstat(m.theirs, m.sha, paths)
    for path in paths:
        change = changes.get(path)
        kept = change is None or change.new_mode != _ABSENT_MODE
        result.add(
            MERGE_RESOLVED.id,
            f"git's merge of the parents left {path} in conflict; the merge resolved it: "
            f"{_against(ours, path, kept)} against {m.ours[:12]} (first parent), "
            f"{_against(theirs, path, kept)} against {m.theirs[:12]}",
            commit=m.sha,
            path=path,
        )


def _side_names(m: _Merge, conflicted: list[str]) -> tuple[str, ...]:
    """Where git moved a file out of a folder's way (``path~<branch>``): it labels the copy
    with the branch as named to ``git merge`` (``d~main``), the recomputation with the
    parent's sha. Any ``path~…`` the merge adds is that conflict's resolution."""
    stems = []
    for path in conflicted:
        for parent in (m.ours, m.theirs):
            if path.endswith("~" + parent):
                stems.append(path[: -len(parent)])
    return tuple(stems)


def _conflicted_outside(
    git: Git, m: _Merge, changes: dict[str, RawChange], paths: list[str]
) -> dict[str, list[tuple[int, int]]]:
    """The conflicted paths whose resolution changed lines outside git's conflict hunks,
    with those hunks. Only text files git wrote hunks into are examined; any other conflict
    (binary, modify/delete, a file against a folder) is the whole path's, decided freely."""
    pairs = {}
    for path in paths:
        change = changes.get(path)
        if change and change.old_mode in _FILE_MODES and change.new_mode in _FILE_MODES:
            pairs[path] = (change.old_sha, change.new_sha)
    if not pairs:
        return {}
    wanted = [sha for pair in pairs.values() for sha in pair]
    contents = dict(git.blobs(wanted))
    found: dict[str, list[tuple[int, int]]] = {}
    for path, (auto_sha, mine_sha) in pairs.items():
        auto, mine = contents.get(auto_sha), contents.get(mine_sha)
        if auto is None or mine is None:
            continue
        lines = split_lines(auto)
        regions = conflict_regions(lines, m.ours, m.theirs)
        if regions and not outside_kept(lines, regions, mine):
            found[path] = regions
    return found


def _judge(result: GateResult, git: Git, m: _Merge, attributes_rev: str | None) -> None:
    diff = git.raw_diff(m.auto.tree, m.tree) if m.auto.tree != m.tree else []
    if not diff and not m.auto.conflicted:
        return
    changes = {c.path: c for c in diff}
    candidates = sorted(set(changes) | set(m.auto.conflicted))
    # Whose `.gitattributes` leave a path to the index gate: the merge's own tree, or under
    # --config-from base the merge base's, so that a pull request cannot mark its own
    # evil merge `merge=union` (SPEC §10).
    drivers = git.attributes_at(attributes_rev or m.sha, "merge", candidates)
    left = {p for p in candidates if drivers.get(p) in INDEX_DRIVERS}
    if left:
        result.stats["left_to_index"] = result.stats.get("left_to_index", 0) + len(left)
    conflicted = [p for p in m.auto.conflicted if p not in left]
    in_conflict = set(conflicted)
    moved = _side_names(m, conflicted)
    clean = [
        c
        for c in diff
        if c.path not in left
        and c.path not in in_conflict
        and not (moved and c.old_mode == _ABSENT_MODE and c.path.startswith(moved))
    ]
    outside = _conflicted_outside(git, m, changes, conflicted)
    patched = [c.path for c in clean] + list(outside)
    patches = git.patches(m.auto.tree, m.tree, patched) if patched else {}
    for change in clean:
        _evil_clean(result, m, change, patches.get(change.path, FilePatch()))
    for path, regions in outside.items():
        _evil_outside(result, m, path, regions, patches.get(path, FilePatch()))
    _resolved(result, git, m, conflicted, changes)
    if conflicted:
        result.stats["resolved"] = result.stats.get("resolved", 0) + len(conflicted)


def _version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in version)


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    result.stats["merges"] = 0
    if ctx.opts.staged:
        # Decision (docs/merges.md): a staged change is no merge commit; judging the branch's
        # committed merges here would add their cost to every commit's pre-commit hook.
        result.stats["staged"] = "not judged: merges are judged over committed ranges"
        return result
    commits = range_commits(ctx, result)
    if commits is None:
        return result
    merges = [c for c in commits if len(c.parents) == 2]
    for commit in commits:
        if len(commit.parents) > 2:
            result.add(
                MERGE_OCTOPUS.id,
                f"an octopus merge of {len(commit.parents)} parents: not judged (git's "
                "merge-tree recomputes merges of two parents only)",
                commit=commit.sha,
            )
    result.stats["merges"] = len(merges)
    if not merges:
        return result
    git = ctx.git
    version = git.version()
    if version is not None and version < MIN_GIT:
        return result.skip(
            f"git {_version_text(version)} is older than {_version_text(MIN_GIT)}: it cannot "
            "recompute a merge (no `git merge-tree --write-tree`); upgrade git"
        )
    trees = git.commit_trees([c.sha for c in merges])
    unjudged: list[str] = []
    for commit in merges:
        try:
            auto = git.merge_tree(commit.parents[0], commit.parents[1])
        except MergeTreeUnsupported as exc:
            return result.skip(
                f"this git cannot recompute a merge (`git merge-tree --write-tree`: {exc}); "
                f"git {_version_text(MIN_GIT)} or newer is needed"
            )
        if auto is None:
            if git.is_shallow():
                unjudged.append(commit.sha)
                continue
            auto = git.merge_tree(commit.parents[0], commit.parents[1], unrelated=True)
            assert auto is not None
        _judge(result, git, _Merge(commit, trees[commit.sha], auto), ctx.config_rev)
    if unjudged:
        result.stats["unjudged"] = len(unjudged)
        result.skip(
            f"shallow clone: the merge base of the parents of {len(unjudged)} merge(s) (first "
            f"{unjudged[0][:12]}) is not in the fetched history, so git's merge cannot be "
            "recomputed; deepen the clone (git fetch --unshallow)"
        )
    return result
