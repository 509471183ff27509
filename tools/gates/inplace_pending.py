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
from tools.report import GateResult, Rule, declare

NAME = "preflight"
RULES = declare(
    NAME,
    [
        Rule(
            "inplace-restore-pending",
            "error",
            "an in-place mutation run was stopped before its restore: files may hold a mutant",
        ),
        Rule(
            "inplace-conflict",
            "error",
            "an in-place restore found a file changed since its mutant was written: left as "
            "it is, not restored",
        ),
    ],
)


def run(git: Git) -> GateResult | None:
    """An error result while a restore is pending or in conflict; None when nothing is."""
    from tools.mutate import inplace

    paths = inplace.pending_paths(git.tools_dir())
    if paths is None:
        return None
    result = GateResult(NAME)
    held = inplace.conflicts(git.tools_dir())
    for c in held:
        result.add("inplace-conflict", c.message(), path=c.path)
    if paths or not held:
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        what = f"{shown} may hold mutated code" if paths else "its files may hold mutated code"
        result.add(
            "inplace-restore-pending",
            f"an in-place mutation run stopped before restoring: {what}; run `tools mutate "
            "recover` to restore them (sha256-verified) before judging or committing",
            path=paths[0] if paths else None,
        )
    return result
