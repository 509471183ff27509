"""The verdict model (pass / fail / skip + findings) and its one renderer.

Every gate returns a :class:`GateResult`; preflight and the single-gate commands render a
:class:`Report` of them in text, json (schema ``tools.report/1``), github annotations or a
SARIF 2.1.0 log (:mod:`tools.sarif`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Status = Literal["pass", "fail", "skip"]
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
FORMATS: tuple[str, ...] = ("text", "json", "github", "sarif")
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


class Site(NamedTuple):
    """One place a finding names (a ratchet regression names every new site)."""

    path: str
    line: int | None = None


@dataclass
class Finding:
    rule: str
    severity: Severity
    message: str
    commit: str | None = None
    path: str | None = None
    line: int | None = None
    # Every place the finding names, complete (the first is ``path``/``line``); () for one.
    sites: tuple[Site, ...] = ()
    # Against the findings baseline (SPEC §3.3): "unchanged" (recorded debt) or "new"; None
    # when no baseline judged the finding.
    baseline_state: str | None = None

    def places(self) -> tuple[Site, ...]:
        """Where renderers annotate: every site, or the one ``path``/``line``."""
        if self.sites:
            return self.sites
        return (Site(self.path, self.line),) if self.path else ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "commit": self.commit,
            "path": self.path,
            "line": self.line,
        }
        if self.sites:
            out["sites"] = [{"path": s.path, "line": s.line} for s in self.sites]
        if self.baseline_state is not None:
            out["baseline_state"] = self.baseline_state
        return out


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
        sites: tuple[Site, ...] = (),
    ) -> Finding:
        """File a finding under a rule this gate declared (its declared severity unless
        ``severity`` overrides it, as config and debt exceptions do)."""
        declared_rule = _DECLARED.get(self.gate, {}).get(rule)
        if declared_rule is None:
            raise UndeclaredRule(f"gate {self.gate!r} filed undeclared rule {rule!r}")
        sev = severity or declared_rule.severity
        if sites and path is None:
            path, line = sites[0]
        finding = Finding(rule, sev, message, commit=commit, path=path, line=line, sites=sites)
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
    # What was judged: the tool, the effective config's sha256, the range (SPEC §3.2).
    meta: dict[str, Any] = field(default_factory=dict)

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
            **self.meta,
            "gates": [g.to_json() for g in self.gates],
        }


# Characters a terminal would act on rather than show (C0 controls but tab, DEL, C1 and the
# bidirectional overrides and isolates): findings quote commit messages, paths and file
# contents from pull requests, so the text report shows these escaped, never raw.
_INVISIBLE = {
    c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    for c in (
        *range(0x00, 0x09),
        *range(0x0A, 0x20),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}


def visible(text: str) -> str:
    """``text`` with terminal control characters (newlines included) shown escaped."""
    return text.translate(_INVISIBLE)


# Plain SGR codes: importing a styling library would cost the CLI's start-up time.
_SGR = {
    "pass": "32",
    "fail": "1;31",
    "skip": "1;33",
    "error": "1;31",
    "warning": "33",
    "info": "36",
    "dim": "2",
}
_HEAD = {"pass": "ok", "fail": "FAIL", "skip": "SKIP"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if color and text else text


def _where(f: Finding) -> str:
    """``path:line commit`` or, for a finding in a commit message, ``commit line N``."""
    parts = []
    if f.path:
        parts.append(visible(f.path) + (f":{f.line}" if f.line is not None else ""))
    if f.commit:
        parts.append(f.commit[:12])
    if not f.path and f.line is not None:
        parts.append(f"line {f.line}")
    return " ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def _gate_detail(gate: GateResult) -> str:
    """``(14 commits, 2 errors, 1 warning)``: what the gate judged and what it found."""
    parts = []
    if "commits" in gate.stats:
        parts.append(_plural(gate.stats["commits"], "commit"))
    debt = gate.stats.get("debt")
    if isinstance(debt, dict) and debt:
        # The findings baseline's pseudo-gate: the recorded debt per rule, on every run.
        listed = ", ".join(f"{rule} {n}" for rule, n in sorted(debt.items()))
        parts.append(f"debt: {sum(debt.values())} — {listed}")
    for severity in SEVERITIES:
        n = sum(1 for f in gate.findings if f.severity == severity)
        if n:
            parts.append(_plural(n, severity))
    return f" ({', '.join(parts)})" if parts else ""


def _finding_lines(f: Finding, color: bool) -> list[str]:
    where = _where(f)
    head = "  " + _paint(f"{f.severity}[{f.rule}]", f.severity, color)
    if where:
        head += " " + _paint(where, "dim", color) + ":"
    first, *rest = f.message.split("\n")
    # A message of several lines keeps its shape, indented under its finding.
    return [f"{head} {visible(first)}"] + [f"      {visible(line)}" for line in rest]


@dataclass(frozen=True)
class TextOptions:
    """How much of the findings the text format prints (json, github, sarif: everything)."""

    max_findings: int = 50  # per gate; 0: all
    statistics: bool = False  # one line per rule instead of the findings


def _statistics(gate: GateResult) -> list[str]:
    """ruff's convention: count, rule, severity, most frequent first."""
    counts: dict[tuple[str, str], int] = {}
    for f in gate.findings:
        counts[(f.rule, f.severity)] = counts.get((f.rule, f.severity), 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [f"  {n:>6}  {rule}  {sev}" for (rule, sev), n in ranked]


def render_text(
    report: Report, *, summary: bool, color: bool = False, text: TextOptions = TextOptions()
) -> str:
    """One line per gate (``ok`` / ``FAIL`` / ``SKIP: reason``), its findings indented under
    it (at most ``text.max_findings``, then how many were left out), then (``summary``) a blank
    line and the summary. ``color``: SGR codes, for a terminal."""
    lines: list[str] = []
    for gate in report.gates:
        status = gate.status
        word = _paint(_HEAD[status], status, color) + " " * (4 - len(_HEAD[status]))
        line = f"{word} {visible(gate.gate)}{_gate_detail(gate)}"
        if status == "skip":
            line += f": {visible(gate.reason or '')}"
        lines.append(line)
        if text.statistics:
            lines.extend(_statistics(gate))
            continue
        cap = text.max_findings or len(gate.findings)
        for f in gate.findings[:cap]:
            lines.extend(_finding_lines(f, color))
        if len(gate.findings) > cap:
            lines.append(
                f"  … {len(gate.findings) - cap} more finding(s) of {gate.gate} left out: "
                "--max-findings 0 prints them all (--statistics counts them per rule)"
            )
    if summary:
        if lines:
            lines.append("")
        lines.append(_paint(summary_line(report), report.status, color))
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
            title = f"title={_gh_escape(f'{gate.gate}/{f.rule}', prop=True)}"
            msg = _gh_escape(f.message + (f" (commit {f.commit})" if f.commit else ""), prop=False)
            # One annotation per site, so each new site is marked on its own line.
            for place in f.places() or (None,):
                props = []
                if place is not None:
                    props.append(f"file={_gh_escape(place.path, prop=True)}")
                    if place.line is not None:
                        props.append(f"line={place.line}")
                props.append(title)
                lines.append(f"::{level[f.severity]} {','.join(props)}::{msg}")
        if gate.status == "skip":
            msg = _gh_escape(f"{gate.gate} skipped: {gate.reason}", prop=False)
            lines.append(f"::warning title={gate.gate}::{msg}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def render(
    report: Report,
    fmt: str,
    *,
    summary: bool = True,
    color: bool = False,
    fail_on_skip: bool = False,
    text: TextOptions = TextOptions(),
) -> str:
    """``report`` in ``fmt``. ``color`` applies to text only (the caller decides: a terminal,
    and no ``NO_COLOR``); ``fail_on_skip`` tells the sarif log the command's exit code."""
    if fmt == "json":
        return json.dumps(report.to_json(), ensure_ascii=False, indent=None) + "\n"
    if fmt == "github":
        return render_github(report)
    if fmt == "sarif":
        from tools.sarif import render_sarif  # loaded only when asked for

        return render_sarif(report, fail_on_skip=fail_on_skip)
    return render_text(report, summary=summary, color=color, text=text)
