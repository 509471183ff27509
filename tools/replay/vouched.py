"""The spec evidence table's ``vouched`` column (SPEC §11): for each record, the principal of
``ledger.allowed_signers`` whose valid attestation vouches for it. Rendered by ``tools spec
render`` and refreshed by ``tools evidence sign``; checked by the spec gate for a table that
has the column (a row may under-claim with ``—``, never name a principal that did not sign)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.context import Context
    from tools.evidence import Vouched


def principals(
    records: list[dict[str, Any]], allowed: Path, revoked: Path | None, ids: Iterable[str]
) -> dict[str, str]:
    """The principal vouching for each of ``ids`` that one vouches for (only those ids'
    attestations are checked)."""
    from tools.replay import attestations

    present = {r["id"] for r in records}
    by_record = attestations.of(records)
    out: dict[str, str] = {}
    for rid in ids:
        if rid not in present:
            continue
        for att in by_record.get(rid, []):
            got = attestations.check(att, allowed, revoked)
            if got.principal is not None:
                out[rid] = got.principal
                break
    return out


def for_tree(
    root: Path, ledger_file: Path, allowed_rel: str | None, revoked_rel: str | None,
    ids: Iterable[str],
) -> Vouched | None:  # fmt: skip
    """The lookup over the working tree's ledger and signers files; None when the config names
    no ``ledger.allowed_signers`` (the table then has no ``vouched`` column)."""
    from tools.replay import select
    from tools.replay.sshsig import SshError

    if allowed_rel is None:
        return None
    allowed = root / allowed_rel
    if not allowed.is_file():
        return lambda rid: None
    revoked = root / revoked_rel if revoked_rel else None
    try:
        return principals(select.current_records(ledger_file), allowed, revoked, ids).get
    except SshError:
        return lambda rid: None  # without ssh-keygen no row is shown vouched (never a false one)


def for_gate(ctx: Context, ids: Iterable[str]) -> Vouched:
    """The spec gate's lookup for ``ids``: the signers files as the config names them (from
    the merge base's tree under ``--config-from base``), over the current ledger; no file, no
    principal."""
    from tools.errors import UsageError
    from tools.replay import select, signers
    from tools.replay.sshsig import SshError

    ledger_file = ctx.git.worktree_path(ctx.config.ledger.path)
    try:
        with (
            signers.resolved(ctx, None, "allowed_signers", required=False) as ok,
            signers.resolved(ctx, None, "revoked_signers", required=False) as gone,
        ):
            if ok is None:
                return lambda rid: None
            revoked = gone.path if gone else None
            return principals(select.current_records(ledger_file), ok.path, revoked, ids).get
    except (UsageError, SshError):
        return lambda rid: None  # no signers file, no ssh-keygen: no principal shown to sign
