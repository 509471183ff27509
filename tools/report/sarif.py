"""``--format sarif``: a report as a SARIF 2.1.0 log, for code scanning and editors.

One run whose driver is ``tools``; the driver lists every declared rule of the gates in the
report (ids ``<gate>/<rule>``, since several gates declare the same rule id, e.g.
``range-empty``); one result per finding; a skipped gate is a tool execution notification, so
it never vanishes from the log. A result is never placed on a path the judged tree lacks (the
report's ``absent``, read, never looked up here). See docs/output-formats.md for the mapping and
its reasons.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

from tools import __version__
from tools.finding_identity import finding_identity
from tools.report.line_hash import add_to_results as add_line_hashes
from tools.report.model import PROTOCOL_ANCHOR, Finding, GateResult, Report
from tools.report.registry import Rule, declared
from tools.report.render_options import RenderOptions

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"
# GitHub code scanning rejects a whole upload when one result has no file location, and a
# commit-message finding concerns no file, nor does one about the repository (a folder or a
# file it lacks): such findings are anchored (file-level, no line) at the protocol's
# conventional home, the contract they enforce, where the judged tree has it, and name their
# commit in a logical location, in the message and in the properties. Where the tree lacks it
# too, they have no location at all (SARIF 2.1.0 §3.27.12): a result is never placed on a
# path that does not exist.
PATHLESS_ANCHOR = PROTOCOL_ANCHOR
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SKIPPED = "gate-skipped"
FINGERPRINT_KEY = "toolsFinding/v1"


def rule_id(gate: str, rule: str) -> str:
    """The SARIF ``ruleId`` of ``rule`` of ``gate`` (hierarchical: the gate is the family)."""
    return f"{gate}/{rule}"


def _text(value: str) -> str:
    # Bytes that were not UTF-8 arrive as surrogate escapes; a SARIF string must be Unicode.
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def artifact_uri(path: str) -> dict[str, str]:
    """An ``artifactLocation``: repo-relative paths become percent-encoded relative references
    under ``%SRCROOT%``; an absolute path (an input outside the repository) a file URI."""
    raw = path.encode("utf-8", "surrogateescape")
    if os.path.isabs(path):
        return {"uri": "file://" + quote(raw, safe="/")}
    return {"uri": quote(raw, safe="/"), "uriBaseId": SRCROOT}


def _descriptor(gate: str, rule: Rule) -> dict[str, Any]:
    return {
        "id": rule_id(gate, rule.id),
        "name": rule.id,
        "shortDescription": {"text": _text(rule.summary)},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"gate": gate, "tags": [gate]},
    }


class _Rules:
    """The driver's rule table, in report order, each id once."""

    def __init__(self) -> None:
        self.descriptors: list[dict[str, Any]] = []
        self.index: dict[str, int] = {}
        self._registry = declared()

    def add_gate(self, gate: str) -> None:
        for rule in self._registry.get(gate, {}).values():
            self._add(gate, rule)

    def _add(self, gate: str, rule: Rule) -> int:
        rid = rule_id(gate, rule.id)
        if rid not in self.index:
            self.index[rid] = len(self.descriptors)
            self.descriptors.append(_descriptor(gate, rule))
        return self.index[rid]

    def of(self, gate: str, finding: Finding) -> int:
        rid = rule_id(gate, finding.rule)
        if rid in self.index:
            return self.index[rid]
        # A report assembled outside a gate module (never by the CLI): describe it from itself.
        return self._add(gate, Rule(finding.rule, finding.severity, finding.rule))


def _fingerprint(gate: str, f: Finding, seen: dict[str, int]) -> str:
    # The finding's identity without its line, so that an edit above it does not make a new
    # alert; identical findings are told apart by their order, as code scanning expects.
    return finding_identity(seen, gate, f.rule, f.path or "", f.commit or "", f.message).numbered


def _physical(path: str, line: int | None, end_line: int | None = None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": artifact_uri(path)}
    if line is not None:
        physical["region"] = {"startLine": line}
        if end_line is not None and end_line > line:
            physical["region"]["endLine"] = end_line
    return {"physicalLocation": physical}


def _about_the_repository(f: Finding, present: bool) -> list[dict[str, Any]]:
    """The locations of a finding placed on no file of the tree: the anchor, file-level, with
    its commit as a logical location (``present``: the judged tree has the anchor); none
    where the tree lacks the anchor too."""
    if not present:
        return []
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": artifact_uri(PATHLESS_ANCHOR)}
    }
    if f.commit:
        location["logicalLocations"] = [
            {"name": f.commit[:12], "fullyQualifiedName": f.commit, "kind": "commit"}
        ]
        location["message"] = {"text": f"commit {f.commit}"}
    return [location]


def _locations(report: Report, f: Finding) -> list[dict[str, Any]]:
    """One location per site of the finding that the judged tree has (a ratchet regression's
    every new site); a finding with none is about the repository (or a commit)."""
    if f.sites:
        placed = [_physical(s.path, s.line) for s in f.sites if report.present(s.path)]
    elif f.path and report.present(f.path):
        placed = [_physical(f.path, f.line, f.end_line)]
    else:
        placed = []
    return placed or _about_the_repository(f, report.present(PATHLESS_ANCHOR))


def _result(
    report: Report, gate: GateResult, f: Finding, index: int, seen: dict[str, int]
) -> dict[str, Any]:
    message = f.message
    if f.path is None and f.line is not None:
        message += f" (line {f.line})"
    if f.commit:
        message += f" (commit {f.commit})"
    properties: dict[str, Any] = {"gate": gate.gate, "rule": f.rule, "commit": f.commit}
    if f.path is None and f.line is not None:
        properties["line"] = f.line
    missing = [p.path for p in f.places() if not report.present(p.path)]
    if missing:
        # Named, never placed: the paths the finding is about that the judged tree lacks.
        properties["absentPaths"] = [_text(path) for path in missing]
    out = {
        "ruleId": rule_id(gate.gate, f.rule),
        "ruleIndex": index,
        "level": LEVELS[f.severity],
        "message": {"text": _text(message)},
        "locations": _locations(report, f),
        "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(gate.gate, f, seen)},
        "properties": properties,
    }
    if f.baseline_state is not None:
        out["baselineState"] = f.baseline_state  # result.baselineState: new or unchanged
    return out


def to_sarif(report: Report, *, fail_on_skip: bool = False) -> dict[str, Any]:
    """The SARIF log of ``report`` (a rendered report is one the command could judge: the
    invocation succeeded; its exit code is the report's)."""
    rules = _Rules()
    for gate in report.gates:
        rules.add_gate(gate.gate)
    results: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for gate in report.gates:
        for f in gate.findings:
            results.append(_result(report, gate, f, rules.of(gate.gate, f), seen))
    if report.content is not None:
        # What code scanning tracks an alert by, filled in as upload-sarif would (SPEC §13).
        add_line_hashes(results, report.content)
    skipped = [g for g in report.gates if g.status == "skip"]
    # Under --fail-on-skip a skip fails the command, so it is reported at that level.
    skip_level = "error" if fail_on_skip else "warning"
    notifications = [
        {
            "level": skip_level,
            "message": {"text": _text(f"{g.gate} skipped: {g.reason}")},
            "descriptor": {"id": SKIPPED, "index": 0},
            "properties": {"gate": g.gate, "reason": _text(g.reason or "")},
        }
        for g in skipped
    ]
    driver: dict[str, Any] = {
        "name": "tools",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": rules.descriptors,
    }
    if skipped:
        driver["notifications"] = [
            {
                "id": SKIPPED,
                "shortDescription": {"text": "a gate could not judge and skipped (never a pass)"},
                "defaultConfiguration": {"level": "warning"},
            }
        ]
    invocation: dict[str, Any] = {
        "executionSuccessful": True,
        "exitCode": report.exit_code(fail_on_skip=fail_on_skip),
        "properties": {
            "status": report.status,
            "gates": [
                {
                    "gate": g.gate,
                    "status": g.status,
                    "reason": _text(g.reason) if g.reason else None,
                    "stats": g.stats,
                }
                for g in report.gates
            ],
        },
    }
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {"driver": driver},
                "invocations": [invocation],
                "results": results,
            }
        ],
    }


def render_sarif(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """The log of :func:`to_sarif` on one line (``options.fail_on_skip``: its exit code)."""
    log = to_sarif(report, fail_on_skip=options.fail_on_skip)
    return json.dumps(log, ensure_ascii=False) + "\n"
