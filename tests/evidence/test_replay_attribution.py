"""``tools evidence replay`` of an ``attribution`` record: the bisection and the two-way proof
run again between the recorded good and bad commits, and a forged first bad commit or leg
refused."""

from __future__ import annotations

from tests.conftest import Repo
from tests.evidence.conftest import findings, forge, ledger, replace_record, rules
from tests.mutate.conftest import C_BUILD_CMD, C_LIB, C_TEST_CMD, c_project


def _attributed(repo: Repo) -> dict:
    good = c_project(repo)
    repo.commit("Docs\n\nBody.\n", {"README": "scaler\n"})
    repo.commit("Triple\n\nBody.\n", {"src/lib.c": C_LIB.replace("2 * x", "3 * x")})
    repo.commit("More docs\n\nBody.\n", {"README": "scaler, tripled\n"})
    repo.branch("work")
    run = repo.tools(
        "attribute", "--good", good, "--bad", "HEAD", "--build", C_BUILD_CMD, "--test", C_TEST_CMD
    )
    assert run.exit_code == 0, run.stderr
    repo.commit("Record the attribution\n\nBody.\n")
    (record,) = [r for r in ledger(repo) if r["kind"] == "attribution"]
    assert record["verdict"] == "ATTRIBUTED"
    return record


def test_an_attribution_reproduces(repo: Repo) -> None:
    record = _attributed(repo)
    run = repo.tools("--format", "json", "evidence", "replay", "--base", "main")
    assert run.exit_code == 0, run.stdout
    (f,) = findings(run.json(), "evidence")
    assert f["rule"] == "evidence-reproduced" and record["id"][:12] in f["message"]
    assert "verdict ATTRIBUTED" in f["message"]


def test_a_forged_attribution_is_unreproduced(repo: Repo) -> None:
    record = _attributed(repo)
    leg = {**record["restore"], "run_rc": 0}
    forged = forge(record, restore=leg)
    replace_record(repo, record, forged)
    run = repo.tools("--format", "json", "evidence", "replay", "--id", forged["id"][:16])
    assert run.exit_code == 1
    data = run.json()
    assert rules(data, "evidence") == ["evidence-unreproduced"]
    assert "restore.run_rc claimed 0, observed 1" in findings(data, "evidence")[0]["message"]
