"""The result of ``tools golden capture CASE``."""

from __future__ import annotations

from dataclasses import dataclass

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class GoldenCaptured:
    """The case captured: its op (and variant), seed and generator, each file's sha256, and
    the golden-capture record appended to the ledger."""

    case: str
    op: str
    variant: str | None
    seed: object
    generator: str
    files: tuple[tuple[str, str], ...]  # (file, sha256)
    record_id: str
    ledger: str


def _text(result: GoldenCaptured, options: RenderOptions) -> str:
    variant = f" variant {result.variant}" if result.variant else ""
    lines = [
        f"captured {result.case}: {result.op}{variant}, seed {result.seed}, {result.generator}"
    ]
    lines += [f"  {name}  sha256 {sha}" for name, sha in result.files]
    lines.append(f"ledger: golden-capture record {result.record_id} in {result.ledger}")
    return "\n".join(lines) + "\n"


register(GoldenCaptured, "text", _text)
