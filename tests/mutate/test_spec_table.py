"""Evidence tables in a spec's ``Now`` section, through the shared renderer ``tools.evidence``.

The tests that read the rendered table need that renderer; they skip, saying so, while it is
not importable. What happens without it (the records stand, the command says the table was
not written and exits 1) is tested always."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import (
    LEDGER,
    PY_TEST_CMD,
    ledger_records,
    py_project,
    run_tools,
    write_plan,
)

SPEC = "specs/calc.md"
SPEC_TEXT = (
    "# Calc\n\n## Owed\n\n- nothing\n\n## Now\n\nThe calculator adds.\n\n## Later\n\nMore.\n"
)
HEADER = (
    "| arm | mutation | applied | sha256 before → mutated → after | compile_rc | run_rc "
    "| verdict | restored |"
)


def _renderer() -> None:
    pytest.importorskip(
        "tools.evidence", reason="the evidence renderer (tools/evidence.py) has not landed yet"
    )


def _setup(repo: Repo, **extra: object) -> str:
    py_project(repo)
    repo.commit("Add the spec\n\nBody.\n", {SPEC: SPEC_TEXT})
    return write_plan(
        repo,
        {
            "spec": SPEC,
            "test": PY_TEST_CMD,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
            ],
            **extra,
        },
    )


def _now(repo: Repo) -> str:
    text = (repo.path / SPEC).read_text()
    return text.split("## Now", 1)[1].split("## Later", 1)[0]


def test_without_the_renderer_the_records_stand_and_the_run_says_so(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tools

    plan = _setup(repo)
    # The import fails, even when another test has imported the renderer already.
    monkeypatch.setitem(sys.modules, "tools.evidence", None)
    monkeypatch.delattr(tools, "evidence", raising=False)
    run = repo.tools("mutate", "run", plan)
    assert run.exit_code == 1
    assert "evidence table of specs/calc.md was not written" in run.stderr
    assert [r["kind"] for r in ledger_records(repo)] == ["mutation-arm"] * 2 + ["mutation-run"]
    assert (repo.path / SPEC).read_text() == SPEC_TEXT


def test_run_renders_the_table_into_now_idempotently(repo: Repo) -> None:
    _renderer()
    from tools.mutate import spec_table

    plan = _setup(repo)
    run = repo.tools("--format", "json", "mutate", "run", plan)
    assert run.exit_code == 0, run.stderr
    record = json.loads(run.stdout)["run"]
    now = _now(repo)
    assert f"<!-- tools:evidence id={record['id']} plan=plans/plan.yml -->" in now
    assert HEADER in now and "<!-- /tools:evidence -->" in now
    assert "| B | replace 'a + b'→'a - b' in src/calc.py | yes (+1/-1) |" in now
    assert "| control | none | yes | — |" in now
    # The conditions line sits under the table, a blank line between.
    assert "|\n\nConditions: " in now and "free disk" in now
    # The same record again: not a byte changes.
    text = (repo.path / SPEC).read_bytes()
    lookup = spec_table.ledger_lookup(repo.path / LEDGER)
    assert spec_table.render(repo.path, SPEC, record, lookup) is False
    assert (repo.path / SPEC).read_bytes() == text
    # A second run of the plan replaces its block: one block per plan.
    again = repo.tools("--format", "json", "mutate", "run", plan)
    second = json.loads(again.stdout)["run"]
    now = _now(repo)
    assert now.count("<!-- tools:evidence ") == 1
    assert f"id={second['id']}" in now
    assert "## Later\n\nMore.\n" in (repo.path / SPEC).read_text()


def test_overlay_column(repo: Repo) -> None:
    _renderer()
    repo.write(
        "specs/patches/fix.diff",
        "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-calc\n+calc fixed\n",
    )
    plan = _setup(repo, overlay=[{"patch": "specs/patches/fix.diff"}])
    run = repo.tools("mutate", "run", plan)
    assert run.exit_code == 0, run.stderr
    now = _now(repo)
    assert "| arm | mutation | overlay | applied |" in now
    assert "patch specs/patches/fix.diff" in now


def test_collect_renders_from_merged_receipts(repo: Repo, tmp_path: Path) -> None:
    _renderer()
    plan = _setup(repo)
    receipts = []
    for arm in ("control", "B"):
        out = tmp_path / f"{arm}.json"
        job = run_tools(repo, "mutate", "run", plan, "--arm", arm, "--receipt", str(out))
        assert job.returncode == 0, job.stderr
        receipts.append(str(out))
    assert run_tools(repo, "ledger", "merge", *receipts).returncode == 0
    assert (repo.path / SPEC).read_text() == SPEC_TEXT  # the jobs render nothing
    collected = run_tools(repo, "--format", "json", "mutate", "collect", plan)
    assert collected.returncode == 0, collected.stderr
    run_id = json.loads(collected.stdout)["run"]["id"]
    now = _now(repo)
    assert f"id={run_id}" in now and "| B |" in now and "| control |" in now


def test_attribution_table(repo: Repo) -> None:
    _renderer()
    good = repo.commit("One\n\nBody.\n", {"state": "good\n", SPEC: SPEC_TEXT})
    repo.commit("Two\n\nBody.\n", {"other": "x\n"})
    bad = repo.commit("Three\n\nBody.\n", {"state": "bad\n"})
    run = repo.tools(
        "--format",
        "json",
        "attribute",
        "--good",
        good,
        "--bad",
        bad,
        "--test",
        "grep -q good state",
        "--spec",
        SPEC,
    )
    assert run.exit_code == 0, run.stderr
    record = json.loads(run.stdout)["attribution"]
    now = _now(repo)
    assert (
        f"<!-- tools:evidence id={record['id']} plan=attribute:{good[:12]}..{bad[:12]} -->" in now
    )
    assert "| first bad | paths | revert → run_rc | restore → run_rc |" in now
    assert f"| {bad[:12]} | `state` | 0 | 1 |" in now
    assert "ATTRIBUTED" in now
