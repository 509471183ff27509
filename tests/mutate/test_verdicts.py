"""The verdicts that tell the code from the machine (KILLED, EMPTY, STALE, NO-QUIET-WINDOW,
ENV-FAULT), each on a real C project built by ``cc`` with its clean twin beside it, and a
crash that stays RED with its signal named. The user's tree stays byte-identical."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import (
    LEDGER,
    ROOT,
    c_project,
    check_arm_record,
    check_run_record,
    fingerprint,
    ledger_records,
    no_worktrees_left,
    write_plan,
)

# One test program, its behaviour chosen by MODE (each arm's mutation sets it):
# 0 passes three cases; 1 writes its pid to argv[1] and waits to be killed; 2 crashes with
# SIGSEGV; 3 fails an assertion; 4 runs no case at all; 5 writes to a full disk and fails.
T_C = r"""#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#define MODE 0
int scale(int x);
int main(int argc, char **argv) {
    int mode = MODE, cases = 0;
    if (mode == 1 && argc > 1) {
        FILE *f = fopen(argv[1], "w");
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
        for (;;) pause();
    }
    if (mode == 2) { signal(SIGSEGV, SIG_DFL); raise(SIGSEGV); }
    if (mode == 5) {
        FILE *f = fopen("/dev/full", "w");
        if (!f || fputs("results\n", f) == EOF || fflush(f) != 0) {
            perror("writing results to /dev/full");
            return 1;
        }
    }
    if (mode != 4) {
        cases = 3;
        if (scale(3) != 6 || mode == 3) { printf("scale(3) = %d, want 6\n", scale(3)); return 1; }
    }
    printf("cases run: %d\n", cases);
    return 0;
}
"""
LIB_C = "int scale(int x) { return 2 * x; }\n"
BUILD = "cc -o prog src/t.c src/lib.c"
# The same result by other machine code (a plain `x + x` compiles to the very bytes of
# `2 * x`, and would be STALE: the test could not tell it from the original).
RET, VIA_Y = "return 2 * x;", "int y = 2 * x; return y;"


def _project(repo: Repo) -> None:
    c_project(repo)  # skips without cc
    repo.commit(
        "Add the verdict probe\n\nBody.\n",
        {"src/t.c": T_C, "src/lib.c": LIB_C, "README": "probe\n"},
    )


def _mode(name: str, mode: int) -> dict[str, Any]:
    return {
        "name": name,
        "replace": {"path": "src/t.c", "old": "#define MODE 0", "new": f"#define MODE {mode}"},
    }


def _run(repo: Repo, plan: str, *args: str) -> tuple[int, dict[str, Any], str]:
    run = repo.tools("--format", "json", "mutate", "run", plan, *args)
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    data = json.loads(run.stdout)
    for r in data["arms"]:
        check_arm_record(r)
    if data.get("run"):
        check_run_record(data["run"])
    return run.exit_code, data, run.stderr


def _verdicts(data: dict[str, Any]) -> dict[str, str]:
    return {r["arm"]: r["verdict"] for r in data["arms"]}


def _arms(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["arm"]: r for r in data["arms"]}


def _untouched(repo: Repo, before: dict[str, str]) -> None:
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    no_worktrees_left(repo)


def test_a_test_killed_by_another_process_is_killed_not_red(repo: Repo, tmp_path: Path) -> None:
    _project(repo)
    pidfile = tmp_path / "victim.pid"
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": f"./prog {pidfile}",
            "arms": [{"name": "control"}, _mode("oom", 1), _mode("fails", 3)],
            "expect": {"control": "GREEN", "fails": "RED"},
        },
    )
    before = fingerprint(repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), "--format", "json"]
        + ["mutate", "run", plan],
        cwd=repo.path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The OOM killer's signal, from a process that is not tools.
    end = time.monotonic() + 120
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < end and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    os.kill(int(pidfile.read_text()), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    data = json.loads(out)
    for r in data["arms"]:
        check_arm_record(r)
    assert _verdicts(data) == {"control": "GREEN", "oom": "KILLED", "fails": "RED"}
    oom = _arms(data)["oom"]
    assert oom["signal"] == "SIGKILL" and oom["run_rc"] == 137
    assert "SIGKILL" in oom["reason"] and "did not send" in oom["reason"]
    # The clean twin: an ordinary failure keeps its exit code's word and names no signal.
    assert _arms(data)["fails"]["signal"] is None
    _untouched(repo, before)


def test_a_crash_stays_red_with_its_signal_named(repo: Repo) -> None:
    _project(repo)
    repo.commit("Add the spec\n\nBody.\n", {"specs/p.md": "# P\n\n## Owed\n\n- x\n\n## Now\n\nx\n"})
    plan = write_plan(
        repo,
        {
            "spec": "specs/p.md",
            "build": BUILD,
            "test": "./prog",
            "arms": [{"name": "control"}, _mode("segv", 2), _mode("fails", 3)],
            "expect": {"control": "GREEN", "segv": "RED", "fails": "RED"},
        },
    )
    before = fingerprint(repo, skip=("specs/p.md",))
    code, data, _ = _run(repo, plan)
    assert code == 0, data["failures"]
    segv = _arms(data)["segv"]
    assert segv["verdict"] == "RED" and segv["signal"] == "SIGSEGV" and segv["run_rc"] == 139
    assert _arms(data)["fails"]["signal"] is None
    # The table gains a signal column because one arm has a signal.
    text = (repo.path / "specs/p.md").read_text()
    assert "| run_rc | signal | verdict |" in text
    assert "| 139 | SIGSEGV | RED |" in text and "| 1 | — | RED |" in text
    assert fingerprint(repo, skip=(LEDGER, "specs/p.md")) == {
        k: v for k, v in before.items() if k != LEDGER
    }
    assert run_check(repo) == 0


def run_check(repo: Repo) -> int:
    """``tools spec check`` on the repository (the table re-renders from the ledger)."""
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Record\n\nBody.")
    return repo.tools("spec", "check").exit_code


def test_a_test_binary_that_runs_no_case_is_empty(repo: Repo) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "empty_when": "^cases run: 0$",
            "arms": [
                {"name": "control"},
                _mode("no-cases", 4),
                {"name": "twice", "replace": {"path": "src/lib.c", "old": RET, "new": VIA_Y}},
                {"name": "wrong", "replace": {"path": "src/lib.c", "old": "2 * x", "new": "3 * x"}},
            ],
            "expect": {"control": "GREEN", "twice": "GREEN", "wrong": "RED"},
        },
    )
    before = fingerprint(repo)
    code, data, _ = _run(repo, plan)
    assert code == 0, data["failures"]
    assert _verdicts(data) == {
        "control": "GREEN",
        "no-cases": "EMPTY",
        "twice": "GREEN",
        "wrong": "RED",
    }
    empty = _arms(data)["no-cases"]
    assert empty["run_rc"] == 0  # it exited 0, and that is not GREEN
    assert empty["matched"] == {"by": "empty_when", "line": "cases run: 0"}
    _untouched(repo, before)


def test_an_empty_control_leaves_the_mutated_arms_unanchored(repo: Repo) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "empty_when": "^cases run: 3$",  # here, what the control prints
            "arms": [{"name": "control"}, _mode("fails", 3)],
        },
    )
    code, data, _ = _run(repo, plan)
    assert code == 1
    arms = _arms(data)
    assert arms["control"]["verdict"] == "EMPTY"
    assert arms["fails"]["verdict"] == "UNANCHORED" and arms["fails"]["observed"] == "RED"


def test_an_artifact_that_does_not_change_is_stale(repo: Repo) -> None:
    _project(repo)
    repo.commit("Add the spec\n\nBody.\n", {"specs/p.md": "# P\n\n## Owed\n\n- x\n\n## Now\n\nx\n"})
    plan = write_plan(
        repo,
        {
            "spec": "specs/p.md",
            "build": BUILD,
            "test": "./prog",
            "artifacts": ["prog"],
            "versions": ["cc --version"],
            "arms": [
                {"name": "control"},
                # Outside what prog is built from: the build gives the control's bytes.
                {"name": "readme", "replace": {"path": "README", "old": "probe", "new": "x"}},
                {"name": "twice", "replace": {"path": "src/lib.c", "old": RET, "new": VIA_Y}},
                {"name": "wrong", "replace": {"path": "src/lib.c", "old": "2 * x", "new": "3 * x"}},
            ],
            "expect": {"control": "GREEN", "readme": "STALE", "twice": "GREEN", "wrong": "RED"},
        },
    )
    before = fingerprint(repo, skip=("specs/p.md",))
    code, data, _ = _run(repo, plan, "-j", "2")
    assert code == 0, data["failures"]
    arms = _arms(data)
    readme, control = arms["readme"], arms["control"]
    assert readme["verdict"] == "STALE" and readme["tested"] == "GREEN"
    assert readme["artifacts"] == control["artifacts"]
    assert readme["artifacts"][0]["path"] == "prog"
    assert arms["twice"]["artifacts"] != control["artifacts"]  # rebuilt: the test judged it
    assert "byte-identical" in readme["reason"]
    assert control["conditions"]["versions"][0]["command"] == "cc --version"
    text = (repo.path / "specs/p.md").read_text()
    assert "| artifacts |" in text and "`prog` " + control["artifacts"][0]["sha256"][:12] in text
    assert "\n\nConditions: " in text and "`cc --version`: " in text
    assert fingerprint(repo, skip=(LEDGER, "specs/p.md")) == {
        k: v for k, v in before.items() if k != LEDGER
    }
    # An arm run alone is judged against the control of the ledger (same plan and base).
    code, alone, _ = _run(repo, plan, "--arm", "readme")
    assert code == 0 and _verdicts(alone) == {"readme": "STALE"}
    assert control["id"][:12] in alone["arms"][0]["reason"]
    assert run_check(repo) == 0


def test_an_artifact_missing_after_a_good_build_is_no_build(repo: Repo) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "artifacts": ["build/prog"],
            "arms": [{"name": "control"}],
        },
    )
    code, data, _ = _run(repo, plan)
    (control,) = data["arms"]
    assert control["verdict"] == "NO-BUILD" and control["compile_rc"] == 0
    assert "build/prog missing after the build exited 0" in control["reason"]
    assert control["run_rcs"] == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_is_an_env_fault(repo: Repo) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "arms": [{"name": "control"}, _mode("disk-full", 5), _mode("fails", 3)],
            "expect": {"control": "GREEN", "disk-full": "ENV-FAULT", "fails": "RED"},
        },
    )
    before = fingerprint(repo)
    code, data, _ = _run(repo, plan)
    assert code == 0, data["failures"]
    fault = _arms(data)["disk-full"]
    assert fault["run_rc"] == 1
    assert fault["matched"] == {
        "by": "no-space",
        "line": "writing results to /dev/full: No space left on device",
    }
    assert _arms(data)["fails"]["matched"] is None
    _untouched(repo, before)


def test_a_build_that_runs_out_of_disk_is_an_env_fault(repo: Repo) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": "echo 'cc: fatal error: cannot write prog: No space left on device' >&2; "
            "exit 1",
            "test": "true",
            "arms": [{"name": "control"}],
        },
    )
    code, data, _ = _run(repo, plan)
    (control,) = data["arms"]
    assert control["verdict"] == "ENV-FAULT" and control["compile_rc"] == 1
    assert "No space left on device" in control["matched"]["line"]


def test_a_load_limit_no_machine_meets_is_no_quiet_window(repo: Repo) -> None:
    _project(repo)
    arms = [{"name": "control"}, _mode("fails", 3)]
    # A negative limit is never met, whatever the machine's load.
    never = write_plan(
        repo,
        {"build": BUILD, "test": "./prog", "quiet": {"max_load": -1, "wait_s": 0}, "arms": arms},
        name="plans/never.yml",
    )
    # The clean twin: a limit every machine meets runs the arms as usual.
    always = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "quiet": {"max_load": 100000, "wait_s": 0},
            "arms": arms,
            "expect": {"control": "GREEN", "fails": "RED"},
        },
        name="plans/always.yml",
    )
    before = fingerprint(repo)
    code, data, _ = _run(repo, never)
    assert code == 1  # the control proves nothing: the mutated arm is UNANCHORED
    control, fails = data["arms"]
    assert control["verdict"] == "NO-QUIET-WINDOW" and fails["observed"] == "NO-QUIET-WINDOW"
    assert fails["verdict"] == "UNANCHORED"
    assert control["applied"] is None and control["compile_rc"] is None
    assert control["quiet"]["quiet"] is False and control["quiet"]["max_load"] == -1
    code, data, _ = _run(repo, always)
    assert code == 0, data["failures"]
    assert data["arms"][0]["quiet"]["quiet"] is True
    _untouched(repo, before)


def test_not_applied_fails_the_run_unless_expected(repo: Repo) -> None:
    _project(repo)
    arms = [
        {"name": "control"},
        {"name": "N", "replace": {"path": "src/lib.c", "old": "nowhere", "new": "x"}},
    ]
    plan = write_plan(repo, {"build": BUILD, "test": "./prog", "arms": arms})
    code, data, _ = _run(repo, plan)
    assert code == 1 and any("arm N: NOT-APPLIED" in f for f in data["failures"])
    plan = write_plan(
        repo,
        {"build": BUILD, "test": "./prog", "arms": arms, "expect": {"N": "NOT-APPLIED"}},
        name="plans/expected.yml",
    )
    code, data, _ = _run(repo, plan)
    assert code == 0, data["failures"]


def test_receipts_collect_judges_stale_against_the_control(repo: Repo, tmp_path: Path) -> None:
    _project(repo)
    plan = write_plan(
        repo,
        {
            "build": BUILD,
            "test": "./prog",
            "artifacts": ["prog"],
            "arms": [
                {"name": "control"},
                {"name": "readme", "replace": {"path": "README", "old": "probe", "new": "x"}},
            ],
        },
    )
    receipts = []
    for arm in ("control", "readme"):
        out = tmp_path / f"{arm}.json"
        job = repo.tools("mutate", "run", plan, "--arm", arm, "--receipt", str(out))
        assert job.exit_code == 0, job.stdout + job.stderr
        receipts.append(str(out))
    # Each job alone could not see the other's artifacts.
    assert json.loads(Path(receipts[1]).read_text())[0]["verdict"] == "GREEN"
    assert repo.tools("ledger", "merge", *receipts).exit_code == 0
    got = repo.tools("--format", "json", "mutate", "collect", plan)
    assert got.exit_code == 0, got.stdout + got.stderr
    data = json.loads(got.stdout)
    assert data["run"]["verdicts"] == {"control": "GREEN", "readme": "STALE"}
    derived = _arms(data)["readme"]
    assert derived["derived_from"] and derived["tested"] == "GREEN"
    assert repo.tools("ledger", "verify").exit_code == 0
    kinds = [r["kind"] for r in ledger_records(repo)]
    assert kinds.count("mutation-run") == 1
