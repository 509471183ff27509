"""The environment of every git process tools starts (docs/git-environment.md): an allow-list.

Each test first shows, with a plain git, that the variable changes what git does, so that a
test cannot pass because the variable had no effect anyway.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.test_hooks import bad, with_remote
from tests.test_workflows import git, good, out
from tools.git import Git, run_git

MARKERS = "<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n"


def plain_git(repo: Repo, *args: str) -> subprocess.CompletedProcess[bytes]:
    """git as the caller's environment runs it (nothing removed)."""
    return subprocess.run(["git", *args], cwd=repo.path, capture_output=True, check=False)


def test_config_injected_through_the_environment_does_not_reach_git(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'user.injected'='yes'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.counted")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "yes")
    assert plain_git(repo, "config", "--get", "user.injected").stdout == b"yes\n"
    assert plain_git(repo, "config", "--get", "user.counted").stdout == b"yes\n"
    for name in ("user.injected", "user.counted"):
        assert run_git(repo.path, "config", "--get", name, ok=None)[0] == 1
        assert Git(repo.path).run("config", "--get", name, ok=(0, 1))[0] == 1


def test_trace_and_external_diff_do_not_reach_git(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    repo.commit("Change\n\nBody.\n", {"a.txt": "b\n"})
    trace = tmp_path / "trace"
    ran = tmp_path / "external-diff-ran"
    differ = tmp_path / "differ.sh"
    differ.write_text(f"#!/bin/sh\ntouch {ran}\n")
    differ.chmod(0o755)
    monkeypatch.setenv("GIT_TRACE", str(trace))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(differ))
    assert plain_git(repo, "diff", "HEAD~1", "HEAD").returncode == 0
    assert trace.exists() and ran.exists()
    trace.unlink()
    ran.unlink()
    run_git(repo.path, "diff", "HEAD~1", "HEAD")
    g = Git(repo.path)
    assert g.blob("HEAD", "a.txt") == b"b\n" and g.blob_header("HEAD~1", "a.txt") is not None
    assert [data for _, data in g.blobs([g.blob_header("HEAD", "a.txt")[0]])] == [b"b\n"]
    assert g.run("diff", "HEAD~1", "HEAD")[0] == 0
    run = repo.tools("preflight")
    assert run.exit_code in (0, 1), run.stderr
    assert not trace.exists() and not ran.exists()


def test_a_foreign_git_dir_does_not_redirect_the_reads(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    mine = repo.commit("Start\n\nBody.\n", {"mine.txt": "a\n"})
    other = Repo(tmp_path / "other")
    theirs = other.commit("Theirs\n\nBody.\n", {"theirs.txt": "b\n"})
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.path))
    monkeypatch.setenv("GIT_COMMON_DIR", str(other.path / ".git"))
    assert plain_git(repo, "rev-parse", "HEAD").stdout.decode().strip() == theirs
    g = Git(repo.path)
    assert g.root == repo.path.resolve() and g.head() == mine
    assert [e.path for e in g.index_entries()] == ["mine.txt"]
    assert g.blob("HEAD", "mine.txt") == b"a\n" and g.blob("HEAD", "theirs.txt") is None
    assert run_git(repo.path, "rev-parse", "HEAD")[1].decode().strip() == mine


def test_the_index_a_commit_hook_is_given_is_the_one_judged(repo: Repo, tmp_path: Path) -> None:
    """`git commit -a` and `git commit PATH` build a temporary index and name it to the hooks
    in GIT_INDEX_FILE: what they commit is judged, not the index on disk."""
    with_remote(repo, tmp_path)
    repo.write("src/app.c", MARKERS)
    repo.write("notes.txt", "a note\n")
    git(repo, "add", "notes.txt")
    refused = git(repo, "commit", "-q", "-a", "-F", "-", input=good("Change the app"))
    assert refused.returncode != 0 and "conflict-marker" in out(refused), out(refused)
    refused = git(repo, "commit", "-q", "-F", "-", "src/app.c", input=good("Change the app"))
    assert refused.returncode != 0 and "conflict-marker" in out(refused), out(refused)
    # The index on disk holds only the note: committing it alone passes.
    done = git(repo, "commit", "-q", "-F", "-", input=good("Add a note"))
    assert done.returncode == 0, out(done)
    assert repo.git("show", "--name-only", "--format=", "HEAD").split() == ["notes.txt"]


PRE_RECEIVE = """#!/bin/sh
while read old new ref; do
    tools --repo "$GIT_DIR" trailers check --base "$old" --head "$new" || exit 1
done
"""


def test_a_pre_receive_hook_reads_the_quarantined_commits(repo: Repo, tmp_path: Path) -> None:
    """Inside pre-receive the pushed objects live in git's quarantine, which only the
    object-directory variables name (docs/hooks.md, "A server-side check")."""
    remote = with_remote(repo, tmp_path)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(PRE_RECEIVE)
    hook.chmod(0o755)
    repo.write("src/b.c", "int b;\n")
    git(repo, "add", "-A")
    assert git(repo, "commit", "-q", "--no-verify", "-F", "-", input=bad()).returncode == 0
    refused = git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert refused.returncode != 0 and "trailer" in out(refused), out(refused)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert commit_good(repo, "src/c.c").returncode == 0
    pushed = git(repo, "push", "-q", "--no-verify", "origin", "main")
    assert pushed.returncode == 0, out(pushed)


def commit_good(repo: Repo, path: str) -> subprocess.CompletedProcess[bytes]:
    repo.write(path, "int c;\n")
    git(repo, "add", "-A")
    return git(repo, "commit", "-q", "-F", "-", input=good("Add c"))


def test_no_git_process_starts_outside_the_runner() -> None:
    """gitpython would start a `git version` of its own at import, with the whole
    environment: the package never imports it."""
    import sys

    probe = (
        "import sys, tools.git, tools.context, tools.gates, tools.hooks, tools.demo, "
        "tools.mutate.apply, tools.attribute; print('git' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "False\n"
