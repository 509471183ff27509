"""Range selection through the real CLI: a base that does not resolve and a shallow clone are
skips with their reason (never a pass); an explicitly named base is exit 2."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Repo

GOOD = (
    "Add a thing\n\nBody.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)


def test_unresolvable_default_base_is_a_skip_with_reason(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "a\n"})
    run = repo.tools("--format", "json", "trailers", "check")
    assert run.exit_code == 0
    gate = run.json()["gates"][0]
    assert gate["status"] == "skip"
    assert "origin/main" in gate["reason"] and "does not resolve" in gate["reason"]
    assert repo.tools("trailers", "check", "--fail-on-skip").exit_code == 1
    text = repo.tools("preflight", "--gate", "trailers", "--gate", "style").stdout
    assert "SKIP trailers: base 'origin/main'" in text
    assert "All gates green." not in text


def test_explicit_base_that_does_not_resolve_is_exit_2(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "a\n"})
    run = repo.tools("style", "check", "--base", "origin/nope")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: --base 'origin/nope' does not resolve")


def test_shallow_clone_without_merge_base_is_a_skip(make_repo, tmp_path: Path) -> None:
    upstream = make_repo("upstream")
    upstream.commit(GOOD, {"a.txt": "a\n"})
    upstream.branch("topic")
    upstream.commit(GOOD, {"b.txt": "b\n"})
    upstream.commit(GOOD, {"c.txt": "c\n"})
    upstream.checkout("main")
    upstream.commit(GOOD, {"m.txt": "m\n"})
    shallow = upstream.clone(tmp_path / "shallow", "--depth", "1", "--no-single-branch")
    shallow.git("checkout", "-q", "topic")
    for gate in ("trailers", "style"):
        run = shallow.tools("--format", "json", gate, "check")
        data = run.json()["gates"][0]
        assert run.exit_code == 0
        assert data["status"] == "skip"
        assert "shallow clone" in data["reason"]


def test_full_clone_judges_the_branch_commits(make_repo, tmp_path: Path) -> None:
    upstream = make_repo("upstream")
    upstream.commit(GOOD, {"a.txt": "a\n"})
    upstream.branch("topic")
    upstream.commit("Bad subject.\n", {"b.txt": "b\n"})
    full = upstream.clone(tmp_path / "full")
    full.git("checkout", "-q", "topic")
    run = full.tools("--format", "json", "style", "check")
    gate = run.json()["gates"][0]
    assert run.exit_code == 1
    assert gate["stats"]["commits"] == 1
    assert {f["rule"] for f in gate["findings"]} >= {"subject-period", "body-missing"}


def _logging_git(tmp_path: Path, monkeypatch) -> Path:
    """A ``git`` first on PATH that notes each command line, then runs the real git."""
    import shutil

    real = shutil.which("git")
    calls = tmp_path / "git-calls"
    folder = tmp_path / "bin"
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{Path(real).parent}")
    return calls


def test_a_staged_run_reads_the_range_without_changed_paths(
    make_repo, tmp_path: Path, monkeypatch
) -> None:
    # Under --staged the range's commits are judged by their messages only (docs and index
    # judge the staged change), so no rename detection is paid for them; a range run reads
    # their paths, which its docs and index gates judge.
    upstream = make_repo("upstream")
    upstream.commit(GOOD, {"a.txt": "a\n"})
    clone = upstream.clone(tmp_path / "clone")
    clone.commit(GOOD, {"b.txt": "b\n"})
    clone.write("c.txt", "c\n")
    clone.git("add", "c.txt")
    calls = _logging_git(tmp_path, monkeypatch)

    def logs() -> list[str]:
        return [c for c in calls.read_text().splitlines() if " log " in f" {c} "]

    staged = clone.tools("preflight", "--staged", "--gate", "trailers", "--gate", "docs")
    assert "ok   trailers (1 commit)" in staged.stdout, staged.stdout
    assert logs() and not any("--name-status" in c for c in logs())
    calls.unlink()
    ranged = clone.tools("preflight", "--gate", "trailers", "--gate", "docs")
    assert "ok   trailers (1 commit)" in ranged.stdout, ranged.stdout
    assert any("--name-status" in c for c in logs())
