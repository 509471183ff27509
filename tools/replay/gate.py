"""evidence: ledger records replayed at their recorded commits (SPEC §11).

The rules only: the replay itself lives in :mod:`tools.replay.replay` and runs from ``tools
evidence replay`` / ``tools evidence sign``, never from preflight (it builds and tests).
"""

from __future__ import annotations

from tools.gates.commit_range import RANGE_EMPTY
from tools.report import Rule, declare

NAME = "evidence"

EVIDENCE_REPRODUCED = Rule(
    "evidence-reproduced",
    "info",
    "a replayed record observed what it claims",
    example=(
        "record 4f1c2a9b0d7e… (mutation-arm, arm B of plans/plan.yml) reproduced at "
        "9b5a18f08053: verdict RED, compile_rc 0, run_rc 1"
    ),
    fix="Nothing to fix (an info finding): `tools evidence sign` may vouch for it.",
)

EVIDENCE_UNREPRODUCED = Rule(
    "evidence-unreproduced",
    "error",
    "a replayed record observed something else than it claims",
    example=(
        "record 4f1c2a9b0d7e… (mutation-arm, arm B of plans/plan.yml) not reproduced at "
        "9b5a18f08053: run_rc claimed 0, observed 1; verdict claimed GREEN, observed RED"
    ),
    fix=(
        "The record does not say what its run shows: a field was edited (and the id "
        "recomputed), or the run cannot be repeated. Run the arm again with `tools mutate "
        "run` and let the new record replace the claim; never edit a record. This rule "
        "cannot be turned off."
    ),
)

EVIDENCE_REPLAY_INCONCLUSIVE = Rule(
    "evidence-replay-inconclusive",
    "warning",
    "the replay's own run is no verdict (KILLED, EMPTY, STALE, NO-QUIET-WINDOW, ENV-FAULT)",
    example=(
        "record 4f1c2a9b0d7e… (mutation-arm, arm B of plans/plan.yml) replay inconclusive: "
        "KILLED (the test was ended by SIGKILL, which tools did not send)"
    ),
    fix=(
        "The replaying machine failed, not the record: rerun the replay on a machine with "
        "room (memory, disk, a quiet load). The gate is a skip until then, never a pass."
    ),
)

EVIDENCE_UNREPLAYABLE = Rule(
    "evidence-unreplayable",
    "error",
    "a record whose plan or commit cannot be found, or whose replay could not run",
    example=(
        "record 4f1c2a9b0d7e… (mutation-arm, arm B of plans/plan.yml): the plan "
        "plans/plan.yml has sha256 8c2d41f0a9b3…, the record names 1e07b5c2d4a8…"
    ),
    fix=(
        "Commit the plan the record names, unchanged (its sha256 is in the record), and "
        "fetch the recorded commit (`git fetch --unshallow`); a record whose experiment "
        "is gone cannot vouch for anything."
    ),
)

RULES = declare(
    NAME,
    [
        EVIDENCE_REPRODUCED,
        EVIDENCE_UNREPRODUCED,
        EVIDENCE_REPLAY_INCONCLUSIVE,
        EVIDENCE_UNREPLAYABLE,
        RANGE_EMPTY,
    ],
)
