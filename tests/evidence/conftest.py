"""Real C projects built by ``cc`` with recorded mutation arms on a branch, throwaway SSH keys
and ``allowed_signers`` files, for the evidence replay and attestation tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import C_BUILD_CMD, C_TEST_CMD, LEDGER, c_project, write_plan

PLAN = "plans/plan.yml"


def c_plan(test: str = C_TEST_CMD, **extra: Any) -> dict[str, Any]:
    """control (GREEN), B (RED: scale doubles no more) and M (GREEN: the same sum)."""
    return {
        "build": C_BUILD_CMD,
        "test": test,
        "timeout": 60,
        "arms": [
            {"name": "control"},
            {"name": "B", "replace": {"path": "src/lib.c", "old": "2 * x", "new": "3 * x"}},
            {"name": "M", "replace": {"path": "src/lib.c", "old": "2 * x", "new": "x + x"}},
        ],
        "expect": {"control": "GREEN", "B": "RED", "M": "GREEN"},
        **extra,
    }


def record_arms(
    repo: Repo, plan: dict[str, Any], *, branch: str = "work", name: str = PLAN
) -> list[dict[str, Any]]:
    """On a new ``branch`` of main: run ``plan``'s arms, then commit the plan and the ledger.
    The mutation-arm records it added."""
    repo.branch(branch, "main")
    path = write_plan(repo, plan, name)
    run = repo.tools("mutate", "run", path)
    assert run.exit_code == 0, run.stderr
    repo.commit(f"Record the arms of {name}\n\nBody.\n")
    return [r for r in ledger(repo) if r["kind"] == "mutation-arm"]


def c_repo(repo: Repo, *, attrs: bool = True) -> str:
    """main: the C scaler (and the ledger's union merge, as `tools init` sets it)."""
    files = {".gitattributes": f"{LEDGER} merge=union\n"} if attrs else {}
    repo.commit("Set attributes\n\nBody.\n", files)
    return c_project(repo)


def ledger(repo: Repo) -> list[dict[str, Any]]:
    path = repo.path / LEDGER
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def write_ledger(repo: Repo, records: list[dict[str, Any]]) -> None:
    from tools import ledger as led

    data = b"".join(led.canonical_json(r) + b"\n" for r in records)
    (repo.path / LEDGER).write_bytes(data)


def forge(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``record`` with ``changes`` and its id recomputed (well-formed: `ledger verify` passes)."""
    from tools import ledger as led

    out = {k: v for k, v in record.items() if k != "id"}
    out.update(changes)
    out["id"] = led.record_id(out)
    return out


def replace_record(repo: Repo, old: dict[str, Any], new: dict[str, Any]) -> None:
    write_ledger(repo, [new if r["id"] == old["id"] else r for r in ledger(repo)])


def findings(data: dict[str, Any], gate: str) -> list[dict[str, Any]]:
    (g,) = [g for g in data["gates"] if g["gate"] == gate]
    return g["findings"]


def rules(data: dict[str, Any], gate: str) -> list[str]:
    return [f["rule"] for f in findings(data, gate)]


def gate_status(data: dict[str, Any], gate: str) -> str:
    (g,) = [g for g in data["gates"] if g["gate"] == gate]
    return str(g["status"])


class Key:
    """A throwaway ed25519 key pair (``ssh-keygen -t ed25519 -N ''``)."""

    def __init__(self, folder: Path, name: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / name
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(self.path)],
            check=True,
            capture_output=True,
        )
        self.public = (folder / f"{name}.pub").read_text().strip()
        self.pub_path = folder / f"{name}.pub"

    def signer_line(self, principal: str) -> str:
        kind, blob = self.public.split()[:2]
        return f'{principal} namespaces="agent-protocol-gates" {kind} {blob}\n'


@pytest.fixture
def keys(tmp_path: Path) -> dict[str, Key]:
    if shutil.which("ssh-keygen") is None:
        pytest.skip("no ssh-keygen on this machine")
    folder = tmp_path / "keys"
    return {name: Key(folder, name) for name in ("ci", "rogue", "old")}
