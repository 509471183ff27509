"""Mutate's own writes (the ledger, the spec's evidence table, receipts) never go through a
symbolic link nor below a linked folder (SPEC §10): exit 2 naming the link, before any arm
runs, and nothing is written outside the repository."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import Repo
from tests.mutate.conftest import LEDGER, PY_TEST_CMD, fingerprint, py_project, write_plan

SPEC = "specs/calc.md"
SPEC_TEXT = "# Calc\n\n## Now\n\nThe calculator adds.\n\n## Later\n\nMore.\n"


def _plan(repo: Repo, tmp_path: Path, **extra: object) -> str:
    ran = tmp_path / "ran"
    return write_plan(
        repo, {"test": f"touch {ran}; {PY_TEST_CMD}", "arms": [{"name": "control"}], **extra}
    )


def _refused(run, link: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    assert f"{link}: is a symbolic link" in run.stderr, run.stderr
    assert not (tmp_path / "ran").exists()  # refused before any arm ran


def _elsewhere(repo: Repo) -> tuple[Path, dict[str, bytes]]:
    """A real folder inside the repository holding the spec (the plan loader already
    refuses a spec whose link leads outside; a write through any link is refused too)."""
    real = repo.path / "docs" / "real"
    real.mkdir(parents=True)
    (real / "calc.md").write_text(SPEC_TEXT)
    return real, {"calc.md": SPEC_TEXT.encode()}


def _same(folder: Path, want: dict[str, bytes]) -> None:
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == want


def test_a_spec_below_a_linked_folder_is_refused(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    real, want = _elsewhere(repo)
    os.symlink("docs/real", repo.path / "specs")
    plan = _plan(repo, tmp_path, spec=SPEC)
    _refused(repo.tools("mutate", "run", plan), "specs", tmp_path)
    assert not (repo.path / LEDGER).exists()
    _same(real, want)


def test_a_spec_that_is_a_link_is_refused_and_stays_a_link(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    real, want = _elsewhere(repo)
    (repo.path / "specs").mkdir()
    os.symlink("../docs/real/calc.md", repo.path / SPEC)
    plan = _plan(repo, tmp_path, spec=SPEC)
    before = fingerprint(repo)
    _refused(repo.tools("mutate", "run", plan), SPEC, tmp_path)
    assert (repo.path / SPEC).is_symlink() and fingerprint(repo) == before
    _same(real, want)
    # collect refuses it the same way.
    _refused(repo.tools("mutate", "collect", plan), SPEC, tmp_path)
    _same(real, want)


def test_a_ledger_below_a_linked_folder_is_refused(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    out = tmp_path / "agents"
    out.mkdir()
    os.symlink(out, repo.path / ".agents")
    plan = _plan(repo, tmp_path)
    _refused(repo.tools("mutate", "run", plan), ".agents", tmp_path)
    assert list(out.iterdir()) == []
    _refused(repo.tools("mutate", "collect", plan), ".agents", tmp_path)
    assert list(out.iterdir()) == []


def test_a_receipt_below_a_linked_folder_is_refused(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    out = tmp_path / "receipts"
    out.mkdir()
    os.symlink(out, repo.path / "receipts")
    plan = _plan(repo, tmp_path)
    inside = str(repo.path / "receipts" / "r.json")
    _refused(repo.tools("mutate", "run", plan, "--receipt", inside), "receipts", tmp_path)
    assert list(out.iterdir()) == []
    # A receipt outside the repository is the caller's choice, written as asked.
    run = repo.tools("mutate", "run", plan, "--receipt", str(out / "r.json"))
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (out / "r.json").is_file()
