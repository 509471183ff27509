"""The result of ``tools hooks install``."""

from __future__ import annotations

from dataclasses import dataclass

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class HooksInstalled:
    """Each hook file, repository-relative, with what was done to it (``wrote``,
    ``unchanged``, ``updated``, ``kept …``, ``moved yours …``); ``refused`` when a hook
    that is not ours was kept (exit 1)."""

    steps: tuple[tuple[str, str], ...]  # (verb, path)
    refused: bool = False


def _text(result: HooksInstalled, options: RenderOptions) -> str:
    return "".join(f"{verb}  {path}\n" for verb, path in result.steps)


register(HooksInstalled, "text", _text)
