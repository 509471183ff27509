"""``--format github``: GitHub Actions workflow commands, one annotation per finding site.

Each finding becomes an ``::error`` / ``::warning`` / ``::notice`` line on its file and line, a
skipped gate a warning; the verdict closes the output. See docs/output-formats.md.
"""

from __future__ import annotations

from tools.report.model import Report, summary_line
from tools.report.render_options import RenderOptions


def _gh_escape(value: str, *, prop: bool) -> str:
    # GitHub workflow-command escaping: data escapes %, CR, LF; properties also : and ,
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render_github(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """Every finding at every site it names, every skip, then the verdict (``options`` change
    nothing here: annotations carry everything, uncoloured)."""
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
