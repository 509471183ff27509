"""conflicts gate (conflict-marker) on real repositories."""

from __future__ import annotations

import os

from tests.conftest import Repo

HUNK = "a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\nz\n"


def _findings(run) -> list[tuple[str, str, int]]:
    gate = run.json()["gates"][0]
    return [(f["rule"], f["path"], f["line"]) for f in gate["findings"]]


def test_column_zero_markers_fire_with_line_numbers(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"src/a.c": HUNK, "ok.txt": "fine\n"})
    run = repo.tools("--format", "json", "conflicts", "check")
    assert run.exit_code == 1
    assert _findings(run) == [
        ("conflict-marker", "src/a.c", 2),
        ("conflict-marker", "src/a.c", 4),
        ("conflict-marker", "src/a.c", 6),
    ]


def test_clean_twin_and_setext_underline_are_quiet(repo: Repo) -> None:
    # A setext heading underline is `=======` outside any hunk; indented markers are not
    # at column 0; a marker without the trailing space is not git's marker.
    text = "Title\n=======\n\n  <<<<<<< not column zero\n<<<<<<<<x\n"
    repo.commit("Add\n\nBody.\n", {"README.md": text, "ok.txt": "fine\n"})
    run = repo.tools("--format", "json", "conflicts", "check")
    assert run.exit_code == 0, run.stdout
    gate = run.json()["gates"][0]
    assert gate["status"] == "pass"
    assert gate["findings"] == []
    assert gate["stats"]["files"] == 2


def test_crlf_hunk_is_found(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"w.txt": HUNK.replace("\n", "\r\n")})
    run = repo.tools("--format", "json", "conflicts", "check")
    assert [line for _, _, line in _findings(run)] == [2, 4, 6]


def test_binary_file_is_skipped(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"blob.bin": b"\0\1\2" + HUNK.encode(), "t.txt": "x\n"})
    run = repo.tools("--format", "json", "conflicts", "check")
    assert run.exit_code == 0
    gate = run.json()["gates"][0]
    assert gate["stats"]["binary_skipped"] == 1
    assert gate["findings"] == []


def test_symlink_is_skipped(repo: Repo) -> None:
    repo.write("target.txt", "plain\n")
    os.symlink("<<<<<<< HEAD", repo.path / "link")
    repo.commit("Add\n\nBody.\n")
    run = repo.tools("--format", "json", "conflicts", "check")
    assert run.exit_code == 0
    assert run.json()["gates"][0]["stats"]["symlinks_skipped"] == 1


def test_nothing_to_examine_is_a_skip_with_reason(repo: Repo) -> None:
    run = repo.tools("--format", "json", "conflicts", "check")
    gate = run.json()["gates"][0]
    assert run.exit_code == 0
    assert gate["status"] == "skip"
    assert "nothing to examine" in gate["reason"]
    assert repo.tools("conflicts", "check", "--fail-on-skip").exit_code == 1


def test_only_binary_files_is_a_skip(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.bin": b"\0"})
    gate = repo.tools("--format", "json", "conflicts", "check").json()["gates"][0]
    assert gate["status"] == "skip"


def test_staged_judges_only_staged_blobs_that_differ(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"old.txt": HUNK})  # committed earlier: not staged now
    repo.write("new.txt", HUNK)
    repo.git("add", "new.txt")
    repo.write("unstaged.txt", HUNK)  # untracked: not judged
    run = repo.tools("--format", "json", "conflicts", "check", "--staged")
    assert run.exit_code == 1
    assert {p for _, p, _ in _findings(run)} == {"new.txt"}


def test_staged_reads_the_index_not_the_working_tree(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.txt": "one\n"})
    repo.write("a.txt", HUNK)
    repo.git("add", "a.txt")
    repo.write("a.txt", "fixed in the tree, not staged\n")
    assert repo.tools("conflicts", "check", "--staged").exit_code == 1
    assert repo.tools("conflicts", "check").exit_code == 0


def test_staged_with_nothing_staged_is_a_skip(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.txt": "one\n"})
    gate = repo.tools("--format", "json", "conflicts", "check", "--staged").json()["gates"][0]
    assert gate["status"] == "skip"
    assert "staged" in gate["reason"]


def test_unreadable_file_is_exit_2(repo: Repo) -> None:
    if os.geteuid() == 0:
        # root reads anything; make the path unreadable another way: a directory in its place
        repo.commit("Add\n\nBody.\n", {"a.txt": "x\n"})
        (repo.path / "a.txt").unlink()
        (repo.path / "a.txt").mkdir()
    else:
        repo.commit("Add\n\nBody.\n", {"a.txt": "x\n"})
        (repo.path / "a.txt").chmod(0)
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: a.txt")
    assert len(run.stderr.strip().splitlines()) == 1


def test_github_format_annotates_file_and_line(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a,b.txt": HUNK})
    run = repo.tools("--format", "github", "conflicts", "check")
    assert run.exit_code == 1
    assert "::error file=a%2Cb.txt,line=2,title=conflicts/conflict-marker::" in run.stdout
