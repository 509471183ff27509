"""tools init / hooks install: idempotent, never overwrite without --force, hooks work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Repo
from tools import config as config_mod


def test_init_writes_config_attributes_driver_and_hooks(repo: Repo) -> None:
    run = repo.tools("init")
    assert run.exit_code == 0, run.stdout + run.stderr
    cfg = repo.path / ".agents/protocol.yaml"
    config_mod.load_file(cfg, display="protocol.yaml")  # the starter validates
    attrs = (repo.path / ".gitattributes").read_text()
    assert ".agents/issue-index.md merge=agent-index\n" in attrs
    assert ".agents/ledger.jsonl merge=union\n" in attrs
    # The driver runs the absolute `tools` that installed it, as the hooks do (SPEC §9.3).
    tools_exe = Path(sys.executable).parent / "tools"
    driver = repo.git("config", "merge.agent-index.driver").strip()
    assert driver.startswith(f"if [ -x {tools_exe} ]; then {tools_exe} index merge-driver ")
    assert driver.endswith("git merge-file -L ours -L base -L theirs %A %O %B; exit 1")
    for hook in ("pre-commit", "commit-msg"):
        path = repo.path / ".git/hooks" / hook
        assert os.access(path, os.X_OK)


def test_init_is_idempotent(repo: Repo) -> None:
    repo.tools("init")
    before = {p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file()}
    run = repo.tools("init")
    assert run.exit_code == 0
    assert "wrote" not in run.stdout and "updated" not in run.stdout
    after = {p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file()}
    assert before == after


def test_init_keeps_what_differs_unless_forced(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "base: main\n")
    repo.write(".gitattributes", "*.png binary\n.agents/issue-index.md merge=union\n")
    run = repo.tools("init")
    assert run.exit_code == 1
    assert "kept" in run.stdout
    assert repo.read(".agents/protocol.yaml") == b"base: main\n"
    attrs = repo.read(".gitattributes").decode()
    assert ".agents/issue-index.md merge=union" in attrs  # kept
    assert ".agents/ledger.jsonl merge=union" in attrs  # missing line appended
    run = repo.tools("init", "--force")
    assert run.exit_code == 0
    assert repo.read(".agents/protocol.yaml") != b"base: main\n"
    attrs = repo.read(".gitattributes").decode()
    assert "*.png binary\n" in attrs
    assert ".agents/issue-index.md merge=agent-index" in attrs
    assert "merge=union\n.agents/issue-index.md" not in attrs


def test_init_honours_configured_paths(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "index: {path: docs/index.md}\n")
    repo.tools("init")
    assert "docs/index.md merge=agent-index" in repo.read(".gitattributes").decode()


def _env_with_tools_on_path() -> dict[str, str]:
    env = dict(os.environ)
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def _commit_with_hooks(repo: Repo) -> subprocess.CompletedProcess[str]:
    """Stage everything and run a real `git commit`, hooks included."""
    repo.git("add", "-A")
    return subprocess.run(
        ["git", "commit", "-q", "-m", "Add things"],
        cwd=repo.path,
        env=_env_with_tools_on_path(),
        capture_output=True,
        text=True,
    )


def test_pre_commit_hook_refuses_a_staged_conflict_marker(repo: Repo) -> None:
    # The message gates are off here: this test is about the pre-commit hook.
    repo.write(
        ".agents/protocol.yaml",
        "preflight: {gates: [conflicts]}\ntrailers: {enabled: false}\nstyle: {enabled: false}\n",
    )
    assert repo.tools("hooks", "install").exit_code == 0
    repo.write("a.txt", "<<<<<<< HEAD\nx\n>>>>>>> y\n")
    proc = _commit_with_hooks(repo)
    assert proc.returncode != 0
    assert "conflict-marker" in proc.stdout + proc.stderr
    repo.write("a.txt", "clean\n")
    proc = _commit_with_hooks(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hooks_install_respects_core_hooks_path_and_force(repo: Repo) -> None:
    repo.git("config", "core.hooksPath", "githooks")
    (repo.path / "githooks").mkdir()
    (repo.path / "githooks/pre-commit").write_text("#!/bin/sh\nexit 0\n")
    run = repo.tools("hooks", "install")
    assert run.exit_code == 1 and "kept" in run.stdout
    assert (repo.path / "githooks/commit-msg").exists()
    assert repo.tools("hooks", "install", "--force").exit_code == 0
    assert "hooks run pre-commit" in (repo.path / "githooks/pre-commit").read_text()
    # The user's own hook is kept beside ours, never lost.
    assert (repo.path / "githooks/pre-commit.local").read_text() == "#!/bin/sh\nexit 0\n"


def test_init_replaces_a_driver_an_earlier_version_registered(repo: Repo) -> None:
    repo.git("config", "merge.agent-index.driver", "tools index merge-driver %O %A %B")
    run = repo.tools("init")
    assert run.exit_code == 0, run.stdout
    assert repo.git("config", "merge.agent-index.driver").startswith("if [ -x /")
    # A driver of the user's own is kept, as any other file that differs.
    repo.git("config", "merge.agent-index.driver", "my-merge %O %A %B")
    assert repo.tools("init").exit_code == 1
    assert repo.git("config", "merge.agent-index.driver").strip() == "my-merge %O %A %B"
