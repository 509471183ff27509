"""The results of ``tools index append``, ``tools ledger merge`` and ``tools ledger show``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class IndexAppended:
    """``index append``: the row written, the index it went to and its line number there."""

    path: str
    line: int
    row: str


def _appended_text(result: IndexAppended, options: RenderOptions) -> str:
    return f"appended to {result.path}:{result.line}: {result.row}\n"


@dataclass(frozen=True)
class LedgerMerged:
    """``ledger merge``: records written to the ledger and those it held already; or, when
    ``failed`` records did not verify, nothing written (each failure is said on stderr)."""

    path: str
    merged: int = 0
    present: int = 0
    failed: int = 0


def _merged_text(result: LedgerMerged, options: RenderOptions) -> str:
    if result.failed:
        return f"nothing written to {result.path}: {result.failed} record(s) failed verification\n"
    merged, present = result.merged, result.present
    return f"merged {merged} record(s) into {result.path}; {present} already present\n"


@dataclass(frozen=True)
class LedgerShown:
    """``ledger show``: the selected records; ``one`` when ``--id`` asked for one record,
    which text prints whole."""

    records: tuple[dict[str, Any], ...]
    one: bool = False


def _shown_text(result: LedgerShown, options: RenderOptions) -> str:
    if result.one:
        return json.dumps(result.records[0], ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    return "".join(f"{r['id'][:12]}  {r['created']}  {r['kind']}\n" for r in result.records)


def _shown_json(result: LedgerShown, options: RenderOptions) -> str:
    return json.dumps(list(result.records), ensure_ascii=False, indent=None) + "\n"


register(IndexAppended, "text", _appended_text)
register(LedgerMerged, "text", _merged_text)
register(LedgerShown, "text", _shown_text)
register(LedgerShown, "json", _shown_json)
