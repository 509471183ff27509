"""``tools ledger show --attested/--unattested``: records by whether one vouches for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def attested_only(
    root: Path, config: Path | None, full: Path, shown: list[dict[str, Any]], *, want: bool
) -> list[dict[str, Any]]:
    """The records of ``shown`` that carry an attestation (``want``) or none. With
    ``ledger.allowed_signers`` configured, only a valid one by an allowed principal counts."""
    from tools.config import load_typed
    from tools.errors import UsageError
    from tools.replay import attestations, select
    from tools.replay.sshsig import SshError

    cfg = load_typed(root, config).ledger
    records = select.current_records(full)
    if cfg.allowed_signers is None:
        vouched = set(attestations.of(records))
    else:
        allowed = root / cfg.allowed_signers
        revoked = root / cfg.revoked_signers if cfg.revoked_signers else None
        try:
            good = attestations.vouched(records, allowed, revoked)[0] if allowed.is_file() else {}
        except SshError as exc:
            raise UsageError(str(exc), where="--attested") from None
        vouched = set(good)
    return [r for r in shown if r.get("kind") != attestations.KIND and (r["id"] in vouched) == want]
