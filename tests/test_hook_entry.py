"""An installed hook's command line (`tools hooks run HOOK ARGS…`) runs without the CLI
framework, and says and exits exactly what the typer command says (SPEC §12)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools.hook_entry import bare_hook_run

_SECONDS = re.compile(r"\d+(\.\d+)? ?m?s\b")


def _tools(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tools", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _imports(stderr: str) -> set[str]:
    return {
        line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if "import time:" in line
    }


def _said(stderr: str) -> str:
    kept = [line for line in stderr.splitlines() if "import time:" not in line]
    return _SECONDS.sub("T", "\n".join(kept))


@pytest.fixture
def adopted(repo: Repo) -> Repo:
    repo.write(
        ".agents/protocol.yaml",
        "trailers: {marker: null, required: {}, assisted_by: false}\n"
        "style: {subject_max: 20, subject_length: error}\n",
    )
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    return repo


@pytest.mark.parametrize(
    "message", ["Short\n\nBody.\n", "A subject far longer than twenty\n\nBody.\n"]
)
def test_the_bare_hook_path_says_what_the_typer_command_says(adopted: Repo, message: str) -> None:
    (adopted.path / "MSG").write_text(message)
    bare = _tools(adopted.path, "hooks", "run", "commit-msg", "MSG")
    framed = _tools(adopted.path, "hooks", "run", "--repo", ".", "commit-msg", "MSG")
    assert "typer" not in _imports(bare.stderr)
    assert "typer" in _imports(framed.stderr)  # the comparison is with the other path
    assert (bare.returncode, _said(bare.stdout), _said(bare.stderr)) == (
        framed.returncode,
        _said(framed.stdout),
        _said(framed.stderr),
    )
    assert bare.returncode == (1 if "far longer" in message else 0)


def test_an_unknown_hook_or_config_source_is_one_error_line_on_both_paths(adopted: Repo) -> None:
    for args in (["hooks", "run", "pre-rebase"], ["hooks", "run", "--repo", ".", "pre-rebase"]):
        run = _tools(adopted.path, *args)
        assert run.returncode == 2 and _said(run.stderr).startswith("error: unknown hook")
        assert len(_said(run.stderr).splitlines()) == 1
    (adopted.path / "MSG").write_text("Short\n\nBody.\n")
    env = {"TOOLS_CONFIG_FROM": "tip"}
    for args in (
        ["hooks", "run", "commit-msg", "MSG"],
        ["hooks", "run", "--repo", ".", "commit-msg", "MSG"],
    ):
        run = _tools(adopted.path, *args, env=env)
        assert run.returncode == 2 and "TOOLS_CONFIG_FROM" in _said(run.stderr)


def test_an_unreadable_message_on_the_bare_path_is_one_error_line(adopted: Repo) -> None:
    # A message "file" that is a folder: exit 2 with one line, never a traceback.
    (adopted.path / "DIR").mkdir()
    run = _tools(adopted.path, "hooks", "run", "commit-msg", "DIR")
    assert run.returncode == 2 and _said(run.stderr).startswith("error: ")
    assert "Traceback" not in run.stderr


def test_only_an_installed_hooks_command_line_takes_the_bare_path() -> None:
    assert bare_hook_run(["hooks", "run", "commit-msg", "F"]) == ("commit-msg", ["F"])
    assert bare_hook_run(["hooks", "run", "pre-push", "origin", "--x"]) == (
        "pre-push",
        ["origin", "--x"],
    )
    for argv in (
        ["hooks", "run"],
        ["hooks", "run", "--help"],
        ["hooks", "run", "--repo", ".", "pre-commit"],
        ["--repo", ".", "hooks", "run", "pre-commit"],
        ["hooks", "install"],
        ["preflight"],
    ):
        assert bare_hook_run(argv) is None
