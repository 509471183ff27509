"""Findings, verdicts, the rule registry and the renderers of a report.

The dependency points one way: ``registry`` (rules) <- ``model`` (findings, gate results, the
report and its exit code) <- ``renderers`` (formats and the one ``render`` call) -> one module
per format (``text``, ``json_report``, ``github``, ``sarif``), each loaded when first used.
docs/output-formats.md describes the layout. This module only re-exports the names gates and
commands use, so that importing it stays as cheap as importing the model.
"""

from tools.report.model import (
    REPORT_SCHEMA_ID,
    Finding,
    GateResult,
    Report,
    Site,
    Status,
    summary_line,
)
from tools.report.registry import SEVERITIES, Rule, Severity, UndeclaredRule, declare, declared
from tools.report.render_options import Renderer, RenderOptions, TextOptions
from tools.report.renderers import FORMATS, FormatUnavailable, formats, register, render

__all__ = [
    "FORMATS",
    "REPORT_SCHEMA_ID",
    "SEVERITIES",
    "Finding",
    "FormatUnavailable",
    "GateResult",
    "Renderer",
    "RenderOptions",
    "Report",
    "Rule",
    "Severity",
    "Site",
    "Status",
    "TextOptions",
    "UndeclaredRule",
    "declare",
    "declared",
    "formats",
    "register",
    "render",
    "summary_line",
]
