"""``--format gitlab``: a report as GitLab's Code Quality report, for its merge-request widget.

The format (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format) is a
JSON array of issues, each with ``description``, ``check_name``, ``fingerprint``, ``severity``
(``info``, ``minor``, ``major``, ``critical`` or ``blocker``), ``location.path`` (relative to
the repository, never ``./``-prefixed) and ``location.lines.begin``; GitLab ignores the rest.

- ``check_name`` is ``gate/rule``, as SARIF's ``ruleId``.
- ``fingerprint`` is the findings baseline's identity of the finding (SPEC §3.3: gate, rule,
  path and the normalised text of its line, with a repeat count), so that GitLab, which
  compares a merge request's issues with its target branch's by fingerprint, sees a finding
  that moved to another line as the same one, and never a new one.
- ``severity``: info -> ``info``, warning -> ``minor``, error -> ``major``; an error of a rule
  that keeps data safe (SPEC §3.3's protected list) -> ``critical``.
- A finding on no file the judged tree has (a commit message, a path that is gone) is placed on
  the protocol's home, line 1, and names its path and commit in the description: GitLab needs
  a path. A skipped gate is one ``minor`` issue there too, so the widget never shows a skip as
  nothing to report.
"""

from __future__ import annotations

import json
from typing import Any

from tools.finding_identity import finding_identity
from tools.findings_baseline import fingerprints
from tools.gate_registry import PROTECTED
from tools.report.model import PROTOCOL_ANCHOR, Finding, GateResult, Report, Site
from tools.report.render_options import RenderOptions

SEVERITY = {"info": "info", "warning": "minor", "error": "major"}
PROTECTED_SEVERITY = "critical"
SKIPPED = "gate-skipped"


def _text(value: str) -> str:
    # Bytes that were not UTF-8 arrive as surrogate escapes; JSON text must be Unicode.
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def severity(finding: Finding) -> str:
    """The GitLab severity of ``finding``."""
    if finding.severity == "error" and finding.rule in PROTECTED:
        return PROTECTED_SEVERITY
    return SEVERITY[finding.severity]


def _placed(report: Report, finding: Finding) -> tuple[Site, list[str]]:
    """Where the issue goes (the first place the judged tree has, else the protocol's home)
    and the places it names in words (the rest)."""
    places = list(finding.places())
    for i, place in enumerate(places):
        if report.present(place.path):
            return place, [_where(p) for p in places[:i] + places[i + 1 :]]
    return Site(PROTOCOL_ANCHOR, None), [_where(p) for p in places]


def _where(site: Site) -> str:
    return site.path if site.line is None else f"{site.path}:{site.line}"


def _issue(report: Report, gate: str, finding: Finding, fingerprint: str) -> dict[str, Any]:
    place, others = _placed(report, finding)
    description = finding.message
    if others:
        description += f" ({'; '.join(others)})"
    if finding.commit:
        description += f" (commit {finding.commit})"
    return {
        "description": _text(description),
        "check_name": f"{gate}/{finding.rule}",
        "fingerprint": fingerprint,
        "severity": severity(finding),
        "location": {"path": _text(place.path), "lines": {"begin": place.line or 1}},
    }


def _skipped(gate: GateResult) -> dict[str, Any]:
    # A skip is no finding, but is identified the same way: by its gate, once per report.
    identity = finding_identity({}, gate.gate, SKIPPED, PROTOCOL_ANCHOR)
    return {
        "description": _text(f"{gate.gate} skipped: {gate.reason}"),
        "check_name": f"{gate.gate}/{SKIPPED}",
        "fingerprint": identity.fingerprint,
        "severity": "minor",
        "location": {"path": PROTOCOL_ANCHOR, "lines": {"begin": 1}},
    }


def to_gitlab(report: Report) -> list[dict[str, Any]]:
    """The Code Quality issues of ``report``: one per finding, then one per skipped gate."""
    read = report.content or (lambda path: None)
    issues: list[dict[str, Any]] = []
    for gate in report.gates:
        for finding, fingerprint in fingerprints(gate.gate, gate.findings, read):
            issues.append(_issue(report, gate.gate, finding, fingerprint))
    issues.extend(_skipped(g) for g in report.gates if g.status == "skip")
    return issues


def render_gitlab(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """The issues of :func:`to_gitlab` as one JSON array on one line (``options`` change
    nothing here: the exit code is the report's)."""
    return json.dumps(to_gitlab(report), ensure_ascii=False) + "\n"
