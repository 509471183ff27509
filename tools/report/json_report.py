"""``--format json``: the report as one object of schema ``tools.report/1`` on one line.

The object is the model's own :meth:`Report.to_json <tools.report.model.Report.to_json>`
(tools/data/report.schema.json describes it). The module is not named ``json`` so that it never
stands for the standard library's.
"""

from __future__ import annotations

import json

from tools.report.model import Report
from tools.report.render_options import RenderOptions


def render_json(report: Report, options: RenderOptions = RenderOptions()) -> str:
    """The whole report, every finding (``options`` change nothing in this format)."""
    return json.dumps(report.to_json(), ensure_ascii=False, indent=None) + "\n"
