"""The verdict model (pass / fail / skip + findings) and its one renderer.

Every gate returns a :class:`GateResult`; preflight and the single-gate commands render a
:class:`Report` of them in text, json (schema ``tools.report/1``) or github annotations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "skip"]
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
FORMATS: tuple[str, ...] = ("text", "json", "github")
REPORT_SCHEMA_ID = "tools.report/1"


@dataclass(frozen=True)
class Rule:
    """A rule a gate can fire: its id, default severity and a one-line summary."""

    id: str
    severity: Severity
    summary: str


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


@dataclass
class Finding:
    rule: str
    severity: Severity
    message: str
    commit: str | None = None
    path: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "commit": self.commit,
            "path": self.path,
            "line": self.line,
        }


@dataclass
class GateResult:
    """One gate's verdict. ``status`` is derived unless the gate skipped."""

    gate: str
    findings: list[Finding] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    skip_reason: str | None = None

    @property
    def failed(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    @property
    def status(self) -> Status:
        # A failed base-free check outranks a skip: the gate did judge, and found an error.
        if self.failed:
            return "fail"
        if self.skip_reason is not None:
            return "skip"
        return "pass"

    @property
    def reason(self) -> str | None:
        return self.skip_reason if self.status == "skip" else None

    def add(
        self,
        rule: str,
        message: str,
        *,
        severity: Severity | None = None,
        commit: str | None = None,
        path: str | None = None,
        line: int | None = None,
    ) -> Finding:
        """File a finding under a rule this gate declared (its declared severity unless
        ``severity`` overrides it, as config and debt exceptions do)."""
        declared_rule = _DECLARED.get(self.gate, {}).get(rule)
        if declared_rule is None:
            raise UndeclaredRule(f"gate {self.gate!r} filed undeclared rule {rule!r}")
        sev = severity or declared_rule.severity
        finding = Finding(rule, sev, message, commit=commit, path=path, line=line)
        self.findings.append(finding)
        return finding

    def skip(self, reason: str) -> GateResult:
        self.skip_reason = reason
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "status": self.status,
            "reason": self.reason,
            "findings": [f.to_json() for f in self.findings],
            "stats": self.stats,
        }


@dataclass
class Report:
    gates: list[GateResult] = field(default_factory=list)

    @property
    def status(self) -> Status:
        statuses = {g.status for g in self.gates}
        if "fail" in statuses:
            return "fail"
        if "skip" in statuses:
            return "skip"
        return "pass"

    def exit_code(self, *, fail_on_skip: bool = False) -> int:
        status = self.status
        if status == "fail" or (status == "skip" and fail_on_skip):
            return 1
        return 0

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": REPORT_SCHEMA_ID,
            "status": self.status,
            "gates": [g.to_json() for g in self.gates],
        }


def _where(f: Finding) -> str:
    parts = []
    if f.path:
        parts.append(f.path + (f":{f.line}" if f.line is not None else ""))
    elif f.line is not None:
        parts.append(f"line {f.line}")
    if f.commit:
        parts.append(f.commit[:12])
    return " ".join(parts)


def render_text(report: Report, *, summary: bool) -> str:
    lines: list[str] = []
    for gate in report.gates:
        status = gate.status
        head = {"pass": "ok  ", "fail": "FAIL", "skip": "SKIP"}[status]
        line = f"{head} {gate.gate}"
        if status == "skip":
            line += f": {gate.reason}"
        if "commits" in gate.stats:
            n = gate.stats["commits"]
            line += f" ({n} commit{'' if n == 1 else 's'})"
        lines.append(line)
        for f in gate.findings:
            where = _where(f)
            prefix = f"  {f.severity}[{f.rule}]"
            lines.append(f"{prefix} {where}: {f.message}" if where else f"{prefix} {f.message}")
    if summary:
        lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def summary_line(report: Report) -> str:
    failed = [g.gate for g in report.gates if g.status == "fail"]
    skipped = [g.gate for g in report.gates if g.status == "skip"]
    if not failed and not skipped:
        return "All gates green."
    parts = []
    if failed:
        parts.append(f"{len(failed)} failed ({', '.join(failed)})")
    if skipped:
        parts.append(f"{len(skipped)} skipped ({', '.join(skipped)})")
    passed = len(report.gates) - len(failed) - len(skipped)
    parts.append(f"{passed} passed")
    return "Not green: " + ", ".join(parts) + "."


def _gh_escape(value: str, *, prop: bool) -> str:
    # GitHub workflow-command escaping: data escapes %, CR, LF; properties also : and ,
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render_github(report: Report) -> str:
    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines: list[str] = []
    for gate in report.gates:
        for f in gate.findings:
            props = []
            if f.path:
                props.append(f"file={_gh_escape(f.path, prop=True)}")
                if f.line is not None:
                    props.append(f"line={f.line}")
            props.append(f"title={_gh_escape(f'{gate.gate}/{f.rule}', prop=True)}")
            msg = f.message + (f" (commit {f.commit})" if f.commit else "")
            lines.append(f"::{level[f.severity]} {','.join(props)}::{_gh_escape(msg, prop=False)}")
        if gate.status == "skip":
            msg = _gh_escape(f"{gate.gate} skipped: {gate.reason}", prop=False)
            lines.append(f"::warning title={gate.gate}::{msg}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def render(report: Report, fmt: str, *, summary: bool = True) -> str:
    if fmt == "json":
        return json.dumps(report.to_json(), ensure_ascii=False, indent=None) + "\n"
    if fmt == "github":
        return render_github(report)
    return render_text(report, summary=summary)
