"""Whether the protocol holds on the first-parent chain only (SPEC §9.3): where the history's
marked commits are the ones on the default branch's first-parent chain and the commits side
branches brought in by merges are not marked (contributors' branches, vendored history),
``trailers.first_parent: true`` judges a range along its chain.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from tools.commit_messages import marker_lines
from tools.git import Commit

SIDE_MIN = 5  # fewer side-branch commits than this decide nothing
SIDE_MARKED_MAX = 0.1  # at most this share of them marked: side branches are not agents' work
CHAIN_MARKED_MIN = 0.5  # and at least this share of the chain's commits marked


class BranchesLearned(NamedTuple):
    """``first_parent`` and the evidence line."""

    first_parent: bool
    evidence: str


def _marked(commit: Commit, marker: str) -> bool:
    return any(n > 1 for n in marker_lines(commit.text, marker))


def learn_first_parent(
    commits: list[Commit], chain: Iterable[str], marker: str | None
) -> BranchesLearned:
    """From the window's ``commits`` (merges excepted) and the shas of HEAD's first-parent
    chain, whether the marked history is the chain's."""
    if marker is None:
        return BranchesLearned(False, "no marker → trailers.first_parent: false")
    on_chain = set(chain)
    main = [c for c in commits if c.sha in on_chain]
    side = [c for c in commits if c.sha not in on_chain]
    side_marked = sum(1 for c in side if _marked(c, marker))
    main_marked = sum(1 for c in main if _marked(c, marker))
    counts = (
        f"{len(side) - side_marked} of {len(side)} side-branch commits carry no marker, "
        f"{main_marked} of {len(main)} first-parent commits carry it"
    )
    if len(side) < SIDE_MIN:
        return BranchesLearned(
            False,
            f"{len(side)} side-branch commit(s) in the window (fewer than {SIDE_MIN} decide "
            "nothing) → trailers.first_parent: false",
        )
    yes = side_marked <= SIDE_MARKED_MAX * len(side) and main_marked >= CHAIN_MARKED_MIN * len(main)
    return BranchesLearned(yes, f"{counts} → trailers.first_parent: {str(yes).lower()}")
