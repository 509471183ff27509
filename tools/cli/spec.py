"""``tools spec check`` and ``tools spec render SPEC --id ID`` (SPEC §4.8).

The evidence renderer and the ledger reading load inside the commands, so that registering
them costs the CLI's start-up nothing (for speed, not to hide an import circle).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import REPORT, ResultType, command, emit, new_app, run_gates, show
from tools.errors import UsageError
from tools.options import Options

if TYPE_CHECKING:
    from tools.git import Git

_HEX = frozenset("0123456789abcdef")


def spec_path(git: Git, given: Path) -> tuple[str, Path]:
    """The repo-relative path and the full path of the spec the user named. A relative path
    is taken from the current directory when that lies inside the repository, else from the
    repository's top (as with ``--repo R``). The file must exist inside the repository's
    working tree (links resolved), outside ``.git``."""
    root = git.root
    if given.is_absolute():
        candidate = given
    else:
        cwd = Path.cwd().resolve()
        inside = cwd == root or root in cwd.parents
        candidate = (cwd if inside else root) / given
    full = candidate.resolve()
    try:
        rel = full.relative_to(root)
    except ValueError:
        raise UsageError(
            f"{given} is outside the repository ({root})",
            where="SPEC",
            expected="a spec file inside the repository",
        ) from None
    if not rel.parts or rel.parts[0] == ".git" or git.git_dir in (full, *full.parents):
        raise UsageError(f"{given} is not a spec file of the working tree", where="SPEC")
    if not full.is_file():
        what = "a directory" if full.is_dir() else "no such file"
        raise UsageError(f"{given}: {what}", where="SPEC", expected="a markdown spec file")
    return rel.as_posix(), full


def _find_record(ledger_file: Path, rel: str, wanted: str) -> dict[str, Any]:
    """The one record whose id is ``wanted`` or starts with it (exit 2 when none or several)."""
    from tools import evidence, file_reads, ledger

    where = rel
    prefix = wanted.strip().lower()
    if not prefix or not set(prefix) <= _HEX or len(prefix) > 64:
        raise UsageError(f"{wanted!r} is not a record id", where="--id", expected="hex digits")
    found: dict[str, dict[str, Any]] = {}
    stream = file_reads.open_stream(ledger_file, where)
    if stream is not None:
        with stream as handle:
            for raw in file_reads.lines(handle, where):
                if b'"id":"' in raw and not any(
                    c.startswith(prefix) for c in evidence.candidate_ids(raw)
                ):
                    continue
                parsed = ledger.parse_line(raw)
                if isinstance(parsed, dict) and parsed["id"].startswith(prefix):
                    found.setdefault(parsed["id"], parsed)
    if not found:
        raise UsageError(f"no record {wanted!r} in the ledger", where=rel)
    if len(found) > 1:
        raise UsageError(
            f"{wanted!r} matches {len(found)} records; give more of the id", where="--id"
        )
    record = next(iter(found.values()))
    problem = ledger.verify_record(record)
    if problem:
        raise UsageError(
            f"record {record['id'][:12]}… does not verify ({problem}); see `tools ledger verify`",
            where=rel,
        )
    return record


def spec_check(opts: Options) -> None:
    """Every spec has Owed and Now; Owed cites only indexed issues; every evidence block
    re-renders byte for byte from the ledger record it names."""
    run_gates(opts, ["spec"])


def _arm_records(ledger_file: Path, record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record, and for a run record the records of the arms it names (by id)."""
    from tools import evidence, file_reads

    arms = record.get("arms") if record.get("kind") == evidence.RUN_KIND else None
    wanted = {a for a in arms if isinstance(a, str)} if isinstance(arms, list) else set()
    records: dict[str, dict[str, Any]] = {record["id"]: record}
    stream = file_reads.open_stream(ledger_file, str(ledger_file)) if wanted else None
    if stream is not None:
        with stream as handle:
            records.update(
                evidence.collect_records(file_reads.lines(handle, str(ledger_file)), wanted)
            )
    return records


def spec_render(
    opts: Options,
    path: Annotated[Path, typer.Argument(metavar="SPEC", help="The spec file to write.")],
    rid: Annotated[str, typer.Option("--id", help="The ledger record (an id or a unique prefix).")],
) -> None:
    """Write or refresh the evidence block of a ledger record in the spec's Now section
    (one block per plan; a second run changes no byte)."""
    from tools import evidence, file_reads
    from tools.cli.results.spec import SpecRendered
    from tools.config import load_typed
    from tools.fsio import write_atomic
    from tools.git import Git, decode, encode
    from tools.replay.vouched import for_tree

    git = Git(opts.repo)
    cfg = load_typed(git.root, opts.config)
    rel, full = spec_path(git, path)
    ledger_rel = cfg.ledger.path
    ledger_file = git.worktree_path(ledger_rel)
    if ledger_file.is_dir():
        raise UsageError("is a directory, expected the ledger file", where=ledger_rel)
    record = _find_record(ledger_file, ledger_rel, rid)
    records = _arm_records(ledger_file, record)
    text = decode(file_reads.read_file(full, rel, root=git.root))
    vouched = for_tree(
        git.root, ledger_file, cfg.ledger.allowed_signers, cfg.ledger.revoked_signers, records
    )
    new_text = evidence.render_into(text, record, records.get, where=rel, vouched=vouched)
    done = SpecRendered(rel, str(record["plan"]), record["kind"], record["id"], changed=True)
    named = record.get("spec")
    if isinstance(named, str) and named != rel:
        emit(f"note: record {record['id'][:12]}… names spec {named}, not {rel}\n", err=True)
    if new_text == text:
        show(replace(done, changed=False), opts)
        return
    try:
        write_atomic(full, encode(new_text), root=git.root)
    except OSError as exc:
        raise UsageError(f"cannot write: {exc.strerror}", where=rel) from None
    show(done, opts)


def register(app: typer.Typer) -> None:
    spec = new_app("Specs: Owed/Now sections and ledger-backed evidence tables.")
    spec.command("check")(command(formats=REPORT, check=True, staged=True)(spec_check))
    rendered = ResultType("tools.cli.results.spec", "SpecRendered")
    spec.command("render")(command(formats=rendered)(spec_render))
    app.add_typer(spec, name="spec")
