"""``tools index check|append|merge-driver`` and ``tools ledger verify|merge|show``.

The modules doing the work (git layer, config, table parser, ledger) load inside the commands,
so that registering these commands costs the CLI's start-up nothing (for speed, not to hide an
import circle).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from tools.cli.common import (
    REPORT,
    ResultType,
    append_ledger,
    command,
    emit,
    new_app,
    run_gates,
    show,
)
from tools.errors import Refused, UsageError
from tools.exits import EXIT_FAIL
from tools.fsio import write_atomic
from tools.options import Options

if TYPE_CHECKING:
    from tools.git import Git

NO_ROW = "—"  # also index_table.NO_ROW; repeated here for the option's help only


# -- shared helpers -----------------------------------------------------------------------------
def _repo_file(opts: Options, key: Literal["index", "ledger"]) -> tuple[Git, str, Path]:
    """The repository, the configured repo-relative path of ``key`` and its full path."""
    from tools.config import load_typed
    from tools.git import Git

    git = Git(opts.repo)
    cfg = load_typed(git.root, opts.config)
    rel = cfg.index.path if key == "index" else cfg.ledger.path
    return git, rel, git.worktree_path(rel)


def _one_line(value: str, what: str) -> str:
    value = value.strip()
    if not value:
        raise UsageError(f"{what} is empty", where=f"--{what}")
    if "\n" in value or "\r" in value:
        raise UsageError(f"{what} must be one line", where=f"--{what}")
    return value


# -- index --------------------------------------------------------------------------------------
def index_check(opts: Options) -> None:
    """Rows only appended at the tail; merges keep every row; no duplicates, no malformed
    lines; nothing both sides added since the merge base."""
    run_gates(opts, ["index"])


def index_append(
    opts: Options,
    issue: Annotated[int, typer.Option("--issue", help="Issue number N (the row's key).")],
    row: Annotated[str, typer.Option("--row", help=f"Row id, or {NO_ROW} for none.")],
    title: Annotated[str, typer.Option("--title", help="Title (pipes are escaped).")],
    kind: Annotated[str, typer.Option("--kind", help="Kind of the issue.")],
) -> None:
    """Append a well-formed row at the tail; refuse a duplicate issue number (exit 1)."""
    from tools import index_append, index_table
    from tools.cli.results.ledger import IndexAppended

    if issue < 1:
        raise UsageError("must be a positive issue number", where="--issue")
    row = row.strip()
    if row != index_table.NO_ROW and not index_table.ROW_ID.compiled.fullmatch(row):
        raise UsageError(
            f"{row!r} is not a row id",
            where="--row",
            expected=f"[A-Z0-9][A-Za-z0-9_.-]* or {index_table.NO_ROW}",
        )
    line = index_table.render_row(issue, row, _one_line(title, "title"), _one_line(kind, "kind"))
    git, rel, full = _repo_file(opts, "index")
    try:
        done = index_append.append(full, git.root, rel, issue, line)
    except Refused as exc:
        emit(f"refused: {exc}\n", err=True)
        raise typer.Exit(EXIT_FAIL) from None
    show(IndexAppended(rel, done.line_no, done.line), opts)


def index_merge_driver(
    base: Annotated[Path, typer.Argument(help="%O: the merge base's version.")],
    ours: Annotated[Path, typer.Argument(help="%A: ours; the result is written here.")],
    theirs: Annotated[Path, typer.Argument(help="%B: theirs.")],
) -> None:
    """The git merge driver `agent-index`: the ordered union of the three versions.

    Exit 1 (a conflict, marked in the file) when the same issue was added with different
    text on both sides.
    """
    from tools import file_reads, index_table
    from tools.git import decode, encode

    texts = []
    for path in (base, ours, theirs):
        texts.append(decode(file_reads.read_file(path, str(path))))
    merged, conflicts = index_table.merge3(*texts)
    write_atomic(ours, encode(merged))
    for conflict in conflicts:
        emit(f"agent-index: conflict: {conflict}\n", err=True)
    if conflicts:
        raise typer.Exit(EXIT_FAIL)


RequireAttestedOpt = Annotated[
    str | None,
    typer.Option(
        "--require-attested",
        metavar="KIND[,KIND…]",
        help="Every record of these kinds (mutation-arm, attribution) needs a valid "
        "attestation by an allowed principal.",
    ),
]
AllowedSignersOpt = Annotated[
    Path | None,
    typer.Option(
        "--allowed-signers", help="SSH allowed_signers file (config ledger.allowed_signers)."
    ),
]
RevokedSignersOpt = Annotated[
    Path | None,
    typer.Option("--revoked-signers", help="Revoked keys: a KRL or public keys (ssh-keygen -r)."),
]


def ledger_verify(
    opts: Options,
    require_attested: RequireAttestedOpt = None,
    allowed_signers: AllowedSignersOpt = None,
    revoked_signers: RevokedSignersOpt = None,
) -> None:
    """Every line a record, every id recomputes, no id twice, nothing of the base removed;
    with --require-attested, every record of those kinds vouched for (SPEC §11)."""
    if require_attested is None:
        if allowed_signers is not None or revoked_signers is not None:
            raise UsageError("is read only with --require-attested", where="--allowed-signers")
        run_gates(opts, ["ledger"])
        return
    from tools.cli.evidence import verify_attested

    verify_attested(opts, require_attested, allowed_signers, revoked_signers)


def ledger_merge(
    opts: Options,
    files: Annotated[list[Path], typer.Argument(help="Receipt files: a record or a list.")],
) -> None:
    """Append receipts (from other machines) in order of created, then id; skip records
    already present. If any record fails verification nothing is written (exit 1)."""
    from tools import ledger
    from tools.cli.results.ledger import LedgerMerged

    git, rel, full = _repo_file(opts, "ledger")
    records: list[dict[str, Any]] = []
    failed = []
    for path in files:
        for i, record in enumerate(_read_receipt(path)):
            problem = ledger.verify_record(record)
            if problem:
                failed.append(f"{path} record {i}: {problem}")
            else:
                records.append(record)
    if failed:
        for line in failed:
            emit(f"FAIL {line}\n", err=True)
        show(LedgerMerged(rel, failed=len(failed)), opts, exit_code=EXIT_FAIL)
        return
    records.sort(key=lambda r: (r["created"], r["id"]))
    written = append_ledger(git.root, full, rel, records)
    skipped = len({r["id"] for r in records}) - len(written)
    show(LedgerMerged(rel, merged=len(written), present=skipped), opts)


KindOpt = Annotated[str | None, typer.Option("--kind", help="Only records of this kind.")]
IdOpt = Annotated[
    str | None, typer.Option("--id", help="Only this record (an id or a unique prefix).")
]


AttestedOpt = Annotated[
    bool | None,
    typer.Option(
        "--attested/--unattested",
        help="Only records with (without) an attestation (valid by ledger.allowed_signers).",
    ),
]


def ledger_show(
    opts: Options, kind: KindOpt = None, rid: IdOpt = None, attested: AttestedOpt = None
) -> None:
    """List records: id, created, kind (json: the records themselves)."""
    from tools.cli.results.ledger import LedgerShown

    git, rel, full = _repo_file(opts, "ledger")
    if full.is_dir():
        raise UsageError("is a directory, expected the ledger file", where=rel)
    shown = _selected_records(full, rel, kind, rid)
    if attested is not None:
        from tools.replay.show import attested_only

        shown = attested_only(git.root, opts.config, full, shown, want=attested)
    if rid is not None and len({r["id"] for r in shown}) > 1:
        raise UsageError(f"{rid!r} matches {len(shown)} records; give more of the id", where="--id")
    if rid is not None and not shown:
        raise UsageError(f"no record {rid!r} in {rel}", where="--id")
    show(LedgerShown(tuple(shown), one=rid is not None), opts)


def _selected_records(
    full: Path, rel: str, kind: str | None, rid: str | None
) -> list[dict[str, Any]]:
    """The ledger's records of ``kind`` whose id starts with ``rid`` (each given one); lines
    that are no records are counted in one warning."""
    from tools import ledger

    shown: list[dict[str, Any]] = []
    bad = 0
    for _, item in ledger.read_records(full):
        if isinstance(item, ledger.LineError):
            bad += 1
            continue
        if kind is not None and item["kind"] != kind:
            continue
        if rid is not None and not item["id"].startswith(rid.lower()):
            continue
        shown.append(item)
    if bad:
        emit(
            f"warning: {bad} line(s) of {rel} are not records; see `tools ledger verify`\n",
            err=True,
        )
    return shown


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True, staged=True, range_=True)
    index = new_app("The append-only issue index (.agents/issue-index.md).")
    index.command("check")(gate(index_check))
    results = "tools.cli.results.ledger"
    index.command("append")(command(formats=ResultType(results, "IndexAppended"))(index_append))
    index.command("merge-driver")(index_merge_driver)
    app.add_typer(index, name="index")
    led = new_app("The evidence ledger (.agents/ledger.jsonl).")
    led.command("verify")(gate(ledger_verify))
    led.command("merge")(command(formats=ResultType(results, "LedgerMerged"))(ledger_merge))
    led.command("show")(command(formats=ResultType(results, "LedgerShown"))(ledger_show))
    app.add_typer(led, name="ledger")


def _read_receipt(path: Path) -> list[Any]:
    """The records of one receipt file: a JSON object, or a JSON list of them."""
    from tools import file_reads, ledger
    from tools.bounded import check_json

    try:
        text = file_reads.read_file(path, str(path)).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 (byte {exc.start})", where=str(path)) from None
    check_json(text, str(path))  # nesting and node count, before anything is built
    try:
        data = ledger.strict_loads(text)
    except ValueError as exc:
        raise UsageError(
            f"not JSON: {' '.join(str(exc).split())}",
            where=str(path),
            expected="a record object or a list of them",
        ) from None
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        return data
    raise UsageError(
        f"a JSON {type(data).__name__}", where=str(path), expected="a record object or a list"
    )
