"""Interrupting a real ``tools mutate run`` process: SIGINT and SIGTERM remove every worktree
and end every arm's processes; after SIGKILL the next invocation sweeps what was left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import (
    fingerprint,
    ledger_records,
    no_worktrees_left,
    py_project,
    run_tools,
    write_plan,
)

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, OSError):
        return False
    return state != "Z"


def _start(repo: Repo, plan: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), "mutate", "run", plan, "-j", "2"],
        cwd=repo.path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_lines(path: Path, n: int, timeout: float = 60.0) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            lines = path.read_text().split()
            if len(lines) >= n:
                return lines
        time.sleep(0.05)
    raise AssertionError(f"{path} never had {n} lines")


def _plan(repo: Repo, log: Path) -> str:
    # Each arm logs its shell's pid and its tree, then waits to be interrupted.
    test = f"echo $$ >> {log}.pids; pwd >> {log}.dirs; sleep 60"
    return write_plan(
        repo,
        {
            "test": test,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
            ],
        },
    )


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_removes_worktrees_and_records_nothing(
    repo: Repo, tmp_path: Path, sig: int, status: int
) -> None:
    py_project(repo)
    log = tmp_path / "arms"
    plan = _plan(repo, log)
    before = fingerprint(repo)
    proc = _start(repo, plan)
    pids = [int(p) for p in _wait_lines(Path(f"{log}.pids"), 2)]
    dirs = _wait_lines(Path(f"{log}.dirs"), 2)
    assert all(Path(d).is_dir() for d in dirs)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "interrupted" in err and "every worktree removed" in err
    assert "Traceback" not in err
    # The arms it stopped say so; the kill's status is never read as the test's.
    assert "arm(s) control, B interrupted" in err, err
    assert "mutate: control: interrupted" in err and "mutate: B: interrupted" in err
    assert "RED" not in err and "137" not in err
    for pid in pids:
        assert not _alive(pid), pid
    for d in dirs:
        assert not Path(d).exists(), d
        assert not Path(d).parent.exists(), Path(d).parent
    no_worktrees_left(repo)
    assert ledger_records(repo) == []
    assert fingerprint(repo) == before


def test_after_sigkill_the_next_invocation_sweeps_the_worktrees(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    log = tmp_path / "arms"
    plan = _plan(repo, log)
    before = fingerprint(repo)
    proc = _start(repo, plan)
    pids = [int(p) for p in _wait_lines(Path(f"{log}.pids"), 2)]
    dirs = _wait_lines(Path(f"{log}.dirs"), 2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    for pid in pids:  # the arms' own sessions outlive their killed parent
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert all(Path(d).exists() for d in dirs)
    run = run_tools(repo, "mutate", "matrix", plan)
    assert run.returncode == 0, run.stderr
    assert "removed 2 worktree(s)" in run.stderr
    for d in dirs:
        assert not Path(d).exists()
    no_worktrees_left(repo)
    assert fingerprint(repo) == before


def test_after_sigkill_the_next_invocation_ends_the_orphaned_groups(
    repo: Repo, tmp_path: Path
) -> None:
    py_project(repo)
    log = tmp_path / "arms"
    plan = _plan(repo, log)
    proc = _start(repo, plan)
    pids = [int(p) for p in _wait_lines(Path(f"{log}.pids"), 2)]
    dirs = _wait_lines(Path(f"{log}.dirs"), 2)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    try:
        # Each arm's test runs in a session of its own, so it outlives its killed parent.
        assert all(_alive(pid) for pid in pids)
        run = run_tools(repo, "mutate", "matrix", plan)
        assert run.returncode == 0, run.stderr
        for pid in pids:
            assert not _alive(pid), pid
            assert f"ended process group {pid}" in run.stderr, run.stderr
        # ... before its worktrees were swept.
        ended = run.stderr.index("ended process group")
        assert ended < run.stderr.index("removed 2 worktree(s)")
        for d in dirs:
            assert not Path(d).exists()
        no_worktrees_left(repo)
        assert not list((repo.path / ".git/tools/mutate/groups").iterdir())
    finally:
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _journal(repo: Repo, pgid: int, start: int) -> None:
    folder = repo.path / ".git/tools/mutate/groups"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "99999-dead.jsonl").write_text(json.dumps({"pgid": pgid, "start": start}) + "\n")


def _start_time(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def test_only_the_group_that_was_recorded_is_ended(repo: Repo, tmp_path: Path) -> None:
    """A journal left by a killed run names a group by its leader's pid and start time: a
    live process whose start time differs (the pid was reused) is never signalled."""
    py_project(repo)
    plan = _plan(repo, tmp_path / "arms")
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        _journal(repo, other.pid, _start_time(other.pid) + 1)
        run = run_tools(repo, "mutate", "matrix", plan)
        assert run.returncode == 0, run.stderr
        assert "ended process group" not in run.stderr
        assert other.poll() is None and _alive(other.pid)
        # The same group with its true start time is the recorded one: SIGTERM ends it.
        _journal(repo, other.pid, _start_time(other.pid))
        run = run_tools(repo, "mutate", "matrix", plan)
        assert run.returncode == 0, run.stderr
        assert f"ended process group {other.pid} (1 process(es))" in run.stderr
        assert other.wait(timeout=30) == -signal.SIGTERM
    finally:
        other.kill()
        other.wait()
