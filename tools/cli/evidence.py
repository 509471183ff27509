"""``tools evidence replay|sign`` and the attested half of ``tools ledger verify`` (SPEC §11).

The work is in :mod:`tools.replay`; here are the options, the interrupt edge, the ledger
appends and the one report. Everything heavy loads inside the commands (start-up speed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli.common import REPORT, ResultType, command, emit, finish, new_app
from tools.errors import UsageError
from tools.options import Options

if TYPE_CHECKING:
    from tools.context import Context
    from tools.replay.replay import Outcome
    from tools.report import GateResult

IdsOpt = Annotated[
    list[str] | None,
    typer.Option("--id", help="Replay this record (an id or a unique prefix; repeatable)."),
]
JobsOpt = Annotated[int, typer.Option("-j", "--jobs", min=1, help="Arms run at once (worktrees).")]
StatementDirOpt = Annotated[
    Path | None,
    typer.Option("--statement-dir", help="Write each reproduced record's in-toto statement here."),
]
AppendOpt = Annotated[
    bool,
    typer.Option("--append", help="Append an evidence-replay record per replay to the ledger."),
]
ReceiptOpt = Annotated[
    Path | None,
    typer.Option("--receipt", help="Write the attestation records to this file, not the ledger."),
]
KeyOpt = Annotated[
    Path, typer.Option("--key", help="The SSH private key that signs (read from this path only).")
]


def _append(ctx: Context, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append ``records`` to the configured ledger (locked, atomic); notices on stderr."""
    from tools import ledger

    rel = ctx.config.ledger.path
    try:
        written = ledger.append_records(ctx.git.worktree_path(rel), records, root=ctx.git.root)
    except OSError as exc:
        raise UsageError(f"cannot append: {exc.strerror}", where=rel) from None
    for notice in getattr(written, "notices", []):
        emit(f"notice: {notice}\n", err=True)
    return written


def _replay(opts: Options, ids: list[str], jobs: int) -> tuple[Context, GateResult, list[Outcome]]:
    """Replay the range's added records (or ``ids``) under the mutation runner's interrupt
    handling: an interrupt removes every worktree and records nothing."""
    from tools.context import Context
    from tools.mutate import worktree
    from tools.mutate.proc import Interrupted, Registry, exit_status, interrupts, journal
    from tools.mutate.runner import Progress
    from tools.replay import findings
    from tools.replay.replay import Replayer

    ctx = Context(opts)
    git = ctx.git
    for notice in worktree.sweep(git.root, git.tools_dir()):
        emit(f"notice: {notice}\n", err=True)
    replayer = Replayer(
        git,
        Registry(kill_grace_s=ctx.config.mutate.kill_grace_s),
        Progress(sys.stderr),
        jobs=jobs,
        ledger_path=git.worktree_path(ctx.config.ledger.path),
        note=lambda line: emit(f"replay: {line}\n", err=True),
    )
    try:
        with interrupts(), journal(git.tools_dir()):
            result, outcomes = findings.replay(ctx, ids, replayer)
    except (KeyboardInterrupt, Interrupted) as exc:
        emit("interrupted: every worktree removed; nothing recorded\n", err=True)
        raise typer.Exit(exit_status(exc)) from None
    return ctx, result, outcomes


def _statements(ctx: Context, folder: Path | None, outcomes: list[Outcome]) -> None:
    if folder is None:
        return
    from tools.fsio import refuse_links
    from tools.replay import findings

    full = folder if folder.is_absolute() else Path.cwd() / folder
    refuse_links(full, ctx.git.root)
    try:
        written = findings.write_statements(full, outcomes, root=ctx.git.root)
    except OSError as exc:
        raise UsageError(
            f"cannot write: {exc.strerror}", where=f"--statement-dir {folder}"
        ) from None
    emit(f"statements: {len(written) // 3} written to {folder}\n", err=True)


def _finish(ctx: Context, results: list[GateResult], opts: Options) -> None:
    from tools import gates

    finish(gates.judged(ctx, results), opts)


def evidence_replay(
    opts: Options,
    ids: IdsOpt = None,
    jobs: JobsOpt = 1,
    statement_dir: StatementDirOpt = None,
    append: AppendOpt = False,
) -> None:
    """Re-run the mutation-arm and attribution records the range adds to the ledger (or the
    named ones) at their recorded commits, and compare what they claim with what is seen."""
    ctx, result, outcomes = _replay(opts, list(ids or []), jobs)
    _statements(ctx, statement_dir, outcomes)
    if append and outcomes:
        from tools.replay import findings

        written = _append(ctx, findings.replay_records(outcomes))
        result.stats["appended"] = len(written)
    _finish(ctx, [result], opts)


def evidence_sign(
    opts: Options,
    key: KeyOpt,
    ids: IdsOpt = None,
    jobs: JobsOpt = 1,
    statement_dir: StatementDirOpt = None,
    receipt: ReceiptOpt = None,
) -> None:
    """Replay as `evidence replay` does and sign each reproduced record's statement (a DSSE
    envelope, SSH-signed) into an attestation record; nothing else is ever signed."""
    from tools.git import Git
    from tools.replay import attestations, findings, signers, sshsig
    from tools.replay.replay import REPRODUCED

    key_file = signers.signing_key(key, Git(opts.repo).root)
    try:
        keyid = sshsig.fingerprint(key_file)
    except sshsig.SshError as exc:
        raise UsageError(str(exc), where=f"--key {key}") from None
    ctx, result, outcomes = _replay(opts, list(ids or []), jobs)
    _statements(ctx, statement_dir, outcomes)
    try:
        made = [
            attestations.make(findings.statement_of(o), key_file, keyid)
            for o in outcomes
            if o.status == REPRODUCED
        ]
    except sshsig.SshError as exc:
        raise UsageError(str(exc), where=f"--key {key}") from None
    if receipt is not None:
        from tools.mutate.receipts import write_receipt

        full = receipt if receipt.is_absolute() else Path.cwd() / receipt
        write_receipt(full, made, root=ctx.git.root)
        written = made
    else:
        written = _append(ctx, made) if made else []
    for att in made:
        emit(f"signed: record {att['attests'][:12]}… as attestation {att['id'][:12]}…\n", err=True)
    if written and receipt is None:
        from tools.replay.tables import refresh

        cfg = ctx.config.ledger
        ledger_file = ctx.git.worktree_path(cfg.path)
        signed = {a["attests"] for a in written}
        for spec in refresh(
            ctx.git.root, ledger_file, cfg.allowed_signers, cfg.revoked_signers, signed
        ):
            emit(f"vouched: the evidence table of {spec} refreshed\n", err=True)
    result.stats["signed"] = len(written)
    _finish(ctx, [result], opts)


def evidence_matrix(opts: Options) -> None:
    """Print the records the range adds as a GitHub Actions strategy.matrix: {"record":
    [id…]}; each job then replays (or signs) one with --id."""
    from tools.cli.common import show
    from tools.cli.results.evidence import RecordsMatrix
    from tools.context import Context
    from tools.replay import select
    from tools.replay.gate import NAME
    from tools.report import GateResult

    ctx = Context(opts)
    probe = GateResult(NAME)
    records = select.added(ctx, probe)
    if records is None:
        raise UsageError(f"no range to read the records from: {probe.skip_reason}")
    show(RecordsMatrix(tuple(r["id"] for r in records)), opts)


def verify_attested(opts: Options, kinds: str, allowed: Path | None, revoked: Path | None) -> None:
    """``tools ledger verify --require-attested KINDS``: the ledger gate, then every record
    of ``kinds`` vouched for by an allowed principal (the ``attestations`` gate)."""
    from tools import gates
    from tools.context import Context
    from tools.replay import attestations, select, signers, sshsig

    wanted = [k.strip() for k in kinds.split(",") if k.strip()]
    if not wanted:
        raise UsageError("names no kind", where="--require-attested", expected="KIND[,KIND…]")
    # Only the records a replay re-runs are ever signed: any other kind (a typo above all)
    # would hold the whole ledger to an attestation that cannot exist, or to none at all.
    unknown = [k for k in wanted if k not in select.REPLAYABLE]
    if unknown:
        raise UsageError(
            f"unknown kind {unknown[0]!r}",
            where="--require-attested",
            expected=f"one or more of {', '.join(select.REPLAYABLE)}: the kinds a replay signs",
        )
    ctx = Context(opts)
    results = gates.run_all(["ledger"], ctx)
    rel = ctx.config.ledger.path
    records, lines = select.scan(ctx.git.worktree_path(rel))
    with (
        signers.resolved(ctx, allowed, "allowed_signers", required=True) as ok,
        signers.resolved(ctx, revoked, "revoked_signers", required=False) as gone,
    ):
        assert ok is not None
        revoked_path = gone.path if gone is not None else None
        try:
            judged = attestations.judge(
                records, wanted, ok.path, revoked_path, ok.shown, (rel, lines)
            )
            results.append(judged)
        except sshsig.SshError as exc:
            raise UsageError(str(exc), where="--require-attested") from None
    _finish(ctx, results, opts)


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True, range_=True)
    ev = new_app("Evidence that vouches for itself: replay and sign ledger records (SPEC §11).")
    ev.command("replay")(gate(evidence_replay))
    ev.command("sign")(gate(evidence_sign))
    matrix = ResultType("tools.cli.results.evidence", "RecordsMatrix")
    ev.command("matrix")(command(formats=matrix, range_=True)(evidence_matrix))
    app.add_typer(ev, name="evidence")
