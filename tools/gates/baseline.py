"""The ``baseline`` pseudo-gate: findings matched against the findings baseline (SPEC §3.3).

After the gates of a run, each finding the baseline may cover is looked up: a recorded one is
debt (severity ``warning``, message prefixed ``debt:``, ``baseline_state: unchanged``), any
other is ``new`` and keeps its severity. An entry of a gate that judged in this run and that
matches nothing any more is ``baseline-stale``: the change that fixed it also removes it
(``tools baseline write``). The pseudo-gate is reported whenever a baseline exists, its stats
counting the debt per rule, so the debt is visible on every run.

Under ``--config-from base`` a finding is debt only if the merge base's baseline records it
too: a pull request cannot add its own findings to the baseline that judges it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools import findings_baseline as fb
from tools.appendonly import read_now
from tools.errors import UsageError
from tools.fsio import refuse_links
from tools.gate_registry import PROTECTED
from tools.report import GateResult, Report, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "baseline"
BASELINE_STALE = Rule(
    "baseline-stale",
    "error",
    "a findings-baseline entry matches no finding any more: remove it in this change",
    example=(
        "links/anchor-missing in docs/guide.md no longer fires (it said: "
        "'#installing': no heading of docs/guide.md has the anchor #installing); "
        "remove its entry in this change with `tools baseline write`"
    ),
    fix=(
        "The debt was paid: run `tools baseline write` (it only removes entries that "
        "match nothing any more) and commit the smaller "
        "`.agents/baselines/findings.json` with the fix, so the baseline stays tight "
        "and a later regression of the same kind is new, not debt."
    ),
)

RULES = declare(NAME, [BASELINE_STALE])


def judged_content(ctx: Context, path: str) -> bytes | None:
    """A path's content as the gates judged it (the ratchet's ``--rev`` tree, the staged blob,
    the ``--head`` blob, else the working tree)."""
    rev = ctx.opts.ratchet.rev if ctx.opts.ratchet else None
    if rev:
        sha = ctx.git.resolve(rev)
        return ctx.git.blob(sha, path) if sha else None
    try:
        return read_now(ctx, path)
    except UsageError:  # a path that cannot be read gives an empty line text, not a verdict
        return None


def selected_gates(ctx: Context, wanted: list[str] | None) -> list[str]:
    """The configured gates the baseline covers, narrowed to ``wanted`` (``--gate``)."""
    for name in wanted or []:
        if name not in fb.GATES:
            raise UsageError(
                f"--gate {name!r}: the findings baseline covers the content gates but conflicts",
                expected="one of " + ", ".join(fb.GATES),
            )
    configured = [g for g in fb.GATES if g in ctx.config.preflight.gates]
    return [g for g in configured if not wanted or g in wanted]


def entries(report: Report, ctx: Context) -> list[fb.Entry]:
    """The findings of ``report`` (severities already applied: a rule turned off holds
    none) that the baseline may record, as entries."""
    out: list[fb.Entry] = []
    for gate in report.gates:
        candidates = [f for f in gate.findings if fb.eligible(gate.gate, f)]
        for finding, fingerprint in fb.fingerprints(
            gate.gate, candidates, lambda p: judged_content(ctx, p)
        ):
            out.append(
                fb.Entry(gate.gate, finding.rule, finding.path or "", fingerprint, finding.message)
            )
    return out


def load(ctx: Context) -> tuple[list[fb.Entry] | None, set[tuple[str, str]] | None]:
    """The judged tree's entries (None: no baseline) and, under ``--config-from base``, the
    merge base's entry keys (None: not read from the base)."""
    rev = ctx.opts.ratchet.rev if ctx.opts.ratchet else None
    if rev:  # `ratchet check --rev`: the baseline of the tree it counts
        sha = ctx.git.resolve(rev)
        raw = ctx.git.blob(sha, fb.PATH) if sha else None
    else:
        if not ctx.opts.staged and not ctx.opts.head:
            # The working tree's copy: never read through a link (it may leave the repository).
            refuse_links(ctx.git.worktree_path(fb.PATH), ctx.root)
        raw = read_now(ctx, fb.PATH)
    head = fb.parse(raw, fb.PATH) if raw is not None else None
    base: set[tuple[str, str]] | None = None
    if ctx.config_rev is not None:
        base_raw = ctx.git.blob(ctx.config_rev, fb.PATH)
        where = f"{ctx.config_rev[:12]}:{fb.PATH}"
        base = {(e.gate, e.fingerprint) for e in fb.parse(base_raw, where)} if base_raw else set()
    return head, base


def apply(report: Report, ctx: Context) -> None:
    """Mark debt and new findings on ``report`` and append the pseudo-gate's result (only when
    a baseline exists)."""
    if not any(g.gate in fb.GATES for g in report.gates):
        return  # no gate the baseline covers ran (the message hooks, a bare repository)
    head, base = load(ctx)
    if head is None and not base:
        return
    entries = head or []
    recorded = {(e.gate, e.fingerprint) for e in entries}
    allowed = recorded if base is None else recorded & base
    turned_off = {rule for rule, level in ctx.config.rules.items() if level == "off"}
    current: set[tuple[str, str]] = set()
    judged: set[str] = set()
    debt: dict[str, int] = {}
    new = 0
    for gate in report.gates:
        if gate.gate not in fb.GATES:
            continue
        if gate.skip_reason is None:
            judged.add(gate.gate)
        candidates = [f for f in gate.findings if fb.eligible(gate.gate, f)]
        for finding, fingerprint in fb.fingerprints(
            gate.gate, candidates, lambda p: judged_content(ctx, p)
        ):
            key = (gate.gate, fingerprint)
            current.add(key)
            if key in allowed:
                finding.severity = "warning"
                finding.message = "debt: " + finding.message
                finding.baseline_state = "unchanged"
                debt[finding.rule] = debt.get(finding.rule, 0) + 1
            else:
                finding.baseline_state = "new"
                new += 1
    if not judged:
        return  # no gate the baseline covers judged: nothing to say (the message hooks)
    result = GateResult(NAME)
    stale = [
        e
        for e in entries
        if e.gate in judged and e.rule not in turned_off and (e.gate, e.fingerprint) not in current
    ]
    for entry in stale:
        where = f" in {entry.path}" if entry.path else ""
        why = (
            "is protected: debt never covers it, so the entry covers nothing"
            if entry.rule in PROTECTED
            else "no longer fires"
        )
        result.add(
            BASELINE_STALE.id,
            f"{entry.gate}/{entry.rule}{where} {why} (it said: {entry.message}); "
            "remove its entry in this change with `tools baseline write`",
            path=fb.PATH,
        )
    stats: dict[str, Any] = {"entries": len(entries), "debt": debt, "new": new}
    if base is not None:
        stats["base_entries"] = len(base)
    result.stats.update(stats)
    report.gates.append(result)
