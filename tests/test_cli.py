"""CLI conventions: global options anywhere, formats, exit codes, one-line errors, no torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import Repo, run_cli, validate_report

HUNK = "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"


@pytest.fixture
def dirty(repo: Repo) -> Repo:
    repo.commit("Add\n\nBody.\n", {"a.txt": HUNK})
    return repo


def test_global_options_before_and_after_the_subcommand(dirty: Repo) -> None:
    before = run_cli(["--repo", str(dirty.path), "--format", "json", "conflicts", "check"])
    after = run_cli(["conflicts", "check", "--repo", str(dirty.path), "--format", "json"])
    assert before.exit_code == after.exit_code == 1
    assert json.loads(before.stdout) == json.loads(after.stdout)


def test_option_after_the_subcommand_wins(dirty: Repo) -> None:
    run = run_cli(
        ["--format", "text", "conflicts", "check", "--repo", str(dirty.path), "--format", "json"]
    )
    assert json.loads(run.stdout)["status"] == "fail"


def test_repo_defaults_to_the_cwd_repository(dirty: Repo) -> None:
    sub = dirty.path / "deep" / "er"
    sub.mkdir(parents=True)
    run = run_cli(["conflicts", "check"], cwd=sub)
    assert run.exit_code == 1


def test_config_option_before_the_subcommand(dirty: Repo, tmp_path) -> None:
    cfg = tmp_path / "other.yaml"
    cfg.write_text("now:\n  path: STATUS.md\n")
    run = run_cli(["--config", str(cfg), "--repo", str(dirty.path), "now", "check"])
    assert "STATUS.md does not exist" in run.stdout


def test_json_report_validates_against_the_shipped_schema(dirty: Repo) -> None:
    data = dirty.tools("--format", "json", "preflight").json()
    validate_report(data)
    assert data["schema"] == "tools.report/1"
    by_gate = {g["gate"]: g for g in data["gates"]}
    assert by_gate["conflicts"]["status"] == "fail"
    assert data["status"] == "fail"


def test_text_report_lines_and_summary(dirty: Repo) -> None:
    run = dirty.tools("preflight", "--gate", "conflicts", "--gate", "now")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0] == "FAIL conflicts (3 errors)"
    assert lines[1].startswith("  error[conflict-marker] a.txt:1:")
    assert lines[-1].startswith("Not green: 2 failed (conflicts, now)")


def test_all_gates_green_only_when_nothing_failed_or_skipped(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.txt": "fine\n"})
    run = repo.tools("preflight", "--gate", "conflicts")
    assert run.exit_code == 0
    assert run.stdout.splitlines()[-1] == "All gates green."
    empty = Repo(repo.path.parent / "empty")
    run = empty.tools("preflight", "--gate", "conflicts")
    assert run.exit_code == 0
    assert run.stdout.startswith("SKIP conflicts: nothing to examine")
    assert "All gates green." not in run.stdout
    assert empty.tools("preflight", "--gate", "conflicts", "--fail-on-skip").exit_code == 1


def test_preflight_unknown_gate_is_exit_2(repo: Repo) -> None:
    run = repo.tools("preflight", "--gate", "nope")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: --gate 'nope' is not a gate")


def test_bad_option_is_one_error_line_and_exit_2(repo: Repo) -> None:
    run = repo.tools("conflicts", "check", "--bogus")
    assert run.exit_code == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("error: ")
    run = repo.tools("--format", "yaml", "conflicts", "check")
    assert run.exit_code == 2 and run.stderr.startswith("error: ")


def test_explicit_ref_that_does_not_resolve_is_exit_2(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.txt": "x\n"})
    for flag in ("--base", "--head"):
        run = repo.tools("preflight", flag, "no-such-ref")
        assert run.exit_code == 2
        assert "no-such-ref" in run.stderr and run.stderr.startswith("error: ")


def test_version() -> None:
    run = run_cli(["--version"])
    assert run.exit_code == 0 and run.stdout.startswith("tools ")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_cli_module_and_help_import_no_torch() -> None:
    mods = _modules_after("import tools.cli.main")
    assert "torch" not in mods and "numpy" not in mods
    mods = _modules_after(
        "import tools.cli.main as m\n"
        "try:\n    m.app(['--help'], prog_name='tools')\nexcept SystemExit:\n    pass"
    )
    assert "torch" not in mods


def test_cli_start_loads_no_git_library_schema_validator_or_yaml() -> None:
    # `tools --help` must stay instant: these load only when a command runs.
    mods = _modules_after("import tools.cli.main")
    for heavy in ("git", "jsonschema", "yaml", "tools.context", "tools.config"):
        assert heavy not in mods, heavy


def test_python_dash_m_tools(dirty: Repo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "--repo", str(dirty.path), "conflicts", "check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "conflict-marker" in proc.stdout


def test_non_utf8_path_survives_rendering(repo: Repo) -> None:
    name = b"caf\xe9.txt"
    (repo.path / name.decode("utf-8", "surrogateescape")).write_bytes(HUNK.encode())
    repo.git("add", "-A")
    repo.commit("Add\n\nBody.\n")
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 1
    assert "caf" in run.stdout
