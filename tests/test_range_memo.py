"""The range memo of the message gates (SPEC §12): a re-check of a branch after more commits
reads and judges only those, and reports what a run without any cache reports.

Which git commands a run ran is logged by a ``git`` put ahead of the real one on PATH: a
re-check that used the memo reads ``git log P..H`` and computes no merge base; one that could
not reads the range whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.test_verdict_cache import SPOIL, build, configure, copy_of, good

GATES = ("trailers", "style")
HEADER = b"tools-range/1\n"


@pytest.fixture(scope="module")
def branch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Some 130 commits with merges of side branches, built once; each test copies it."""
    return build(tmp_path_factory.mktemp("memo") / "repo", 120).path


def memos(repo: Repo, gate: str) -> list[Path]:
    folder = repo.path / ".git/tools/cache" / f"range-{gate}"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def traced(
    repo: Repo, gate: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str
) -> list[str]:
    """The git commands of one cached run of ``gate`` (which reports what the uncached
    does), as a ``git`` ahead of the real one on PATH logs them (the environment that git
    processes get passes PATH, not git's own trace settings)."""
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "traced-bin"
    log = tmp_path / "git-commands"
    if not folder.exists():
        folder.mkdir()
        script = folder / "git"
        script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
        script.chmod(0o755)
    log.unlink(missing_ok=True)
    with monkeypatch.context() as env:
        env.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
        cached = repo.tools("--format", "json", gate, "check", *args)
    plain = repo.tools("--format", "json", gate, "check", "--no-cache", *args)
    assert (cached.exit_code, cached.stdout) == (plain.exit_code, plain.stdout)
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    # Without the options ahead of the subcommand (``-c name=value``, the same for every run).
    return [re.sub(r"^(-c \S+ )+", "", line) for line in lines]


def same_as_without(repo: Repo, gate: str, *args: str) -> None:
    cached = repo.tools("--format", "json", gate, "check", *args)
    plain = repo.tools("--format", "json", gate, "check", "--no-cache", *args)
    assert (cached.exit_code, cached.stdout) == (plain.exit_code, plain.stdout)
    assert cached.exit_code in (0, 1), cached.stderr


def spoiled(n: int) -> bytes:
    return SPOIL[n % len(SPOIL)](good(n))


@pytest.mark.parametrize("gate", GATES)
def test_a_re_check_reads_only_the_new_commits_and_reports_the_same(
    branch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gate: str
) -> None:
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {"trailers": {"merges": "check", "fixups": "check", "first_parent": True}})
    first = traced(repo, gate, monkeypatch, tmp_path)
    assert any(c.startswith("merge-base --all") for c in first)  # nothing kept yet
    assert len(memos(repo, gate)) == 1
    before = repo.head()
    # Three commits on top, bad ones among them: judged alone, after the kept range.
    for n in (901, 902, 903):
        repo.commit(spoiled(n) if n % 2 else good(n))
    again = traced(repo, gate, monkeypatch, tmp_path)
    assert not any(c.startswith("merge-base") for c in again)
    logs = [c for c in again if c.startswith("log ")]
    assert len(logs) == 1 and f"{before}..{repo.head()}" in logs[0], again
    # The same head again: nothing to read at all.
    same = traced(repo, gate, monkeypatch, tmp_path)
    assert not any(c.startswith(("log ", "merge-base")) for c in same), same
    report = json.loads(repo.tools("--format", "json", gate, "check").stdout)
    assert report["range"]["commits"] == int(repo.git("rev-list", "--count", "base..HEAD"))


def test_what_the_memo_cannot_vouch_for_is_read_whole(
    branch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {"trailers": {"merges": "check"}})
    for gate in GATES:
        traced(repo, gate, monkeypatch, tmp_path)
    # A merge on top: the memo's range is not what git's walk lists last.
    repo.branch("topic", "HEAD~3")
    repo.commit(good(950))
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "topic")
    for gate in GATES:
        assert any(
            c.startswith("merge-base --all") for c in traced(repo, gate, monkeypatch, tmp_path)
        )
    # The base moves: another range, read whole.
    repo.git("branch", "-f", "base", "HEAD~5")
    for gate in GATES:
        assert any(
            c.startswith("merge-base --all") for c in traced(repo, gate, monkeypatch, tmp_path)
        )
    # An amended head: the kept range of its parent, not of the head it replaces, is used.
    repo.commit(spoiled(960))
    for gate in GATES:
        traced(repo, gate, monkeypatch, tmp_path)
    repo.git("commit", "-q", "--amend", "--allow-empty", "--no-verify", "-m", "Amend it.")
    for gate in GATES:
        logs = [c for c in traced(repo, gate, monkeypatch, tmp_path) if c.startswith("log ")]
        assert len(logs) == 1 and f"{repo.head('HEAD~1')}..{repo.head()}" in logs[0]
    # A config change: other keys, read whole.
    configure(repo, {"trailers": {"merges": "skip"}, "style": {"subject_max": 30}})
    for gate in GATES:
        assert any(
            c.startswith("merge-base --all") for c in traced(repo, gate, monkeypatch, tmp_path)
        )


def test_a_corrupt_or_forged_memo_is_never_believed(
    branch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {})
    gate = "style"
    traced(repo, gate, monkeypatch, tmp_path)
    (kept,) = memos(repo, gate)
    whole = kept.read_bytes()
    repo.commit(good(970))
    # Cut short, a flipped byte, a payload whose checksum was recomputed but that names a rule
    # the gate does not declare: each a miss, read whole, the same report.
    checksum, _, payload = whole[len(HEADER) : -1].partition(b" ")
    data = json.loads(payload)
    data["findings"].append(["no-such-rule", "error", "forged", None, None])
    forged = json.dumps(data, separators=(",", ":")).encode()
    resum = hashlib.sha256(kept.name.encode() + b" " + forged).hexdigest().encode()
    for bad in (
        whole[:-9],
        whole.replace(b'"commits":', b'"commitz":'),
        HEADER + resum + b" " + forged + b"\n",
    ):
        kept.write_bytes(bad)
        assert any(
            c.startswith("merge-base --all") for c in traced(repo, gate, monkeypatch, tmp_path)
        )
        for extra in memos(repo, gate):
            if extra != kept:
                extra.unlink()
    # A memo planted in the judged tree, where a folder of that name would be, is not read.
    kept.write_bytes(whole)
    planted = repo.path / "tools/cache" / kept.parent.name
    planted.mkdir(parents=True)
    (planted / kept.name).write_bytes(HEADER + resum + b" " + forged + b"\n")
    kept.unlink()
    assert any(c.startswith("merge-base --all") for c in traced(repo, gate, monkeypatch, tmp_path))


def test_off_exceptions_and_the_bound(
    branch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {})
    same_as_without(repo, "trailers", "--no-cache")
    assert memos(repo, "trailers") == []
    monkeypatch.setenv("TOOLS_NO_CACHE", "1")
    same_as_without(repo, "trailers")
    assert memos(repo, "trailers") == []
    monkeypatch.delenv("TOOLS_NO_CACHE")
    # An exception resolves a commit prefix against every judged commit: no memo.
    configure(
        repo,
        {
            "trailers": {
                "exceptions": [
                    {"author": "legacy@example.com", "rule": "marker-missing", "reason": "old"}
                ]
            }
        },
    )
    same_as_without(repo, "trailers")
    assert memos(repo, "trailers") == []
    # --commit and --staged judge no range to keep; a range that holds nothing is not kept.
    configure(repo, {})
    same_as_without(repo, "trailers", "--commit", "HEAD")
    same_as_without(repo, "trailers", "--base", "HEAD")
    assert memos(repo, "trailers") == []
    # The byte bound: the newest memo always stays, the older go.
    monkeypatch.setenv("TOOLS_CACHE_MAX_BYTES", "1")
    same_as_without(repo, "trailers")
    repo.commit(good(980))
    same_as_without(repo, "trailers")
    (kept,) = memos(repo, "trailers")
    assert kept.read_bytes().startswith(HEADER)


def test_the_memo_key_covers_the_code_of_both_gates() -> None:
    from tools import range_memo
    from tools.gates import style, trailers

    for gate in (trailers, style):
        assert set(gate.JUDGING_MODULES) <= set(range_memo.MODULES), gate.__name__


def test_a_fresh_process_finds_the_kept_range(
    branch: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memo is believed only with the rules of a loaded gate module, and the range is read
    on a thread of its own: a new process, as every CLI run is, still finds the memo."""
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {})
    command = [sys.executable, "-m", "tools", "--format", "json", "style", "check"]
    first = subprocess.run(command, cwd=repo.path, capture_output=True, check=False)
    (kept,) = memos(repo, "style")
    assert first.returncode == 1
    repo.commit(spoiled(990))
    log = tmp_path / "git-commands"
    traced(repo, "style", monkeypatch, tmp_path)  # writes the wrapper, and keeps a memo
    for path in memos(repo, "style"):
        if path != kept:
            path.unlink()
    log.unlink(missing_ok=True)
    wrapper = tmp_path / "traced-bin"
    env = {**os.environ, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"}
    again = subprocess.run(command, cwd=repo.path, capture_output=True, check=False, env=env)
    assert again.returncode == 1
    ran = [re.sub(r"^(-c \S+ )+", "", line) for line in log.read_text().splitlines()]
    assert not any(c.startswith("merge-base") for c in ran), ran
    plain = subprocess.run([*command, "--no-cache"], cwd=repo.path, capture_output=True)
    assert again.stdout == plain.stdout


WATCH = """
import sys
from tools import gates
from tools.context import Context
from tools.options import Options

seen = []


class Watching(Context):
    def _read_range(self):
        seen.append("tools.gates.style" in sys.modules)
        return super()._read_range()


opts = Options(range_run=True, range_paths=False, range_memo=("style",), bare_ok=True)
ctx = Watching(opts)
assert "tools.gates.style" not in sys.modules
gates.prefetch(["style"], ctx)
print(seen, ctx.range.prior is not None)
"""


def test_the_gate_s_rules_are_declared_before_its_range_is_read(
    branch: Path, tmp_path: Path
) -> None:
    """A kept range is believed only with rules its gate declares, and the range is read on
    a thread: the gate's module is loaded before that thread starts, whatever the timing."""
    repo = copy_of(branch, tmp_path / "repo")
    configure(repo, {})
    same_as_without(repo, "style")  # keeps the range
    ran = subprocess.run(
        [sys.executable, "-c", WATCH], cwd=repo.path, capture_output=True, text=True, check=True
    )
    assert ran.stdout.split() == ["[True]", "True"], ran.stdout + ran.stderr
