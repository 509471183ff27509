"""The ``evidence`` gate's result from a replay's outcomes, and the statements, attestation
records and replay records made from them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.replay import gate
from tools.replay.replay import INCONCLUSIVE, REPRODUCED, UNREPLAYABLE, UNREPRODUCED, Outcome

if TYPE_CHECKING:
    from tools.context import Context
    from tools.replay.replay import Replayer
    from tools.report import GateResult

_RULE = {
    REPRODUCED: gate.EVIDENCE_REPRODUCED.id,
    UNREPRODUCED: gate.EVIDENCE_UNREPRODUCED.id,
    INCONCLUSIVE: gate.EVIDENCE_REPLAY_INCONCLUSIVE.id,
    UNREPLAYABLE: gate.EVIDENCE_UNREPLAYABLE.id,
}


def _message(o: Outcome) -> str:
    at = f" at {o.commit[:12]}" if o.commit else ""
    if o.status == REPRODUCED:
        seen = o.observed or {}
        parts = [f"verdict {seen.get('verdict')}"]
        parts += [
            f"{k} {seen[k]}" for k in ("compile_rc", "run_rc", "signal") if seen.get(k) is not None
        ]
        return f"record {o.label()} reproduced{at}: {', '.join(parts)}"
    if o.status == UNREPRODUCED:
        return f"record {o.label()} not reproduced{at}: {o.reason}"
    if o.status == INCONCLUSIVE:
        return f"record {o.label()} replay inconclusive{at}: {o.reason}"
    return f"record {o.label()}: {o.reason}"


def file(
    result: GateResult,
    outcomes: list[Outcome],
    path: str | None = None,
    lines: dict[str, int] | None = None,
) -> None:
    """One finding per outcome (on the record's ledger line, when ``path`` and ``lines`` say
    it); a replay that was no verdict makes the gate a skip (never a pass); counts in
    ``stats``."""
    counts = {status: 0 for status in _RULE}
    for o in outcomes:
        counts[o.status] += 1
        line = (lines or {}).get(o.record["id"])
        result.add(_RULE[o.status], _message(o), path=path if line else None, line=line)
    result.stats.update({"replayed": len(outcomes), **counts})
    if counts[INCONCLUSIVE]:
        result.skip(f"{counts[INCONCLUSIVE]} replay(s) inconclusive: no verdict for them")


def replay(ctx: Context, ids: list[str], replayer: Replayer) -> tuple[GateResult, list[Outcome]]:
    """Replay the range's added records (or ``ids``) into the ``evidence`` gate's result."""
    from tools.replay import select
    from tools.report import GateResult

    result = GateResult(gate.NAME)
    rel = ctx.config.ledger.path
    full = ctx.git.worktree_path(rel)
    current, lines = select.scan(full)  # read and verified once (a replay never writes it)
    if ids:
        records = select.named(full, ids, current)
    else:
        found = select.added(ctx, result, current)
        if found is None:
            return result, []
        records = found
    outcomes = replayer.run(records)
    file(result, outcomes, rel, lines)
    return result, outcomes


def statement_of(o: Outcome) -> dict[str, Any]:
    from tools.replay import statement

    assert o.observed is not None
    return statement.build(
        o.record, o.observed, commit=o.commit, befores=o.befores, conditions=o.conditions
    )


def write_statements(
    folder: Path, outcomes: list[Outcome], *, root: Path | None = None
) -> list[Path]:
    """Each reproduced record's statement (and predicate) as files in ``folder``."""
    from tools.replay import statement

    out: list[Path] = []
    for o in outcomes:
        if o.status == REPRODUCED:
            out += statement.write(folder, statement_of(o), o.record, root=root)
    return out


def replay_records(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """``evidence-replay`` ledger records (``--append``): what each replay found."""
    from tools import ledger

    return [
        ledger.make_record(
            "evidence-replay",
            {
                "record": o.record["id"],
                "record_kind": o.record["kind"],
                "status": o.status,
                "reason": o.reason,
                "commit": o.commit,
                "observed": o.observed,
                "differences": [list(d) for d in o.diffs],
            },
        )
        for o in outcomes
    ]
