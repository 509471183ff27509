"""``tools baseline write|show``: the findings baseline (SPEC §3.3, docs/adoption.md).

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import TEXT_JSON, command, emit, new_app
from tools.errors import UsageError
from tools.fsio import refuse_links
from tools.options import Options

if TYPE_CHECKING:
    from tools.context import Context
    from tools.findings_baseline import Entry

GateOpt = Annotated[
    list[str] | None,
    typer.Option("--gate", help="Only this gate's entries (repeatable; default: every one)."),
]


def current_entries(ctx: Context, names: list[str]) -> list[Entry]:
    """The findings the named gates report now that the baseline may record, as entries
    (after the configured severities: a rule turned off records nothing)."""
    from tools import findings_baseline as fb
    from tools import gates, severities
    from tools.gates.baseline import judged_content
    from tools.report import Report

    report = Report([gates.run(name, ctx) for name in names])
    severities.apply(report, ctx.config)
    out: list[Entry] = []
    for gate in report.gates:
        candidates = [f for f in gate.findings if fb.eligible(gate.gate, f)]
        for finding, fingerprint in fb.fingerprints(
            gate.gate, candidates, lambda p: judged_content(ctx, p)
        ):
            out.append(
                fb.Entry(gate.gate, finding.rule, finding.path or "", fingerprint, finding.message)
            )
    return out


def selected_gates(ctx: Context, wanted: list[str] | None) -> list[str]:
    """The configured gates the baseline covers, narrowed to ``--gate``."""
    from tools import findings_baseline as fb

    for name in wanted or []:
        if name not in fb.GATES:
            raise UsageError(
                f"--gate {name!r}: the findings baseline covers the content gates but conflicts",
                expected="one of " + ", ".join(fb.GATES),
            )
    configured = [g for g in fb.GATES if g in ctx.config.preflight.gates]
    return [g for g in configured if not wanted or g in wanted]


def write(opts: Options, wanted: list[str] | None, *, add: bool) -> dict[str, Any]:
    """Rewrite the baseline: entries of the selected gates that match nothing any more go;
    with ``add``, today's findings not yet recorded come in (the only way it ever grows).
    Returns what was done."""
    from tools import findings_baseline as fb
    from tools.context import Context
    from tools.fsio import write_atomic
    from tools.gates import inplace_pending

    ctx = Context(opts)
    if inplace_pending.run(ctx.git) is not None:
        raise UsageError(
            "an in-place mutation run's restore is pending: the tree may hold a mutant, whose "
            "findings are no debt; run `tools mutate recover` first"
        )
    names = selected_gates(ctx, wanted)
    path = ctx.git.worktree_path(fb.PATH)
    refuse_links(path, ctx.root)  # neither read nor written through a link
    raw = path.read_bytes() if path.is_file() else None
    before = fb.parse(raw, fb.PATH) if raw is not None else None
    if before is None and not add:
        return {"path": fb.PATH, "written": False, "exists": False, "entries": [], "removed": []}
    now = current_entries(ctx, names)
    now_keys = {(e.gate, e.fingerprint) for e in now}
    old = before or []
    old_keys = {(e.gate, e.fingerprint) for e in old}
    kept = [e for e in old if e.gate not in names or (e.gate, e.fingerprint) in now_keys]
    removed = [e for e in old if e not in kept]
    added = [e for e in now if (e.gate, e.fingerprint) not in old_keys] if add else []
    entries = kept + added
    data = fb.render(entries)
    written = raw != data
    if written:
        write_atomic(path, data, root=ctx.root)
    return {
        "path": fb.PATH,
        "written": written,
        "exists": True,
        "entries": entries,
        "removed": removed,
        "added": added,
        "gates": names,
    }


def _per_rule(entries: list[Entry]) -> str:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.rule] = counts.get(e.rule, 0) + 1
    return ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items())) or "none"


def _say_written(opts: Options, done: dict[str, Any]) -> None:
    entries: list[Entry] = done["entries"]
    if opts.fmt == "json":
        out = {
            "schema": "tools.baseline-write/1",
            "path": done["path"],
            "written": done["written"],
            "entries": len(entries),
            "added": [e.to_json() for e in done.get("added", [])],
            "removed": [e.to_json() for e in done["removed"]],
        }
        emit(json.dumps(out, ensure_ascii=False) + "\n")
        return
    if not done["exists"]:
        emit(
            f"no findings baseline ({done['path']}): nothing written; "
            "`tools baseline write --add` records today's findings as debt\n"
        )
        return
    lines = [f"  removed {e.gate}/{e.rule} {e.path}: {e.message}" for e in done["removed"]]
    lines += [f"  added   {e.gate}/{e.rule} {e.path}: {e.message}" for e in done.get("added", [])]
    verb = "wrote" if done["written"] else "unchanged"
    lines.append(
        f"{verb} {done['path']}: {len(entries)} entries "
        f"({len(done.get('added', []))} added, {len(done['removed'])} removed); "
        f"debt per rule: {_per_rule(entries)}"
    )
    emit("\n".join(lines) + "\n")


def baseline_show(opts: Options) -> None:
    """List the recorded debt: each entry, then the count per rule."""
    from tools import findings_baseline as fb
    from tools.git import Git

    git = Git(opts.repo)
    path = git.worktree_path(fb.PATH)
    refuse_links(path, git.root)
    entries = fb.parse(path.read_bytes(), fb.PATH) if path.is_file() else None
    if opts.fmt == "json":
        emit(
            json.dumps(
                {
                    "schema": "tools.baseline-show/1",
                    "path": fb.PATH,
                    "exists": entries is not None,
                    "findings": [e.to_json() for e in entries or []],
                },
                ensure_ascii=False,
            )
            + "\n"
        )
        return
    if entries is None:
        emit(f"no findings baseline ({fb.PATH})\n")
        return
    lines = [f"{e.gate}/{e.rule} {e.path}: {e.message}" for e in entries]
    lines.append(f"{len(entries)} entries in {fb.PATH}; per rule: {_per_rule(entries)}")
    emit("\n".join(lines) + "\n")


AddOpt = Annotated[
    bool, typer.Option("--add", help="Also record today's findings that are not yet debt.")
]


def baseline_write(opts: Options, gate: GateOpt = None, add: AddOpt = False) -> None:
    """Remove the entries that match no finding any more (only ever removes, unless --add
    records today's new findings too; --add also creates a missing baseline)."""
    _say_written(opts, write(opts, gate, add=add))


def register(app: typer.Typer) -> None:
    group = new_app("The findings baseline: today's findings recorded as debt (SPEC §3.3).")
    group.command("write")(command(formats=TEXT_JSON)(baseline_write))
    group.command("show")(command(formats=TEXT_JSON)(baseline_show))
    app.add_typer(group, name="baseline")
