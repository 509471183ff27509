"""Everyday git workflows through real `git commit` / `git merge` with the hooks `tools init`
installs: the first commit, merges, a merge stopped on conflicts, `git commit -m`, the editor,
markers written above their trailers, names that contain a tool's name, NOW.md with fenced
code, hostile messages, and the exit code of a crash.

No `--no-verify` here except to build a fixture's history (marked where it is used).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools.gates import conflicts as conflicts_gate

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: codex:o3 [git]"


def good(subject: str = "Add the widget", body: str = "The widget was missing.") -> str:
    return f"{subject}\n\n{body}\n\n{MARKER}\n\n{TRAILERS}\n"


def hooked_env() -> dict[str, str]:
    """The environment of a user's shell: the `tools` console script on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("GIT_DIR", None)
    env.pop("GIT_EDITOR", None)
    return env


def git(
    repo: Repo, *args: str, input: str | None = None, **env: str
) -> subprocess.CompletedProcess:
    """A real git command as a user runs it, hooks included."""
    full = hooked_env()
    full.update(env)
    return subprocess.run(
        ["git", *args],
        cwd=repo.path,
        input=input.encode() if input is not None else None,
        capture_output=True,
        env=full,
    )


def out(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout + proc.stderr).decode("utf-8", "replace")


def initialised(repo: Repo, config: str | None = None) -> Repo:
    """`tools init` in a repository, with ``config`` as its protocol file if given."""
    if config is not None:
        repo.write(".agents/protocol.yaml", config)
    run = repo.tools("init")
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    return repo


def fixture_commit(repo: Repo, message: str, files: dict[str, str]) -> str:
    """Build a fixture's history (the one place hooks are bypassed)."""
    return repo.commit(message, files)


# -- 1. the first commit after `tools init` -------------------------------------------------


def test_first_commit_after_init_passes_both_hooks(repo: Repo) -> None:
    initialised(repo)
    assert (repo.path / ".agents/NOW.md").exists()
    assert b"| Issue | Row | Title | Kind |" in repo.read(".agents/issue-index.md")
    repo.write("src/app.c", "int main(void) { return 0; }\n")
    assert git(repo, "add", "-A").returncode == 0
    proc = git(repo, "commit", "-q", "-F", "-", input=good())
    assert proc.returncode == 0, out(proc)
    assert repo.git("log", "--format=%s").strip() == "Add the widget"
    # `git commit -m`, one paragraph per -m, is the same contract.
    repo.write("src/app.c", "int main(void) { return 1; }\n")
    git(repo, "add", "-A")
    proc = git(
        repo, "commit", "-q", "-m", "Return 1", "-m", "Callers expect it.", "-m", MARKER,
        "-m", TRAILERS,
    )  # fmt: skip
    assert proc.returncode == 0, out(proc)


def test_init_never_overwrites_the_digest_or_the_index(repo: Repo) -> None:
    repo.write(".agents/NOW.md", "mine\n")
    repo.write(".agents/issue-index.md", "mine too\n")
    run = repo.tools("init", "--force")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert repo.read(".agents/NOW.md") == b"mine\n"
    assert repo.read(".agents/issue-index.md") == b"mine too\n"


# -- 2. merges -------------------------------------------------------------------------------


def _two_branches(repo: Repo, config: str) -> None:
    initialised(repo, config)
    fixture_commit(repo, good("Start"), {"a.txt": "a\n"})
    repo.branch("feature")
    fixture_commit(repo, good("Feature work"), {"b.txt": "b\n"})
    repo.checkout("main")
    fixture_commit(repo, good("Main work"), {"c.txt": "c\n"})


def test_merge_with_merges_skip_is_not_blocked_by_the_hooks(repo: Repo) -> None:
    _two_branches(repo, "trailers: {merges: skip}\n")
    proc = git(repo, "merge", "--no-ff", "feature", "--no-edit")
    assert proc.returncode == 0, out(proc)
    assert len(repo.git("log", "-1", "--format=%P").split()) == 2


def test_merge_in_progress_is_judged_as_a_merge(repo: Repo) -> None:
    _two_branches(repo, "trailers: {merges: skip}\n")
    assert git(repo, "merge", "--no-ff", "--no-commit", "feature").returncode == 0
    msg = str(repo.path / ".git" / "MERGE_MSG")
    style = repo.tools("--format", "json", "style", "check", "--message-file", msg)
    assert style.exit_code == 0, style.stdout
    gate = style.json()["gates"][0]
    assert gate["status"] == "skip" and "merge is in progress" in gate["reason"]
    assert gate["findings"] == []
    trailers = repo.tools("trailers", "check", "--message-file", msg)
    assert trailers.exit_code == 0 and "SKIP" in trailers.stdout
    # --fail-on-skip makes the skip visible to a job that must judge something.
    assert repo.tools("style", "check", "--message-file", msg, "--fail-on-skip").exit_code == 1
    proc = git(repo, "commit", "--no-edit")
    assert proc.returncode == 0, out(proc)


def test_merge_with_merges_check_judges_the_merge_message(repo: Repo) -> None:
    _two_branches(repo, "trailers: {merges: check}\n")
    refused = git(repo, "merge", "--no-ff", "feature", "--no-edit")
    assert refused.returncode != 0 and "marker-missing" in out(refused)
    git(repo, "merge", "--abort")
    # A merge message that keeps the contract lands; style never judges a merge's subject.
    proc = git(repo, "merge", "--no-ff", "feature", "-m", good("merge feature."))
    assert proc.returncode == 0, out(proc)


# -- 3. a merge stopped on conflicts ---------------------------------------------------------


def _conflicted(repo: Repo) -> None:
    initialised(repo, "trailers: {merges: skip}\n")
    fixture_commit(repo, good("Start"), {"a.txt": "one\ntwo\n"})
    repo.branch("feature")
    fixture_commit(repo, good("Feature edit"), {"a.txt": "one\nfeature\n"})
    repo.checkout("main")
    fixture_commit(repo, good("Main edit"), {"a.txt": "one\nmain\n"})
    proc = git(repo, "merge", "feature")
    assert proc.returncode != 0 and "CONFLICT" in out(proc)


@pytest.mark.parametrize("staged", [False, True], ids=["worktree", "staged"])
def test_conflicts_gate_sees_a_merge_stopped_on_conflicts(repo: Repo, staged: bool) -> None:
    _conflicted(repo)
    args = ["--format", "json", "conflicts", "check"] + (["--staged"] if staged else [])
    run = repo.tools(*args)
    assert run.exit_code == 1, run.stdout + run.stderr
    found = {(f["rule"], f["path"], f["line"]) for f in run.json()["gates"][0]["findings"]}
    assert ("conflict-unmerged", "a.txt", None) in found
    assert ("conflict-marker", "a.txt", 2) in found  # read from the working tree
    assert {rule for rule, _, _ in found} <= {r.id for r in conflicts_gate.RULES}


def test_resolving_a_conflict_through_the_hooks(repo: Repo) -> None:
    _conflicted(repo)
    # Staged with its markers still in: the pre-commit hook refuses the merge commit.
    git(repo, "add", "a.txt")
    refused = git(repo, "commit", "--no-edit")
    assert refused.returncode != 0 and "conflict-marker" in out(refused)
    repo.write("a.txt", "one\nmain and feature\n")
    git(repo, "add", "a.txt")
    assert repo.tools("conflicts", "check", "--staged").exit_code == 0
    proc = git(repo, "commit", "--no-edit")
    assert proc.returncode == 0, out(proc)
    assert len(repo.git("log", "-1", "--format=%P").split()) == 2


# -- 4. the message as git will store it ------------------------------------------------------


def test_commit_m_keeps_hash_lines_and_so_does_the_hook(repo: Repo) -> None:
    initialised(repo)
    repo.write("a.txt", "a\n")
    git(repo, "add", "-A")
    proc = git(
        repo, "commit", "-q", "-m", "fix: the cache key", "-m", "#123 was caused by a stale key",
        "-m", MARKER, "-m", TRAILERS,
    )  # fmt: skip
    assert proc.returncode == 0, out(proc)
    assert "#123 was caused" in repo.git("log", "-1", "--format=%B")


def test_editor_template_comments_are_dropped_as_git_drops_them(repo: Repo, tmp_path: Path) -> None:
    initialised(repo)
    repo.write("a.txt", "a\n")
    git(repo, "add", "-A")
    # An editor that writes the message above git's template, as a person would.
    editor = tmp_path / "editor.py"
    body = good("Add a", "# not a body: a comment git drops\nThe real body.")
    editor.write_text(
        f"import sys\np = sys.argv[1]\nt = open(p).read()\nopen(p, 'w').write({body!r} + t)\n"
    )
    proc = git(repo, "commit", "-q", GIT_EDITOR=f"{sys.executable} {editor}")
    assert proc.returncode == 0, out(proc)
    stored = repo.git("log", "-1", "--format=%B")
    assert "# not a body" not in stored and "The real body." in stored
    # The same editor without a body: only the comment line would be the body.
    repo.write("a.txt", "b\n")
    git(repo, "add", "-A")
    editor.write_text(
        "import sys\np = sys.argv[1]\nt = open(p).read()\n"
        f"open(p, 'w').write({good('Change a', '# only a comment')!r} + t)\n"
    )
    refused = git(repo, "commit", "-q", GIT_EDITOR=f"{sys.executable} {editor}")
    assert refused.returncode != 0 and "body-missing" in out(refused)


# -- 5. a marker written right above its trailers -----------------------------------------


def test_marker_above_its_trailers_is_no_marker_paragraph(repo: Repo) -> None:
    initialised(repo)
    repo.write("a.txt", "a\n")
    git(repo, "add", "-A")
    glued = f"Add a\n\nWhy a.\n\n{MARKER}\n{TRAILERS}\n"
    refused = git(repo, "commit", "-q", "-F", "-", input=glued)
    assert refused.returncode != 0
    assert "marker-missing" in out(refused) and "blank line" in out(refused)
    assert "marker-last" not in out(refused)
    proc = git(repo, "commit", "-q", "-F", "-", input=good("Add a", "Why a."))
    assert proc.returncode == 0, out(proc)


def test_marker_above_its_trailers_is_missing_before_the_cutover_too(repo: Repo) -> None:
    initialised(repo)
    root = fixture_commit(repo, good("Start"), {"s.txt": "s\n"})
    old = fixture_commit(repo, f"Old\n\nWhy.\n\n{MARKER}\n{TRAILERS}\n", {"a.txt": "a\n"})
    cut = fixture_commit(repo, good("Cut"), {"b.txt": "b\n"})
    repo.write(".agents/protocol.yaml", f"trailers: {{cutover: '{cut}'}}\n")
    run = repo.tools("--format", "json", "trailers", "check", "--base", root)
    findings = run.json()["gates"][0]["findings"]
    assert [(f["rule"], f["commit"]) for f in findings] == [("marker-missing", old)]


# -- 6. names that merely contain a tool's name --------------------------------------------


def test_a_name_containing_a_tool_name_is_not_an_ai_author(repo: Repo) -> None:
    initialised(repo)
    repo.write("a.txt", "a\n")
    git(repo, "add", "-A")
    signed = good() + "Signed-off-by: Brigitte Roux <brigitte@example.com>\n"
    proc = git(repo, "commit", "-q", "-F", "-", input=signed)
    assert proc.returncode == 0, out(proc)
    repo.write("a.txt", "b\n")
    git(repo, "add", "-A")
    signed = good("Change a") + "Signed-off-by: Git Robot <git@example.com>\n"
    refused = git(repo, "commit", "-q", "-F", "-", input=signed)
    assert refused.returncode != 0 and "ai-authorship" in out(refused)


# -- 7. NOW.md headings inside fenced code ---------------------------------------------------


def test_now_headings_inside_a_fence_do_not_count(repo: Repo) -> None:
    initialised(repo)
    fenced = (
        "# NOW\n<!-- now-updated: 2026-01-01 -->\n\n```markdown\n## Live claims\n"
        "## Current gate\n## Next actions\n```\n"
    )
    repo.write(".agents/NOW.md", fenced)
    git(repo, "add", "-A")
    refused = git(repo, "commit", "-q", "-F", "-", input=good())
    assert refused.returncode != 0 and "now-heading" in out(refused)
    repo.write(".agents/NOW.md", fenced.replace("```markdown\n", "").replace("```\n", ""))
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "-F", "-", input=good())
    assert proc.returncode == 0, out(proc)


# -- 8. hostile messages through the hook ----------------------------------------------------

GUARD_S = 20.0  # generous: each takes well under a second (figures in BENCHMARKS.md)


@pytest.mark.parametrize(
    "tail",
    [
        "Assisted-by: a:b [" + " x" * 32768,
        "Assisted-by: a:b " + "[" * 65536,
        "Signed-off-by: " + "ab " * 200000 + "\nAssisted-by: a:" + "ab " * 100000 + "[t]",
        MARKER + "\n" + (MARKER + "\n") * 40000,
        "---\n" * 200000,
    ],
    ids=["open-bracket", "brackets", "long-names", "markers", "dividers"],
)
def test_hostile_message_is_judged_fast_through_the_hook(repo: Repo, tail: str) -> None:
    initialised(repo)
    repo.write("a.txt", "a\n")
    git(repo, "add", "-A")
    message = f"Subject\n\nBody.\n\n{MARKER}\n\n{TRAILERS}\n{tail}\n"
    start = time.perf_counter()
    proc = git(repo, "commit", "-q", "-F", "-", input=message)
    assert time.perf_counter() - start < GUARD_S
    assert proc.returncode != 0  # each of these breaks the contract somewhere


# -- 9. a crash is exit 3, never exit 2 ------------------------------------------------------


def test_an_internal_error_is_exit_3_with_one_line(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})

    def broken(ctx: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(conflicts_gate, "run", broken)
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 3
    assert run.stderr.startswith("error: internal error: RuntimeError: boom")
    assert "TOOLS_DEBUG=1" in run.stderr and len(run.stderr.strip().splitlines()) == 1
