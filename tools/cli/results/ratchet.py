"""The result of ``tools ratchet tighten`` (SPEC §4.5)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class RatchetsTightened:
    """``status`` ``ok`` with each ratchet's baseline (``ratchet``, ``path``, ``written``,
    ``before`` (None: created), ``after``), or ``refused`` with why, nothing written."""

    status: str
    ratchets: tuple[dict[str, Any], ...] = ()
    refusals: tuple[str, ...] = ()


def _json(result: RatchetsTightened, options: RenderOptions) -> str:
    out = {
        "schema": "tools.ratchet-tighten/1",
        "status": result.status,
        "ratchets": list(result.ratchets),
        "refusals": list(result.refusals),
    }
    return json.dumps(out, ensure_ascii=False) + "\n"


def _ratchet_line(item: dict[str, Any]) -> str:
    before, after = item["before"], item["after"]
    if before is None:
        parts = [f"{b} {n}" for b, n in after.items()]
        return f"{item['ratchet']}: created {item['path']} ({', '.join(parts)})"
    parts = [
        f"{b} {before[b]} -> {n}"
        if b in before and before[b] != n
        else (f"{b} {n} (new)" if b not in before else f"{b} {n}")
        for b, n in after.items()
    ]
    dropped = [b for b in before if b not in after]
    if dropped:
        parts.append("dropped " + ", ".join(dropped))
    verb = "tightened" if item["written"] else "already tight"
    return f"{item['ratchet']}: {verb} {item['path']} ({', '.join(parts)})"


def _text(result: RatchetsTightened, options: RenderOptions) -> str:
    lines: list[str] = []
    if result.refusals:
        lines.append("Refused, nothing written:")
        lines += [f"  {why}" for why in result.refusals]
        lines.append("A rise is fixed in the code, never by raising a baseline.")
    lines += [_ratchet_line(item) for item in result.ratchets]
    return "\n".join(lines) + "\n"


register(RatchetsTightened, "text", _text)
register(RatchetsTightened, "json", _json)
