"""``--format gitlab`` (SPEC §13): GitLab's Code Quality report, validated field by field
against the fields GitLab documents (tests/data/gitlab-code-quality.schema.json), one issue per
finding with the severities of the contract, and fingerprints that are the findings
baseline's: the same value `tools baseline write` records, unchanged when a line moves."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import Repo, Run
from tools.gates import conflicts
from tools.report import GateResult, Report, Site, render
from tools.report.gitlab import to_gitlab
from tools.report.model import mark_absent

# The documented fields, as a JSON Schema (GitLab publishes a table, not a schema):
# https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format
SCHEMA = json.loads(
    (Path(__file__).resolve().parent / "data" / "gitlab-code-quality.schema.json").read_text()
)
CONFIG = "base: main\npreflight:\n  gates: [links, conflicts]\nlinks:\n  paths: ['**/*.md']\n"
DOC = "# A\n\n[x](gone.md)\n\n[x](gone.md)\n\n[y](#nope)\n"
HUNK = "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"


def issues(run: Run) -> list[dict]:
    """stdout as a Code Quality report, validated against GitLab's documented fields."""
    data = json.loads(run.stdout)
    jsonschema.validate(data, SCHEMA)
    return data


def _debt_repo(repo: Repo) -> Repo:
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": CONFIG, "docs/a.md": DOC})
    return repo


def test_the_schema_refuses_what_gitlab_refuses() -> None:
    good = {
        "description": "d",
        "check_name": "g/r",
        "fingerprint": "f",
        "severity": "minor",
        "location": {"path": "a.md", "lines": {"begin": 1}},
    }
    jsonschema.validate([good], SCHEMA)
    for broken in (
        {k: v for k, v in good.items() if k != "fingerprint"},
        {**good, "severity": "error"},
        {**good, "location": {"path": "./a.md", "lines": {"begin": 1}}},
        {**good, "location": {"path": "a.md"}},
        {**good, "location": {"path": "a.md", "lines": {"begin": 0}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([broken], SCHEMA)


def test_a_real_preflight_report_carries_every_finding(repo: Repo) -> None:
    _debt_repo(repo)
    repo.commit("Add notes\n\nBody.\n", {"notes.txt": HUNK})
    as_json = repo.tools("preflight", "--format", "json")
    run = repo.tools("preflight", "--format", "gitlab")
    assert run.exit_code == as_json.exit_code == 1
    found = issues(run)
    report = as_json.json()
    expected = [(g["gate"], f) for g in report["gates"] for f in g["findings"]]
    assert len(found) == len(expected) and len(expected) >= 4
    for (gate, f), issue in zip(expected, found, strict=True):
        assert issue["check_name"] == f"{gate}/{f['rule']}"
        assert issue["description"].startswith(f["message"])
        assert issue["location"]["path"] == f["path"]
        assert issue["location"]["lines"]["begin"] == f["line"]
    # GitLab keeps one issue per fingerprint: they must be unique, even for identical lines.
    assert len({i["fingerprint"] for i in found}) == len(found)
    severities = {i["check_name"]: i["severity"] for i in found}
    # conflict-marker keeps data safe (SPEC §3.3): an error of it is critical.
    assert severities["conflicts/conflict-marker"] == "critical"
    assert severities["links/link-broken"] == "major"


def test_fingerprints_are_the_baselines_and_survive_a_line_move(repo: Repo) -> None:
    _debt_repo(repo)
    before = issues(repo.tools("preflight", "--format", "gitlab"))
    assert repo.tools("baseline", "write").exit_code == 0
    recorded = json.loads(repo.read(".agents/baselines/findings.json"))["findings"]
    repo.commit("Record the debt\n\nBody.\n")
    # The very identity the baseline records, not a look-alike.
    assert {e["fingerprint"] for e in recorded} == {i["fingerprint"] for i in before}
    repo.write("docs/a.md", "# A\n\nA new paragraph above.\n\nAnd another.\n" + DOC[4:])
    after = issues(repo.tools("preflight", "--format", "gitlab"))
    moved = {i["fingerprint"]: i["location"]["lines"]["begin"] for i in after}
    assert set(moved) == {i["fingerprint"] for i in before}
    assert sorted(moved.values()) == [i["location"]["lines"]["begin"] + 4 for i in before]
    # Recorded debt is a warning: minor, under the same fingerprint.
    assert {i["severity"] for i in after} == {"minor"}
    # A changed line is a new finding: GitLab shows it as new.
    repo.write("docs/a.md", DOC.replace("[y](#nope)", "[z](#nope)"))
    changed = issues(repo.tools("preflight", "--format", "gitlab"))
    links = {i["fingerprint"] for i in changed if i["check_name"].startswith("links/")}
    assert len(links - set(moved)) == 1
    # ... and the entry it replaced is stale (its own issue).
    assert "baseline/baseline-stale" in {i["check_name"] for i in changed}


def test_severities_and_findings_on_no_file_of_the_tree() -> None:
    gate = GateResult(conflicts.NAME)
    gate.add("conflict-marker", "a marker", path="a.txt", line=3)
    gate.add("conflict-marker", "downgraded", severity="warning", path="a.txt", line=4)
    gate.add("conflict-marker", "noted", severity="info", path="gone.txt", line=1)
    gate.add("conflict-marker", "two sites", sites=(Site("gone.txt", 2), Site("a.txt", 9)))
    report = mark_absent(Report([gate, GateResult("links").skip("no base")]), "a.txt".__eq__)
    found = json.loads(render(report, "gitlab"))
    jsonschema.validate(found, SCHEMA)
    assert [i["severity"] for i in found] == ["critical", "minor", "info", "critical", "minor"]
    # A path the tree lacks is named, never placed on: the issue goes to the protocol's home.
    assert found[2]["location"] == {"path": ".agents/protocol.yaml", "lines": {"begin": 1}}
    assert "gone.txt:1" in found[2]["description"]
    # Several sites: the first the tree has, the others named.
    assert found[3]["location"] == {"path": "a.txt", "lines": {"begin": 9}}
    assert "gone.txt:2" in found[3]["description"]
    # A skip is never an empty report.
    assert found[4]["check_name"] == "links/gate-skipped"
    assert "no base" in found[4]["description"]
    assert to_gitlab(Report([])) == []


def test_a_result_that_is_no_report_refuses_gitlab(repo: Repo) -> None:
    _debt_repo(repo)
    run = repo.tools("baseline", "show", "--format", "gitlab")
    assert run.exit_code == 2
    assert "--format gitlab" in run.stderr
