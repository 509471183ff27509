"""``tools baseline write|show``: the findings baseline (SPEC §3.3, docs/adoption.md).

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from tools import file_reads
from tools.cli.common import ResultType, command, new_app, show
from tools.errors import UsageError
from tools.fsio import refuse_links
from tools.options import Options

if TYPE_CHECKING:
    from tools.cli.results.baseline import BaselineWritten

GateOpt = Annotated[
    list[str] | None,
    typer.Option("--gate", help="Only this gate's entries (repeatable; default: every one)."),
]


def write(opts: Options, wanted: list[str] | None, *, add: bool) -> BaselineWritten:
    """Rewrite the baseline: entries of the selected gates that match nothing any more go;
    with ``add``, today's findings not yet recorded come in (the only way it ever grows).
    Where no baseline exists yet it is created from today's findings: there is nothing to
    shrink from (SPEC §3.3). Returns what was done."""
    from tools import findings_baseline as fb
    from tools.cli.results.baseline import BaselineWritten
    from tools.context import Context
    from tools.fsio import write_atomic
    from tools.gates import baseline, baseline_entries, inplace_pending

    ctx = Context(opts)
    if inplace_pending.run(ctx.git) is not None:
        raise UsageError(
            "an in-place mutation run's restore is pending: the tree may hold a mutant, whose "
            "findings are no debt; run `tools mutate recover` first"
        )
    names = baseline.selected_gates(ctx, wanted)
    path = ctx.git.worktree_path(fb.PATH)
    refuse_links(path, ctx.root)  # neither read nor written through a link
    raw = file_reads.read_optional(path, fb.PATH, root=ctx.root)
    before = fb.parse(raw, fb.PATH) if raw is not None else None
    now = baseline_entries(names, ctx)
    now_keys = {(e.gate, e.fingerprint) for e in now}
    old = before or []
    old_keys = {(e.gate, e.fingerprint) for e in old}
    kept = [e for e in old if e.gate not in names or (e.gate, e.fingerprint) in now_keys]
    removed = [e for e in old if e not in kept]
    grows = add or before is None
    added = [e for e in now if (e.gate, e.fingerprint) not in old_keys] if grows else []
    entries = kept + added
    data = fb.render(entries)
    written = raw != data
    if written:
        write_atomic(path, data, root=ctx.root)
    return BaselineWritten(
        fb.PATH,
        exists=True,
        written=written,
        entries=tuple(entries),
        added=tuple(added),
        removed=tuple(removed),
    )


def baseline_show(opts: Options) -> None:
    """List the recorded debt: each entry, then the count per rule."""
    from tools import findings_baseline as fb
    from tools.cli.results.baseline import BaselineShown
    from tools.git import Git

    git = Git(opts.repo)
    path = git.worktree_path(fb.PATH)
    refuse_links(path, git.root)
    raw = file_reads.read_optional(path, fb.PATH, root=git.root)
    entries = fb.parse(raw, fb.PATH) if raw is not None else None
    show(BaselineShown(fb.PATH, None if entries is None else tuple(entries)), opts)


AddOpt = Annotated[
    bool, typer.Option("--add", help="Also record today's findings that are not yet debt.")
]


def baseline_write(opts: Options, gate: GateOpt = None, add: AddOpt = False) -> None:
    """Remove the entries that match no finding any more (only ever removes, unless --add
    records today's new findings too); where there is no baseline yet, create it from today's
    findings."""
    show(write(opts, gate, add=add), opts)


def register(app: typer.Typer) -> None:
    group = new_app("The findings baseline: today's findings recorded as debt (SPEC §3.3).")
    results = "tools.cli.results.baseline"
    group.command("write")(command(formats=ResultType(results, "BaselineWritten"))(baseline_write))
    group.command("show")(command(formats=ResultType(results, "BaselineShown"))(baseline_show))
    app.add_typer(group, name="baseline")
