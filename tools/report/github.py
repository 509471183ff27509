"""``--format github``: GitHub Actions workflow commands, one annotation per finding site.

Each finding becomes an ``::error`` / ``::warning`` / ``::notice`` line on its file and line, a
skipped gate a warning; errors come first, then warnings, then notices, so that what GitHub
shows of a long report is what matters most; the verdict closes the output. See
docs/output-formats.md.
"""

from __future__ import annotations

from tools.report.model import Finding, GateResult, Report, summary_line
from tools.report.render_options import RenderOptions

# What GitHub shows of one step's annotations: at most this many of each severity; the rest
# are in the log only.
SHOWN_PER_SEVERITY = 10
_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_ORDER = ("error", "warning", "notice")


def _gh_escape(value: str, *, prop: bool) -> str:
    # GitHub workflow-command escaping: data escapes %, CR, LF; properties also : and ,
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def _annotations(report: Report, gate: GateResult, f: Finding) -> list[str]:
    """One annotation per site of ``f`` (each new site marked on its own line); a site the
    judged tree lacks is named in the message, never given as ``file=``."""
    title = f"title={_gh_escape(f'{gate.gate}/{f.rule}', prop=True)}"
    text = f.message + (f" (commit {f.commit})" if f.commit else "")
    out = []
    for place in f.places() or (None,):
        props = []
        said = text
        if place is not None and report.present(place.path):
            props.append(f"file={_gh_escape(place.path, prop=True)}")
            if place.line is not None:
                props.append(f"line={place.line}")
        elif place is not None:
            said = f"{place.path}: {text}"  # as the text format names it
        props.append(title)
        out.append(f"::{_LEVEL[f.severity]} {','.join(props)}::{_gh_escape(said, prop=False)}")
    return out


def _plural(n: int, level: str) -> str:
    return f"{n} {level}{'' if n == 1 else 's'}"


def _overflow(counts: dict[str, int]) -> str | None:
    """The one notice saying how many annotations GitHub will not show, and where they all
    are; None when every one shows. It goes first among the notices, so it always shows, and
    takes one of their places."""
    if all(n <= SHOWN_PER_SEVERITY for n in counts.values()):
        return None
    hidden = {level: n - SHOWN_PER_SEVERITY for level, n in counts.items()}
    hidden["notice"] = counts["notice"] - (SHOWN_PER_SEVERITY - 1)
    parts = [_plural(n, level) for level, n in hidden.items() if n > 0]
    total = ", ".join(_plural(counts[level], level) for level in _ORDER if counts[level])
    text = (
        f"GitHub shows {SHOWN_PER_SEVERITY} annotations of each severity per step: "
        f"{', '.join(parts)} will not show as annotations. All of them ({total}) are in "
        "this step's log, and in the SARIF log (--format sarif) for code scanning."
    )
    return f"::notice title=tools/annotations-not-shown::{_gh_escape(text, prop=False)}"


def render_github(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """Every finding at every site it names and every skip, errors first, then warnings (the
    skips first among them), then notices, each severity in the report's order; where a
    severity has more annotations than GitHub shows, one notice first among the notices says
    how many will not show; then the verdict (``options`` change nothing here: annotations
    carry everything, uncoloured)."""
    by_level: dict[str, list[str]] = {level: [] for level in _ORDER}
    for gate in report.gates:
        if gate.status == "skip":
            msg = _gh_escape(f"{gate.gate} skipped: {gate.reason}", prop=False)
            by_level["warning"].append(f"::warning title={gate.gate}::{msg}")
    for gate in report.gates:
        for f in gate.findings:
            by_level[_LEVEL[f.severity]].extend(_annotations(report, gate, f))
    counts = {level: len(lines) for level, lines in by_level.items()}
    overflow = _overflow(counts)
    if overflow is not None:
        by_level["notice"].insert(0, overflow)
    lines = [line for level in _ORDER for line in by_level[level]]
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
