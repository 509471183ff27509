"""The agent-index merge driver under real `git merge`, and the gate with builtin merge=union.

The driver `tools init` registers runs the absolute `tools` that installed it; where it cannot
run, git's own conflict stays (both sides' rows, conflict markers), and a merge concluded
without a row of either side is refused at commit time (SPEC §9.3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo, run_cli
from tests.gates.test_index import IDX, findings, index, row, rules
from tests.test_workflows import hooked_env

TOOLS_EXE = str(Path(sys.executable).parent / "tools")
LEGACY = "tools index merge-driver %O %A %B"  # what earlier versions registered


def without_venv() -> dict[str, str]:
    """A shell's environment where this test run's virtual environment is not on PATH."""
    env = hooked_env()
    here = Path(sys.executable).parent
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p and Path(p) != here)
    env.pop("VIRTUAL_ENV", None)
    return env


def git_as_user(repo: Repo, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """A real git command, hooks included, without the virtual environment on PATH."""
    return subprocess.run(
        ["git", *args], cwd=repo.path, env=without_venv(), capture_output=True, timeout=300,
        input=input.encode() if input is not None else None,
    )  # fmt: skip


def said(proc: subprocess.CompletedProcess) -> str:
    return (proc.stdout + proc.stderr).decode("utf-8", "replace")


def two_branches(repo: Repo, ours: list[str], theirs: list[str], *, attrs: str) -> None:
    """main holds rows 1-2; `side` appends ``theirs``; `feature` (checked out) ``ours``."""
    repo.commit("Attrs\n\nBody.\n", {".gitattributes": attrs})
    repo.commit("Base\n\nBody.\n", {IDX: index(row(1), row(2))})
    repo.branch("side")
    repo.commit("Theirs\n\nBody.\n", {IDX: index(row(1), row(2), *theirs)})
    repo.checkout("main")
    repo.branch("feature")
    repo.commit("Ours\n\nBody.\n", {IDX: index(row(1), row(2), *ours)})


def use_driver(repo: Repo) -> None:
    """What `tools init` registers: the absolute `tools` of this run (PATH-independent)."""
    run = repo.tools("init")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert f"{IDX} merge=agent-index" in (repo.path / ".gitattributes").read_text()
    driver = repo.git("config", "merge.agent-index.driver").strip()
    assert f"then {TOOLS_EXE} index merge-driver %O %A %B;" in driver


def test_the_registered_driver_merges_without_the_venv_on_path(repo: Repo) -> None:
    use_driver(repo)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3)], [row(4)], attrs=attrs)
    proc = git_as_user(repo, "merge", "-q", "--no-verify", "--no-edit", "side")
    assert proc.returncode == 0, said(proc)
    assert repo.read(IDX).decode() == index(*(row(n) for n in (1, 2, 3, 4)))


def test_a_driver_that_cannot_run_leaves_gits_own_conflict(repo: Repo, tmp_path: Path) -> None:
    use_driver(repo)
    driver = repo.git("config", "merge.agent-index.driver").strip()
    repo.git(
        "config", "merge.agent-index.driver", driver.replace(TOOLS_EXE, str(tmp_path / "gone"))
    )
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3)], [row(4)], attrs=attrs)
    proc = git_as_user(repo, "merge", "--no-verify", "--no-edit", "side")
    assert proc.returncode != 0 and "CONFLICT" in said(proc)
    assert "is gone or failed" in said(proc)
    text = repo.read(IDX).decode()
    # Both sides' rows, between git's conflict markers: nothing resolved silently.
    assert "<<<<<<< ours\n" + row(3) + "=======\n" + row(4) + ">>>>>>> theirs\n" in text
    assert repo.git("diff", "--name-only", "--diff-filter=U").split() == [IDX]
    # Added as it is, the markers are refused by the pre-commit hook.
    repo.git("add", "-A")
    refused = git_as_user(repo, "commit", "--no-edit")
    assert refused.returncode != 0 and "conflict-marker" in said(refused), said(refused)


def test_a_merge_concluded_without_their_row_is_refused_at_commit(repo: Repo) -> None:
    use_driver(repo)
    # A driver that resolves by leaving our side only (an earlier version's bare `tools`,
    # run without the virtual environment on PATH): git reports a conflict, with no markers.
    repo.git("config", "merge.agent-index.driver", LEGACY)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3)], [row(4)], attrs=attrs)
    proc = git_as_user(repo, "merge", "--no-verify", "--no-edit", "side")
    assert proc.returncode != 0
    assert repo.read(IDX).decode() == index(row(1), row(2), row(3))
    repo.git("add", "-A")
    refused = git_as_user(repo, "commit", "--no-edit")
    assert refused.returncode != 0, said(refused)
    assert "merge-lost-row" in said(refused) and "#4" in said(refused), said(refused)
    assert (repo.path / ".git" / "MERGE_HEAD").exists()  # still to conclude
    # Both rows kept, the merge is concluded through the same hooks.
    repo.write(IDX, index(*(row(n) for n in (1, 2, 3, 4))))
    repo.git("add", "-A")
    proc = git_as_user(repo, "commit", "--no-edit")
    assert proc.returncode == 0, said(proc)
    assert len(repo.git("log", "-1", "--format=%P").split()) == 2


def test_the_index_check_of_a_staged_merge_keeps_their_rows(repo: Repo) -> None:
    use_driver(repo)
    repo.git("config", "merge.agent-index.driver", LEGACY)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3)], [row(4), row(5)], attrs=attrs)
    git_as_user(repo, "merge", "--no-verify", "--no-edit", "side")
    repo.git("add", "-A")
    run = repo.tools("--format", "json", "index", "check", "--staged")
    assert run.exit_code == 1
    lost = [f for f in findings(run) if f["rule"] == "merge-lost-row"]
    assert [f["message"].split(" that parent ")[0] for f in lost] == [
        "the merge lacks row #4",
        "the merge lacks row #5",
    ]
    assert all(f["commit"] is None and f["path"] == IDX for f in lost)


def test_driver_unions_appends_of_both_branches(repo: Repo) -> None:
    use_driver(repo)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3), row(4)], [row(5), row(6)], attrs=attrs)
    repo.git("merge", "-q", "--no-verify", "--no-edit", "side")
    assert repo.read(IDX).decode() == index(*(row(n) for n in (1, 2, 3, 4, 5, 6)))
    run = repo.tools("--format", "json", "index", "check", "--base", "main")
    assert run.exit_code == 0, run.stdout
    assert rules(run) == []


def test_driver_collapses_the_same_row_added_on_both_sides(repo: Repo) -> None:
    use_driver(repo)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3), row(4)], [row(4), row(5)], attrs=attrs)
    repo.git("merge", "-q", "--no-verify", "--no-edit", "side")
    assert repo.read(IDX).decode() == index(*(row(n) for n in (1, 2, 3, 4, 5)))


def test_driver_conflicts_on_the_same_issue_with_different_text(repo: Repo) -> None:
    use_driver(repo)
    attrs = (repo.path / ".gitattributes").read_text()
    two_branches(repo, [row(3, "Ours")], [row(3, "Theirs"), row(4)], attrs=attrs)
    out = repo.git("merge", "--no-verify", "--no-edit", "side", check=False)
    assert "CONFLICT" in out
    text = repo.read(IDX).decode()
    assert (
        "<<<<<<< ours\n" + row(3, "Ours") + "=======\n" + row(3, "Theirs") + ">>>>>>> theirs\n"
    ) in text
    assert text.endswith(row(4))
    assert repo.git("diff", "--name-only", "--diff-filter=U").split() == [IDX]


def test_builtin_union_merges_cleanly_and_the_gate_passes(repo: Repo) -> None:
    two_branches(repo, [row(3)], [row(4)], attrs=f"{IDX} merge=union\n")
    repo.git("merge", "-q", "--no-verify", "--no-edit", "side")
    run = repo.tools("--format", "json", "index", "check", "--base", "main")
    assert run.exit_code == 0 and rules(run) == []


def test_builtin_union_duplicate_is_caught_before_and_after_the_merge(repo: Repo) -> None:
    two_branches(repo, [row(3, "Ours")], [row(3, "Theirs")], attrs=f"{IDX} merge=union\n")
    # Before merging: the branch and its base both added issue 3 since the merge base.
    before = repo.tools("--format", "json", "index", "check", "--base", "side")
    assert rules(before) == ["union-duplicate"]
    repo.git("merge", "-q", "--no-verify", "--no-edit", "side")
    text = repo.read(IDX).decode()
    assert row(3, "Ours") in text and row(3, "Theirs") in text  # git's union carries both
    after = repo.tools("--format", "json", "index", "check", "--base", "main")
    assert after.exit_code == 1
    assert rules(after) == ["row-duplicate"]
    assert findings(after)[0]["line"] == 10


# -- the driver on its own -----------------------------------------------------------------------
def drive(tmp_path: Path, base: str, ours: str, theirs: str):
    paths = []
    for name, text in (("O", base), ("A", ours), ("B", theirs)):
        path = tmp_path / name
        path.write_bytes(text.encode())
        paths.append(str(path))
    run = run_cli(["index", "merge-driver", *paths])
    return run, (tmp_path / "A").read_bytes().decode()


def test_driver_takes_a_one_sided_change_of_a_base_row(tmp_path: Path) -> None:
    base = index(row(1), row(2))
    run, out = drive(tmp_path, base, index(row(1), row(2, "Edited"), row(3)), base)
    assert run.exit_code == 0
    assert out == index(row(1), row(2, "Edited"), row(3))


def test_driver_conflicts_when_both_sides_edit_a_base_row(tmp_path: Path) -> None:
    base = index(row(1))
    run, out = drive(tmp_path, base, index(row(1, "A")), index(row(1, "B")))
    assert run.exit_code == 1 and "issue #1" in run.stderr
    assert "<<<<<<< ours" in out


@pytest.mark.parametrize("side", ["theirs", "ours"])
def test_driver_takes_a_one_sided_preamble_change(tmp_path: Path, side: str) -> None:
    """The side that edits the preamble keeps it, beside the other side's new row (a merge3
    that took one side's frame only would lose ours)."""
    base = index(row(1))
    edited = index(row(1), head="# Index\n\nNew words.\n\n")
    if side == "theirs":
        run, out = drive(tmp_path, base, base, edited + row(2))
    else:
        run, out = drive(tmp_path, base, edited, base + row(2))
    assert run.exit_code == 0
    assert out == edited + row(2)


def test_driver_conflicts_on_two_different_preambles(tmp_path: Path) -> None:
    base = index(row(1))
    run, out = drive(tmp_path, base, index(row(1), head="# A\n\n"), index(row(1), head="# B\n\n"))
    assert run.exit_code == 1 and "preamble" in run.stderr
    assert out.startswith("<<<<<<< ours\n# A\n")


def test_driver_keeps_crlf_rows_and_escaped_pipes(tmp_path: Path) -> None:
    base = index(row(1)).replace("\n", "\r\n")
    two, three = (r.replace("\n", "\r\n") for r in (row(2, r"a \| b"), row(3)))
    run, out = drive(tmp_path, base, base + two, base + three)
    assert run.exit_code == 0
    assert out == base + two + three


def test_driver_unreadable_input_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "A").write_text(index(row(1)))
    run = run_cli(
        ["index", "merge-driver", str(tmp_path / "nope"), str(tmp_path / "A"), str(tmp_path / "A")]
    )
    assert run.exit_code == 2 and run.stderr.startswith("error: ")
