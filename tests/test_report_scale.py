"""Output at scale (SPEC §3.2): --max-findings and --statistics in text, complete json, and
what a JSON report says it judged (tool, config sha256, range)."""

from __future__ import annotations

import hashlib
import json

from tests.conftest import Repo
from tools import __version__


def _many_bad_commits(repo: Repo, n: int) -> None:
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    repo.branch("topic")
    for i in range(n):
        repo.commit(f"Change {i}.\n\nBody.\n")  # subject-period, every one


def test_text_caps_findings_per_gate_and_says_how_to_see_them_all(repo: Repo) -> None:
    _many_bad_commits(repo, 60)
    run = repo.tools("style", "check", "--base", "main")
    assert run.exit_code == 1
    shown = [ln for ln in run.stdout.splitlines() if "error[subject-period]" in ln]
    assert len(shown) == 50
    assert "… 10 more finding(s) of style left out: --max-findings 0" in run.stdout
    capped = repo.tools("style", "check", "--base", "main", "--max-findings", "5").stdout
    assert sum("error[subject-period]" in ln for ln in capped.splitlines()) == 5
    every = repo.tools("style", "check", "--base", "main", "--max-findings", "0").stdout
    assert sum("error[subject-period]" in ln for ln in every.splitlines()) == 60
    assert "left out" not in every
    # json is always complete.
    data = repo.tools("--format", "json", "style", "check", "--base", "main").json()
    assert len(data["gates"][0]["findings"]) == 60


def test_statistics_prints_one_line_per_rule_sorted_by_count(repo: Repo) -> None:
    _many_bad_commits(repo, 3)
    repo.commit("Short\n")  # body-missing once
    run = repo.tools("style", "check", "--base", "main", "--statistics")
    assert run.exit_code == 1
    lines = [ln.split() for ln in run.stdout.splitlines()[1:] if ln.strip()]
    assert lines[:2] == [["3", "subject-period", "error"], ["1", "body-missing", "error"]]
    assert "error[" not in run.stdout


def test_the_json_report_says_what_it_judged(repo: Repo) -> None:
    _many_bad_commits(repo, 2)
    data = repo.tools("--format", "json", "preflight", "--base", "main").json()
    assert data["tool"] == {"name": "tools", "version": __version__}
    shown = json.loads(repo.tools("--format", "json", "config", "show").stdout)
    canonical = json.dumps(shown, sort_keys=True, separators=(",", ":"))
    assert data["config_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    assert data["range"] == {
        "base": repo.head("main"),
        "head": repo.head(),
        "merge_base": repo.head("main"),
        "commits": 2,
    }
    # One commit judged is no range.
    one = repo.tools("--format", "json", "style", "check", "--commit", "HEAD").json()
    assert "range" not in one and one["tool"]["name"] == "tools"
