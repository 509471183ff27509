"""SSH signatures through ``ssh-keygen -Y`` (git's SSH-signing format): sign with a key file,
learn the principal an ``allowed_signers`` file gives a signature, verify offline (with a
revocation list, as git's ``gpg.ssh.revocationKeyring`` passes ``-r``). No cryptography here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

NAMESPACE = "agent-protocol-gates"
_TIMEOUT_S = 60


class SshError(Exception):
    """ssh-keygen is missing or refused a request (its message)."""


def _keygen(args: list[str], data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise SshError("ssh-keygen is not installed (OpenSSH 8.2 or later signs with -Y)")
    try:
        return subprocess.run(
            [exe, *args],
            input=data if data is not None else b"",
            capture_output=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SshError(f"ssh-keygen {args[0]} {args[1]} ran past {_TIMEOUT_S} s") from None
    except OSError as exc:
        raise SshError(f"ssh-keygen could not run: {exc.strerror}") from None


def _said(proc: subprocess.CompletedProcess[bytes]) -> str:
    text = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
    return " ".join(text.split()) or f"exit {proc.returncode}"


def sign(key: Path, data: bytes) -> str:
    """The armoured signature of ``data`` by the private key at ``key``."""
    proc = _keygen(["-Y", "sign", "-q", "-n", NAMESPACE, "-f", str(key)], data)
    out = proc.stdout.decode("ascii", "replace")
    if proc.returncode != 0 or "BEGIN SSH SIGNATURE" not in out:
        raise SshError(f"ssh-keygen -Y sign: {_said(proc)}")
    return out


def fingerprint(key: Path) -> str:
    """The key's SHA256 fingerprint (``SHA256:…``)."""
    proc = _keygen(["-l", "-E", "sha256", "-f", str(key)])
    parts = proc.stdout.decode("ascii", "replace").split()
    if proc.returncode != 0 or len(parts) < 2:
        raise SshError(f"ssh-keygen -l: {_said(proc)}")
    return parts[1]


class Checked(NamedTuple):
    """A signature's verdict: the principal it verified for, or why none."""

    principal: str | None
    problem: str | None


def _sig_file(folder: str, armoured: str) -> str:
    path = os.path.join(folder, "payload.sig")
    with open(path, "w", encoding="ascii") as fh:
        fh.write(armoured)
    return path


def check(allowed: Path, armoured: str, data: bytes, *, revoked: Path | None = None) -> Checked:
    """Verify ``armoured`` over ``data`` for the principal ``allowed`` maps its key to."""
    with tempfile.TemporaryDirectory(prefix="tools-sshsig-") as folder:
        sig = _sig_file(folder, armoured)
        found = _keygen(["-Y", "find-principals", "-s", sig, "-f", str(allowed)])
        names = [n for n in found.stdout.decode("utf-8", "replace").split() if n]
        if found.returncode != 0 or not names:
            return Checked(None, f"the signing key is no principal of {allowed.name}")
        problems = []
        for name in names:
            args = ["-Y", "verify", "-f", str(allowed), "-I", name, "-n", NAMESPACE, "-s", sig]
            proc = _keygen(args + (["-r", str(revoked)] if revoked is not None else []), data)
            if proc.returncode == 0:
                return Checked(name, None)
            if revoked is not None and _keygen(args, data).returncode == 0:
                # ssh-keygen says only that it could not verify: name the revocation.
                problems.append(f"{name}: the signing key is revoked ({revoked.name})")
            else:
                problems.append(f"{name}: {_said(proc)}")
        return Checked(None, "; ".join(problems))
