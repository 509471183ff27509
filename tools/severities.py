"""``rules:``: a rule id's severity set by the config (SPEC §3.3), applied to a report.

``off`` drops the rule's findings (their number per rule is kept in the gate's
``stats.suppressed``); ``info``, ``warning`` and ``error`` replace its default severity. The
rules that keep data safe cannot be turned off or below ``error``. Only findings a gate filed at
the rule's declared severity are changed: a finding the config or the command already set
apart (a ``debt:`` warning, ``range-empty`` under ``--require-commits``, ``style.subject_length``)
keeps what it was given.

Every declared rule id can be tuned, the numerics commands' included: their rules are declared
in :mod:`tools.numerics.rules`, which imports no torch, and their reports go through the same
judged path as every other command's.
"""

from __future__ import annotations

import importlib

from tools.config_model import ProtocolConfig
from tools.errors import UsageError
from tools.gate_registry import (
    COMMIT_GATES,
    EVIDENCE_GATES,
    GATES,
    NUMERICS_RULES,
    PROTECTED,
    PSEUDO_GATES,
)
from tools.report import Report, Rule, declared

LEVELS = ("off", "info", "warning", "error")


def _tunable() -> dict[str, Rule]:
    """Every declared rule, by id (their modules imported on first use; the numerics rules
    from their torch-free declarations)."""
    for target in [*GATES.values(), *PSEUDO_GATES.values(), *EVIDENCE_GATES.values()]:
        if target:
            importlib.import_module(target)
    importlib.import_module(NUMERICS_RULES)
    return {rule.id: rule for table in declared().values() for rule in table.values()}


def check(config: ProtocolConfig, where: str | None) -> None:
    """Refuse an unknown id (naming the closest declared one) and a protected id set below
    ``error``; exit 2 through UsageError. A ``trailers.exceptions`` entry must name a rule
    of a commit gate (a typo must not hide)."""
    _check_exception_rules(config, where)
    if not config.rules:
        return
    known = _tunable()
    source = f"{where or 'config'}: rules"
    for rule_id, level in config.rules.items():
        if rule_id not in known:
            import difflib  # only for the error: every run checks, few fail

            close = difflib.get_close_matches(rule_id, list(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"{rule_id!r} is not a rule id of the gates{hint}",
                where=f"{source}.{rule_id}",
                expected="a rule id listed in docs/rules.md",
            )
        if rule_id in PROTECTED and level != "error":
            raise UsageError(
                f"{rule_id!r} keeps data safe: it cannot be turned {level}",
                where=f"{source}.{rule_id}",
                expected="error, or no entry",
            )


def _check_exception_rules(config: ProtocolConfig, where: str | None) -> None:
    entries = config.trailers.exceptions
    if not entries:
        return
    for name in COMMIT_GATES:
        target = GATES[name]
        if target:
            importlib.import_module(target)  # importing a gate declares its rules
    table = declared()
    known = {rule for name in COMMIT_GATES for rule in table.get(name, {})}
    for i, entry in enumerate(entries):
        if entry.rule not in known:
            raise UsageError(
                f"unknown rule {entry.rule!r}",
                where=f"{where or 'config'}: trailers.exceptions[{i}].rule",
                expected="a rule id of the trailers or style gate",
            )


def apply(report: Report, config: ProtocolConfig) -> None:
    """Set the configured severities on ``report``'s findings (in place)."""
    wanted = config.rules
    if not wanted:
        return
    table = declared()
    for gate in report.gates:
        rules = table.get(gate.gate, {})
        kept = []
        suppressed: dict[str, int] = {}
        for finding in gate.findings:
            level = wanted.get(finding.rule)
            default = rules.get(finding.rule)
            if level is None or default is None or finding.severity != default.severity:
                kept.append(finding)
            elif level == "off":
                suppressed[finding.rule] = suppressed.get(finding.rule, 0) + 1
            else:
                finding.severity = level
                kept.append(finding)
        gate.findings = kept
        if suppressed:
            gate.stats["suppressed"] = suppressed
