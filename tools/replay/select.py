"""Which records a replay re-runs: those the range adds to the ledger (the working tree's
ledger against the merge base's), or the ones named by id."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError

if TYPE_CHECKING:
    from tools.context import Context
    from tools.report import GateResult

REPLAYABLE = ("mutation-arm", "attribution")


def scan(full: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The ledger's records that verify (a line that does not is ``ledger verify``'s), and
    the line of each, by id."""
    from tools import ledger

    records: list[dict[str, Any]] = []
    lines: dict[str, int] = {}
    for line, item in ledger.read_records(full, verify=True):
        if isinstance(item, dict):
            records.append(item)
            lines.setdefault(item["id"], line)
    return records, lines


def current_records(full: Path) -> list[dict[str, Any]]:
    """The ledger's records that verify."""
    return scan(full)[0]


def added(
    ctx: Context, result: GateResult, current: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]] | None:
    """The replayable records the range adds (of ``current``, the working tree's ledger's
    records when read already); None when the range cannot be read (the skip and, under
    --require-commits, the error are set on ``result``)."""
    from tools import ledger
    from tools.gates.commit_range import range_commits

    if range_commits(ctx, result) is None:
        return None
    rel = ctx.config.ledger.path
    merge_base = ctx.range.merge_base
    data = ctx.git.blob(merge_base, rel) if merge_base else None
    at_base = {item.id for item in ledger.scan_bytes(data or b"") if item.id is not None}
    if current is None:
        current = current_records(ctx.git.worktree_path(rel))
    return [r for r in current if r.get("kind") in REPLAYABLE and r["id"] not in at_base]


def named(
    full: Path, ids: list[str], current: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The records ``ids`` name (each an id or a unique prefix of one; of ``current``, the
    ledger's records when read already), in the order given; exit 2 for an id that names
    none, several, or a record that cannot be replayed."""
    records = current_records(full) if current is None else current
    out: list[dict[str, Any]] = []
    for rid in ids:
        want = rid.strip().lower()
        hits = {r["id"]: r for r in records if want and r["id"].startswith(want)}
        if not hits:
            raise UsageError(f"no record {rid!r} in the ledger", where="--id")
        if len(hits) > 1:
            raise UsageError(f"{rid!r} matches {len(hits)} records; give more of it", where="--id")
        (record,) = hits.values()
        if record.get("kind") not in REPLAYABLE:
            raise UsageError(
                f"record {record['id'][:12]}… is a {record.get('kind')} record",
                where="--id",
                expected="a mutation-arm or attribution record",
            )
        if all(r["id"] != record["id"] for r in out):
            out.append(record)
    return out
