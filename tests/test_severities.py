"""`rules:` in the config (SPEC §3.3): a rule id's severity, off, and the protected rules."""

from __future__ import annotations

import pytest

from tests.conftest import Repo


def _repo_with_bad_subjects(repo: Repo, rules: str) -> Repo:
    repo.write(".agents/protocol.yaml", f"rules: {rules}\n")
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    repo.branch("topic")
    repo.commit("Change a.\n\nBody.\n")  # subject-period
    repo.commit("Change b\n")  # body-missing
    return repo


def test_a_rule_turned_off_is_dropped_and_counted(repo: Repo) -> None:
    _repo_with_bad_subjects(repo, "{subject-period: off}")
    run = repo.tools("--format", "json", "style", "check", "--base", "main")
    assert run.exit_code == 1  # body-missing is still an error
    gate = run.json()["gates"][0]
    assert [f["rule"] for f in gate["findings"]] == ["body-missing"]
    assert gate["stats"]["suppressed"] == {"subject-period": 1}


def test_a_rule_lowered_to_a_warning_no_longer_fails(repo: Repo) -> None:
    _repo_with_bad_subjects(repo, "{subject-period: warning, body-missing: info}")
    run = repo.tools("--format", "json", "preflight", "--base", "main", "--gate", "style")
    assert run.exit_code == 0, run.stdout
    severities = {f["rule"]: f["severity"] for f in run.json()["gates"][0]["findings"]}
    assert severities == {"subject-period": "warning", "body-missing": "info"}


def test_a_warning_raised_to_an_error_fails(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "rules: {subject-length: error}\n")
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    repo.branch("topic")
    repo.commit(
        "A subject that goes on and on well past the seventy-two characters allowed\n\nB.\n"
    )
    run = repo.tools("style", "check", "--base", "main")
    assert run.exit_code == 1 and "error[subject-length]" in run.stdout
    # Quiet twin: without the entry the same commit is a warning only.
    repo.write(".agents/protocol.yaml", "{}\n")
    assert repo.tools("style", "check", "--base", "main").exit_code == 0


def test_an_unknown_rule_id_is_exit_2_naming_the_closest(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "rules: {subject-perod: off}\n")
    run = repo.tools("preflight")
    assert run.exit_code == 2
    assert "rules.subject-perod" in run.stderr and "'subject-period'" in run.stderr


@pytest.mark.parametrize("level", ["off", "info", "warning"])
def test_a_protected_rule_cannot_be_lowered(repo: Repo, level: str) -> None:
    repo.write(".agents/protocol.yaml", f"rules: {{conflict-marker: {level}}}\n")
    run = repo.tools("preflight")
    assert run.exit_code == 2 and "keeps data safe" in run.stderr


def test_a_protected_rule_may_stay_an_error_and_still_fires(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "rules: {conflict-marker: error}\n")
    repo.commit("Start\n\nBase.\n", {"a.txt": "<<<<<<< HEAD\nx\n>>>>>>> y\n"})
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 1 and "conflict-marker" in run.stdout


def test_a_numerics_rule_id_is_a_declared_id_and_a_typo_of_one_is_refused(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "rules: {golden-mismatch: warning}\n")
    assert repo.tools("config", "validate").exit_code == 0
    repo.write(".agents/protocol.yaml", "rules: {golden-mismatsh: warning}\n")
    run = repo.tools("preflight")
    assert run.exit_code == 2 and "'golden-mismatch'" in run.stderr


def test_a_bad_level_is_a_schema_error(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "rules: {subject-period: loud}\n")
    run = repo.tools("config", "validate")
    assert run.exit_code == 2 and "rules" in run.stderr
