"""The hooks `tools init` installs, through real git (SPEC §9.1): every legitimate workflow
passes, and each violation that git's own hooks never see is refused by `git push` to a local
bare remote at the latest.

No `--no-verify` here except to build a fixture's history (through ``fixture_commit``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.test_workflows import MARKER, fixture_commit, git, good, initialised, out

GREEN_LINE = re.compile(r"^tools: \d+ gates? green \(\d+\.\d s\)$")


def bad(subject: str = "Add a thing", body: str = "A body.") -> str:
    """A message without the marker paragraph or trailers (what revert and agents slip in)."""
    return f"{subject}\n\n{body}\n"


def with_remote(repo: Repo, tmp_path: Path) -> Path:
    """`tools init`, a first protocol-complete commit, and a bare remote it is pushed to."""
    initialised(repo)
    repo.write("src/app.c", "int main(void) { return 0; }\n")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "-F", "-", input=good("Start the app"))
    assert proc.returncode == 0, out(proc)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    pushed = git(repo, "push", "-q", "-u", "origin", "main")
    assert pushed.returncode == 0, out(pushed)
    return remote


def commit_file(repo: Repo, path: str, text: str, message: str) -> subprocess.CompletedProcess:
    repo.write(path, text)
    git(repo, "add", "-A")
    return git(repo, "commit", "-q", "-F", "-", input=message)


def editor_writing(tmp_path: Path, message: str, name: str = "msg.txt") -> str:
    """A GIT_EDITOR that replaces the file git opens with ``message``."""
    src = tmp_path / name
    src.write_text(message)
    return f"cp {src}"


# -- 1. a bad HEAD is fixed through the hooks ------------------------------------------------


def test_amend_replaces_a_bad_head_through_the_hooks(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    fixture_commit(repo, bad(), {"b.txt": "b\n"})  # landed without the hooks
    proc = git(repo, "commit", "-q", "--amend", "-F", "-", input=good("Add b"))
    assert proc.returncode == 0, out(proc)
    assert repo.tools("trailers", "check", "--commit", "HEAD").exit_code == 0
    # And the next commit on the branch is not blocked by history either.
    proc = commit_file(repo, "c.txt", "c\n", good("Add c"))
    assert proc.returncode == 0, out(proc)


def test_rebase_reword_replaces_a_bad_head_through_the_hooks(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    fixture_commit(repo, bad(), {"b.txt": "b\n"})
    env = {
        "GIT_SEQUENCE_EDITOR": "sed -i -e '1s/^pick/reword/'",
        "GIT_EDITOR": editor_writing(tmp_path, good("Add b")),
    }
    proc = git(repo, "rebase", "-q", "-i", "HEAD~1", **env)
    assert proc.returncode == 0, out(proc)
    assert repo.git("log", "-1", "--format=%s").strip() == "Add b"
    assert git(repo, "push", "-q", "origin", "main").returncode == 0


def test_pre_commit_never_judges_messages_already_committed(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    fixture_commit(repo, bad(), {"b.txt": "b\n"})
    proc = commit_file(repo, "c.txt", "c\n", good("Add c"))
    assert proc.returncode == 0, out(proc)
    # The bad commit is still refused where it leaves the machine.
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "marker-missing" in out(refused)


# -- 2. what no commit-msg hook sees is refused by pre-push ----------------------------------


def test_a_revert_without_the_marker_is_refused_by_push(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    assert git(repo, "push", "-q", "origin", "main").returncode == 0
    proc = git(repo, "revert", "--no-edit", "HEAD")
    assert proc.returncode == 0, out(proc)  # git's own hooks let it through
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0
    assert "marker-missing" in out(refused) and "push refused" in out(refused)
    # Reworded to keep the contract, it goes.
    assert git(repo, "commit", "-q", "--amend", "-F", "-", input=good("Revert b")).returncode == 0
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def test_a_cherry_picked_bad_message_is_refused_by_push(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("other")
    fixture_commit(repo, bad("Port the fix"), {"fix.txt": "fix\n"})
    repo.checkout("main")
    proc = git(repo, "cherry-pick", "other")
    assert proc.returncode == 0, out(proc)
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "marker-missing" in out(refused)


def test_a_good_cherry_pick_is_pushed(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("other")
    fixture_commit(repo, good("Port the fix"), {"fix.txt": "fix\n"})
    repo.checkout("main")
    assert git(repo, "cherry-pick", "other").returncode == 0
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def test_a_squash_that_duplicates_the_marker_is_refused_by_push(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    assert commit_file(repo, "b.txt", "b2\n", good("Tune b")).returncode == 0
    # `squash` keeps both messages (git's editor template, cleaned as git cleans it).
    env = {"GIT_SEQUENCE_EDITOR": "sed -i -e '2s/^pick/squash/'", "GIT_EDITOR": "true"}
    proc = git(repo, "rebase", "-q", "-i", "HEAD~2", **env)
    assert proc.returncode == 0, out(proc)
    assert repo.git("log", "-1", "--format=%B").count(MARKER) == 2
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "marker-duplicate" in out(refused)


def test_rebase_fixup_folds_and_is_pushed(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    assert commit_file(repo, "b.txt", "b2\n", good("Tune b")).returncode == 0
    env = {"GIT_SEQUENCE_EDITOR": "sed -i -e '2s/^pick/fixup/'", "GIT_EDITOR": "true"}
    assert git(repo, "rebase", "-q", "-i", "HEAD~2", **env).returncode == 0
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def test_commit_fixup_passes_and_autosquash_is_pushed(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    repo.write("b.txt", "b2\n")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "--fixup=HEAD")
    assert proc.returncode == 0, out(proc)  # `trailers.fixups: allow` in the starter config
    # Unfolded, it is a warning: the push goes, and says so.
    run = repo.tools("--format", "json", "trailers", "check", "--base", "origin/main")
    assert run.exit_code == 0
    assert [f["rule"] for f in run.json()["gates"][0]["findings"]] == ["fixup-pending"]
    env = {"GIT_SEQUENCE_EDITOR": "true", "GIT_EDITOR": "true"}
    assert git(repo, "rebase", "-q", "-i", "--autosquash", "origin/main", **env).returncode == 0
    assert repo.git("log", "--format=%s", "origin/main..").split("\n")[0] == "Add b"
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def test_commit_squash_then_autosquash_duplicates_the_marker(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    repo.write("b.txt", "b2\n")
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "--squash=HEAD", "-F", "-", input=good("Tune b"))
    assert proc.returncode == 0, out(proc)
    env = {"GIT_SEQUENCE_EDITOR": "true", "GIT_EDITOR": "true"}
    assert git(repo, "rebase", "-q", "-i", "--autosquash", "origin/main", **env).returncode == 0
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0 and "marker-duplicate" in out(refused)


def test_fixups_check_refuses_the_fixup_at_commit_msg(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    cfg = repo.read(".agents/protocol.yaml").decode().replace("fixups: allow", "fixups: check")
    repo.write(".agents/protocol.yaml", cfg)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    repo.write("b.txt", "b2\n")
    git(repo, "add", "-A")
    refused = git(repo, "commit", "-q", "--fixup=HEAD")
    assert refused.returncode != 0 and "marker-missing" in out(refused)


def test_a_deleted_ref_is_not_judged(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("topic")
    fixture_commit(repo, bad(), {"t.txt": "t\n"})
    assert git(repo, "push", "-q", "--no-verify", "origin", "topic").returncode == 0
    proc = git(repo, "push", "-q", "origin", "--delete", "topic")
    assert proc.returncode == 0, out(proc)


def test_a_new_branch_is_judged_from_its_merge_base(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("topic")
    assert commit_file(repo, "t.txt", "t\n", good("Add t")).returncode == 0
    fixture_commit(repo, bad("Add u"), {"u.txt": "u\n"})
    refused = git(repo, "push", "origin", "topic")
    assert refused.returncode != 0
    # Only the topic's own two commits were judged, and only the bad one failed.
    text = out(refused)
    assert "in 2 commits" in text and text.count("marker-missing") == 1


# -- 3. git merge with git's own message, and everyday workflows -----------------------------


def test_merge_with_default_message_passes_the_starter_config(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("feature")
    assert commit_file(repo, "f.txt", "f\n", good("Add f")).returncode == 0
    repo.checkout("main")
    assert commit_file(repo, "m.txt", "m\n", good("Add m")).returncode == 0
    proc = git(repo, "merge", "--no-ff", "--no-edit", "feature")
    assert proc.returncode == 0, out(proc)
    assert not (repo.path / ".git" / "MERGE_HEAD").exists()
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def test_an_evil_merge_is_refused_by_push(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    repo.branch("feature")
    assert commit_file(repo, "f.txt", "f\n", good("Add f")).returncode == 0
    repo.checkout("main")
    assert commit_file(repo, "m.txt", "m\n", good("Add m")).returncode == 0
    assert git(repo, "merge", "--no-ff", "--no-commit", "feature").returncode == 0
    repo.write("src/app.c", "int main(void) { return 7; }\n")  # neither side changed it
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "--no-edit")
    assert proc.returncode == 0, out(proc)  # no hook before pre-push sees a merge's content
    refused = git(repo, "push", "origin", "main")
    assert refused.returncode != 0
    assert "merge-evil" in out(refused) and "src/app.c" in out(refused)


def test_a_merge_judged_by_the_trailers_says_how_to_leave_merges_out(
    repo: Repo, tmp_path: Path
) -> None:
    with_remote(repo, tmp_path)
    cfg = repo.read(".agents/protocol.yaml").decode().replace("merges: skip", "merges: check")
    repo.write(".agents/protocol.yaml", cfg)
    assert commit_file(repo, "cfg.txt", "x\n", good("Judge merges")).returncode == 0
    repo.branch("feature")
    assert commit_file(repo, "f.txt", "f\n", good("Add f")).returncode == 0
    repo.checkout("main")
    refused = git(repo, "merge", "--no-ff", "--no-edit", "feature")
    assert refused.returncode != 0
    assert "marker-missing" in out(refused) and "trailers.merges: skip" in out(refused)
    git(repo, "merge", "--abort")


def test_stash_worktree_detached_head_and_submodule(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    # stash and pop, then commit.
    repo.write("src/app.c", "int main(void) { return 2; }\n")
    assert git(repo, "stash", "-q").returncode == 0
    assert git(repo, "stash", "pop", "-q").returncode == 0
    git(repo, "add", "-A")
    assert git(repo, "commit", "-q", "-F", "-", input=good("Return 2")).returncode == 0
    # A commit from a linked worktree runs the same hooks.
    linked = tmp_path / "linked"
    assert git(repo, "worktree", "add", "-q", str(linked), "-b", "side").returncode == 0
    (linked / "side.txt").write_text("side\n")
    side = subprocess.run(
        ["git", "add", "-A"], cwd=linked, capture_output=True, env=_env()
    )  # fmt: skip
    assert side.returncode == 0
    side = subprocess.run(
        ["git", "commit", "-q", "-F", "-"], cwd=linked, input=good("Add side").encode(),
        capture_output=True, env=_env(),
    )  # fmt: skip
    assert side.returncode == 0, side.stderr
    refused = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "no marker"], cwd=linked,
        capture_output=True, env=_env(),
    )  # fmt: skip
    assert refused.returncode != 0 and b"marker-missing" in refused.stderr
    # A detached HEAD.
    repo.checkout("--detach")
    assert commit_file(repo, "d.txt", "d\n", good("Add d")).returncode == 0
    proc = git(repo, "push", "-q", "origin", "HEAD:refs/heads/detached")
    assert proc.returncode == 0, out(proc)
    repo.checkout("main")
    # A submodule (a gitlink) is committed through the hooks.
    sub = Repo(tmp_path / "sub")
    sub.commit("Sub start\n\nBody.\n", {"s.txt": "s\n"})
    proc = git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path),
               "vendor/sub")  # fmt: skip
    assert proc.returncode == 0, out(proc)
    assert git(repo, "commit", "-q", "-F", "-", input=good("Vendor sub")).returncode == 0
    proc = git(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, out(proc)


def _env() -> dict[str, str]:
    from tests.test_workflows import hooked_env

    return hooked_env()


# -- 4. a pending in-place restore blocks every gate -----------------------------------------


def test_a_mutant_left_by_a_killed_in_place_run_is_never_committed(
    repo: Repo, tmp_path: Path
) -> None:
    from tests.mutate.test_inplace import _start_in_place_arm, _wait_for

    with_remote(repo, tmp_path)
    _, marker, _, proc = _start_in_place_arm(repo, tmp_path)
    shell = int(_wait_for(marker))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    try:
        os.killpg(shell, signal.SIGKILL)  # the arm's own session outlives its parent
    except ProcessLookupError:
        pass
    assert "a - b" in repo.read("src/calc.py").decode()  # the mutant is in the tree
    refused = git(repo, "commit", "-q", "-a", "-F", "-", input=good("Change calc"))
    assert refused.returncode != 0
    assert "inplace-restore-pending" in out(refused) and "tools mutate recover" in out(refused)
    assert "a - b" not in repo.git("show", "HEAD:src/calc.py")
    run = repo.tools("preflight")
    assert run.exit_code == 1 and "inplace-restore-pending" in run.stdout
    # Once restored, the tree is clean and judged again.
    recovered = repo.tools("mutate", "recover")
    assert recovered.exit_code == 0, recovered.stderr
    assert "restored: src/calc.py" in recovered.stdout + recovered.stderr
    assert repo.git("status", "--porcelain", "--untracked-files=no").strip() == ""
    assert repo.tools("preflight", "--gate", "conflicts").exit_code == 0


# -- 5. the placeholder is refused by the commit-msg hook ------------------------------------


def test_an_unfilled_assisted_by_is_refused_by_commit_msg(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    message = good().replace("codex:o3 [git]", "AGENT:MODEL [TOOL]")
    refused = commit_file(repo, "b.txt", "b\n", message)
    assert refused.returncode != 0 and "placeholder" in out(refused)


# -- 6. --require-commits fails a range that cannot be computed ------------------------------


def test_require_commits_fails_a_shallow_clone_without_the_merge_base(
    repo: Repo, tmp_path: Path
) -> None:
    initialised(repo)
    fixture_commit(repo, good("Start"), {"a.txt": "a\n"})
    fixture_commit(repo, good("More"), {"a.txt": "b\n"})
    repo.branch("topic")
    fixture_commit(repo, good("Topic"), {"t.txt": "t\n"})
    fixture_commit(repo, good("Topic 2"), {"t.txt": "t2\n"})
    repo.checkout("main")
    fixture_commit(repo, good("Main moves"), {"m.txt": "m\n"})
    clone = repo.clone(tmp_path / "shallow", "--depth", "1", "--branch", "topic")
    clone.git("fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    args = ["--format", "json", "preflight", "--base", "origin/main"]
    lax = clone.tools(*args)
    assert lax.exit_code == 0 and lax.json()["status"] == "skip"
    strict = clone.tools(*args, "--require-commits")
    assert strict.exit_code == 1, strict.stdout
    failed = {g["gate"] for g in strict.json()["gates"] if g["status"] == "fail"}
    assert {"trailers", "style", "index", "ledger"} <= failed


# -- 7. message gates in a bare repository ---------------------------------------------------


def test_message_gates_judge_a_bare_repository(repo: Repo, tmp_path: Path) -> None:
    remote = with_remote(repo, tmp_path)
    fixture_commit(repo, bad(), {"b.txt": "b\n"})
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    bare = Repo(remote, init=False)
    run = bare.tools("trailers", "check", "--commit", "main")
    assert run.exit_code == 1 and "marker-missing" in run.stdout
    # The config is the one committed at the bare repository's HEAD.
    assert bare.tools("trailers", "check", "--commit", "main~1").exit_code == 0
    assert bare.tools("style", "check", "--base", "main~1", "--head", "main").exit_code == 0
    # What needs a working tree says so, in one line.
    staged = bare.tools("trailers", "check", "--message-file", "-", input="x\n")
    assert staged.exit_code == 2 and "bare" in staged.stderr
    assert bare.tools("preflight").exit_code == 2


# -- 8. hooks that work without the environment, and keep a user's own hook ------------------


def test_hooks_work_without_the_environment_on_path(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    env = dict(_env(), PATH="/usr/bin:/bin")
    repo.write("b.txt", "b\n")
    git(repo, "add", "-A")
    proc = subprocess.run(
        ["git", "commit", "-q", "-F", "-"], cwd=repo.path, input=good("Add b").encode(),
        capture_output=True, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_a_hook_whose_tools_is_gone_fails_closed(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    first = hook.read_text().split("\n")[2].split()[4]  # `if [ ! -x PATH ]; then`
    hook.write_text(hook.read_text().replace(first, str(tmp_path / "gone" / "tools")))
    refused = commit_file(repo, "b.txt", "b\n", good("Add b"))
    assert refused.returncode != 0
    assert "is gone" in out(refused) and "tools hooks install --force" in out(refused)


def test_install_keeps_a_foreign_hook_and_runs_it_first(repo: Repo, tmp_path: Path) -> None:
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    ran = tmp_path / "ran.txt"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho mine >> {ran}\n")
    (hooks / "pre-commit").chmod(0o755)
    kept = repo.tools("hooks", "install")
    assert kept.exit_code == 1 and "kept" in kept.stdout and "pre-commit" in kept.stdout
    assert "exec" not in (hooks / "pre-commit").read_text()
    moved = repo.tools("hooks", "install", "--force")
    assert moved.exit_code == 0 and "pre-commit.local" in moved.stdout
    assert (hooks / "pre-commit.local").read_text() == f"#!/bin/sh\necho mine >> {ran}\n"
    initialised(repo)
    assert commit_file(repo, "a.txt", "a\n", good()).returncode == 0
    assert ran.read_text() == "mine\n"
    # A failing hook of the user's stops the commit, as it did before.
    (hooks / "pre-commit.local").write_text("#!/bin/sh\nexit 3\n")
    refused = commit_file(repo, "a.txt", "b\n", good("Change a"))
    assert refused.returncode != 0 and "pre-commit.local" in out(refused)


def test_init_writes_a_base_that_resolves(repo: Repo, make_repo, tmp_path: Path) -> None:
    initialised(repo)
    assert b'\nbase: "main"\n' in repo.read(".agents/protocol.yaml")
    fixture_commit(repo, good("Start"), {"a.txt": "a\n"})
    run = repo.tools("--format", "json", "preflight")
    assert run.exit_code == 0 and run.json()["status"] == "pass", run.stdout
    # A clone's base is the remote's default branch.
    other = make_repo("other")
    other.commit(good("Start"), {"a.txt": "a\n"})
    other.git("branch", "-m", "main", "trunk")
    clone = other.clone(tmp_path / "clone")
    assert initialised(clone).read(".agents/protocol.yaml").count(b'\nbase: "origin/trunk"\n')


# -- 9. a green hook prints one line ---------------------------------------------------------


def test_a_green_commit_and_push_print_one_line_per_hook(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    proc = commit_file(repo, "b.txt", "b\n", good("Add b"))
    lines = out(proc).strip().split("\n")
    assert len(lines) == 2 and all(GREEN_LINE.match(line) for line in lines), lines
    proc = git(repo, "push", "-q", "origin", "main")
    lines = out(proc).strip().split("\n")
    assert len(lines) == 1 and GREEN_LINE.match(lines[0]), lines


def hook_lines(proc: subprocess.CompletedProcess) -> list[str]:
    """What the hooks printed (git's own output kept out with -q)."""
    return out(proc).strip().splitlines()


def test_a_gate_that_cannot_apply_at_its_stage_is_silent(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    assert commit_file(repo, "b.txt", "b\n", good("Add b")).returncode == 0
    # A message-only amend: nothing is staged, so conflicts has nothing to examine.
    amend = git(repo, "commit", "-q", "--amend", "-F", "-", input=good("Add the b file"))
    assert amend.returncode == 0, out(amend)
    lines = hook_lines(amend)
    assert len(lines) == 2 and all(GREEN_LINE.match(line) for line in lines), lines
    assert lines[0].startswith("tools: 7 gates green")  # conflicts left out, not "skipped"
    # A fixup: its message is judged when the rebase folds it.
    repo.write("b.txt", "b2\n")
    git(repo, "add", "-A")
    fixup = git(repo, "commit", "-q", "--fixup=HEAD")
    assert fixup.returncode == 0, out(fixup)
    lines = hook_lines(fixup)
    assert len(lines) == 2 and GREEN_LINE.match(lines[0]), lines
    assert lines[1].startswith("tools: nothing to judge at this stage (a fixup!"), lines
    # A merge with git's message, and a merge stopped on conflicts and concluded.
    repo.branch("feature")
    assert commit_file(repo, "f.txt", "f\n", good("Add f")).returncode == 0
    assert commit_file(repo, "k.txt", "theirs\n", good("Add k")).returncode == 0
    repo.checkout("main")
    assert commit_file(repo, "k.txt", "ours\n", good("Add our k")).returncode == 0
    stopped = git(repo, "merge", "-q", "--no-edit", "feature")
    assert stopped.returncode != 0 and "CONFLICT" in out(stopped)
    repo.write("k.txt", "both\n")
    git(repo, "add", "k.txt")
    concluded = git(repo, "commit", "-q", "--no-edit")
    assert concluded.returncode == 0, out(concluded)
    lines = hook_lines(concluded)
    assert len(lines) == 2 and GREEN_LINE.match(lines[0]), lines
    assert lines[1].startswith("tools: nothing to judge at this stage (a merge's message)")
    repo.git("checkout", "-q", "-b", "side", "HEAD~1")
    assert commit_file(repo, "s.txt", "s\n", good("Add s")).returncode == 0
    repo.checkout("main")
    merged = git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    assert merged.returncode == 0, out(merged)
    (line,) = hook_lines(merged)  # git merge runs commit-msg, not pre-commit
    assert line.startswith("tools: nothing to judge at this stage (a merge's message)"), line
    for proc in (amend, fixup, concluded, merged):
        assert "skipped" not in out(proc) and "SKIP" not in out(proc), out(proc)


def test_a_refused_commit_prints_its_findings_and_one_summary_line(
    repo: Repo, tmp_path: Path
) -> None:
    with_remote(repo, tmp_path)
    # Refused at pre-commit: three conflict markers, three findings, one line that says so.
    refused = commit_file(repo, "c.txt", "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n", good("Add c"))
    assert refused.returncode != 0
    lines = hook_lines(refused)
    assert [line.split(" ")[0] for line in lines[:-1]] == ["error[conflict-marker]"] * 3, lines
    assert re.fullmatch(
        r"tools: commit refused: 3 errors \(conflicts 3\) \(\d+\.\d s\)", lines[-1]
    ), lines
    # Refused at commit-msg: pre-commit's green line, the message's findings, one line.
    repo.write("c.txt", "c\n")
    git(repo, "add", "-A")
    refused = git(repo, "commit", "-q", "-F", "-", input=bad())
    assert refused.returncode != 0
    lines = hook_lines(refused)
    assert GREEN_LINE.match(lines[0]), lines
    assert lines[1:-1] and all(line.startswith("error[") for line in lines[1:-1]), lines
    assert any(line.startswith("error[marker-missing] ") for line in lines), lines
    assert lines[-1].startswith(f"tools: commit refused: {len(lines) - 2} errors (trailers ")
    # Refused at pre-push: the findings and one line naming the commits judged.
    fixture_commit(repo, bad("Add d"), {"d.txt": "d\n"})
    refused = git(repo, "push", "-q", "origin", "main")
    assert refused.returncode != 0
    mine = [line for line in hook_lines(refused) if not line.startswith(("error: ", "To "))]
    assert all(line.startswith("error[") for line in mine[:-1]), mine
    assert mine[-1].startswith("tools: push refused: ") and " in 1 commit " in mine[-1], mine


def test_a_green_hook_counts_its_warnings_on_its_one_line(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    long = "Add " + "a very long subject " * 5
    proc = commit_file(repo, "b.txt", "b\n", good(long.strip()))
    assert proc.returncode == 0, out(proc)
    lines = hook_lines(proc)
    assert len(lines) == 2 and GREEN_LINE.match(lines[0]), lines
    assert re.fullmatch(
        r"tools: 2 gates green, 1 warning \(subject-length: tools preflight --message-file "
        r"\S+ shows it\) \(\d+\.\d s\)",
        lines[1],
    ), lines


def test_a_message_gate_switched_off_is_not_run_by_the_hooks(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    cfg = repo.read(".agents/protocol.yaml").decode() + "style:\n  enabled: false\n"
    repo.write(".agents/protocol.yaml", cfg)
    proc = commit_file(repo, "b.txt", "b\n", good("Add b."))  # a period style would refuse
    assert proc.returncode == 0, out(proc)
    lines = hook_lines(proc)
    assert re.fullmatch(r"tools: 1 gate green \(\d+\.\d s\)", lines[1]), lines
    assert "skipped" not in out(proc)


def test_a_gate_that_could_not_judge_is_still_shown_with_its_reason(
    repo: Repo, tmp_path: Path
) -> None:
    with_remote(repo, tmp_path)
    cfg = repo.read(".agents/protocol.yaml").decode().replace('base: "main"', 'base: "gone"')
    repo.write(".agents/protocol.yaml", cfg)
    assert commit_file(repo, "cfg.txt", "x\n", good("Judge from gone")).returncode == 0
    repo.branch("topic")
    assert commit_file(repo, "t.txt", "t\n", good("Add t")).returncode == 0
    pushed = git(repo, "push", "-q", "origin", "topic")  # a new branch: judged from `gone`
    assert pushed.returncode == 0, out(pushed)
    lines = hook_lines(pushed)
    assert lines[-1].startswith("tools: not green: ") and "skipped (" in lines[-1], lines
    assert any(line.startswith("SKIP trailers: ") and "gone" in line for line in lines), lines


# -- 10. hostile configs and plans, and formats a command cannot print -----------------------


@pytest.mark.parametrize("depth", [400, 5000])
def test_deeply_nested_yaml_is_exit_2(repo: Repo, tmp_path: Path, depth: int) -> None:
    repo.write(".agents/protocol.yaml", "a: " + "[" * depth + "]" * depth + "\n")
    run = repo.tools("preflight")
    assert run.exit_code == 2 and "nesting deeper than 100" in run.stderr
    plan = repo.path / "plans" / "plan.yml"  # untracked: `commit -a` leaves it out
    plan.parent.mkdir()
    plan.write_text("arms: " + "[" * depth + "]" * depth + "\n")
    repo.write(".agents/protocol.yaml", "{}\n")
    run = repo.tools("mutate", "run", str(plan))
    assert run.exit_code == 2 and "nesting deeper than 100" in run.stderr


def test_an_alias_bomb_is_refused(repo: Repo) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    repo.write(".agents/protocol.yaml", "\n".join(lines) + "\n")
    started = time.monotonic()
    run = repo.tools("config", "validate")
    assert run.exit_code == 2 and "aliases expanded" in run.stderr
    assert time.monotonic() - started < 30  # refused, not expanded (the bound is in bench/)


@pytest.mark.parametrize(
    "args",
    [
        ["config", "show"],
        ["config", "validate"],
        ["ledger", "show"],
        ["init"],
        ["hooks", "install"],
    ],
)
def test_a_format_a_command_cannot_print_is_exit_2(repo: Repo, args: list[str]) -> None:
    run = repo.tools("--format", "sarif", *args)
    assert run.exit_code == 2 and "--format sarif" in run.stderr
    assert not (repo.path / ".agents").exists()  # nothing was written


def test_a_config_that_is_a_directory_says_so(repo: Repo, tmp_path: Path) -> None:
    run = repo.tools("--config", str(tmp_path), "preflight")
    assert run.exit_code == 2 and "is a directory" in run.stderr


def test_the_pre_commit_framework_config_has_the_pre_push_stage() -> None:
    import yaml

    root = Path(__file__).resolve().parents[1]
    hooks = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    stages = {stage for hook in hooks for stage in hook.get("stages", [])}
    assert {"pre-commit", "commit-msg", "pre-push"} <= stages


# -- 11. a pushed range reports the protocol pseudo-gate ---------------------------------------


def test_a_push_that_raises_its_own_baseline_is_refused(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    baseline = ".agents/baselines/device-leakage.json"
    buckets = {"kcuda": 0, "is_cuda": 0, "cuda_include": 0, "vt_macro": 0}
    text = json.dumps({"ratchet": "device-leakage", "buckets": buckets}, indent=2) + "\n"
    proc = commit_file(repo, baseline, text, good("Record the baseline"))
    assert proc.returncode == 0, out(proc)
    assert git(repo, "push", "-q", "origin", "main").returncode == 0
    repo.write(baseline, text.replace('"kcuda": 0', '"kcuda": 1'))
    proc = commit_file(repo, "src/a.cc", "int f() { return at::kCUDA; }\n", good("Add a"))
    assert proc.returncode == 0, out(proc)  # judged by its own baseline, the commit passes
    pushed = git(repo, "push", "-q", "origin", "main")
    assert pushed.returncode != 0
    assert "baseline-raised" in out(pushed) and "from 0 to 1" in out(pushed)


# -- 12. hooks chain, never re-enter (SPEC §9.3) -----------------------------------------------

TOOLS_EXE = Path(sys.executable).parent / "tools"
NOT_JUDGED = "tools: no protocol in this tree: not judged"
# A hook that re-enters would nest without end; a finished commit takes a few seconds.
BOUND = 180


def bounded_git(repo: Repo, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """A real git command as ``git`` runs it, in a session of its own that is ended whole if
    it has not finished within ``BOUND`` seconds (hooks that re-entered without end)."""
    proc = subprocess.Popen(
        ["git", *args], cwd=repo.path, env=_env(), start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(input.encode() if input else None, timeout=BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"git {' '.join(args)} did not finish in {BOUND} s") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def framework_install(repo: Repo, tmp_path: Path, hooks: str) -> None:
    """A real pre-commit framework install of a `.pre-commit-config.yaml` of local ``hooks``
    (committed first: the framework refuses an unstaged config), over our pre-commit hook."""
    config = f"repos:\n  - repo: local\n    hooks:\n{hooks}"
    fixture_commit(repo, "Add the framework config\n\nBody.\n", {".pre-commit-config.yaml": config})
    env = dict(_env(), PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install", "--overwrite"], cwd=repo.path,
        capture_output=True, env=env, timeout=BOUND,
    )  # fmt: skip
    assert proc.returncode == 0, out(proc)
    assert "File generated by pre-commit" in (repo.path / ".git/hooks/pre-commit").read_text()


def local_hook(ident: str, entry: str) -> str:
    return (
        f"      - id: {ident}\n        name: {ident}\n        entry: {entry}\n"
        "        language: system\n        pass_filenames: false\n        always_run: true\n"
        "        verbose: true\n        stages: [pre-commit]\n"
    )


def test_a_framework_hook_moved_to_local_runs_once_per_commit(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    # A framework hook whose entry is a script of the repository that calls `tools hooks run`:
    # `hooks install` cannot tell that it runs tools, and moves it to pre-commit.local.
    ran = tmp_path / "ran.txt"
    wrapper = (
        f"echo ran >> {ran}\n"
        f'[ "$(wc -l < {ran})" -le 3 ] || {{ echo "re-entered without end" >&2; exit 1; }}\n'
        f'exec {TOOLS_EXE} hooks run pre-commit "$@"\n'
    )
    repo.write("scripts/gates.sh", wrapper)
    framework_install(repo, tmp_path, local_hook("gates", "sh scripts/gates.sh"))
    moved = repo.tools("hooks", "install", "--force")
    assert moved.exit_code == 0 and "pre-commit.local" in moved.stdout, moved.stdout
    repo.write("b.txt", "b\n")
    git(repo, "add", "-A")
    proc = bounded_git(repo, "commit", "-q", "-F", "-", input=good("Add b"))
    assert proc.returncode == 0, out(proc)
    assert ran.read_text() == "ran\n"  # the framework's hook ran once
    text = out(proc)
    # The re-entry passed through in one line; the outer run judged, once.
    assert text.count("pre-commit hook re-entered") == 1, text
    assert len([line for line in text.splitlines() if GREEN_LINE.match(line)]) == 2, text
    assert repo.git("log", "-1", "--format=%s").strip() == "Add b"


def test_install_leaves_a_framework_hook_that_runs_tools(repo: Repo, tmp_path: Path) -> None:
    with_remote(repo, tmp_path)
    framework_install(
        repo, tmp_path, local_hook("tools-gates", f"{TOOLS_EXE} hooks run pre-commit")
    )
    framework = (repo.path / ".git/hooks/pre-commit").read_text()
    for args in (["hooks", "install"], ["hooks", "install", "--force"]):
        run = repo.tools(*args)
        assert run.exit_code == 0, (args, run.stdout)
        assert "runs tools already (tools-gates in .pre-commit-config.yaml)" in run.stdout
        assert (repo.path / ".git/hooks/pre-commit").read_text() == framework  # not chained
        assert not (repo.path / ".git/hooks/pre-commit.local").exists()
    repo.write("b.txt", "b\n")
    git(repo, "add", "-A")
    proc = bounded_git(repo, "commit", "-q", "-F", "-", input=good("Add b"))
    assert proc.returncode == 0, out(proc)
    text = out(proc)
    # One green line from the framework's pre-commit hook, one from our commit-msg hook.
    assert len([line for line in text.splitlines() if GREEN_LINE.match(line)]) == 2, text
    assert "re-entered" not in text


def test_the_framework_hooks_we_recognise_are_the_manifests() -> None:
    import yaml

    from tools import hooks

    root = Path(__file__).resolve().parents[1]
    manifest = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"]: tuple(h["stages"]) for h in manifest} == hooks.FRAMEWORK_HOOKS


# -- 13. a hook never judges a tree without a protocol (SPEC §9.3) -----------------------------


def test_a_branch_made_before_adoption_commits_and_pushes_unjudged(
    repo: Repo, tmp_path: Path
) -> None:
    # History before adoption: messages of the repository's own kind, no protocol.
    fixture_commit(repo, "Start\n", {"src/app.cc": "int f() { return at::kCUDA; }\n"})
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "-u", "origin", "main")
    repo.branch("old")
    fixture_commit(repo, "Old work\n", {"old.txt": "old\n"})
    repo.checkout("main")
    repo.branch("adopt")
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout
    git(repo, "add", "-A")
    proc = git(repo, "commit", "-q", "-F", "-", input="Adopt the gates\n\nThe protocol.\n")
    assert proc.returncode == 0, out(proc)
    # A teammate's commit on main, made before adoption; pushed from the adopted branch.
    repo.git("update-ref", "refs/heads/main", fixture_commit_on(repo, "main", "More\n"))
    pushed = git(repo, "push", "origin", "main")
    assert pushed.returncode == 0, out(pushed)
    assert out(pushed).count(NOT_JUDGED) == 1
    # The branch made before adoption: pushed, and committed on, through the hooks.
    pushed = git(repo, "push", "origin", "old")
    assert pushed.returncode == 0 and NOT_JUDGED in out(pushed), out(pushed)
    repo.checkout("old")
    assert not (repo.path / ".agents/protocol.yaml").exists()
    proc = commit_file(repo, "old.txt", "older\n", "More old work\n")
    assert proc.returncode == 0, out(proc)
    assert out(proc).strip().splitlines() == [NOT_JUDGED, NOT_JUDGED]  # pre-commit, commit-msg
    pushed = git(repo, "push", "origin", "old")
    assert pushed.returncode == 0 and out(pushed).count(NOT_JUDGED) == 1, out(pushed)
    # The adopted branch is judged by its protocol, by the same hooks.
    repo.checkout("adopt")
    refused = commit_file(repo, "src/b.cc", "int g() { return at::kCUDA; }\n", "Add g\n\nBody.\n")
    assert refused.returncode != 0 and "ratchet-regression" in out(refused), out(refused)


def fixture_commit_on(repo: Repo, branch: str, message: str) -> str:
    """A commit on ``branch`` (its tree unchanged) without checking it out: what a teammate
    pushed and this clone fetched."""
    tree = repo.git("rev-parse", f"{branch}^{{tree}}").strip()
    return repo.git("commit-tree", tree, "-p", branch, "-m", message.strip()).strip()


def test_require_protocol_fails_a_tree_without_one_in_one_line(repo: Repo) -> None:
    fixture_commit(repo, "Start\n", {"a.txt": "a\n"})
    # By hand, without the option, the defaults judge (SPEC §3.1).
    assert repo.tools("--format", "json", "preflight").json()["gates"]
    for args in (
        ["--require-protocol", "preflight"],
        ["preflight", "--require-protocol"],
        ["--require-protocol", "trailers", "check", "--commit", "HEAD"],
        ["--require-protocol", "baseline", "show"],
    ):
        run = repo.tools(*args)
        assert run.exit_code == 1, (args, run.stdout, run.stderr)
        assert run.stdout == ""
        assert run.stderr == (
            "tools: no protocol in this tree (.agents/protocol.yaml): --require-protocol fails\n"
        )
    repo.write(".agents/protocol.yaml", "preflight: {gates: [conflicts]}\n")
    assert repo.tools("--require-protocol", "preflight").exit_code == 0
