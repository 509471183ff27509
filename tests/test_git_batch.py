"""The git layer's bulk readers: one ``cat-file --batch`` for many blobs, one ``git grep``
for the files that hold fixed strings."""

from __future__ import annotations

import os

import pytest

from tests.conftest import Repo
from tools.git import Git


@pytest.mark.parametrize("rounds", [1, 4])  # 5 objects: the persistent batch; 20: a process
def test_blobs_come_back_in_request_order_with_missing_ones_marked(repo: Repo, rounds: int) -> None:
    big = os.urandom(300_000)  # larger than a pipe buffer: the feeder must not block
    repo.commit("Add\n\nBody.\n", {"a.txt": "alpha\n", "b.bin": big, "c.txt": b"\r\n\xff\n"})
    git = Git(repo.path)
    shas = {e.path: e.sha for e in git.tree("HEAD")}
    missing = "0" * 40
    wanted = [shas["c.txt"], missing, shas["b.bin"], shas["a.txt"], shas["a.txt"]] * rounds
    got = list(git.blobs(wanted))
    assert [sha for sha, _ in got] == wanted
    assert [data for _, data in got] == [b"\r\n\xff\n", None, big, b"alpha\n", b"alpha\n"] * rounds
    assert list(git.blobs([])) == []


def test_blobs_can_be_abandoned_half_way(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {f"f{i}.txt": f"{i}\n" * 5000 for i in range(50)})
    git = Git(repo.path)
    shas = [e.sha for e in git.tree("HEAD")]
    reader = git.blobs(shas)
    assert next(reader)[1] is not None
    reader.close()  # the process is ended and reaped, nothing hangs


# 8 objects: the persistent batch; 24: a process of their own
@pytest.mark.parametrize("revs", [("HEAD",), ("HEAD", "HEAD~1", "")])
def test_blobs_at_agree_with_blob_for_every_kind_of_path(repo: Repo, revs: tuple[str, ...]) -> None:
    odd = {"é space.md": "é\n", "x\ny.md": "newline\n", "d/in.md": "in\n", "b.bin": b"\xff\0"}
    repo.commit("Add\n\nBody.\n", odd)
    repo.commit("Change\n\nBody.\n", {"d/in.md": "in, changed\n"})
    repo.write("d/in.md", "staged\n")
    repo.git("add", "d/in.md")
    git = Git(repo.path)
    paths = [*odd, "d", "absent.md", "d/in.md/x"]
    wanted = [(rev, path) for rev in revs for path in paths] * 2
    got = git.blobs_at(wanted)
    assert set(got) == set(wanted)
    for rev, path in wanted:
        assert got[(rev, path)] == git.blob(rev, path), (rev, path)
    assert got[("HEAD", "d/in.md")] == b"in, changed\n"
    assert got.get(("", "d/in.md"), b"staged\n") == b"staged\n"
    assert got[("HEAD", "d")] is None and got[("HEAD", "x\ny.md")] == b"newline\n"


def test_grep_files_in_a_commit_the_index_and_the_working_tree(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"a.c": "kCUDA\n", "d/b.c": "x\n", "attr.c": "kCUDA\0\n"})
    repo.write(".gitattributes", "attr.c -diff\n")
    repo.commit("Attributes\n\nBody.\n")
    repo.write("d/b.c", "is_cuda(\n")
    git = Git(repo.path)
    assert git.grep_files(["kCUDA", "is_cuda"], rev=git.head()) == {"a.c", "attr.c"}
    assert git.grep_files(["is_cuda"], cached=True) == set()
    assert git.grep_files(["is_cuda"]) == {"d/b.c"}
    assert git.grep_files(["kCUDA", "is_cuda"], exclude=["d"]) == {"a.c", "attr.c"}
    assert git.grep_files([], rev=git.head()) == set()


def test_tracked_modes_lists_each_path_once_with_its_mode(repo: Repo) -> None:
    repo.write("t.txt", "x\n")
    os.symlink("t.txt", repo.path / "link")
    repo.commit("Add\n\nBody.\n")
    modes = Git(repo.path).tracked_modes()
    assert modes == {"link": "120000", "t.txt": "100644"}


GLOB_SETS = [
    ["**/*.h", "**/*.cc"],
    ["*.h"],
    ["src/*.cc", "cuda", "/top.c", "docs/"],
    ["a/**/b/*.h", "**/x?[0-9].c"],
    ["**"],
    # simple shapes (plain pathspecs)
    ["**/cuda", "**/b/**", "docs/**", "top.c", "src/"],
    ["**/*.h", "**/*.md", "**/inner.txt"],
]
PATHS = [
    "top.c",
    "a.h",
    "src/a.cc",
    "src/deep/b.cc",
    "x/cuda/k.cu",
    "cuda/top.h",
    "docs/a.md",
    "docs/sub/b.md",
    "a/b/c.h",
    "a/q/r/b/c.h",
    "z/x1.c",
    "q.h/inner.txt",
    "y/cuda/deep/k.h",
    "deep/b/x/y.c",
]


@pytest.mark.parametrize("globs", GLOB_SETS)
def test_glob_pathspecs_select_every_path_the_globs_match(repo: Repo, globs: list[str]) -> None:
    from tools.globs import Globs

    repo.commit("Add\n\nBody.\n", {p: "x\n" for p in PATHS})
    glob_set = Globs(globs)
    specs = glob_set.pathspecs()
    assert specs is not None
    listed = set(repo.git("ls-files", "-z", "--", *specs).split("\0")) - {""}
    wanted = {p for p in PATHS if glob_set.match(p)}
    assert wanted and wanted <= listed


def test_a_negated_glob_gives_no_pathspecs() -> None:
    from tools.globs import Globs

    assert Globs(["**/*.h", "!gen/**"]).pathspecs() is None


def test_file_modes_of_a_commit_and_of_the_index(repo: Repo) -> None:
    repo.write("t.txt", "x\n")
    repo.write("run.sh", "#!/bin/sh\n")
    os.chmod(repo.path / "run.sh", 0o755)
    os.symlink("t.txt", repo.path / "link")
    repo.commit("Add\n\nBody.\n")
    git = Git(repo.path)
    at_head = git.file_modes(git.head())
    assert {p: m for p, (m, _) in at_head.items()} == {
        "t.txt": b"100644",
        "run.sh": b"100755",
        "link": b"120000",
    }
    assert at_head["t.txt"][1].decode() == {e.path: e.sha for e in git.tree("HEAD")}["t.txt"]
    repo.write("new.txt", "y\n")
    repo.git("add", "new.txt")
    assert set(git.file_modes()) == {"t.txt", "run.sh", "link", "new.txt"}
