"""Tiny real projects for the mutation tests (a pure-Python one and a C one built by ``cc``),
plan writing, and a byte-for-byte fingerprint of the user's working tree and index."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Repo

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ".agents/ledger.jsonl"
HEX64 = re.compile(r"[0-9a-f]{64}")
HEX40 = re.compile(r"[0-9a-f]{40}")

PY_CALC = "def add(a, b):\n    return a + b\n\n\ndef scale(x):\n    return 2 * x\n"
PY_TEST = (
    "import sys\n"
    "sys.path.insert(0, 'src')\n"
    "from calc import add, scale\n"
    "assert add(2, 3) == 5, 'add is broken'\n"
    "assert scale(3) == 6, 'scale is broken'\n"
    "print('tests passed')\n"
)
C_LIB = "int scale(int x) { return 2 * x; }\n"
C_MAIN = (
    "#include <stdio.h>\n"
    "int scale(int x);\n"
    "int main(void) {\n"
    '    printf("scale(3) = %d\\n", scale(3));\n'
    "    return scale(3) == 6 ? 0 : 1;\n"
    "}\n"
)


def py_project(repo: Repo) -> str:
    """A pure-Python project whose test passes; returns the commit."""
    return repo.commit(
        "Add the calculator\n\nBody.\n",
        {"src/calc.py": PY_CALC, "tests/test_calc.py": PY_TEST, "README": "calc\n"},
    )


def c_project(repo: Repo) -> str:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on this machine")
    return repo.commit("Add the C scaler\n\nBody.\n", {"src/lib.c": C_LIB, "src/main.c": C_MAIN})


PY_TEST_CMD = f"{sys.executable} tests/test_calc.py"
C_BUILD_CMD = "cc -o prog src/main.c src/lib.c"
C_TEST_CMD = "./prog"


def write_plan(repo: Repo, plan: dict[str, Any], name: str = "plans/plan.yml") -> str:
    """Write ``plan`` as YAML into the working tree (untracked); its absolute path (a
    relative PLAN argument is read from the cwd, like any file argument)."""
    return str(repo.write(name, yaml.safe_dump(plan, sort_keys=False, allow_unicode=True)))


def fingerprint(repo: Repo, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """sha256 of every file of the working tree (tracked, untracked and ignored alike), every
    folder, and git's own state files that a run must not change: the index, HEAD, config
    and refs. ``skip``: files left out (a command's stated output), with their folders."""
    out: dict[str, str] = {}
    top = repo.path
    for dirpath, dirnames, filenames in os.walk(top):
        rel_dir = Path(dirpath).relative_to(top)
        if rel_dir.parts[:1] == (".git",):
            dirnames[:] = []
            continue
        folder = f"{rel_dir.as_posix()}/"
        if not any(s.startswith(folder) for s in skip):
            out[folder] = "folder"  # an empty folder left behind counts too
        for name in filenames:
            rel = (rel_dir / name).as_posix()
            if rel in skip:
                continue
            full = Path(dirpath) / name
            data = os.readlink(full).encode() if full.is_symlink() else full.read_bytes()
            out[rel] = hashlib.sha256(data).hexdigest()
    git = top / ".git"
    for rel in ("index", "HEAD", "config"):
        if (git / rel).exists():
            out[f".git/{rel}"] = hashlib.sha256((git / rel).read_bytes()).hexdigest()
    for ref in sorted((git / "refs").rglob("*")):
        if ref.is_file():
            out[f".git/{ref.relative_to(git).as_posix()}"] = hashlib.sha256(
                ref.read_bytes()
            ).hexdigest()
    return out


def no_worktrees_left(repo: Repo) -> None:
    """git knows no worktree but the main one, and none of our temp dirs is left."""
    listed = [
        line
        for line in repo.git("worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]
    assert listed == [f"worktree {repo.path}"], listed
    assert not (repo.path / ".git" / "worktrees").exists() or not any(
        (repo.path / ".git" / "worktrees").iterdir()
    )


def ledger_records(repo: Repo) -> list[dict[str, Any]]:
    path = repo.path / LEDGER
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def run_tools(repo: Repo, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """The real CLI in a separate process (``python -m tools``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=env,
        **kw,
    )


ARM_FIELDS = {
    "plan": str,
    "plan_sha256": str,
    "base": str,
    "arm": str,
    "mutation": str,
    "mutations": list,
    "overlay": list,
    "targets": list,
    "applied": (bool, type(None)),
    "numstat": list,
    "build": (str, type(None)),
    "test": str,
    "compile_rc": (int, type(None)),
    "run_rc": (int, type(None)),
    "run_rcs": list,
    "verdict": str,
    "expect": (str, type(None)),
    "restored": (bool, type(None)),
    "signal": (str, type(None)),
    "matched": (dict, type(None)),
    "artifacts": (list, type(None)),
    "quiet": (dict, type(None)),
    "conditions": (dict, type(None)),
}
RUN_FIELDS = {
    "plan": str,
    "plan_sha256": str,
    "base": str,
    "spec": (str, type(None)),
    "arms": list,
    "verdicts": dict,
    "overlay": list,
}
VERDICTS = {"GREEN", "RED", "NO-BUILD", "NOT-APPLIED", "TIMEOUT", "ERROR", "FLAKY", "UNANCHORED"}
VERDICTS |= {"KILLED", "EMPTY", "STALE", "NO-QUIET-WINDOW", "ENV-FAULT"}
SIGNALS = {"SIGKILL", "SIGTERM", "SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGINT"}


def _check_conditions(c: dict[str, Any]) -> None:
    assert set(c) >= {"cpus", "start", "end", "disk_free", "versions"}, c
    assert isinstance(c["cpus"], int) and c["cpus"] >= 1
    assert c["disk_free"] is None or isinstance(c["disk_free"], int)
    for when in ("start", "end"):
        m = c[when]
        assert set(m) == {"load", "mem_available"}, m
        assert m["load"] is None or (
            len(m["load"]) == 3 and all(isinstance(x, (int, float)) for x in m["load"])
        )
        assert m["mem_available"] is None or isinstance(m["mem_available"], int)
    for v in c["versions"]:
        assert set(v) == {"command", "rc", "output"}
        assert isinstance(v["command"], str) and isinstance(v["output"], str)


def check_arm_record(r: dict[str, Any]) -> None:
    """Every field of the evidence contract, with its type."""
    assert r["kind"] == "mutation-arm"
    for key, kind in ARM_FIELDS.items():
        assert key in r, key
        assert isinstance(r[key], kind), (key, r[key])
    assert HEX64.fullmatch(r["plan_sha256"]) and HEX40.fullmatch(r["base"])
    assert r["verdict"] in VERDICTS
    for m in r["mutations"]:
        assert m["kind"] in ("revert", "replace", "patch")
    for t in r["targets"]:
        assert set(t) >= {"path", "sha256_before", "sha256_mutated", "sha256_after"}
        for k in ("sha256_before", "sha256_mutated", "sha256_after"):
            assert t[k] is None or HEX64.fullmatch(t[k])
    for n in r["numstat"]:
        assert isinstance(n["path"], str)
        assert isinstance(n["added"], int) and isinstance(n["deleted"], int)
    assert all(isinstance(x, int) for x in r["run_rcs"])
    if r["run_rcs"]:
        assert r["run_rc"] == r["run_rcs"][0]
    assert r["signal"] is None or r["signal"] in SIGNALS
    if r["matched"] is not None:
        assert set(r["matched"]) == {"by", "line"}
    for a in r["artifacts"] or []:
        assert set(a) == {"path", "sha256"}
        assert a["sha256"] is None or HEX64.fullmatch(a["sha256"])
    if r["quiet"] is not None:
        assert set(r["quiet"]) == {"max_load", "wait_s", "quiet", "waited_s", "load_per_cpu"}
    if r["verdict"] != "ERROR" or r["conditions"] is not None:
        _check_conditions(r["conditions"])
    assert ledger_id_ok(r)


def ledger_id_ok(r: dict[str, Any]) -> bool:
    """The record's id recomputes (the ledger's own check)."""
    from tools import ledger

    return ledger.verify_record(r) is None


def check_run_record(r: dict[str, Any]) -> None:
    assert r["kind"] == "mutation-run"
    for key, kind in RUN_FIELDS.items():
        assert key in r, key
        assert isinstance(r[key], kind), (key, r[key])
    assert all(HEX64.fullmatch(i) for i in r["arms"])
