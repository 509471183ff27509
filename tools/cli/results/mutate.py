"""The results of ``tools mutate run|matrix|collect|recover`` and ``tools attribute``
(SPEC §6): the records as the ledger holds them, and what was written where."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tools.report import register
from tools.report.render_options import RenderOptions


@dataclass(frozen=True)
class ArmsMatrix:
    """``mutate matrix``: the plan's arms as a GitHub Actions ``strategy.matrix``."""

    matrix: dict[str, Any]


def _matrix_json(result: ArmsMatrix, options: RenderOptions) -> str:
    return json.dumps(result.matrix, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class MutationRun:
    """``mutate run`` and ``mutate collect``: the plan (path, base) and how its arms ran,
    their mutation-arm records, the mutation-run record (None when a receipt got the arm
    records), where the records went (``receipt`` or ``ledger``; ``superseded`` arm records
    re-judged by collect), the spec's evidence table (``table``: ``rendered`` or ``already
    current``; None when not rendered), the failures and the exit code."""

    plan: str
    base: str
    how: str  # "in place", "worktrees, -j N" or "collected"
    arms: tuple[dict[str, Any], ...]
    run: dict[str, Any] | None
    failures: tuple[str, ...]
    exit_code: int
    receipt: str | None = None
    ledger: str | None = None
    superseded: int = 0
    spec: str | None = None
    table: str | None = None


def _applied(p: dict[str, Any]) -> str:
    if p["applied"] is None:
        return "—"
    if not p["applied"]:
        return "no"
    added = sum(n["added"] for n in p["numstat"])
    deleted = sum(n["deleted"] for n in p["numstat"])
    return f"yes (+{added}/-{deleted})" if p["numstat"] else "yes"


def _rc(value: Any) -> str:
    return "—" if value is None else str(value)


def _arm_row(r: dict[str, Any]) -> tuple[str, ...]:
    note = []
    if r.get("expect"):
        met = "met" if r["expect"] == r["verdict"] else "UNMET"
        note.append(f"expect {r['expect']}: {met}")
    if r.get("signal") and r["signal"] not in str(r.get("reason") or ""):
        note.append(f"signal {r['signal']}")
    if r.get("reason"):
        note.append(str(r["reason"]))
    restored = {True: "yes", False: "NO", None: "—"}[r["restored"]]
    run_rc = ",".join(str(x) for x in r["run_rcs"]) if r["run_rcs"] else "—"
    compile_rc = _rc(r["compile_rc"])
    return (r["arm"], r["verdict"], _applied(r), compile_rc, run_rc, restored, "; ".join(note))


def arm_lines(records: tuple[dict[str, Any], ...]) -> list[str]:
    """The arms as a table, one row each, the note column left unpadded."""
    head = ("arm", "verdict", "applied", "compile_rc", "run_rc", "restored", "note")
    rows: list[tuple[str, ...]] = [head, *(_arm_row(r) for r in records)]
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    out = []
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(6)]
        out.append(("  " + "  ".join(cells) + "  " + row[6]).rstrip())
    return out


def _written(result: MutationRun) -> str:
    n = len(result.arms)
    if result.receipt is not None:
        return f"receipt: {n} mutation-arm record(s) written to {result.receipt}"
    rid = result.run["id"] if result.run else ""
    if result.how == "collected":
        extra = f" ({result.superseded} arm record(s) re-judged)" if result.superseded else ""
        return f"ledger: mutation-run {rid} appended to {result.ledger}{extra}"
    return f"ledger: {n} mutation-arm record(s) and mutation-run {rid} appended to {result.ledger}"


def _ending(result: MutationRun | Attribution, spec: str | None, table: str | None) -> list[str]:
    lines = [f"spec: {spec}: evidence table {table}"] if table else []
    lines += [f"FAIL {f}" for f in result.failures]
    lines.append("result: " + ("FAIL" if result.exit_code else "ok"))
    return lines


def _run_text(result: MutationRun, options: RenderOptions) -> str:
    lines = [f"plan {result.plan} at {result.base[:12]} ({len(result.arms)} arm(s), {result.how})"]
    lines += arm_lines(result.arms)
    lines.append(_written(result))
    lines += _ending(result, result.spec, result.table)
    return "\n".join(lines) + "\n"


def _run_json(result: MutationRun, options: RenderOptions) -> str:
    return _json({"run": result.run, "arms": list(result.arms)}, result)


def _json(head: dict[str, Any], result: MutationRun | Attribution) -> str:
    """``head``'s keys, then the failures and the exit code: both results' JSON."""
    payload = {**head, "failures": list(result.failures), "exit": result.exit_code}
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"


@dataclass(frozen=True)
class Attribution:
    """``attribute``: the attribution record appended to ``ledger``, the spec's evidence
    table (as in :class:`MutationRun`), the failures and the exit code."""

    record: dict[str, Any]
    ledger: str
    failures: tuple[str, ...]
    exit_code: int
    spec: str | None = None
    table: str | None = None


def _attribution_text(result: Attribution, options: RenderOptions) -> str:
    from tools import attribute  # the command loaded it already

    lines = attribute.describe(result.record)
    lines.append(f"ledger: attribution {result.record['id']} appended to {result.ledger}")
    lines += _ending(result, result.spec, result.table)
    return "\n".join(lines) + "\n"


def _attribution_json(result: Attribution, options: RenderOptions) -> str:
    return _json({"attribution": result.record}, result)


@dataclass(frozen=True)
class Recovered:
    """``mutate recover``: whether an in-place restore was pending, the files restored, the
    notices, the files in conflict (left as they are), and whether ``--discard`` dropped
    the recovery record."""

    pending: bool
    restored: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    conflicts: tuple[dict[str, Any], ...] = ()
    discarded: bool = False


def _recovered_text(result: Recovered, options: RenderOptions) -> str:
    if not result.pending:
        return "nothing pending\n"
    lines = [*result.notices, *(f"restored: {path}" for path in result.restored)]
    if result.conflicts:
        lines.append(
            f"{len(result.conflicts)} file(s) in conflict left as they are; the record stays "
            "until `tools mutate recover --discard`"
        )
    return "\n".join(lines) + "\n"


def _recovered_json(result: Recovered, options: RenderOptions) -> str:
    payload: dict[str, Any] = {"pending": result.pending, "restored": list(result.restored)}
    if result.pending:
        payload["notices"] = list(result.notices)
        payload["conflicts"] = list(result.conflicts)
        if result.discarded:
            payload["discarded"] = True
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"


register(ArmsMatrix, "json", _matrix_json)
register(MutationRun, "text", _run_text)
register(MutationRun, "json", _run_json)
register(Attribution, "text", _attribution_text)
register(Attribution, "json", _attribution_json)
register(Recovered, "text", _recovered_text)
register(Recovered, "json", _recovered_json)
