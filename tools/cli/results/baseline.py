"""The results of ``tools baseline write`` and ``tools baseline show`` (SPEC §3.3)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.report import register
from tools.report.render_options import RenderOptions

if TYPE_CHECKING:
    from tools.findings_baseline import Entry


def _per_rule(entries: tuple[Entry, ...]) -> str:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.rule] = counts.get(e.rule, 0) + 1
    return ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items())) or "none"


@dataclass(frozen=True)
class BaselineWritten:
    """``baseline write``: the baseline's path, whether it exists (a missing one is written
    only with ``--add``) and was written, its entries now, and those added and removed."""

    path: str
    exists: bool
    written: bool
    entries: tuple[Entry, ...] = ()
    added: tuple[Entry, ...] = ()
    removed: tuple[Entry, ...] = ()


def _written_json(result: BaselineWritten, options: RenderOptions) -> str:
    out = {
        "schema": "tools.baseline-write/1",
        "path": result.path,
        "written": result.written,
        "entries": len(result.entries),
        "added": [e.to_json() for e in result.added],
        "removed": [e.to_json() for e in result.removed],
    }
    return json.dumps(out, ensure_ascii=False) + "\n"


def _written_text(result: BaselineWritten, options: RenderOptions) -> str:
    if not result.exists:
        return (
            f"no findings baseline ({result.path}): nothing written; "
            "`tools baseline write --add` records today's findings as debt\n"
        )
    lines = [f"  removed {e.gate}/{e.rule} {e.path}: {e.message}" for e in result.removed]
    lines += [f"  added   {e.gate}/{e.rule} {e.path}: {e.message}" for e in result.added]
    verb = "wrote" if result.written else "unchanged"
    lines.append(
        f"{verb} {result.path}: {len(result.entries)} entries "
        f"({len(result.added)} added, {len(result.removed)} removed); "
        f"debt per rule: {_per_rule(result.entries)}"
    )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BaselineShown:
    """``baseline show``: the recorded debt, or None when there is no baseline file."""

    path: str
    entries: tuple[Entry, ...] | None


def _shown_json(result: BaselineShown, options: RenderOptions) -> str:
    out = {
        "schema": "tools.baseline-show/1",
        "path": result.path,
        "exists": result.entries is not None,
        "findings": [e.to_json() for e in result.entries or ()],
    }
    return json.dumps(out, ensure_ascii=False) + "\n"


def _shown_text(result: BaselineShown, options: RenderOptions) -> str:
    if result.entries is None:
        return f"no findings baseline ({result.path})\n"
    lines = [f"{e.gate}/{e.rule} {e.path}: {e.message}" for e in result.entries]
    lines.append(
        f"{len(result.entries)} entries in {result.path}; per rule: {_per_rule(result.entries)}"
    )
    return "\n".join(lines) + "\n"


register(BaselineWritten, "text", _written_text)
register(BaselineWritten, "json", _written_json)
register(BaselineShown, "text", _shown_text)
register(BaselineShown, "json", _shown_json)
