"""The gate registry as data: gate name -> the module that declares its rules and runs it.

Names only, no imports: the gates package and the severities (which need every gate's rule
ids) both read it, and a gate module is imported only when it is used.
"""

from __future__ import annotations

# Every gate of the product, in preflight order. A gate that has not landed yet maps to None:
# preflight reports it as a skip with that reason, never as a pass.
GATES: dict[str, str | None] = {
    "conflicts": "tools.gates.conflicts",
    "index": "tools.gates.index",
    "trailers": "tools.gates.trailers",
    "style": "tools.gates.style",
    "docs": "tools.gates.docs",
    "ratchet": "tools.gates.ratchet",
    "now": "tools.gates.now",
    "spec": "tools.gates.spec",
    "links": "tools.gates.links",
    "ledger": "tools.gates.ledger_gate",
    "merges": "tools.gates.merges",
}


# Gates that are commands of their own, never run by preflight (torch: imported on use).
COMMAND_GATES: dict[str, str] = {
    "golden": "tools.numerics.goldens",
    "grid-tie": "tools.numerics.gridtie",
    "topp-count": "tools.numerics.topp",
}


# Where the command gates' rules are declared, without torch (the rule list, ``rules:``).
NUMERICS_RULES = "tools.numerics.rules"


# Pseudo-gates: reported by preflight and the hooks, never selected with --gate.
PSEUDO_GATES: dict[str, str] = {
    "preflight": "tools.gates.inplace_pending",
    "protocol": "tools.gates.protocol",
    "baseline": "tools.gates.baseline",
}


# Gates that `tools evidence` and `tools ledger verify --require-attested` report (SPEC §11),
# never run by preflight: a replay builds and tests. Their modules declare the rules only.
EVIDENCE_GATES: dict[str, str] = {
    "evidence": "tools.replay.gate",
    "attestations": "tools.replay.attested",
}


def all_modules() -> dict[str, str]:
    """Every built gate's module: preflight's, the pseudo-gates', the evidence gates' and
    the command gates'."""
    built = {name: target for name, target in GATES.items() if target}
    return {**built, **PSEUDO_GATES, **EVIDENCE_GATES, **COMMAND_GATES}


# The gates that judge commit messages; a `trailers.exceptions` entry may name any of their rules.
COMMIT_GATES = ("trailers", "style")

# Errors that keep data safe (SPEC §3.3): never off, never below error, never recorded debt.
# The spec gate's evidence findings are here (SPEC §10): debt that covered an evidence table
# would let a change flip its verdicts under the cover of the recorded finding.
PROTECTED = frozenset(
    {
        "conflict-marker",
        "conflict-unmerged",
        "row-removed",
        "row-edited",
        "merge-lost-row",
        "ledger-record-removed",
        "ledger-record-tampered",
        "ledger-merge-lost",
        "baseline-raised",
        "inplace-restore-pending",
        "inplace-conflict",
        "spec-evidence-unbacked",
        "spec-evidence-malformed",
        "evidence-unreproduced",
    }
)
