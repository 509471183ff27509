"""The ``preflight`` pseudo-gate: a tree that may still hold a mutant is never judged.

While an ``--in-place`` mutation run's restore is pending (it was killed mid-arm), the files
it named may hold mutated code; judging them, or letting the hooks pass a commit of them,
would store a mutant. ``tools preflight`` and every hook report ``inplace-restore-pending``
instead, naming the files and the command that restores them. A file that the restore found
changed since its mutant was written (the user's edit, left as it is) is an
``inplace-conflict`` until the user decides and runs ``tools mutate recover --discard``.
"""

from __future__ import annotations

from tools.git import Git
from tools.mutate import inplace_record
from tools.report import GateResult, Rule, declare

NAME = "preflight"
INPLACE_RESTORE_PENDING = Rule(
    "inplace-restore-pending",
    "error",
    "an in-place mutation run was stopped before its restore: files may hold a mutant",
    example=(
        "an in-place mutation run stopped before restoring: src/ops.c may hold "
        "mutated code; run `tools mutate recover` to restore them (sha256-verified) "
        "before judging or committing"
    ),
    fix=(
        "Run `tools mutate recover`: it restores the named files from the snapshot "
        "taken before the run and verifies them by sha256. Until then `tools "
        "preflight` and every hook refuse to judge the tree, so a mutant is never "
        "committed. This rule cannot be turned off."
    ),
)

INPLACE_CONFLICT = Rule(
    "inplace-conflict",
    "error",
    (
        "an in-place restore found a file changed since its mutant was written: left "
        "as it is, not restored"
    ),
    example=(
        "src/ops.c changed since tools wrote its mutant (sha256 before "
        "b2132b0f222f608cf7c6c7c3ad1c9ef86495d0b6f947b0e2b763861ae1f40c2d, mutated "
        "2f8b0487f5fe75f723da07daddbd2e682c48cbd0c24596f50f8687465df427ff, now "
        "7b8306a193e37458e0cb3f89a9971463651f31abd809dca138712e46a09a5af0): left as "
        "it is, not restored; the original is saved at "
        ".git/tools/mutate/inplace/saved/"
        "b2132b0f222f608cf7c6c7c3ad1c9ef86495d0b6f947b0e2b763861ae1f40c2d; "
        "once decided, run `tools mutate recover --discard`"
    ),
    fix=(
        "The file holds neither its original nor the mutant tools wrote: someone "
        "edited it while the in-place arm ran or after the run was killed, so tools "
        "left it as it is. Decide what it keeps: to go back to the original, copy "
        "the saved file over it and run `tools mutate recover` (it sees the original "
        "and drops the record); to keep the edit, run `tools mutate recover "
        "--discard`, which drops the record without touching the tree. Until then "
        "every `tools mutate` command, `tools preflight` and every hook exit 1. This "
        "rule cannot be turned off."
    ),
)

RULES = declare(NAME, [INPLACE_RESTORE_PENDING, INPLACE_CONFLICT])


def run(git: Git) -> GateResult | None:
    """An error result while a restore is pending or in conflict; None when nothing is."""
    if not inplace_record(git.tools_dir()).is_file():
        return None  # the usual case, told without importing the mutation machinery
    from tools.mutate import inplace

    paths = inplace.pending_paths(git.tools_dir())
    if paths is None:
        return None
    result = GateResult(NAME)
    held = inplace.conflicts(git.tools_dir())
    for c in held:
        result.add(INPLACE_CONFLICT.id, c.message(), path=c.path)
    if paths or not held:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        what = f"{shown} may hold mutated code" if paths else "its files may hold mutated code"
        result.add(
            INPLACE_RESTORE_PENDING.id,
            f"an in-place mutation run stopped before restoring: {what}; run `tools mutate "
            "recover` to restore them (sha256-verified) before judging or committing",
            path=paths[0] if paths else None,
        )
    return result
