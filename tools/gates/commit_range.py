"""``range-empty``: the rule every range gate fires when its range judges nothing, beside the
one function that fires it. Each range gate lists :data:`RANGE_EMPTY` among its rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.git import Commit
from tools.report import GateResult, Rule

if TYPE_CHECKING:
    from tools.context import Context

RANGE_EMPTY = Rule(
    "range-empty",
    "info",
    "the range holds no commit of this branch",
    example="no commits in main...HEAD: nothing of this branch to judge",
    fix=(
        "Nothing to fix: the branch has no commits of its own yet (a pass, with this "
        "info finding). Under `--require-commits` it is an error; then check that "
        "the CI job fetched enough history (`fetch-depth: 0`) and names the right "
        "`--base`."
    ),
)


def range_commits(ctx: Context, result: GateResult) -> list[Commit] | None:
    """The range for a range gate; records skip/empty-range facts on ``result``.

    Returns None when the gate must skip (the reason is set on ``result``).
    """
    sel = ctx.range
    require = ctx.opts.require_commits
    if sel.skip_reason is not None:
        result.skip(sel.skip_reason)
        if require:
            # A job that fetched too little must not pass by judging nothing.
            result.add(
                RANGE_EMPTY.id,
                f"no range could be computed ({sel.skip_reason}): nothing was judged "
                "(--require-commits)",
                severity="error",
            )
        return None
    result.stats["commits"] = sel.count
    if sel.mode == "range" and not sel.count:
        result.add(
            RANGE_EMPTY.id,
            f"no commits in {sel.base_ref}...{ctx.opts.head or 'HEAD'}: nothing of this "
            "branch to judge" + (" (--require-commits)" if require else ""),
            severity="error" if require else "info",
        )
    return sel.commits
