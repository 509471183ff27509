"""The rule registry: every rule a gate can fire, declared once beside the gate's code.

A gate module calls :func:`declare` when it is imported; :meth:`GateResult.add
<tools.report.model.GateResult.add>` looks each finding's rule up here and refuses any other
id; docs/rules.md and the SARIF driver's rule table are read from :func:`declared`.
"""

from collections.abc import Iterable
from typing import Literal, NamedTuple

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")


class Rule(NamedTuple):
    """A rule a gate can fire: its id, default severity and a one-line summary."""

    id: str
    severity: Severity
    summary: str
    # What docs/rules.md shows of it: a message the gate really printed, and what to do.
    example: str = ""
    fix: str = ""


class UndeclaredRule(Exception):
    """A gate filed a finding under a rule id it never declared: a bug in tools (exit 3)."""


# gate name -> its declared rules. Filled by :func:`declare` when a gate module is imported.
_DECLARED: dict[str, dict[str, Rule]] = {}


def declare(gate: str, rules: Iterable[Rule]) -> list[Rule]:
    """Declare the rules ``gate`` may fire (each with its default severity); returns them as
    the module's ``RULES``. :meth:`GateResult.add` refuses any other id."""
    table: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in table:
            raise UndeclaredRule(f"rule {rule.id!r} declared twice for gate {gate!r}")
        if rule.severity not in SEVERITIES:
            raise UndeclaredRule(f"rule {rule.id!r}: bad severity {rule.severity!r}")
        table[rule.id] = rule
    _DECLARED[gate] = table
    return list(table.values())


def declared() -> dict[str, dict[str, Rule]]:
    """Every declared rule, by gate (only the gates whose modules were imported)."""
    return {gate: dict(rules) for gate, rules in _DECLARED.items()}


def lookup(gate: str, rule: str) -> Rule | None:
    """The rule ``rule`` that ``gate`` declared, or None when it declared no such id."""
    return _DECLARED.get(gate, {}).get(rule)
