"""Every JSON input (baselines, receipts, ledger lines, grid-tie evidence, plans given as JSON)
is refused with exit 2 past 100 levels of nesting, measured without recursion (SPEC §10)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Repo
from tools.bounded import MAX_DEPTH, check_yaml, json_depth
from tools.errors import UsageError
from tools.ledger import append_records, make_record

BASELINE = ".agents/baselines/device-leakage.json"
DEEP = 100_000


def nested(depth: int, inner: str = "0") -> str:
    return "[" * depth + inner + "]" * depth


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[["', 0),
        ("[]", 1),
        ('{"a": [{"b": "[[[[{{"}]}', 3),
        ('["\\"[[", ["x"]]', 2),
        ('["a\\\\", ["b"]]', 2),  # an escaped backslash ends the string before its quote
        (nested(250), 250),
        ('{"a":' * 150 + "1" + "}" * 150, 150),
        ("]]]]", 0),
    ],
)
def test_json_depth_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert json_depth(text) == depth
    assert json_depth(text.encode()) == depth


def test_a_baseline_nested_past_the_limit_is_exit_2(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "int f() { return at::kCUDA; }\n"})
    for depth, refused in ((MAX_DEPTH, False), (MAX_DEPTH + 1, True), (DEEP, True)):
        deep = '{"ratchet": "device-leakage", "buckets": {"kcuda": ' + nested(depth - 2) + "}}"
        repo.write(BASELINE, deep)
        run = repo.tools("ratchet", "check")
        assert run.exit_code == 2, run.stdout
        assert (f"nesting deeper than {MAX_DEPTH} levels" in run.stderr) is refused, run.stderr
        assert BASELINE in run.stderr


def test_a_receipt_nested_past_the_limit_is_exit_2(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n")
    receipt = repo.write("receipt.json", nested(DEEP))
    run = repo.tools("ledger", "merge", str(receipt))
    assert run.exit_code == 2 and "deeper than 100 levels" in run.stderr
    assert str(receipt) in run.stderr
    assert not (repo.path / ".agents/ledger.jsonl").exists()


def test_a_ledger_line_nested_past_the_limit_is_malformed(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n")
    led = repo.path / ".agents/ledger.jsonl"
    append_records(led, [make_record("attribution", {"n": 1}, created="2026-01-01T00:00:01Z")])
    with led.open("ab") as out:
        out.write(b'{"deep": ' + nested(DEEP).encode() + b"}\n")
    run = repo.tools("--format", "json", "ledger", "verify", "--base", "main")
    found = [f for f in run.json()["gates"][0]["findings"] if f["rule"] == "ledger-malformed"]
    assert run.exit_code == 1
    assert len(found) == 1 and found[0]["line"] == 2
    assert "nested deeper than 100 levels" in found[0]["message"]


def test_a_record_at_the_limit_still_verifies(repo: Repo) -> None:
    payload: object = 1
    for _ in range(MAX_DEPTH - 1):  # the record object itself is one level
        payload = [payload]
    record = make_record("attribution", {"deep": payload}, created="2026-01-01T00:00:01Z")
    repo.commit("Start\n\nBody.\n")
    append_records(repo.path / ".agents/ledger.jsonl", [record])
    run = repo.tools("--format", "json", "ledger", "verify", "--base", "main")
    assert run.exit_code == 0, run.stdout


def test_grid_tie_evidence_nested_past_the_limit_is_exit_2(repo: Repo) -> None:
    pytest.importorskip("numpy")
    repo.commit("Start\n\nBody.\n")
    evidence = repo.write("evidence.json", '{"schema": ' + nested(DEEP) + "}")
    run = repo.tools("numerics", "grid-tie", str(evidence))
    assert run.exit_code == 2 and "nesting deeper than 100 levels" in run.stderr


def test_a_plan_given_as_json_nested_past_the_limit_is_exit_2(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n")
    plan = repo.path / "plans" / "plan.json"  # untracked: nothing needs committing
    plan.parent.mkdir()
    plan.write_text(json.dumps({"arms": []})[:-1] + ', "x": ' + nested(DEEP) + "}")
    run = repo.tools("mutate", "run", str(plan))
    assert run.exit_code == 2 and "nesting deeper than 100" in run.stderr


def test_yaml_that_libyaml_refuses_is_still_measured() -> None:
    # An escaped lone surrogate: libyaml refuses it, the pure-Python loader builds it.
    text = 'a: "\\ud800"\nb: ' + nested(MAX_DEPTH + 1) + "\n"
    with pytest.raises(UsageError, match="nesting deeper than 100"):
        check_yaml(text, "x.yaml")
