"""``--format text`` (the default): what a person takes in at a glance.

One line per gate, its findings indented under it, then the verdict; terminal control
characters in quoted text are shown escaped, never raw. See docs/output-formats.md.
"""

from __future__ import annotations

from tools.report.model import Finding, GateResult, Report, summary_line
from tools.report.registry import SEVERITIES
from tools.report.render_options import RenderOptions

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


def finding_lines(f: Finding, *, color: bool = False, indent: str = "  ") -> list[str]:
    """One finding: ``severity[rule] where: message``, after ``indent``; a message of several
    lines keeps its shape, indented under its first."""
    where = _where(f)
    head = indent + _paint(f"{f.severity}[{f.rule}]", f.severity, color)
    if where:
        head += " " + _paint(where, "dim", color) + ":"
    first, *rest = f.message.split("\n")
    return [f"{head} {visible(first)}"] + [f"{indent}    {visible(line)}" for line in rest]


def skip_line(gate: GateResult, *, color: bool = False) -> str:
    """``SKIP gate: reason``: a gate that could not judge, never shown as green."""
    word = _paint(_HEAD["skip"], "skip", color)
    return f"{word} {visible(gate.gate)}: {visible(gate.reason or '')}"


def failing_lines(
    report: Report, *, color: bool = False, max_findings: int = 50, show_all: str = ""
) -> list[str]:
    """What a refusing hook prints above its one summary line: the findings that fail (the
    errors), gate by gate in the report's order, unindented; at most ``max_findings`` per gate
    (0: all), then one line with how many more and ``show_all``, the command that prints
    them all."""
    lines: list[str] = []
    for gate in report.gates:
        errors = [f for f in gate.findings if f.severity == "error"]
        cap = max_findings or len(errors)
        for f in errors[:cap]:
            lines.extend(finding_lines(f, color=color, indent=""))
        if len(errors) > cap:
            more = f"… {len(errors) - cap} more error(s) of {gate.gate} left out"
            lines.append(more + (f": {show_all} prints them all" if show_all else ""))
    return lines


def _statistics(gate: GateResult) -> list[str]:
    """ruff's convention: count, rule, severity, most frequent first."""
    counts: dict[tuple[str, str], int] = {}
    for f in gate.findings:
        counts[(f.rule, f.severity)] = counts.get((f.rule, f.severity), 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [f"  {n:>6}  {rule}  {sev}" for (rule, sev), n in ranked]


def render_text(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """One line per gate (``ok`` / ``FAIL`` / ``SKIP: reason``), its findings indented under
    it (at most ``max_findings``, then how many were left out), then (``options.summary``) a
    blank line and the summary. ``options.color``: SGR codes, for a terminal."""
    color, text = options.color, options.text
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
            lines.extend(finding_lines(f, color=color))
        if len(gate.findings) > cap:
            lines.append(
                f"  … {len(gate.findings) - cap} more finding(s) of {gate.gate} left out: "
                "--max-findings 0 prints them all (--statistics counts them per rule)"
            )
    if options.summary:
        if lines:
            lines.append("")
        lines.append(_paint(summary_line(report), report.status, color))
    return "\n".join(lines) + "\n"
