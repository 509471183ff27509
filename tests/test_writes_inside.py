"""Writes stay inside the repository (SPEC §10): no command writes through a symbolic link or
below a linked folder, the config is not read through a link that leaves the repository, and
the temp files of atomic writes live under `.git/tools/tmp/`, so that a killed write leaves
nothing `git add -A` would commit."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import Repo
from tools.ledger import canonical_json, make_record

IDX = ".agents/issue-index.md"
LED = ".agents/ledger.jsonl"
HEADER = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def error_line(run) -> str:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    return lines[0]


def receipt(repo: Repo) -> Path:
    record = make_record("attribution", {"n": 1}, created="2026-01-01T00:00:01Z")
    path = repo.path.parent / "receipt.json"
    path.write_bytes(canonical_json(record))
    return path


def test_ledger_merge_refuses_a_ledger_that_is_a_link(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"")
    (repo.path / ".agents").mkdir()
    os.symlink(outside, repo.path / LED)
    repo.commit("Link the ledger\n\nBody.\n")
    line = error_line(repo.tools("ledger", "merge", str(receipt(repo))))
    assert "symbolic link" in line and LED in line
    assert outside.read_bytes() == b""


def test_ledger_merge_refuses_a_linked_folder(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, repo.path / ".agents")
    repo.commit("Link the folder\n\nBody.\n")
    line = error_line(repo.tools("ledger", "merge", str(receipt(repo))))
    assert "error: .agents: is a symbolic link" in line
    assert list(outside.iterdir()) == []


def test_index_append_refuses_a_linked_folder_and_a_linked_file(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "issue-index.md").write_text(HEADER)
    os.symlink(outside, repo.path / ".agents")
    repo.commit("Link the folder\n\nBody.\n")
    args = ("index", "append", "--issue", "3", "--row", "—", "--title", "T", "--kind", "bug")
    line = error_line(repo.tools(*args))
    assert "error: .agents: is a symbolic link" in line
    assert (outside / "issue-index.md").read_text() == HEADER
    os.unlink(repo.path / ".agents")
    (repo.path / ".agents").mkdir()
    os.symlink(outside / "issue-index.md", repo.path / IDX)
    line = error_line(repo.tools(*args))
    assert f"error: {IDX}: is a symbolic link" in line
    assert (outside / "issue-index.md").read_text() == HEADER
    os.unlink(repo.path / IDX)
    # The clean twin: a real file is appended to, and no temp file is left beside it.
    assert repo.tools(*args).exit_code == 0
    assert sorted(p.name for p in (repo.path / ".agents").iterdir()) == ["issue-index.md"]


def test_ratchet_tighten_refuses_a_linked_baselines_folder(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "baselines"
    outside.mkdir()
    (repo.path / ".agents").mkdir()
    os.symlink(outside, repo.path / ".agents/baselines")
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "int f() { return at::kCUDA; }\n"})
    line = error_line(repo.tools("ratchet", "tighten"))
    assert "error: .agents/baselines: is a symbolic link" in line
    assert list(outside.iterdir()) == []


def test_a_config_linked_outside_is_not_read(repo: Repo, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("password: hunter2\n")
    (repo.path / ".agents").mkdir()
    os.symlink(secret, repo.path / ".agents/protocol.yaml")
    repo.commit("Link the config\n\nBody.\n")
    run = repo.tools("preflight")
    line = error_line(run)
    assert "leaves the repository" in line and "hunter2" not in line + run.stdout
    # A link that stays inside the repository is read as before.
    repo.write("cfg/protocol.yaml", "base: main\n")
    os.unlink(repo.path / ".agents/protocol.yaml")
    os.symlink("../cfg/protocol.yaml", repo.path / ".agents/protocol.yaml")
    assert repo.tools("config", "show").exit_code == 0


def _temp_files(repo: Repo) -> list[Path]:
    """The temp files of atomic writes, wherever they are: beside the index or under .git."""
    found = []
    for folder in (repo.path / ".agents", repo.path / ".git" / "tools" / "tmp"):
        try:
            found += [Path(e.path) for e in os.scandir(folder) if e.name.endswith(".tools-tmp")]
        except FileNotFoundError:
            pass
    return found


def _kill_when(proc: subprocess.Popen, repo: Repo, rng: random.Random, mid_write: bool) -> None:
    """SIGKILL ``proc``: mid-write (once its temp file exists, plus up to 20 ms) or after a
    random delay; a process that ends first is left to end."""
    if mid_write:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not _temp_files(repo) and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(rng.uniform(0, 0.02))
    else:
        time.sleep(rng.uniform(0.05, 0.8))
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_killed_index_appends_leave_no_temp_file_in_the_tree(repo: Repo) -> None:
    """20 `tools index append` processes, each killed (SIGKILL), half of them while their
    atomic write is under way: the index is always whole, and no `*.tools-tmp` is ever left
    where `git add -A` would see it."""
    rows = "".join(f"| #{n} | — | Title {n} {'x' * 60} | bug |\n" for n in range(1, 80_001))
    repo.commit("Start\n\nBody.\n", {IDX: HEADER + rows})
    before = repo.read(IDX)
    rng = random.Random(20)  # fixed: the same delays on every run
    for n in range(20):
        proc = subprocess.Popen(
            [sys.executable, "-m", "tools", "--repo", str(repo.path), "index", "append"]
            + ["--issue", str(100_000 + n), "--row", "—", "--title", "t", "--kind", "bug"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _kill_when(proc, repo, rng, mid_write=n % 2 == 0)
        now = repo.read(IDX)
        assert now.startswith(before) and now.endswith(b"\n")
        assert HEADER.encode() in now
        left = [p for p in repo.path.rglob("*.tools-tmp") if ".git" not in p.parts]
        assert left == [], f"kill {n} left {left}"
    status = repo.git("status", "--porcelain", "--untracked-files=all", "--ignored")
    assert [line[3:] for line in status.splitlines() if line[3:] != IDX] == []


def test_an_old_temp_file_of_a_killed_write_is_swept(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {IDX: HEADER})
    tmp = repo.path / ".git" / "tools" / "tmp"
    tmp.mkdir(parents=True)
    old, fresh = tmp / ".issue-index.md.old.tools-tmp", tmp / ".issue-index.md.new.tools-tmp"
    old.write_bytes(b"x")
    fresh.write_bytes(b"y")  # a write under way in another process: kept
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    args = ("index", "append", "--issue", "3", "--row", "—", "--title", "T", "--kind", "bug")
    assert repo.tools(*args).exit_code == 0
    assert not old.exists() and fresh.exists()
