"""The result of ``tools spec render SPEC --id ID`` (SPEC §4.8)."""

from __future__ import annotations

from dataclasses import dataclass

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class SpecRendered:
    """The spec written, the plan whose block holds the record, the record's kind and id,
    and whether the spec changed (False: the block rendered that record already)."""

    spec: str
    plan: str
    kind: str
    record_id: str
    changed: bool


def _text(result: SpecRendered, options: RenderOptions) -> str:
    label = f"{result.kind} {result.record_id[:12]}…"
    if not result.changed:
        what = f"the block of plan {result.plan} already renders {label}"
        return f"{result.spec}: unchanged ({what})\n"
    return f"{result.spec}: rendered {label} as the block of plan {result.plan}\n"


register(SpecRendered, "text", _text)
