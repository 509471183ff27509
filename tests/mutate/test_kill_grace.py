"""An interrupt lets the build clean up (SPEC §10): SIGINT/SIGTERM to a real ``tools mutate
run`` sends SIGTERM to the running step's process group, waits up to ``mutate.kill_grace_s``
for it to exit, then SIGKILLs it; a second interrupt cuts the grace short. A real ``make``
deletes its half-written target, so the next run of the same plan is green without cleaning.
The moments that matter are synchronised through marker files, never through sleeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import PY_TEST_CMD, ledger_records, py_project, write_plan
from tests.mutate.test_inplace_trust import _alive, _killpg
from tools.mutate.proc import Cancelled, Registry, run_step

ROOT = Path(__file__).resolve().parents[2]
B = {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}}
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _wait_for(path: Path, text: str = "", timeout: float = 120.0) -> None:
    """Until ``path`` holds ``text`` (any content when empty); polled."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip() and text in path.read_text():
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never held {text!r}")


def _start(repo: Repo, plan: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), "mutate", "run", plan, *extra],
        cwd=repo.path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# A recipe that writes its target slowly: half of it, then (once GO exists) the rest. Killed
# by a signal between the two, make deletes the half-written target ("Deleting file 'out'");
# killed by SIGKILL it cannot, and the next make finds `out` newer than its source.
MAKEFILE = (
    "out: src/calc.py\n"
    "\tprintf partial > $@; echo started > $(MARK); "
    "while [ ! -e $(GO) ]; do sleep 0.05; done; printf done >> $@\n"
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_make_deletes_its_half_written_target(
    repo: Repo, tmp_path: Path, sig: int
) -> None:
    if subprocess.run(["make", "--version"], capture_output=True, check=False).returncode:
        pytest.skip("no make on this machine")
    py_project(repo)
    repo.commit("Add the build\n\nBody.\n", {"Makefile": MAKEFILE, ".gitignore": "out\n"})
    mark, go = tmp_path / "started", tmp_path / "go"
    plan = write_plan(
        repo,
        {
            "build": f"make MARK={mark} GO={go}",
            "test": f'test "$(cat out)" = partialdone && {PY_TEST_CMD}',
            "arms": [{"name": "control"}, B],
            "expect": {"control": "GREEN", "B": "RED"},
        },
    )
    out = repo.path / "out"
    proc = _start(repo, plan, "--in-place")
    try:
        _wait_for(mark)
        assert out.read_text() == "partial"  # the control's build is half-way through it
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err and "interrupted" in err
    assert not out.exists()  # make had its SIGTERM and time to delete it
    assert ledger_records(repo) == []
    # The next run of the same plan, nothing cleaned by hand: the control builds afresh.
    go.write_text("go\n")
    again = _start(repo, plan, "--in-place")
    stdout, err = again.communicate(timeout=300)
    assert again.returncode == 0, stdout + err
    verdicts = {r["arm"]: r["verdict"] for r in ledger_records(repo) if r["kind"] == "mutation-arm"}
    assert verdicts == {"control": "GREEN", "B": "RED"}
    assert out.read_text() == "partialdone"


def _trapping_plan(repo: Repo, tmp_path: Path, grace: float) -> tuple[str, Path, Path]:
    """A test step whose shell outlives SIGTERM (its trap logs it and the loop goes on):
    (plan, its pid file, the log of the signals it caught)."""
    pid, log = tmp_path / "shell.pid", tmp_path / "caught"
    repo.write(".agents/protocol.yaml", f"mutate:\n  kill_grace_s: {grace}\n")
    test = f"trap 'echo TERM >> {log}' TERM; echo $$ > {pid}; while :; do sleep 0.05; done"
    plan = write_plan(repo, {"test": test, "arms": [{"name": "control"}]})
    return plan, pid, log


@pytest.mark.parametrize(
    ("mode", "sig"),
    [("--in-place", signal.SIGINT), ("-j1", signal.SIGTERM), ("-j1", signal.SIGINT)],
)
def test_a_step_that_ignores_sigterm_is_killed_after_the_grace(
    repo: Repo, tmp_path: Path, mode: str, sig: int
) -> None:
    py_project(repo)
    plan, pid_file, log = _trapping_plan(repo, tmp_path, 1)
    proc = _start(repo, plan, mode)
    shell = 0
    try:
        _wait_for(pid_file)
        shell = int(pid_file.read_text())
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        if shell:
            _killpg(shell)
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err and "control: interrupted" in err
    assert "TERM" in log.read_text()  # SIGTERM first, and it survived it ...
    assert not _alive(shell)  # ... until the SIGKILL that followed the grace
    assert ledger_records(repo) == []


@pytest.mark.parametrize(("mode", "sig"), [("--in-place", signal.SIGINT), ("-j1", signal.SIGTERM)])
def test_a_second_interrupt_during_the_grace_kills_at_once(
    repo: Repo, tmp_path: Path, mode: str, sig: int
) -> None:
    py_project(repo)
    plan, pid_file, log = _trapping_plan(repo, tmp_path, 3600)  # a grace no test waits out
    proc = _start(repo, plan, mode)
    shell = 0
    try:
        _wait_for(pid_file)
        shell = int(pid_file.read_text())
        proc.send_signal(sig)
        _wait_for(log, "TERM")
        assert _alive(shell) and proc.poll() is None  # within its grace
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        if shell:
            _killpg(shell)
    assert proc.returncode == STATUS[sig], err
    assert "Traceback" not in err and "interrupted" in err
    assert not _alive(shell)


def test_a_timed_out_step_gets_its_grace_for_the_whole_group(tmp_path: Path) -> None:
    """The shell that leads the step exits on SIGTERM at once; a process it started cleans up
    for a while: the group is waited for, not only its leader, before SIGKILL."""
    ready, cleaned = tmp_path / "ready", tmp_path / "cleaned"
    child = (
        f"trap 'sleep 0.3; echo cleaned > {cleaned}; exit 0' TERM; echo > {ready}; "
        "while :; do sleep 0.05; done"
    )
    command = f'sh -c "{child}" & while [ ! -e {ready} ]; do sleep 0.02; done; wait'
    step = run_step(command, tmp_path, timeout=5, registry=Registry(kill_grace_s=60))
    assert step.timed_out and step.rc is None
    assert cleaned.read_text() == "cleaned\n"


def test_a_cancel_from_another_thread_ends_the_step_with_sigterm_first(tmp_path: Path) -> None:
    pid_file, log = tmp_path / "pid", tmp_path / "caught"
    registry = Registry(kill_grace_s=1)
    command = f"trap 'echo TERM >> {log}' TERM; echo $$ > {pid_file}; while :; do sleep 0.05; done"
    raised: list[BaseException] = []

    def step() -> None:
        try:
            run_step(command, tmp_path, timeout=600, registry=registry)
        except BaseException as exc:  # what the arm's thread sees
            raised.append(exc)

    thread = threading.Thread(target=step)
    thread.start()
    _wait_for(pid_file)
    shell = int(pid_file.read_text())
    registry.cancel()
    thread.join(120)
    _killpg(shell)
    assert not thread.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], Cancelled)
    assert "TERM" in log.read_text() and not _alive(shell)
