"""``tools evidence sign`` refreshes the ``vouched`` column of the spec evidence tables whose
records it signed (SPEC §11): the run records that list a signed arm and signed attributions,
each rendered again into the spec it names where a block of it already stands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.errors import UsageError


def _tabled(records: list[dict[str, Any]], signed: set[str]) -> list[dict[str, Any]]:
    """The run and attribution records whose tables show a signed record."""
    out = []
    for r in records:
        arms = r.get("arms") if r.get("kind") == "mutation-run" else None
        shows = set(arms) if isinstance(arms, list) else {r["id"]}
        if r.get("kind") in ("mutation-run", "attribution") and shows & signed:
            out.append(r)
    return out


def refresh(
    root: Path, ledger_file: Path, allowed_rel: str | None, revoked_rel: str | None,
    signed: set[str],
) -> list[str]:  # fmt: skip
    """Re-render the blocks that show a record of ``signed``; the specs changed. Nothing
    without ``ledger.allowed_signers`` (no column to refresh)."""
    from tools import evidence
    from tools.fsio import write_atomic
    from tools.git import decode, encode
    from tools.replay import select
    from tools.replay.vouched import for_tree

    records = select.current_records(ledger_file)
    by_id = {r["id"]: r for r in records}
    vouched = for_tree(root, ledger_file, allowed_rel, revoked_rel, by_id)
    changed: list[str] = []
    if vouched is None:
        return changed
    for record in _tabled(records, signed):
        spec = record.get("spec")
        full = root / spec if isinstance(spec, str) else None
        if full is None or not full.is_file():
            continue
        text = decode(full.read_bytes())
        if not any(b.id == record["id"] for b in evidence.find_blocks(text)):
            continue
        try:
            new = evidence.render_into(text, record, by_id.get, where=str(spec), vouched=vouched)
        except UsageError:
            continue  # a spec whose markers are broken is the spec gate's to report
        if new != text:
            write_atomic(full, encode(new), root=root)
            changed.append(str(spec))
    return changed
