"""The verdict model: findings, one gate's result, and the report of a run with its verdict.

Every gate returns a :class:`GateResult`; a command gathers them in a :class:`Report`, whose
status and exit code are the contract's (SPEC §2). The renderers (:mod:`tools.report.formats`)
write a report in each output format; nothing here knows the formats.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from tools.report.registry import Severity, UndeclaredRule, lookup

Status = Literal["pass", "fail", "skip"]
REPORT_SCHEMA_ID = "tools.report/1"


class Site(NamedTuple):
    """One place a finding names (a ratchet regression names every new site)."""

    path: str
    line: int | None = None


class Finding:
    """One thing a gate found: under which rule, how grave, what, and where. Two findings
    are equal when every field is."""

    __slots__ = (
        "rule",
        "severity",
        "message",
        "commit",
        "path",
        "line",
        "end_line",
        "sites",
        "baseline_state",
    )

    def __init__(
        self,
        rule: str,
        severity: Severity,
        message: str,
        *,
        commit: str | None = None,
        path: str | None = None,
        line: int | None = None,
        end_line: int | None = None,
        sites: tuple[Site, ...] = (),
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.commit = commit
        self.path = path
        self.line = line
        # The last line of a construct that spans lines (an evidence table), None for one line:
        # the finding's identity covers the whole construct (SPEC §10).
        self.end_line = end_line
        # Every place the finding names, complete (the first is ``path``/``line``); () for one.
        self.sites = sites
        # Against the findings baseline (SPEC §3.3): "unchanged" (recorded debt) or "new";
        # None when no baseline judged the finding.
        self.baseline_state: str | None = None

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Finding):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by value, so unhashable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Finding({shown})"

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
        if self.end_line is not None:
            out["end_line"] = self.end_line
        if self.sites:
            out["sites"] = [{"path": s.path, "line": s.line} for s in self.sites]
        if self.baseline_state is not None:
            out["baseline_state"] = self.baseline_state
        return out


class GateResult:
    """One gate's verdict. ``status`` is derived unless the gate skipped."""

    __slots__ = ("gate", "findings", "stats", "skip_reason")

    def __init__(self, gate: str) -> None:
        self.gate = gate
        self.findings: list[Finding] = []
        self.stats: dict[str, Any] = {}
        self.skip_reason: str | None = None

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
        end_line: int | None = None,
        sites: tuple[Site, ...] = (),
    ) -> Finding:
        """File a finding under a rule this gate declared (its declared severity unless
        ``severity`` overrides it, as config and debt exceptions do)."""
        declared_rule = lookup(self.gate, rule)
        if declared_rule is None:
            raise UndeclaredRule(f"gate {self.gate!r} filed undeclared rule {rule!r}")
        sev = severity or declared_rule.severity
        if sites and path is None:
            path, line = sites[0]
        finding = Finding(
            rule, sev, message, commit=commit, path=path, line=line, end_line=end_line, sites=sites
        )
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


# Where a finding that names no file present in the judged tree is anchored for code scanning:
# the protocol's conventional home (renderers place nothing on a path the tree lacks).
PROTOCOL_ANCHOR = ".agents/protocol.yaml"


class Report:
    """The gates a command ran; their statuses make its verdict and exit code."""

    __slots__ = ("gates", "meta", "absent", "content")

    def __init__(self, gates: list[GateResult]) -> None:
        self.gates = gates
        # What was judged: the tool, the effective config's sha256, the range (SPEC §3.2).
        self.meta: dict[str, Any] = {}
        # The repo-relative paths of :meth:`paths` that the judged tree lacks, as whoever
        # built the report found them (:func:`mark_absent`); None: not looked at, every path
        # is taken as present. Renderers read it and never look at a tree themselves.
        self.absent: frozenset[str] | None = None
        # A repo-relative path's content as the gates judged it, for the formats that identify
        # a finding by its line's text (gitlab, sarif); None: no line text (the identity is
        # then the rule and path alone). Set by whoever built the report, like ``absent``.
        self.content: Callable[[str], bytes | None] | None = None

    def paths(self) -> set[str]:
        """Every repo-relative path a renderer may place a result on: each finding's path and
        sites, and :data:`PROTOCOL_ANCHOR` (absolute paths, inputs outside the repository,
        are left out)."""
        found = {PROTOCOL_ANCHOR}
        for gate in self.gates:
            for f in gate.findings:
                found.update(site.path for site in f.places())
        return {path for path in found if path and not os.path.isabs(path)}

    def present(self, path: str) -> bool:
        """Whether ``path`` is in the judged tree, as far as the report knows (True when
        nobody looked)."""
        return self.absent is None or path not in self.absent

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


def summary_line(report: Report) -> str:
    """The verdict in words, the last line of the text and github formats."""
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


def mark_absent(report: Report, exists: Callable[[str], bool]) -> Report:
    """Record on ``report`` which of its :meth:`~Report.paths` the judged tree lacks,
    ``exists`` telling for each (a file or a folder of the tree the gates judged: the index,
    a commit, or the working tree); ``report`` itself, for chaining."""
    report.absent = frozenset(path for path in sorted(report.paths()) if not exists(path))
    return report
