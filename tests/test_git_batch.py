"""The git layer's bulk readers: one ``cat-file --batch`` for many blobs, one ``git grep``
for the files that hold fixed strings."""

from __future__ import annotations

import os

from tests.conftest import Repo
from tools.git import Git


def test_blobs_come_back_in_request_order_with_missing_ones_marked(repo: Repo) -> None:
    big = os.urandom(300_000)  # larger than a pipe buffer: the feeder must not block
    repo.commit("Add\n\nBody.\n", {"a.txt": "alpha\n", "b.bin": big, "c.txt": b"\r\n\xff\n"})
    git = Git(repo.path)
    shas = {e.path: e.sha for e in git.tree("HEAD")}
    missing = "0" * 40
    wanted = [shas["c.txt"], missing, shas["b.bin"], shas["a.txt"], shas["a.txt"]]
    got = list(git.blobs(wanted))
    assert [sha for sha, _ in got] == wanted
    assert [data for _, data in got] == [b"\r\n\xff\n", None, big, b"alpha\n", b"alpha\n"]
    assert list(git.blobs([])) == []


def test_blobs_can_be_abandoned_half_way(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {f"f{i}.txt": f"{i}\n" * 5000 for i in range(50)})
    git = Git(repo.path)
    shas = [e.sha for e in git.tree("HEAD")]
    reader = git.blobs(shas)
    assert next(reader)[1] is not None
    reader.close()  # the process is ended and reaped, nothing hangs


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
