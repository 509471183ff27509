"""Rendering a run or attribution record into its spec's ``Now`` section, through the shared
evidence renderer (``tools.evidence``), and looking records up in the ledger for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError
from tools.fsio import write_atomic

if TYPE_CHECKING:
    from tools.evidence import Vouched


class RendererUnavailable(Exception):
    """``tools.evidence`` cannot be imported: the records stand, the table was not written."""


def ledger_lookup(
    ledger_path: Path, extra: Iterable[dict[str, Any]] = ()
) -> Callable[[str], dict[str, Any] | None]:
    """``lookup(id)`` over the ledger (read once, on the first call) and ``extra`` records
    (those just written, or about to be)."""
    from tools import ledger

    known: dict[str, dict[str, Any]] = {r["id"]: r for r in extra}
    loaded = [False]

    def lookup(rid: str) -> dict[str, Any] | None:
        if rid not in known and not loaded[0]:
            loaded[0] = True
            for _, item in ledger.read_records(ledger_path, verify=True):
                if isinstance(item, dict):
                    known.setdefault(item["id"], item)
        return known.get(rid)

    return lookup


def render(
    root: Path,
    spec: str,
    record: dict[str, Any],
    lookup: Callable[[str], dict[str, Any] | None],
    vouched_for: Callable[[list[str]], Vouched | None] | None = None,
) -> bool:
    """Write ``record``'s evidence table into ``spec`` (repo-relative); True when the file
    changed (rendering the same record again changes no byte). Where the plan's table there
    has a ``vouched`` column (SPEC §11), the new one keeps it: each row's principal as
    ``vouched_for(ids)`` gives it (the record's id and its arms'), ``—`` without one."""
    try:
        from tools import evidence
    except ImportError as exc:
        raise RendererUnavailable(f"the evidence renderer is not available ({exc})") from None
    from tools import file_reads

    full = root / spec
    raw = file_reads.read_optional(full, spec, root=root)
    if raw is None:
        raise UsageError("spec not found", where=spec)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 (byte {exc.start})", where=spec) from None
    vouched = None
    if _has_vouched_column(text, record.get("plan")):
        arms = record.get("arms") if record.get("kind") == evidence.RUN_KIND else None
        listed = arms if isinstance(arms, list) else []
        ids = [str(record.get("id")), *(a for a in listed if isinstance(a, str))]
        vouched = (vouched_for(ids) if vouched_for else None) or _nobody
    new = evidence.render_into(text, record, lookup, where=spec, vouched=vouched)
    if new == text:
        return False
    write_atomic(full, new.encode("utf-8"), root=root)  # never through a link
    return True


def _nobody(rid: str) -> str | None:
    return None


def _has_vouched_column(text: str, plan: object) -> bool:
    """Whether ``text`` holds a block of ``plan`` whose table has the ``vouched`` column."""
    from tools import evidence

    return any(
        b.plan == plan and evidence.has_vouched_column(b.body) for b in evidence.find_blocks(text)
    )
