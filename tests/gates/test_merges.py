"""The merges gate (SPEC §4.11) on real merges made by real git, through the real CLI."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import Repo

LINES = "".join(f"line {i}\n" for i in range(1, 21))


def start(repo: Repo, files: dict[str, str | bytes] | None = None) -> str:
    """A base commit on main with the config, and branch ``work`` from it."""
    config = {".agents/protocol.yaml": "base: main\n"}
    sha = repo.commit("Start\n\nBase.\n", {**config, **(files or {})})
    repo.branch("work")
    return sha


def diverge(repo: Repo, main: dict[str, str | bytes], work: dict[str, str | bytes]) -> None:
    """``work`` commits ``work``, main moves on with ``main``; back on ``work``."""
    repo.commit("Work on the branch\n\nBody.\n", work)
    repo.checkout("main")
    repo.commit("Main moves\n\nBody.\n", main)
    repo.checkout("work")


def merge_main(repo: Repo) -> bool:
    """``git merge main`` on work; True when git stopped on conflicts."""
    repo.git("merge", "--no-ff", "--no-edit", "-q", "main", check=False)
    return bool(repo.git("ls-files", "-u").strip())


def conclude(repo: Repo) -> str:
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-edit", "--no-verify")
    return repo.head()


def check(repo: Repo, *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "merges", "check", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def rules(gate: dict) -> list[str]:
    return [f["rule"] for f in gate["findings"]]


def edited(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# -- clean merges -------------------------------------------------------------------------------
def test_a_clean_merge_is_quiet(repo: Repo) -> None:
    start(repo, {"a.txt": LINES, "b.txt": "b\n"})
    diverge(repo, {"a.txt": edited(LINES, "line 2\n", "main 2\n")}, {"b.txt": "b work\n"})
    assert not merge_main(repo)
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"]) == (0, "pass", [])
    assert gate["stats"]["merges"] == 1 and gate["stats"]["commits"] == 2


def test_a_clean_merge_amended_to_change_a_line_elsewhere_is_evil(repo: Repo) -> None:
    start(repo, {"a.txt": LINES, "b.txt": LINES})
    diverge(repo, {"a.txt": edited(LINES, "line 2\n", "main 2\n")}, {"b.txt": "b work\n"})
    assert not merge_main(repo)
    # The amend edits line 15 of a.txt, a line neither side touched.
    merged = repo.read("a.txt").decode()
    repo.write("a.txt", edited(merged, "line 15\n", "sneaky 15\n"))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    sha = repo.head()
    code, gate = check(repo)
    assert code == 1 and gate["status"] == "fail"
    assert rules(gate) == ["merge-evil"]
    finding = gate["findings"][0]
    assert (finding["commit"], finding["path"], finding["line"]) == (sha, "a.txt", 15)
    assert "'sneaky 15'" in finding["message"] and "+1/-1" in finding["message"]


def test_a_path_added_by_the_merge_alone_is_evil(repo: Repo) -> None:
    start(repo, {"a.txt": LINES})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    repo.git("merge", "--no-ff", "--no-commit", "-q", "main")
    repo.write("extra.py", "print('from nowhere')\nx = 1\n")
    sha = conclude(repo)
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]
    finding = gate["findings"][0]
    assert (finding["commit"], finding["path"]) == (sha, "extra.py")
    assert "adds extra.py" in finding["message"] and "+2/-0" in finding["message"]


def test_a_path_deleted_by_the_merge_alone_is_evil(repo: Repo) -> None:
    start(repo, {"a.txt": LINES, "keep.txt": "kept\nby both\n"})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    repo.git("merge", "--no-ff", "--no-commit", "-q", "main")
    repo.git("rm", "-q", "keep.txt")
    sha = conclude(repo)
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]
    finding = gate["findings"][0]
    assert (finding["commit"], finding["path"]) == (sha, "keep.txt")
    assert "deletes keep.txt" in finding["message"] and "-2" in finding["message"]


def test_a_deletion_one_side_brought_is_not_evil(repo: Repo) -> None:
    start(repo, {"a.txt": LINES, "gone.txt": "old\n"})
    repo.git("rm", "-q", "gone.txt")
    diverge(repo, {"m.txt": "m\n"}, {})
    assert not merge_main(repo)
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])


def test_a_mode_change_by_the_merge_alone_is_evil(repo: Repo) -> None:
    start(repo, {"run.sh": "echo hi\n"})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    repo.git("merge", "--no-ff", "--no-commit", "-q", "main")
    full = repo.path / "run.sh"
    full.chmod(full.stat().st_mode | stat.S_IXUSR)
    conclude(repo)
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]
    assert "100644 to 100755" in gate["findings"][0]["message"]


def test_a_removed_line_names_where_it_went_missing(repo: Repo) -> None:
    start(repo, {"a.txt": LINES})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    repo.write("a.txt", edited(LINES, "line 7\nline 8\n", ""))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, gate = check(repo)
    finding = gate["findings"][0]
    assert code == 1 and (finding["rule"], finding["line"]) == ("merge-evil", 6)
    assert "after line 6" in finding["message"] and "'line 7'" in finding["message"]
    assert "+0/-2" in finding["message"]


@pytest.mark.parametrize("name", ["dir b/x b/c.txt", "tab\tname.txt", "caf\u00e9.txt"])
def test_paths_of_any_shape_are_named(repo: Repo, name: str) -> None:
    start(repo, {name: LINES, "other.txt": LINES})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    repo.write(name, edited(LINES, "line 4\n", "diff --git a/x b/x\n"))
    repo.write("other.txt", LINES + "+++ b/other.txt\n")
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, gate = check(repo)
    found = sorted((f["path"], f["line"]) for f in gate["findings"])
    assert code == 1 and found == sorted([(name, 4), ("other.txt", 21)])


def test_crlf_and_non_utf8_lines_are_compared_as_bytes(repo: Repo) -> None:
    crlf = b"".join(b"caf\xe9 %d\r\n" % i for i in range(1, 11))
    start(repo, {"a.txt": crlf})
    repo.git("config", "core.autocrlf", "false")
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    assert check(repo)[1]["findings"] == []
    repo.write("a.txt", crlf.replace(b"caf\xe9 4\r\n", b"caf\xe9 4\n"))  # only the CR dropped
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]
    assert gate["findings"][0]["line"] == 4


# -- conflicts ----------------------------------------------------------------------------------
CONFLICT_BASE = "".join(f"row {i}\n" for i in range(1, 31))


def conflicting(repo: Repo) -> None:
    """Both sides edit row 5; main also edits row 25, cleanly."""
    start(repo, {"c.txt": CONFLICT_BASE})
    ours = edited(CONFLICT_BASE, "row 5\n", "work 5\n")
    theirs = edited(edited(CONFLICT_BASE, "row 5\n", "main 5\n"), "row 25\n", "main 25\n")
    diverge(repo, {"c.txt": theirs}, {"c.txt": ours})
    assert merge_main(repo)


def test_a_conflict_resolved_by_taking_one_side_is_info(repo: Repo) -> None:
    conflicting(repo)
    work, main = repo.head("work"), repo.head("main")
    repo.git("checkout", "--theirs", "c.txt")  # main's version: row 25 comes along
    sha = conclude(repo)
    code, gate = check(repo)
    assert (code, gate["status"], rules(gate)) == (0, "pass", ["merge-resolved"])
    finding = gate["findings"][0]
    assert (finding["commit"], finding["path"], finding["severity"]) == (sha, "c.txt", "info")
    msg = finding["message"]
    assert f"+2/-2 against {work[:12]}" in msg
    assert f"+0/-0 (that parent's version) against {main[:12]}" in msg
    assert gate["stats"]["resolved"] == 1


def test_a_conflict_resolved_by_hand_is_info_against_each_parent(repo: Repo) -> None:
    conflicting(repo)
    work, main = repo.head("work"), repo.head("main")
    resolved = edited(edited(CONFLICT_BASE, "row 5\n", "work 5\nmain 5\n"), "row 25\n", "main 25\n")
    repo.write("c.txt", resolved)
    conclude(repo)
    code, gate = check(repo)
    assert (code, rules(gate)) == (0, ["merge-resolved"])
    msg = gate["findings"][0]["message"]
    assert f"+2/-1 against {work[:12]}" in msg and f"+1/-0 against {main[:12]}" in msg


def test_a_resolution_that_edits_outside_the_conflict_hunks_is_evil(repo: Repo) -> None:
    conflicting(repo)
    resolved = edited(CONFLICT_BASE, "row 5\n", "work 5\n")  # drops main's clean row 25
    repo.write("c.txt", resolved)
    sha = conclude(repo)
    code, gate = check(repo)
    assert code == 1
    assert sorted(rules(gate)) == ["merge-evil", "merge-resolved"]
    evil = next(f for f in gate["findings"] if f["rule"] == "merge-evil")
    assert (evil["commit"], evil["path"], evil["line"]) == (sha, "c.txt", 25)
    assert "outside its 1 conflict hunk(s)" in evil["message"]
    assert "'row 25'" in evil["message"] and "+1/-1" in evil["message"]


def test_hunks_are_found_whatever_the_users_conflict_style(repo: Repo) -> None:
    repo.git("config", "merge.conflictStyle", "zdiff3")
    conflicting(repo)
    repo.git("checkout", "--theirs", "c.txt")
    conclude(repo)
    code, gate = check(repo)
    assert (code, rules(gate)) == (0, ["merge-resolved"])


def test_a_modify_delete_conflict_is_info(repo: Repo) -> None:
    start(repo, {"c.txt": CONFLICT_BASE})
    repo.git("rm", "-q", "c.txt")
    diverge(repo, {"c.txt": edited(CONFLICT_BASE, "row 5\n", "main 5\n")}, {})
    assert merge_main(repo)
    repo.git("rm", "-q", "c.txt")
    conclude(repo)
    code, gate = check(repo)
    assert (code, rules(gate)) == (0, ["merge-resolved"])
    assert "-30 against" in gate["findings"][0]["message"]


def test_a_file_moved_out_of_a_folders_way_is_the_conflicts_resolution(repo: Repo) -> None:
    # git moves main's file d to d~main (named after the branch as given to git merge); the
    # recomputation names it after the parent's sha. Committing git's d~main is no evil.
    start(repo, {"a.txt": "a\n"})
    diverge(repo, {"d": "a file\n"}, {"d/x": "in a folder\n"})
    assert merge_main(repo)
    assert (repo.path / "d~main").is_file()
    conclude(repo)
    code, gate = check(repo)
    assert (code, rules(gate)) == (0, ["merge-resolved"])
    assert gate["findings"][0]["path"] == "d~" + repo.head("main")


# -- what git's own merge machinery decides -----------------------------------------------------
def test_a_rename_on_one_side_and_an_edit_on_the_other_is_quiet(repo: Repo) -> None:
    start(repo, {"old/name.py": LINES})
    (repo.path / "new").mkdir()
    repo.git("mv", "old/name.py", "new/name.py")
    repo.commit("Rename the module\n\nBody.\n")
    repo.checkout("main")
    repo.commit("Edit the module\n\nBody.\n", {"old/name.py": edited(LINES, "line 3\n", "x 3\n")})
    repo.checkout("work")
    assert not merge_main(repo)
    assert "x 3" in repo.read("new/name.py").decode()
    code, gate = check(repo)
    assert (code, gate["findings"], gate["stats"]["merges"]) == (0, [], 1)


def test_a_merge_of_unrelated_histories_is_judged(repo: Repo) -> None:
    start(repo, {"a.txt": "a\n"})
    repo.git("checkout", "-q", "--orphan", "other")
    repo.git("rm", "-q", "-rf", ".")
    repo.commit("Other root\n\nBody.\n", {"o.txt": "o\n"})
    repo.checkout("work")
    repo.git("merge", "-q", "--no-edit", "--allow-unrelated-histories", "other")
    assert check(repo)[1]["findings"] == []
    repo.write("o.txt", "o\nevil\n")
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    assert rules(check(repo)[1]) == ["merge-evil"]


def test_binary_files_are_compared_by_content(repo: Repo) -> None:
    blob = bytes(range(256)) * 4
    start(repo, {"img.bin": blob, "a.txt": LINES})
    diverge(repo, {"img.bin": blob + b"\x00main"}, {"a.txt": LINES + "work\n"})
    assert not merge_main(repo)
    assert check(repo)[1]["findings"] == []
    repo.write("img.bin", blob + b"\x00main\x00evil")
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]
    finding = gate["findings"][0]
    assert finding["path"] == "img.bin" and "binary" in finding["message"]


def test_an_octopus_merge_is_info_and_not_judged(repo: Repo) -> None:
    start(repo, {"a.txt": "a\n"})
    repo.commit("Work\n\nBody.\n", {"w.txt": "w\n"})
    for name in ("one", "two"):
        repo.branch(name, "main")
        repo.commit(f"Side {name}\n\nBody.\n", {f"{name}.txt": f"{name}\n"})
    repo.checkout("work")
    repo.git("merge", "-q", "--no-edit", "one", "two")
    sha = repo.head()
    code, gate = check(repo)
    assert (code, gate["status"], rules(gate)) == (0, "pass", ["merge-octopus"])
    assert gate["findings"][0]["commit"] == sha
    assert "3 parents" in gate["findings"][0]["message"]
    assert gate["stats"]["merges"] == 0


# -- union-merged files are the index gate's ----------------------------------------------------
INDEX = ".agents/issue-index.md"
INDEX_HEAD = (
    "# Issues\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n| #1 | R1 | One | bug |\n"
)


@pytest.mark.parametrize("config_from", ["head", "base"])
@pytest.mark.parametrize("driver", ["union", "agent-index"])
def test_union_merged_index_is_judged_by_the_index_gate_only(
    repo: Repo, driver: str, config_from: str
) -> None:
    start(repo, {".gitattributes": f"{INDEX} merge={driver}\n", INDEX: INDEX_HEAD})
    diverge(
        repo,
        {INDEX: INDEX_HEAD + "| #2 | R2 | Two | bug |\n"},
        {INDEX: INDEX_HEAD + "| #3 | R3 | Three | bug |\n"},
    )
    # union: git merges cleanly; agent-index, not registered here: git's text merge conflicts.
    stopped = merge_main(repo)
    assert stopped == (driver == "agent-index")
    # The merge keeps one side's rows only: the index gate's merge-lost-row, not ours.
    repo.write(INDEX, INDEX_HEAD + "| #3 | R3 | Three | bug |\n")
    if stopped:
        conclude(repo)
    else:
        repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    # Under --config-from base the merge base's attributes mark the index the same way.
    run = repo.tools(
        "--format", "json", "--config-from", config_from, "merges", "check", "--base", "main"
    )
    code, gate = run.exit_code, run.json()["gates"][0]
    assert (code, gate["findings"]) == (0, [])
    assert gate["stats"]["left_to_index"] == 1
    index = repo.tools("--format", "json", "index", "check", "--head", "HEAD").json()
    assert "merge-lost-row" in [f["rule"] for f in index["gates"][0]["findings"]]


def test_a_file_without_the_union_attribute_is_judged(repo: Repo) -> None:
    start(repo, {".gitattributes": "other.md merge=union\n", INDEX: INDEX_HEAD})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    repo.write(INDEX, INDEX_HEAD + "| #9 | R9 | Nine | bug |\n")
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["merge-evil"]


# -- ranges -------------------------------------------------------------------------------------
def test_an_empty_range_passes_and_says_so(repo: Repo) -> None:
    start(repo, {"a.txt": "a\n"})
    code, gate = check(repo)
    assert (code, gate["status"], rules(gate)) == (0, "pass", ["range-empty"])
    assert gate["stats"]["commits"] == 0
    assert repo.tools("merges", "check", "--require-commits").exit_code == 1


def test_a_range_without_merges_passes(repo: Repo) -> None:
    start(repo, {"a.txt": "a\n"})
    repo.commit("Work\n\nBody.\n", {"b.txt": "b\n"})
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"]) == (0, "pass", [])
    assert gate["stats"] == {"merges": 0, "commits": 1}


def evil_merge(repo: Repo) -> str:
    start(repo, {"a.txt": LINES})
    diverge(repo, {"m.txt": "m\n"}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    repo.write("a.txt", edited(LINES, "line 9\n", "evil 9\n"))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    return repo.head()


def test_commit_judges_one_merge(repo: Repo) -> None:
    sha = evil_merge(repo)
    code, gate = check(repo, "--commit", sha)
    assert code == 1 and rules(gate) == ["merge-evil"]
    code, gate = check(repo, "--commit", "HEAD^1")
    assert (code, gate["findings"], gate["stats"]["merges"]) == (0, [], 0)


def test_base_and_head_select_the_range(repo: Repo) -> None:
    sha = evil_merge(repo)
    repo.commit("After\n\nBody.\n", {"z.txt": "z\n"})
    assert check(repo, "--base", "main", "--head", sha)[0] == 1
    assert check(repo, "--base", sha)[1]["findings"] == []


def test_staged_judges_nothing(repo: Repo) -> None:
    evil_merge(repo)
    repo.write("s.txt", "staged\n")
    repo.git("add", "s.txt")
    run = repo.tools("--format", "json", "preflight", "--staged", "--gate", "merges")
    gate = run.json()["gates"][0]
    assert (run.exit_code, gate["status"], gate["findings"]) == (0, "pass", [])
    assert gate["stats"]["merges"] == 0 and "not judged" in gate["stats"]["staged"]


def test_preflight_runs_the_gate_by_default(repo: Repo) -> None:
    evil_merge(repo)
    run = repo.tools("--format", "json", "preflight")
    names = [g["gate"] for g in run.json()["gates"]]
    assert names[-1] == "merges"
    assert next(g for g in run.json()["gates"] if g["gate"] == "merges")["status"] == "fail"


def test_every_format_reports_the_finding(repo: Repo) -> None:
    sha = evil_merge(repo)
    text = repo.tools("merges", "check")
    assert text.exit_code == 1
    assert "FAIL merges" in text.stdout and f"a.txt:9 {sha[:12]}" in text.stdout
    github = repo.tools("merges", "check", "--format", "github")
    assert github.exit_code == 1 and "::error file=a.txt,line=9,title=merges/merge-evil::" in (
        github.stdout
    )
    sarif = repo.tools("merges", "check", "--format", "sarif")
    results = sarif.sarif()["runs"][0]["results"]
    assert sarif.exit_code == 1 and [r["ruleId"] for r in results] == ["merges/merge-evil"]


def test_shallow_clone_without_the_merge_base_is_a_skip(make_repo, tmp_path: Path) -> None:
    upstream = make_repo("upstream")
    start(upstream, {"a.txt": "a\n"})
    upstream.commit("Work\n\nBody.\n", {"w.txt": "w\n"})
    upstream.checkout("main")
    upstream.commit("Main\n\nBody.\n", {"m.txt": "m\n"})
    shallow = upstream.clone(tmp_path / "shallow", "--depth", "1", "--no-single-branch")
    shallow.git("checkout", "-q", "work")
    code, gate = check(shallow, "--base", "origin/main")
    assert (code, gate["status"]) == (0, "skip") and "shallow clone" in gate["reason"]
    assert check(shallow, "--base", "origin/main", "--fail-on-skip")[0] == 1


def test_shallow_clone_missing_a_merges_own_merge_base_is_a_skip(make_repo, tmp_path: Path) -> None:
    upstream = make_repo("upstream")
    start(upstream, {"a.txt": "a\n"})
    upstream.commit("Side\n\nBody.\n", {"s.txt": "s\n"})
    upstream.checkout("main")
    upstream.commit("Main one\n\nBody.\n", {"m.txt": "m\n"})
    upstream.commit("Main two\n\nBody.\n", {"m.txt": "m2\n"})
    upstream.branch("topic")
    upstream.git("merge", "-q", "--no-ff", "--no-edit", "work")
    # Depth 2 from topic: the merge and its parents; their merge base (the start) is cut off.
    shallow = upstream.clone(tmp_path / "shallow", "--depth", "2", "--no-single-branch")
    shallow.git("checkout", "-q", "topic")
    code, gate = check(shallow, "--base", "origin/main")
    assert (code, gate["status"]) == (0, "skip"), gate
    assert "shallow clone" in gate["reason"] and "merge base of the parents" in gate["reason"]


# -- git older than 2.38 ------------------------------------------------------------------------
OLD_GIT = """#!/bin/sh
# git 2.37 as far as the merges gate can tell: its version, and a merge-tree without
# --write-tree that answers with its usage and status 129, as old git does.
for arg in "$@"; do
  case "$arg" in
    --version|version) [ "$1" = "$arg" ] && { echo "git version {version}"; exit 0; } ;;
    --write-tree) echo "usage: git merge-tree <base-tree> <branch1> <branch2>" >&2; exit 129 ;;
  esac
done
exec {real} "$@"
"""


def shim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "oldgit"
    folder.mkdir()
    script = folder / "git"
    script.write_text(OLD_GIT.replace("{version}", version).replace("{real}", real))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_git_older_than_2_38_is_a_skip_with_reason(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil_merge(repo)
    shim(tmp_path, monkeypatch, "2.37.0")
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"]) == (0, "skip", [])
    assert "git 2.37.0 is older than 2.38" in gate["reason"]
    assert "merge-tree --write-tree" in gate["reason"]
    assert check(repo, "--fail-on-skip")[0] == 1


def test_a_git_without_write_tree_whatever_its_version_is_a_skip(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil_merge(repo)
    shim(tmp_path, monkeypatch, "2.99.0.vendor")
    code, gate = check(repo)
    assert (code, gate["status"]) == (0, "skip")
    assert "cannot recompute a merge" in gate["reason"] and "usage" in gate["reason"]


def test_old_git_with_no_merge_in_the_range_still_passes(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, {"a.txt": "a\n"})
    repo.commit("Work\n\nBody.\n", {"b.txt": "b\n"})
    shim(tmp_path, monkeypatch, "2.37.0")
    assert check(repo)[1]["status"] == "pass"


def test_judging_leaves_the_index_and_the_working_tree_alone(repo: Repo) -> None:
    start(repo, {".gitattributes": f"{INDEX} merge=union\n", INDEX: INDEX_HEAD, "a.txt": LINES})
    diverge(repo, {"a.txt": edited(LINES, "line 2\n", "main 2\n")}, {"w.txt": "w\n"})
    assert not merge_main(repo)
    repo.write("a.txt", edited(repo.read("a.txt").decode(), "line 9\n", "evil 9\n"))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit")
    repo.write("untracked.txt", "mine\n")
    repo.write("w.txt", "w edited, not staged\n")
    index = (repo.path / ".git" / "index").read_bytes()
    status = repo.git("status", "--porcelain", "--untracked-files=all")
    assert check(repo)[0] == 1  # merge-tree, the attribute lookup and the patches all ran
    assert (repo.path / ".git" / "index").read_bytes() == index
    assert repo.git("status", "--porcelain", "--untracked-files=all") == status


def test_a_config_that_names_the_gate_validates_and_runs_it(repo: Repo) -> None:
    start(repo, {"a.txt": "a\n"})
    repo.write(".agents/protocol.yaml", "base: main\npreflight:\n  gates: [merges]\n")
    assert repo.tools("config", "validate").exit_code == 0
    run = repo.tools("--format", "json", "preflight")
    # The config is new since the base: the protocol pseudo-gate reports it after the gates.
    assert [g["gate"] for g in run.json()["gates"]] == ["merges", "protocol"]


# -- the judged change cannot choose its own attributes (SPEC §10, second pass) ----------------
def _evil_merge_under_own_union(repo: Repo) -> str:
    """A branch that marks `src/** merge=union`, then merges main with a backdoor line in
    src/app.c that neither parent has."""
    start(repo, {"src/app.c": LINES})
    diverge(
        repo,
        {"src/app.c": edited(LINES, "line 2\n", "main 2\n")},
        {
            "src/app.c": edited(LINES, "line 18\n", "work 18\n"),
            ".gitattributes": "src/** merge=union\n",
        },
    )
    assert not merge_main(repo)
    merged = repo.read("src/app.c").decode()
    repo.write("src/app.c", edited(merged, "line 10\n", "line 10\nbackdoor();\n"))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit", "--no-verify")
    return repo.head()


def test_a_head_that_marks_its_evil_merge_union_is_judged_under_base(repo: Repo) -> None:
    sha = _evil_merge_under_own_union(repo)
    # Judged by the merge's own attributes (--config-from head) the path is the index gate's.
    code, gate = check(repo, "--base", "main")
    assert code == 0 and gate["stats"].get("left_to_index") == 1
    # Under --config-from base the merge base's attributes decide: it is judged, and evil.
    run = repo.tools(
        "--format", "json", "--config-from", "base", "merges", "check", "--base", "main"
    )
    assert run.exit_code == 1, run.stdout
    gate = run.json()["gates"][0]
    evil = [f for f in gate["findings"] if f["rule"] == "merge-evil"]
    assert [(f["path"], f["commit"]) for f in evil] == [("src/app.c", sha)]
    assert "backdoor" in evil[0]["message"]
    assert "left_to_index" not in gate["stats"]


def test_the_checkouts_attributes_cannot_turn_gits_own_merge_into_a_conflict(
    repo: Repo,
) -> None:
    # git's recomputed merge reads `.gitattributes` from the work tree it runs in. A pull
    # request's checkout that marks a file `-merge` makes git's merge of the parents a
    # conflict there, and a conflict's resolution is the merge's to decide: an evil line
    # in a file git merges cleanly would pass as a resolution. Under --config-from base git
    # merges with the merge base's attributes, whatever the checkout holds.
    start(repo, {"src/app.c": LINES})
    diverge(
        repo,
        {"src/app.c": edited(LINES, "line 2\n", "main 2\n")},
        {"src/app.c": edited(LINES, "line 18\n", "work 18\n")},
    )
    assert not merge_main(repo)
    merged = repo.read("src/app.c").decode()
    repo.write("src/app.c", edited(merged, "line 10\n", "line 10\nbackdoor();\n"))
    repo.git("commit", "-q", "-a", "--amend", "--no-edit", "--no-verify")
    repo.commit("Mark the file\n\nBody.\n", {".gitattributes": "src/app.c -merge\n"})
    run = repo.tools(
        "--format", "json", "--config-from", "base", "merges", "check", "--base", "main"
    )
    gate = run.json()["gates"][0]
    assert run.exit_code == 1 and rules(gate) == ["merge-evil"], run.stdout
    assert gate["findings"][0]["path"] == "src/app.c"


def test_a_docs_trigger_cannot_be_hidden_behind_the_heads_diff_attribute(repo: Repo) -> None:
    # `-diff` makes git print "Binary files differ" instead of the added lines: a pull
    # request's checkout must not hide a docs rule's trigger that way under base.
    config = (
        "base: main\ndocs:\n  rules:\n    - name: cli-surface\n"
        "      when_changed: ['cli/**']\n      when_added_line: 'Option\\('\n"
        "      require_changed: ['README.md']\n      message: document it\n"
    )
    repo.commit("Start\n\nBase.\n", {".agents/protocol.yaml": config, "README.md": "r\n"})
    repo.branch("work")
    repo.commit(
        "Add an option\n\nBody.\n",
        {"cli/main.py": "x = Option()\n", ".gitattributes": "cli/** -diff\n"},
    )
    head = repo.tools("--format", "json", "docs", "check", "--base", "main")
    assert head.exit_code == 0, head.stdout  # the head's own attributes hide the line
    run = repo.tools("--format", "json", "--config-from", "base", "docs", "check", "--base", "main")
    assert run.exit_code == 1, run.stdout
    assert "cli-surface" in run.stdout
