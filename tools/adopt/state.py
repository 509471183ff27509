"""The state ``tools init --adopt`` leaves: ratchet baselines at today's counts and a findings
baseline of today's content findings, so that today's tree is green and the next violation is
not (SPEC §9.2). Nothing that exists is overwritten without ``force``."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tools import findings_baseline as fb
from tools.fsio import write_atomic

if TYPE_CHECKING:
    from tools.context import Context

KEPT = "kept (differs; --force to overwrite)"


@dataclass
class Step:
    """One file the adoption wrote or kept, and what it now records."""

    verb: str  # wrote | unchanged | kept (…)
    what: str
    detail: str = ""
    debt: Counter[str] = field(default_factory=Counter)


def _write(ctx: Context, path: str, data: bytes, *, force: bool) -> str:
    full = ctx.git.worktree_path(path)
    if full.is_file() and not full.is_symlink():
        if full.read_bytes() == data:
            return "unchanged"
        if not force:
            return KEPT
    write_atomic(full, data, root=ctx.root)
    return "wrote"


def ratchet_baselines(ctx: Context, *, force: bool) -> list[Step]:
    """Each configured ratchet's baseline at the working tree's counts (a ratchet whose
    detector is unarmed gets none: its counts cannot be trusted, and the gate says why)."""
    from tools.ratchets import baseline as baseline_mod
    from tools.ratchets import engine
    from tools.ratchets.tree import Tree

    ratchets = engine.load(ctx.config, ctx.config_source, None)
    if not ratchets:
        return []
    counts, _ = engine.count(Tree(ctx.git), ratchets, ctx.config.index.path)
    steps = []
    for r in ratchets:
        if engine.unarmed(r):
            steps.append(Step("skipped", r.baseline, f"{r.name}: its detector is unarmed"))
            continue
        now = dict(counts[r.name].counts)
        verb = _write(ctx, r.baseline, baseline_mod.render(r.name, now), force=force)
        listed = ", ".join(f"{b} {n}" for b, n in now.items())
        steps.append(Step(verb, r.baseline, f"{r.name}: {listed}"))
    return steps


def findings_baseline(ctx: Context, *, force: bool) -> Step:
    """The findings baseline of today's content findings (SPEC §3.3)."""
    from tools.gates import baseline, baseline_entries

    entries = baseline_entries(baseline.selected_gates(ctx, None), ctx)
    verb = _write(ctx, fb.PATH, fb.render(entries), force=force)
    debt = Counter(e.rule for e in entries)
    return Step(verb, fb.PATH, f"{len(entries)} finding(s) recorded as debt", debt)


def config_text(starter: str, trailers: dict[str, object]) -> str:
    """The starter config with the detected trailer conventions written under ``trailers:``
    (values as JSON, which YAML reads as written). No count goes in: the file stays the same
    when the history grows and the decisions do not change."""
    lines = ["  # Detected by `tools init --adopt` from the repository's last commits."]
    for key, value in trailers.items():
        if isinstance(value, dict):
            if not value:
                lines.append(f"  {key}: {{}}")
                continue
            lines.append(f"  {key}:")
            lines += [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
        else:
            lines.append(f"  {key}: {json.dumps(value)}")
    head, sep, tail = starter.partition("\ntrailers:\n")
    if not sep:
        return starter + "\ntrailers:\n" + "\n".join(lines) + "\n"
    return head + sep + "\n".join(lines) + "\n" + tail
