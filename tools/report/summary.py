"""A report's Markdown summary, for a CI job's page (GitHub's ``$GITHUB_STEP_SUMMARY``).

One table, a row per gate: its status, its errors, its warnings and its recorded debt (findings
the findings baseline matched, SPEC §3.3, which are warnings too but counted apart, so that new
warnings are not hidden among them). It is written from the JSON report (``--format json``,
schema ``tools.report/1``), the complete one, so the summary never disagrees with it; a skipped
gate's reason is listed under the table, since a skip is never green.
"""

from __future__ import annotations

from typing import Any

_STATUS = {"pass": "pass", "fail": "**fail**", "skip": "skip"}


def _cell(value: object) -> str:
    # A table cell ends at a bare pipe or a line end.
    return str(value).replace("|", "\\|").replace("\n", " ")


def _counts(gate: dict[str, Any]) -> tuple[int, int, int]:
    errors = warnings = debt = 0
    for finding in gate.get("findings") or []:
        if finding.get("baseline_state") == "unchanged":
            debt += 1
        elif finding.get("severity") == "error":
            errors += 1
        elif finding.get("severity") == "warning":
            warnings += 1
    return errors, warnings, debt


def markdown(report: dict[str, Any], *, title: str = "tools preflight") -> str:
    """The summary of ``report`` (a ``tools.report/1`` object)."""
    status = str(report.get("status", "skip"))
    lines = [f"### {title}: {status}", ""]
    judged = report.get("range")
    if isinstance(judged, dict):
        base, head = str(judged.get("base", ""))[:12], str(judged.get("head", ""))[:12]
        lines += [f"Judged {judged.get('commits', 0)} commits, {base}..{head}.", ""]
    lines += ["| gate | status | errors | warnings | debt |", "|---|---|---:|---:|---:|"]
    skipped = []
    for gate in report.get("gates") or []:
        errors, warnings, debt = _counts(gate)
        name = _cell(gate.get("gate", ""))
        shown = _STATUS.get(str(gate.get("status")), _cell(gate.get("status")))
        lines.append(f"| {name} | {shown} | {errors} | {warnings} | {debt} |")
        if gate.get("status") == "skip":
            skipped.append(f"- {name} skipped: {_cell(gate.get('reason') or '')}")
    if skipped:
        lines += ["", *skipped]
    return "\n".join(lines) + "\n"


def unjudged(reason: str, *, title: str = "tools preflight") -> str:
    """The summary of a run that produced no report (nothing to judge, or exit 2/3)."""
    return f"### {title}: not judged\n\n{_cell(reason)}\n"
