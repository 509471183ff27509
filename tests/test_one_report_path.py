"""Every command's report goes through the one judged path (configured severities, the
findings baseline, the report's metadata), not only the gate commands': `links anchors`,
`golden check` and the pre-push hook (SPEC §3.2, §3.3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import Repo
from tools import __version__, hooks
from tools.options import Options


def test_links_anchors_takes_the_configured_severity_and_says_what_judged(repo: Repo) -> None:
    repo.write("README.md", "# Title\n\n## Part\n")
    repo.commit("Start\n\nBase.\n")
    quiet = repo.tools("--format", "json", "links", "anchors", str(repo.path / "README.md")).json()
    assert {f["severity"] for f in quiet["gates"][0]["findings"]} == {"info"}
    assert quiet["tool"]["name"] == "tools" and len(quiet["config_sha256"]) == 64
    repo.write(".agents/protocol.yaml", "rules: {anchor: warning}\n")
    raised = repo.tools("--format", "json", "links", "anchors", str(repo.path / "README.md")).json()
    assert [f["severity"] for f in raised["gates"][0]["findings"]] == ["warning", "warning"]
    assert raised["config_sha256"] != quiet["config_sha256"]
    repo.write(".agents/protocol.yaml", "rules: {anchor: off}\n")
    off = repo.tools("--format", "json", "links", "anchors", str(repo.path / "README.md")).json()
    assert off["gates"][0]["findings"] == []
    assert off["gates"][0]["stats"]["suppressed"] == {"anchor": 2}


def test_golden_check_takes_the_configured_severity(repo: Repo) -> None:
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    before = repo.tools("--format", "json", "golden", "check")
    assert before.exit_code == 0, before.stderr
    assert [f["rule"] for f in before.json()["gates"][0]["findings"]] == ["golden-absent"]
    repo.write(".agents/protocol.yaml", "rules: {golden-absent: error}\n")
    after = repo.tools("--format", "json", "golden", "check")
    assert after.exit_code == 1
    assert [f["severity"] for f in after.json()["gates"][0]["findings"]] == ["error"]
    assert len(after.json()["config_sha256"]) == 64


def test_the_pre_push_hook_report_says_which_ranges_it_judged(repo: Repo, tmp_path: Path) -> None:
    repo.write(
        ".agents/protocol.yaml", "trailers: {marker: null, required: {}, assisted_by: false}\n"
    )
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    first = repo.git("rev-parse", "HEAD").strip()
    repo.commit("Change a\n\nBody.\n", {"a.txt": "b\n"})
    tip = repo.git("rev-parse", "HEAD").strip()
    stdin = f"refs/heads/main {tip} refs/heads/main {first}\n".encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), ["origin", str(remote)], stdin)
    assert run.exit_code == 0 and run.report is not None
    assert run.report.meta["tool"] == {"name": "tools", "version": __version__}
    assert [(r["ref"], r["head"], r["base"]) for r in run.report.meta["ranges"]] == [
        ("refs/heads/main", tip, first)
    ]
