"""In-place runs never lose an edit (SPEC §10): a restore rewrites a file only while it holds
the mutant tools wrote; a file the user changed since is left as it is, reported as
``inplace-conflict`` (exit 1) and keeps blocking until ``tools mutate recover --discard``.
Real files, real processes, real SIGKILLs; the moments that matter are synchronised through
marker files, never through sleeps."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import Repo
from tests.mutate.conftest import (
    LEDGER,
    PY_CALC,
    PY_TEST_CMD,
    fingerprint,
    ledger_records,
    py_project,
    run_tools,
    write_plan,
)

ROOT = Path(__file__).resolve().parents[2]
RECORD = ".git/tools/mutate/inplace/record.json"
SPEC = "specs/calc.md"
SPEC_TEXT = "# Calc\n\n## Now\n\nThe calculator adds.\n\n## Later\n\nMore.\n"
B = {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}}
USER = PY_CALC + "# the user's own edit, made while tools held the file\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _wait_for(path: Path, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _popen(repo: Repo, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), *args],
        cwd=repo.path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _waiting_plan(repo: Repo, tmp_path: Path, **extra: object) -> tuple[str, Path, Path]:
    """One in-place arm whose test writes its shell's pid to a marker, then waits for a `go`
    file: (plan, marker, go)."""
    marker, go = tmp_path / "shell.pid", tmp_path / "go"
    test = f"echo $$ > {marker}; while [ ! -e {go} ]; do sleep 0.02; done; {PY_TEST_CMD}"
    plan = write_plan(repo, {"test": test, "arms": [B], **extra})
    return plan, marker, go


def test_an_edit_made_during_the_arm_is_kept_and_reported(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    repo.commit("Add the spec\n\nBody.\n", {SPEC: SPEC_TEXT})
    plan, marker, go = _waiting_plan(repo, tmp_path, spec=SPEC)
    proc = _popen(repo, "mutate", "run", plan, "--in-place")
    shell = int(_wait_for(marker))
    try:
        mutant = (repo.path / "src/calc.py").read_text()
        assert "a - b" in mutant
        (repo.path / "src/calc.py").write_text(USER)  # the user edits while the test runs
        go.write_text("go\n")
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        _killpg(shell)  # a failed run must not leave the waiting test shell behind
    assert proc.returncode == 1, out + err
    assert (repo.path / "src/calc.py").read_text() == USER  # the edit survives
    assert "inplace-conflict: src/calc.py changed since tools wrote its mutant" in out
    assert _sha(PY_CALC) in out and _sha(mutant) in out and _sha(USER) in out
    saved = f".git/tools/mutate/inplace/saved/{_sha(PY_CALC)}"
    assert saved in out and (repo.path / saved).read_text() == PY_CALC
    # The record and the table say what happened: not restored.
    (arm,) = [r for r in ledger_records(repo) if r["kind"] == "mutation-arm"]
    assert arm["restored"] is False
    assert arm["conflicts"] == [
        {
            "path": "src/calc.py",
            "sha256_before": _sha(PY_CALC),
            "sha256_mutated": _sha(mutant),
            "sha256_now": _sha(USER),
            "saved": saved,
        }
    ]
    (target,) = arm["targets"]
    assert target["sha256_after"] == _sha(USER) != target["sha256_before"]
    table = (repo.path / SPEC).read_text()
    row = next(line for line in table.splitlines() if line.startswith("| B "))
    assert row.rstrip().endswith("| no |") and "yes |" not in row.split("|")[-2], row
    # It keeps blocking: the gates, the next run, a plain recover.
    blocked = repo.tools("preflight")
    assert blocked.exit_code == 1 and "inplace-conflict" in blocked.stdout, blocked.stdout
    assert "inplace-restore-pending" not in blocked.stdout
    again = run_tools(repo, "mutate", "run", plan, "--in-place")
    assert again.returncode == 1 and "error: inplace-conflict: src/calc.py" in again.stderr
    still = run_tools(repo, "mutate", "recover")
    assert still.returncode == 1 and "inplace-conflict" in still.stderr, still.stderr
    assert (repo.path / "src/calc.py").read_text() == USER
    # The user has decided (keep the edit): --discard drops the record and touches nothing.
    before = fingerprint(repo)
    dropped = run_tools(repo, "mutate", "recover", "--discard")
    assert dropped.returncode == 0, dropped.stderr
    assert "discarded the in-place recovery record" in dropped.stdout
    assert "src/calc.py" in dropped.stdout and saved in dropped.stdout
    assert fingerprint(repo) == before
    assert not (repo.path / RECORD).exists() and (repo.path / saved).read_text() == PY_CALC
    assert repo.tools("preflight", "--gate", "conflicts").exit_code == 0
    assert run_tools(repo, "mutate", "recover").stdout == "nothing pending\n"


def test_an_edit_made_after_a_crash_is_kept_and_reported(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan, marker, _ = _waiting_plan(repo, tmp_path)
    proc = _popen(repo, "mutate", "run", plan, "--in-place")
    shell = int(_wait_for(marker))
    try:
        mutant = (repo.path / "src/calc.py").read_text()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        (repo.path / "src/calc.py").write_text(USER)  # edited after the crash
        run = run_tools(repo, "mutate", "matrix", plan)
        assert run.returncode == 1, run.stdout + run.stderr
        assert run.stdout == ""  # blocked: the command itself did not run
        assert "error: inplace-conflict: src/calc.py" in run.stderr
        assert _sha(PY_CALC) in run.stderr and _sha(mutant) in run.stderr
        assert _sha(USER) in run.stderr and "completed a pending" not in run.stderr
        assert (repo.path / "src/calc.py").read_text() == USER
        # The killed run's test was still waiting: its process group was ended first.
        assert not _alive(shell)
        assert "ended process group" in run.stderr
    finally:
        _killpg(shell)
    saved = repo.path / ".git/tools/mutate/inplace/saved" / _sha(PY_CALC)
    assert saved.read_text() == PY_CALC
    gate = repo.tools("--format", "json", "preflight")
    assert gate.exit_code == 1
    rules = [f["rule"] for g in gate.json()["gates"] for f in g["findings"]]
    assert rules == ["inplace-conflict"], rules
    # Putting the original back by hand resolves it: recover sees it and drops the record.
    (repo.path / "src/calc.py").write_text(saved.read_text())
    done = run_tools(repo, "--format", "json", "mutate", "recover")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["conflicts"] == []
    assert not (repo.path / RECORD).exists()
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""


def test_ctrl_c_after_an_edit_keeps_the_edit(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan, marker, _ = _waiting_plan(repo, tmp_path)
    proc = _popen(repo, "mutate", "run", plan, "--in-place")
    shell = int(_wait_for(marker))
    try:
        (repo.path / "src/calc.py").write_text(USER)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        # A failed run must not leave the waiting test shell behind (it has its own session).
        _killpg(shell)
    assert proc.returncode == 130, err
    assert "error: inplace-conflict: src/calc.py" in err and "Traceback" not in err
    assert "restored but for the file(s) in conflict" in err
    assert (repo.path / "src/calc.py").read_text() == USER
    assert (repo.path / RECORD).exists()  # kept: it blocks until the user decides
    assert run_tools(repo, "mutate", "recover").returncode == 1


def test_a_crash_with_the_mutant_still_there_restores_it(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan, marker, _ = _waiting_plan(repo, tmp_path)
    before = fingerprint(repo)
    proc = _popen(repo, "mutate", "run", plan, "--in-place")
    shell = int(_wait_for(marker))
    try:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert _alive(shell)  # the test's own session outlives its killed parent
        done = run_tools(repo, "mutate", "recover")
        assert done.returncode == 0, done.stderr
        assert not _alive(shell)  # ended before the file was restored
    finally:
        _killpg(shell)
    assert "restored: src/calc.py" in done.stdout and "sha256 verified" in done.stdout
    assert fingerprint(repo) == before


def test_discard_without_a_conflict_keeps_the_tree_as_it_is(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan, marker, _ = _waiting_plan(repo, tmp_path)
    proc = _popen(repo, "mutate", "run", plan, "--in-place")
    shell = int(_wait_for(marker))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    _killpg(shell)
    before = fingerprint(repo)
    dropped = repo.tools("--format", "json", "mutate", "recover", "--discard")
    assert dropped.exit_code == 0, dropped.stderr
    assert json.loads(dropped.stdout)["discarded"] is True
    assert fingerprint(repo) == before  # the mutant stays: the user said so
    assert "a - b" in (repo.path / "src/calc.py").read_text()
    assert (repo.path / ".git/tools/mutate/inplace/saved" / _sha(PY_CALC)).read_text() == PY_CALC
    assert repo.tools("mutate", "recover").stdout == "nothing pending\n"


def _tools_tmp(repo: Repo) -> list[str]:
    """Temp files of atomic writes anywhere `git add -A` could see them."""
    found = []
    for dirpath, dirnames, filenames in os.walk(repo.path):
        if Path(dirpath) == repo.path:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        found += [os.path.join(dirpath, n) for n in filenames if n.endswith(".tools-tmp")]
    return found


def test_twenty_sigkills_lose_no_edit_and_leave_no_temp_file(repo: Repo) -> None:
    py_project(repo)
    repo.commit("Add the spec\n\nBody.\n", {SPEC: SPEC_TEXT})
    repo.write(
        "specs/p.diff",
        "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n"
        "@@ -1,3 +1,3 @@\n def add(a, b):\n-    return a + b\n+    return a * b\n \n",
    )
    plan = write_plan(
        repo,
        {
            "spec": SPEC,
            "test": PY_TEST_CMD,
            "arms": [
                {"name": "control"},
                B,
                {"name": "P", "patch": "specs/p.diff"},
                {"name": "S", "replace": {"path": "src/calc.py", "old": "2 * x", "new": "3 * x"}},
            ],
        },
    )
    repo.write("README", "the user's unrelated edit\n")
    outside = (".agents/", "specs/")  # the ledger and the table: the run's stated outputs
    before = {k: v for k, v in fingerprint(repo).items() if not k.startswith(outside)}
    rng = random.Random(20)  # the delays vary; every assert holds whatever they are
    for i in range(20):
        proc = _popen(repo, "mutate", "run", plan, "--in-place")
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
        assert _tools_tmp(repo) == [], i
        edit = i % 2 == 1
        if edit:
            (repo.path / "src/calc.py").write_text(USER)
        done = run_tools(repo, "mutate", "recover")
        assert done.returncode in (0, 1), (i, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        if edit:
            assert (repo.path / "src/calc.py").read_text() == USER, i  # never lost
            if done.returncode == 1:
                assert "inplace-conflict: src/calc.py" in done.stderr, done.stderr
                assert run_tools(repo, "mutate", "recover", "--discard").returncode == 0
            (repo.path / "src/calc.py").write_text(PY_CALC)
        else:
            assert done.returncode == 0, (i, done.stderr)
        assert not (repo.path / RECORD).exists(), i
        assert _tools_tmp(repo) == [], i
        now = {k: v for k, v in fingerprint(repo).items() if not k.startswith(outside)}
        assert now == before, i
    # The tree is whole: a last run completes and restores.
    last = run_tools(repo, "mutate", "run", plan, "--in-place")
    assert last.returncode == 0, last.stdout + last.stderr
    assert (repo.path / LEDGER).exists()
