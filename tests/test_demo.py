"""`tools demo`: the first command a new user runs builds its example, runs the tour as
expected, and leaves nothing behind unless --keep."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tools import numerics

HAVE_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp dir of the test's own, for the demo and its subprocesses (worktrees)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_demo_runs_the_tour_and_leaves_nothing_behind(private_tmp: Path) -> None:
    run = run_cli(["demo"])
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "The tour ran as expected." in run.stdout
    for rule in ("ai-authorship", "marker-missing", "subject-period", "checkpoint-missed"):
        assert f"error[{rule}]" in run.stdout
    assert "error[ratchet-regression] src/ops.c:15" in run.stdout
    assert "info[ratchet-exempt] src/ops.c:11" in run.stdout
    if HAVE_CC:
        assert "ATTRIBUTED" in run.stdout and "| add-subtracts |" in run.stdout
        # The arm outside the test binary is STALE, not a GREEN the test never judged.
        (docs_row,) = [
            ln for ln in run.stdout.splitlines() if ln.strip().startswith("| docs-only |")
        ]
        assert "| STALE |" in docs_row and "| artifacts |" in run.stdout
    absent = numerics.missing()
    if absent:  # the step says which module of the extra is missing, and the tour still passes
        assert f"skipped: grid-tie: {' and '.join(absent)}" in run.stdout
    else:
        assert "$ tools numerics grid-tie evidence/grid-tie.json" in run.stdout
        assert "skipped: grid-tie" not in run.stdout
    assert list(private_tmp.iterdir()) == []  # the repository and every worktree are gone


def test_demo_keep_leaves_a_repository_whose_evidence_is_backed(
    private_tmp: Path, tmp_path: Path
) -> None:
    keep = tmp_path / "kept"
    run = run_cli(["demo", "--keep", str(keep)])
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (keep / ".git").is_dir() and (keep / "specs" / "calc.md").is_file()
    assert run_cli(["--repo", str(keep), "spec", "check"]).exit_code == 0
    assert run_cli(["--repo", str(keep), "ledger", "verify", "--base", "main~3"]).exit_code == 0
    spec = (keep / "specs" / "calc.md").read_text()
    if HAVE_CC:
        assert spec.count("<!-- tools:evidence id=") == 2
    again = run_cli(["demo", "--keep", str(keep)])
    assert again.exit_code == 2 and "--keep" in again.stderr
