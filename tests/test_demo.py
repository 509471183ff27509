"""`tools demo`: the first command a new user runs builds its example, runs the tour as
expected, and leaves nothing behind unless --keep."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tools import numerics

HAVE_CC = shutil.which("cc") is not None or shutil.which("gcc") is not None
HAVE_SSH_KEYGEN = shutil.which("ssh-keygen") is not None


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
        _assert_evidence_loop(run.stdout, signed=HAVE_SSH_KEYGEN)
    else:
        assert "skipped: evidence replay: no C compiler (cc) on PATH" in run.stdout
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


def _assert_evidence_loop(out: str, *, signed: bool) -> None:
    """The arm was recorded on its own branch and replayed; with ``signed``, signed, verified
    and its forged copy refused; without, the signing said it was skipped and why."""
    replay = out.index("$ tools evidence replay --base main")
    assert "info[evidence-reproduced]" in out[replay:] and "verdict RED" in out[replay:]
    if not signed:
        assert "skipped: signing: no ssh-keygen on PATH" in out
        assert (
            "$ tools evidence sign" not in out and "$ tools ledger verify --base main " not in out
        )
        return
    assert "$ tools evidence sign --key " in out and "skipped: signing" not in out
    verify = "$ tools ledger verify --base main --require-attested mutation-arm --allowed-signers"
    first, second = (out[i:] for i in _all(out, verify))
    assert "ok   attestations" in first.split("$ tools", 2)[1]
    forged = second.split("\n[7/7]", 1)[0]
    assert "FAIL attestations (1 error)" in forged and "error[evidence-unattested]" in forged
    assert "ok   ledger" in forged  # its id recomputes: only the missing signature tells
    assert "exit 1 in" in forged and "as expected" in forged


def _all(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at != -1:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _path_without(folder: Path, *names: str) -> str:
    """A PATH of one folder that links every program on the current PATH but ``names``."""
    folder.mkdir()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for prog in os.listdir(entry):
            link = folder / prog
            if prog in names or link.exists() or link.is_symlink():
                continue
            target = Path(entry) / prog
            if os.access(target, os.X_OK) and not target.is_dir():
                link.symlink_to(target)
    return str(folder)


@pytest.mark.parametrize(
    "hidden",
    [("ssh-keygen",), ("cc", "gcc", "ssh-keygen")],
    ids=["no-ssh-keygen", "no-cc-no-ssh-keygen"],
)
def test_demo_on_a_machine_without_the_tools_says_what_it_skipped(
    private_tmp: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hidden: tuple[str, ...]
) -> None:
    if "cc" not in hidden and not HAVE_CC:
        pytest.skip("no C compiler on this machine")
    monkeypatch.setenv("PATH", _path_without(tmp_path / "bin", *hidden))
    run = run_cli(["demo"])
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "The tour ran as expected." in run.stdout
    if "cc" in hidden:
        assert (
            "skipped: evidence replay: no C compiler (cc) on PATH: no arm to replay" in run.stdout
        )
        assert "$ tools evidence" not in run.stdout and "skipped: signing" not in run.stdout
    else:
        _assert_evidence_loop(run.stdout, signed=False)
    assert "ok   attestations" not in run.stdout  # never a pass for what did not run
    assert list(private_tmp.iterdir()) == []
