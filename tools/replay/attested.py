"""attestations: records of the required kinds carry a valid signed attestation (SPEC §11).

The rules only: ``tools ledger verify --require-attested`` files them through
:mod:`tools.replay.attestations`.
"""

from __future__ import annotations

from tools.report import Rule, declare

NAME = "attestations"

EVIDENCE_UNATTESTED = Rule(
    "evidence-unattested",
    "error",
    "a record of a required kind without a valid attestation by an allowed principal",
    example=(
        "record 4f1c2a9b0d7e… (mutation-arm) has no valid attestation by a principal of "
        "ci/allowed_signers"
    ),
    fix=(
        "Replay and sign it on a trusted machine: `tools evidence sign --key KEY --id "
        "4f1c2a9b0d7e`. A record that does not reproduce is never signed: run the arm "
        "again instead."
    ),
)

ATTESTATION_INVALID = Rule(
    "attestation-invalid",
    "error",
    "an attestation whose signature, principal or statement does not hold",
    example=(
        "attestation 77ab01c3d9e2… of record 4f1c2a9b0d7e…: the signature does not verify: "
        "ci@example.org: the signing key is revoked (revoked_signers)"
    ),
    fix=(
        "Remove nothing (the ledger only grows): sign the record again with a key that "
        "`ledger.allowed_signers` lists and that is not revoked. An attestation whose "
        "payload was edited never verifies."
    ),
)

RULES = declare(NAME, [EVIDENCE_UNATTESTED, ATTESTATION_INVALID])
