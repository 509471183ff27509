"""The GitHub workflows we ship keep docs/ci.md's own advice: an expression (`${{ … }}`) is
never spliced into a `run:` script, where a pull request's branch name or a dispatch input
would be read as shell; inputs reach scripts through `env:`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [
    ROOT / ".github/workflows/ci.yml",
    ROOT / "docs/examples/mutate-matrix.yml",
    ROOT / "docs/examples/evidence-replay.yml",
    ROOT / "docs/examples/github-action.yml",
]


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_no_expression_is_spliced_into_a_script(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    scripts = [step["run"] for step in _steps(workflow) if "run" in step]
    assert scripts, f"{path} runs no script"
    spliced = [s for s in scripts if "${{" in s]
    assert not spliced, f"{path}: expressions inside run: {spliced}"


def test_the_matrix_workflow_passes_its_inputs_through_the_environment() -> None:
    workflow = yaml.safe_load(SHIPPED[1].read_text(encoding="utf-8"))
    uses_plan = [s for s in _steps(workflow) if "$PLAN" in s.get("run", "")]
    assert len(uses_plan) == 4
    assert all(s["env"]["PLAN"] == "${{ inputs.plan }}" for s in uses_plan)


def test_the_replay_workflow_replays_before_it_attests_and_asks_only_what_it_needs() -> None:
    workflow = yaml.safe_load(SHIPPED[2].read_text(encoding="utf-8"))
    assert workflow["permissions"] == {"contents": "read"}
    job = workflow["jobs"]["replay"]
    assert job["permissions"] == {
        "contents": "read",
        "id-token": "write",
        "attestations": "write",
    }
    steps = job["steps"]
    replay = next(i for i, s in enumerate(steps) if "evidence replay" in s.get("run", ""))
    attest = next(
        i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("actions/attest")
    )
    assert replay < attest  # a record that did not reproduce fails the job before it is attested
    run = steps[replay]["run"]
    assert "--fail-on-skip" in run and '--id "$RECORD"' in run and "--config-from base" in run
    assert steps[replay]["env"]["RECORD"] == "${{ matrix.record }}"
    given = steps[attest]["with"]
    assert given["predicate-type"] == "https://agent-protocol-gates.dev/evidence-replay/v1"
    assert given["predicate-path"].endswith(".predicate.json")
    assert given["subject-path"].endswith(".record.json")
