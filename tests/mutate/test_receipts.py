"""Many machines, end to end on one: the matrix, receipts written by separate processes,
``tools ledger merge`` and ``tools mutate collect``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Repo
from tests.mutate.conftest import (
    LEDGER,
    PY_TEST_CMD,
    check_arm_record,
    check_run_record,
    fingerprint,
    ledger_records,
    py_project,
    run_tools,
    write_plan,
)


def _plan(repo: Repo, test: str = PY_TEST_CMD, **extra: object) -> str:
    return write_plan(
        repo,
        {
            "test": test,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
                {"name": "C", "replace": {"path": "README", "old": "calc", "new": "calculator"}},
            ],
            **extra,
        },
    )


def _jobs(repo: Repo, plan: str, out: Path) -> list[Path]:
    """What each CI job of the matrix does, each in its own process."""
    matrix = run_tools(repo, "mutate", "matrix", plan)
    assert matrix.returncode == 0, matrix.stderr
    receipts = []
    for arm in json.loads(matrix.stdout)["arm"]:
        receipt = out / f"{arm}.json"
        job = run_tools(repo, "mutate", "run", plan, "--arm", arm, "--receipt", str(receipt))
        assert job.returncode in (0, 1), job.stderr
        assert "receipt:" in job.stdout
        receipts.append(receipt)
    return receipts


def test_receipts_merge_and_collect(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan = _plan(repo, expect={"control": "GREEN", "B": "RED", "C": "GREEN"})
    before = fingerprint(repo)
    receipts = _jobs(repo, plan, tmp_path)
    # The jobs wrote receipts, not the ledger, and left the tree alone.
    assert not (repo.path / LEDGER).exists()
    assert fingerprint(repo) == before
    for receipt in receipts:
        (record,) = json.loads(receipt.read_text())
        check_arm_record(record)
    merged = run_tools(repo, "ledger", "merge", *map(str, receipts))
    assert merged.returncode == 0, merged.stderr
    assert len(ledger_records(repo)) == 3
    collected = run_tools(repo, "--format", "json", "mutate", "collect", plan)
    assert collected.returncode == 0, collected.stderr
    data = json.loads(collected.stdout)
    run = data["run"]
    check_run_record(run)
    assert run["verdicts"] == {"control": "GREEN", "B": "RED", "C": "GREEN"}
    arm_ids = [json.loads(r.read_text())[0]["id"] for r in receipts]
    assert run["arms"] == arm_ids  # plan order: control, B, C
    records = ledger_records(repo)
    assert [r["id"] for r in records][-1] == run["id"]
    assert len(records) == 4
    verify = run_tools(repo, "ledger", "verify", "--base", "HEAD")
    assert verify.returncode == 0, verify.stdout


def test_collect_decides_unanchored(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan = _plan(repo, test="grep -q 'a - b' src/calc.py")  # the bare tree is red
    receipts = _jobs(repo, plan, tmp_path)
    verdicts = {json.loads(r.read_text())[0]["arm"]: json.loads(r.read_text())[0] for r in receipts}
    # Run alone, no arm is UNANCHORED: its control did not run there.
    assert verdicts["B"]["verdict"] == "GREEN" and verdicts["control"]["verdict"] == "RED"
    assert run_tools(repo, "ledger", "merge", *map(str, receipts)).returncode == 0
    collected = run_tools(repo, "--format", "json", "mutate", "collect", plan)
    assert collected.returncode == 1
    data = json.loads(collected.stdout)
    assert data["run"]["verdicts"] == {"control": "RED", "B": "UNANCHORED", "C": "UNANCHORED"}
    by_arm = {a["arm"]: a for a in data["arms"]}
    for name in ("B", "C"):
        derived = by_arm[name]
        check_arm_record(derived)
        assert derived["verdict"] == "UNANCHORED"
        assert derived["derived_from"] == verdicts[name]["id"]
        assert derived["observed"] == verdicts[name]["verdict"]
    assert by_arm["control"]["id"] == verdicts["control"]["id"]
    # The run's arm ids are the records whose verdicts it lists.
    ledger = {r["id"]: r for r in ledger_records(repo)}
    for rid in data["run"]["arms"]:
        assert ledger[rid]["verdict"] == data["run"]["verdicts"][ledger[rid]["arm"]]
    # Collecting again builds from the originals, not from the derived records.
    again = run_tools(repo, "--format", "json", "mutate", "collect", plan)
    assert json.loads(again.stdout)["run"]["arms"] == data["run"]["arms"]
    kinds = [r["kind"] for r in ledger_records(repo)]
    assert kinds.count("mutation-arm") == 5  # three receipts, two derived once


def test_collect_with_a_missing_arm_writes_nothing(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan = _plan(repo)
    receipt = tmp_path / "control.json"
    job = run_tools(repo, "mutate", "run", plan, "--arm", "control", "--receipt", str(receipt))
    assert job.returncode == 0, job.stderr
    assert run_tools(repo, "ledger", "merge", str(receipt)).returncode == 0
    before = (repo.path / LEDGER).read_bytes()
    collected = run_tools(repo, "mutate", "collect", plan)
    assert collected.returncode == 1
    assert "B, C" in collected.stderr and "nothing written" in collected.stderr
    assert (repo.path / LEDGER).read_bytes() == before


def test_collect_ignores_records_of_another_plan_text(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan = _plan(repo)
    receipts = _jobs(repo, plan, tmp_path)
    assert run_tools(repo, "ledger", "merge", *map(str, receipts)).returncode == 0
    _plan(repo, test=PY_TEST_CMD + " ")  # the same plan file, edited: another experiment
    collected = run_tools(repo, "mutate", "collect", plan)
    assert collected.returncode == 1
    assert "control, B, C" in collected.stderr


def test_several_arms_in_one_receipt_are_anchored_there(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    plan = _plan(repo, test="grep -q 'a - b' src/calc.py")
    receipt = tmp_path / "both.json"
    run = repo.tools(
        "mutate", "run", plan, "--arm", "control", "--arm", "B", "--receipt", str(receipt)
    )
    assert run.exit_code == 1
    records = json.loads(receipt.read_text())
    assert [r["verdict"] for r in records] == ["RED", "UNANCHORED"]
    assert not (repo.path / LEDGER).exists()
