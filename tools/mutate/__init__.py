"""Mutation-attribution experiments (SPEC §6): plans, arms in worktrees or in place, proofs of
application and restore, receipts for many machines. See docs/mutation.md."""

from __future__ import annotations

from pathlib import Path

# The recovery record's file name, inside the in-place run's folder.
INPLACE_RECORD_NAME = "record.json"


def inplace_record(tools_dir: Path) -> Path:
    """The recovery record of an in-place run, there while a restore is pending. Named here,
    apart from :mod:`tools.mutate.inplace`, so that the gates that look for it on every run
    do not import the mutation machinery when there is none."""
    return tools_dir / "mutate" / "inplace" / INPLACE_RECORD_NAME
