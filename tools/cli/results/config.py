"""The results of ``tools config validate``, ``tools config show`` and ``tools init``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class ConfigValid:
    """``config validate``: the file that validated, or None when no config file exists
    (the defaults apply)."""

    source: str | None


def _valid_text(result: ConfigValid, options: RenderOptions) -> str:
    if result.source is None:
        return "ok: no config file; defaults apply\n"
    return f"ok: {result.source} is valid\n"


@dataclass(frozen=True)
class ConfigShown:
    """``config show``: the effective config, defaults filled in, and the file it was read
    from (None: defaults only)."""

    config: dict[str, Any]
    source: str | None


def _shown_text(result: ConfigShown, options: RenderOptions) -> str:
    import yaml  # only the text format needs it

    dumped = yaml.safe_dump(result.config, sort_keys=False, allow_unicode=True)
    return f"# effective config ({result.source or 'defaults only'})\n" + dumped


def _shown_json(result: ConfigShown, options: RenderOptions) -> str:
    return json.dumps(result.config, indent=2) + "\n"


@dataclass(frozen=True)
class InitDone:
    """``init``: each step as (what, verb), the evidence of an adopted config's choices,
    and what ``--adopt`` recorded as debt."""

    steps: tuple[tuple[str, str], ...]
    detected: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """A file that exists and differs was kept (exit 1)."""
        return any(verb.startswith("kept") for _, verb in self.steps)


def _init_text(result: InitDone, options: RenderOptions) -> str:
    # Short verbs right-aligned in one column; a long one ("kept (differs; …)") leads.
    out = [
        f"{verb:>9}  {what}\n" if len(verb) < 10 else f"{verb}  {what}\n"
        for what, verb in result.steps
    ]
    if result.detected:
        out.append("detected:\n" + "".join(f"  {line}\n" for line in result.detected))
    out += [f"{line}\n" for line in result.notes]
    return "".join(out)


register(ConfigValid, "text", _valid_text)
register(ConfigShown, "text", _shown_text)
register(ConfigShown, "json", _shown_json)
register(InitDone, "text", _init_text)
