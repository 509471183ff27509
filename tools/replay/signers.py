"""Where the ``allowed_signers`` (and revocation) file comes from: the path given on the
command line, else the config's ``ledger.allowed_signers`` / ``ledger.revoked_signers``,
read under ``--config-from base`` from the merge base's tree (a pull request cannot add its
own key), else from the working tree. Signing keys are never looked up here."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tools.errors import UsageError

if TYPE_CHECKING:
    from tools.context import Context


class SignersFile(NamedTuple):
    path: Path  # a file ssh-keygen can read
    shown: str  # how messages name it


@contextlib.contextmanager
def resolved(
    ctx: Context, given: Path | None, key: str, *, required: bool
) -> Iterator[SignersFile | None]:
    """The file for config key ``ledger.<key>`` (``given`` wins); None when neither names
    one and it is not ``required`` (exit 2 when it is)."""
    flag = "--" + key.replace("_", "-")
    if given is not None:
        if not given.is_file():
            raise UsageError("no such file", where=f"{flag} {given}")
        yield SignersFile(given, str(given))
        return
    rel: str | None = getattr(ctx.config.ledger, key)
    if rel is None:
        if required:
            raise UsageError(
                f"no {key} file: pass {flag} FILE or set `ledger.{key}` in the config",
                where=flag,
            )
        yield None
        return
    if ctx.config_rev is None:
        full = ctx.git.worktree_path(rel)
        if not full.is_file():
            raise UsageError(f"`ledger.{key}` names {rel}, which does not exist", where=rel)
        yield SignersFile(full, rel)
        return
    data = ctx.git.blob(ctx.config_rev, rel)
    shown = f"{ctx.config_rev[:12]}:{rel}"
    if data is None:
        raise UsageError(f"`ledger.{key}` names {rel}, which the merge base lacks", where=shown)
    with tempfile.TemporaryDirectory(prefix="tools-signers-") as folder:
        path = Path(folder) / key
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        yield SignersFile(path, shown)


def signing_key(key: Path, root: Path) -> Path:
    """The private key file given, read from that path only; one inside the judged
    repository is refused (a key the tree carries vouches for nothing)."""
    full = Path(os.path.abspath(key))
    if not full.is_file():
        raise UsageError("no such key file", where=f"--key {key}")
    real = Path(os.path.realpath(full))
    top = Path(os.path.realpath(root))
    if real == top or top in real.parents:
        raise UsageError(
            "the signing key lies inside the repository being judged",
            where=f"--key {key}",
            expected="a key file outside the working tree (a CI secret)",
        )
    return full
