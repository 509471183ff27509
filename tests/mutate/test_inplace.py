"""``--in-place``: clean affected files required, the tree restored and proven by sha256, and a
run killed mid-arm restored by the next ``tools mutate`` invocation."""

from __future__ import annotations

import json
import os
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
    py_project,
    run_tools,
    write_plan,
)

ARMS = [
    {"name": "control"},
    {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
]


def _usage(run, needle: str) -> None:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    assert needle in run.stderr, run.stderr


def test_in_place_run_restores_the_working_tree(repo: Repo) -> None:
    py_project(repo)
    repo.write("scratch.txt", "untracked, unrelated\n")
    repo.write("README", "dirty but not affected\n")
    plan = write_plan(
        repo, {"test": PY_TEST_CMD, "arms": ARMS[:2], "expect": {"control": "GREEN", "B": "RED"}}
    )
    before = fingerprint(repo)
    run = repo.tools("--format", "json", "mutate", "run", plan, "--in-place")
    assert run.exit_code == 0, run.stderr
    data = json.loads(run.stdout)
    b = data["arms"][1]
    assert b["verdict"] == "RED" and b["mode"] == "in-place" and b["restored"] is True
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    assert not (repo.path / ".git/tools/mutate/inplace/record.json").exists()


def test_in_place_restore_removes_folders_a_patch_created(repo: Repo) -> None:
    py_project(repo)
    repo.write(
        "specs/new.diff",
        "diff --git a/src/pkg/deep/new.py b/src/pkg/deep/new.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/src/pkg/deep/new.py\n@@ -0,0 +1 @@\n+X = 1\n",
    )
    plan = write_plan(
        repo,
        {
            "test": "test -f src/pkg/deep/new.py",
            "arms": [{"name": "new", "patch": "specs/new.diff"}],
            "expect": {"new": "GREEN"},
        },
    )
    before = fingerprint(repo)
    run = repo.tools("--format", "json", "mutate", "run", plan, "--in-place")
    assert run.exit_code == 0, run.stdout + run.stderr
    (arm,) = json.loads(run.stdout)["arms"]
    assert arm["targets"][0]["sha256_before"] is None and arm["restored"] is True
    assert not (repo.path / "src/pkg").exists()
    assert fingerprint(repo, skip=(LEDGER,)) == before


def test_dirty_affected_files_are_refused(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(repo, {"test": PY_TEST_CMD, "arms": ARMS[:2]})
    repo.write("src/calc.py", PY_CALC + "# local edit\n")
    before = fingerprint(repo)
    _usage(repo.tools("mutate", "run", plan, "--in-place"), "src/calc.py")
    assert fingerprint(repo) == before
    # Staged but otherwise clean is dirty too.
    repo.git("add", "src/calc.py")
    _usage(repo.tools("mutate", "run", plan, "--in-place"), "not clean")
    repo.git("reset", "-q", "--hard")
    # An untracked file where a patch would write is refused as well.
    repo.write(
        "specs/new.diff",
        "diff --git a/src/new.py b/src/new.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1 @@\n+X = 1\n",
    )
    plan = write_plan(repo, {"test": "true", "arms": [{"name": "X", "patch": "specs/new.diff"}]})
    repo.write("src/new.py", "mine\n")
    _usage(repo.tools("mutate", "run", plan, "--in-place"), "src/new.py")
    assert (repo.path / "src/new.py").read_text() == "mine\n"


def test_in_place_needs_head_as_base(repo: Repo) -> None:
    py_project(repo)
    repo.commit("More\n\nBody.\n", {"README": "more\n"})
    plan = write_plan(repo, {"base": "HEAD~1", "test": "true", "arms": ARMS[:1]})
    _usage(repo.tools("mutate", "run", plan, "--in-place"), "base")


def _wait_for(path: Path, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def _start_in_place_arm(
    repo: Repo, tmp_path: Path, *, text: bool = False
) -> tuple[str, Path, dict[str, str], subprocess.Popen]:
    """The real CLI in its own process, running one in-place arm whose test writes its
    shell's pid to a marker file, then sleeps: (plan, marker, the tree's fingerprint before,
    the process)."""
    py_project(repo)
    marker = tmp_path / "shell.pid"
    plan = write_plan(
        repo,
        {
            "test": f"echo $$ > {marker}; sleep 60",
            "arms": [
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}}
            ],
        },
    )
    before = fingerprint(repo)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), "mutate", "run", plan,
         "--in-place"],
        cwd=repo.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
    )  # fmt: skip
    return plan, marker, before, proc


def test_sigkill_mid_arm_then_the_next_invocation_restores(repo: Repo, tmp_path: Path) -> None:
    plan, marker, before, proc = _start_in_place_arm(repo, tmp_path)
    shell = int(_wait_for(marker))
    try:
        # Mid-arm: the working tree holds the mutation, the recovery record is on disk.
        assert "a - b" in (repo.path / "src/calc.py").read_text()
        assert (repo.path / ".git/tools/mutate/inplace/record.json").exists()
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    finally:
        try:
            os.killpg(shell, signal.SIGKILL)  # the arm's own session outlives a SIGKILL'd parent
        except ProcessLookupError:
            pass
    assert fingerprint(repo) != before
    done = run_tools(repo, "mutate", "matrix", plan)
    assert done.returncode == 0, done.stderr
    assert "completed a pending in-place restore" in done.stderr
    assert "sha256 verified" in done.stderr
    assert fingerprint(repo) == before
    assert not (repo.path / ".git/tools/mutate/inplace/record.json").exists()
    # Nothing pending any more: the next invocation says nothing of it.
    again = run_tools(repo, "mutate", "matrix", plan)
    assert "pending" not in again.stderr


def test_sigint_during_an_in_place_arm_restores_at_once(repo: Repo, tmp_path: Path) -> None:
    plan, marker, before, proc = _start_in_place_arm(repo, tmp_path, text=True)
    shell = int(_wait_for(marker))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "restored" in err
    assert fingerprint(repo) == before
    assert not (repo.path / ".git/tools/mutate/inplace/record.json").exists()
    try:
        os.kill(shell, 0)
        alive = Path(f"/proc/{shell}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, OSError):
        alive = False
    assert not alive


def test_recover_finishes_a_pending_restore_and_says_so(repo: Repo, tmp_path: Path) -> None:
    nothing = run_tools(repo, "mutate", "recover")
    assert nothing.returncode == 0 and nothing.stdout == "nothing pending\n", nothing.stderr
    plan, marker, before, proc = _start_in_place_arm(repo, tmp_path)
    shell = int(_wait_for(marker))
    # While the run lives it holds the lock: recover leaves its files alone and says why.
    busy = run_tools(repo, "mutate", "recover")
    assert busy.returncode == 1 and "still in progress" in busy.stderr
    assert "a - b" in (repo.path / "src/calc.py").read_text()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    try:
        os.killpg(shell, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert fingerprint(repo) != before
    from tools.mutate.inplace import pending_paths

    assert pending_paths(repo.path / ".git" / "tools") == ["src/calc.py"]
    done = run_tools(repo, "mutate", "recover")
    assert done.returncode == 0, done.stderr
    assert "completed a pending in-place restore" in done.stdout
    assert "sha256 verified" in done.stdout and "restored: src/calc.py" in done.stdout
    assert fingerprint(repo) == before
    assert pending_paths(repo.path / ".git" / "tools") is None
    again = run_tools(repo, "--format", "json", "mutate", "recover")
    assert again.returncode == 0 and json.loads(again.stdout) == {"pending": False, "restored": []}


def test_in_place_machine_verdicts_restore_the_tree(repo: Repo) -> None:
    py_project(repo)
    # A failing test's wrapper reports a full disk; a killed one passes its status on.
    test = (
        f"{PY_TEST_CMD}; rc=$?; [ $rc -eq 1 ] && echo 'saving the log: No space left on device'; "
        "exit $rc"
    )
    plan = write_plan(
        repo,
        {
            "test": test,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
                {
                    "name": "K",
                    "replace": {
                        "path": "src/calc.py",
                        "old": "a + b",
                        "new": "__import__('os').kill(__import__('os').getpid(), 9)",
                    },
                },
            ],
            "expect": {"control": "GREEN", "B": "ENV-FAULT", "K": "KILLED"},
        },
    )
    before = fingerprint(repo)
    run = repo.tools("--format", "json", "mutate", "run", plan, "--in-place")
    assert run.exit_code == 0, run.stdout + run.stderr
    arms = {r["arm"]: r for r in json.loads(run.stdout)["arms"]}
    assert arms["B"]["matched"]["by"] == "no-space" and arms["B"]["restored"] is True
    assert arms["K"]["signal"] == "SIGKILL" and arms["K"]["restored"] is True
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    assert not (repo.path / ".git/tools/mutate/inplace/record.json").exists()
