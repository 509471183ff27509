"""``tools evidence replay`` on a real C project built by ``cc``: records that reproduce, forged
records (an edited ``run_rc`` or sha256 with a recomputed id, which ``ledger verify`` accepts)
refused, a killed replay inconclusive (a skip, never a pass), a record whose plan is gone
unreplayable; statements as SPEC §11 lays them out; the tree and ledger untouched."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.evidence.conftest import (
    c_plan,
    c_repo,
    findings,
    forge,
    gate_status,
    ledger,
    record_arms,
    replace_record,
    rules,
)
from tests.mutate.conftest import C_TEST_CMD, fingerprint, no_worktrees_left


def _replay(repo: Repo, *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "evidence", "replay", "--base", "main", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()


def test_a_recorded_run_reproduces_and_nothing_is_written(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    before = fingerprint(repo)
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_WORKFLOW_REF", "o/r/.github/workflows/e.yml@refs/pull/1/merge")
    code, data = _replay(repo, "-j", "2", "--statement-dir", str(tmp_path / "st"))
    assert code == 0 and data["status"] == "pass"
    assert rules(data, "evidence") == ["evidence-reproduced"] * 3
    messages = " ".join(f["message"] for f in findings(data, "evidence"))
    for r in arms:
        assert r["id"][:12] in messages
    assert "verdict RED" in messages and "verdict GREEN" in messages
    assert fingerprint(repo) == before  # neither the tree nor the ledger changed
    no_worktrees_left(repo)
    arm_b = next(r for r in arms if r["arm"] == "B")
    st = json.loads((tmp_path / "st" / f"{arm_b['id']}.statement.json").read_text())
    assert st["_type"] == "https://in-toto.io/Statement/v1"
    assert st["predicateType"] == "https://agent-protocol-gates.dev/evidence-replay/v1"
    assert st["subject"][0] == {"name": f"ledger:{arm_b['id']}", "digest": {"sha256": arm_b["id"]}}
    (target,) = arm_b["targets"]
    assert st["subject"][1] == {
        "name": "src/lib.c",
        "digest": {"sha256": target["sha256_before"], "gitCommit": arm_b["base"]},
    }
    pred = st["predicate"]
    assert pred["record"] == arm_b["id"] and pred["observed"]["run_rc"] == 1
    assert pred["observed"]["verdict"] == "RED" and pred["tool"]["name"] == "tools"
    assert pred["ci"] == {
        "GITHUB_RUN_ID": "4242",
        "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/e.yml@refs/pull/1/merge",
    }
    assert set(pred["conditions"]) >= {"cpus", "start", "end"}
    predicate_only = json.loads((tmp_path / "st" / f"{arm_b['id']}.predicate.json").read_text())
    assert predicate_only == pred
    subject = (tmp_path / "st" / f"{arm_b['id']}.record.json").read_bytes()
    assert hashlib.sha256(subject).hexdigest() == arm_b["id"]  # actions/attest subject-path


def test_forged_run_rc_and_sha256_pass_ledger_verify_but_not_replay(repo: Repo) -> None:
    c_repo(repo)
    arms = {r["arm"]: r for r in record_arms(repo, c_plan())}
    b, ctrl = arms["B"], arms["M"]
    forged_b = forge(b, run_rc=0, run_rcs=[0], verdict="GREEN", observed="GREEN")
    (t,) = ctrl["targets"]
    forged_ctrl = forge(ctrl, targets=[{**t, "sha256_before": "0" * 64}])
    replace_record(repo, b, forged_b)
    replace_record(repo, ctrl, forged_ctrl)
    repo.commit("Improve the evidence\n\nBody.\n")
    verify = repo.tools("ledger", "verify", "--base", "main")
    assert verify.exit_code == 0, verify.stdout  # well-formed: today's check accepts it
    code, data = _replay(repo)
    assert code == 1 and gate_status(data, "evidence") == "fail"
    by_rule = {f["message"][7:19]: f for f in findings(data, "evidence")}
    fb, fc = by_rule[forged_b["id"][:12]], by_rule[forged_ctrl["id"][:12]]
    assert fb["rule"] == fc["rule"] == "evidence-unreproduced"
    assert fb["severity"] == "error"
    lines = (repo.path / ".agents/ledger.jsonl").read_text().splitlines()
    assert fb["path"] == ".agents/ledger.jsonl" and forged_b["id"] in lines[fb["line"] - 1]
    assert "run_rc claimed 0, observed 1" in fb["message"]
    assert "verdict claimed GREEN, observed RED" in fb["message"]
    assert (
        f"sha256_before[src/lib.c] claimed {'0' * 64}, observed {t['sha256_before']}"
        in fc["message"]
    )


def test_evidence_unreproduced_cannot_be_turned_down(repo: Repo) -> None:
    c_repo(repo)
    repo.commit(
        "Config\n\nBody.\n", {".agents/protocol.yaml": "rules:\n  evidence-unreproduced: warning\n"}
    )
    run = repo.tools("evidence", "replay", "--base", "main")
    assert run.exit_code == 2 and "keeps data safe" in run.stderr


def test_a_killed_replay_is_inconclusive_never_a_pass(repo: Repo, tmp_path: Path) -> None:
    c_repo(repo)
    trap = tmp_path / "oom-now"
    test = f"if [ -e {trap} ]; then kill -KILL $$; fi; {C_TEST_CMD}"
    arms = record_arms(repo, c_plan(test=test))
    assert sorted(r["verdict"] for r in arms) == ["GREEN", "GREEN", "RED"]
    trap.write_text("the OOM killer, standing in\n")
    code, data = _replay(repo)
    assert code == 0 and data["status"] == "skip"
    assert gate_status(data, "evidence") == "skip"
    assert rules(data, "evidence") == ["evidence-replay-inconclusive"] * 3
    assert all(
        "KILLED" in f["message"] and f["severity"] == "warning" for f in findings(data, "evidence")
    )
    strict = repo.tools("evidence", "replay", "--base", "main", "--fail-on-skip")
    assert strict.exit_code == 1


def test_a_record_whose_plan_changed_is_unreplayable(repo: Repo) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    repo.write("plans/plan.yml", (repo.path / "plans/plan.yml").read_text() + "# edited\n")
    code, data = _replay(repo, "--id", arms[0]["id"][:12])
    assert code == 1
    (f,) = findings(data, "evidence")
    assert f["rule"] == "evidence-unreplayable" and arms[0]["id"][:12] in f["message"]
    assert "sha256" in f["message"]
    sarif = repo.tools("--format", "sarif", "evidence", "replay", "--id", arms[0]["id"][:12])
    assert sarif.exit_code == 1
    (result,) = sarif.sarif()["runs"][0]["results"]
    assert result["ruleId"].endswith("evidence-unreplayable") and result["level"] == "error"


def test_append_writes_a_replay_record_per_record(repo: Repo) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    code, data = _replay(repo, "--append")
    assert code == 0
    added = [r for r in ledger(repo) if r["kind"] == "evidence-replay"]
    assert sorted(r["record"] for r in added) == sorted(r["id"] for r in arms)
    assert {r["status"] for r in added} == {"reproduced"}


def test_an_empty_range_is_a_pass_that_says_so(repo: Repo) -> None:
    c_repo(repo)
    repo.branch("work", "main")
    code, data = _replay(repo)
    assert code == 0 and rules(data, "evidence") == ["range-empty"]


def test_an_id_of_another_kind_is_exit_2(repo: Repo) -> None:
    c_repo(repo)
    record_arms(repo, c_plan())
    run_record = next(r for r in ledger(repo) if r["kind"] == "mutation-run")
    run = repo.tools("evidence", "replay", "--id", run_record["id"])
    assert run.exit_code == 2 and "mutation-run record" in run.stderr


def test_plans_at_one_commit_share_worktrees_and_each_arm_starts_from_base(repo: Repo) -> None:
    """Two plans recorded at one base replay in one pool of worktrees (one checkout, reset
    between arms): the second plan's arms find nothing the first plan's builds left."""
    from tests.mutate.conftest import C_BUILD_CMD, write_plan

    c_repo(repo)
    repo.branch("work", "main")
    first = c_plan(base="main", build=f"{C_BUILD_CMD} && echo x > left-by-first")
    second = c_plan(base="main", test=f"test ! -e left-by-first && {C_TEST_CMD}")
    for name, plan in (("plans/first.yml", first), ("plans/second.yml", second)):
        run = repo.tools("mutate", "run", write_plan(repo, plan, name))
        assert run.exit_code == 0, run.stderr
    repo.commit("Record two plans' arms\n\nBody.\n")
    arms = [r for r in ledger(repo) if r["kind"] == "mutation-arm"]
    assert len(arms) == 6 and len({r["base"] for r in arms}) == 1
    code, data = _replay(repo, "-j", "1")
    assert code == 0 and rules(data, "evidence") == ["evidence-reproduced"] * 6, data
    no_worktrees_left(repo)
