"""Failing environments and interrupts (SPEC §10): a write that the disk or the system refuses
is exit 2 naming the file, never exit 3; SIGINT at any moment is exit 130 and one line."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import Repo
from tools.ledger import canonical_json, make_record

IDX = ".agents/issue-index.md"
BASELINE = ".agents/baselines/device-leakage.json"
HEADER = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def tools_limited(repo: Repo, *args: str, fsize: int) -> subprocess.CompletedProcess:
    """The real CLI in a child process whose files may grow to ``fsize`` bytes at most (what
    a full disk does to a write: the kernel refuses it, EFBIG here, ENOSPC there)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), *args],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,
        check=False,
    )


def one_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    return lines[0]


def test_ratchet_tighten_on_a_full_disk_is_exit_2_naming_the_baseline(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "int f() { return at::kCUDA; }\n"})
    line = one_error(tools_limited(repo, "ratchet", "tighten", fsize=16))
    assert BASELINE in line and "too large" in line.lower()
    assert not (repo.path / BASELINE).exists()
    # The clean twin: room enough, the baseline is written.
    assert tools_limited(repo, "ratchet", "tighten", fsize=1 << 20).returncode == 0
    assert (repo.path / BASELINE).exists()


def test_index_append_on_a_full_disk_is_exit_2_and_leaves_the_index(repo: Repo) -> None:
    rows = "".join(f"| #{n} | — | Title {n} | bug |\n" for n in range(1, 200))
    repo.commit("Start\n\nBody.\n", {IDX: HEADER + rows})
    before = repo.read(IDX)
    args = ("index", "append", "--issue", "500", "--row", "—", "--title", "t", "--kind", "bug")
    line = one_error(tools_limited(repo, *args, fsize=len(before)))
    assert IDX in line
    assert repo.read(IDX) == before


def test_ledger_merge_on_a_full_disk_is_exit_2_and_appends_nothing(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n")
    record = make_record("attribution", {"n": 1, "pad": "x" * 4096}, created="2026-01-01T00:00:01Z")
    receipt = repo.path.parent / "receipt.json"
    receipt.write_bytes(canonical_json(record))
    line = one_error(tools_limited(repo, "ledger", "merge", str(receipt), fsize=1024))
    assert ".agents/ledger.jsonl" in line
    assert (repo.path / ".agents/ledger.jsonl").read_bytes() == b""


def test_an_immutable_baseline_folder_is_exit_2(repo: Repo) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "int f() { return at::kCUDA; }\n"})
    folder = repo.path / ".agents/baselines"
    folder.mkdir(parents=True)
    folder.chmod(0o555)
    try:
        line = one_error(tools_limited(repo, "ratchet", "tighten", fsize=1 << 20))
    finally:
        folder.chmod(0o755)
    assert BASELINE in line and "denied" in line.lower()


# The child says when the interpreter is up and `tools.cli` (which takes SIGINT over first)
# is imported; a SIGINT before that lands in Python's own start-up ("Fatal Python error:
# init_import_site") or in the console script's first line, outside tools. It then runs the
# CLI as the console script does.
_STARTED = (
    "import sys, tools.cli; sys.stderr.write('up\\n'); sys.stderr.flush(); "
    "from tools.cli.main import main; main()"
)


def test_an_interrupt_inside_a_destructor_is_exit_130_and_one_line() -> None:
    """Where SIGINT lands in a destructor (gitpython's, at any collection), Python would print
    "Exception ignored" with a traceback and carry on; the CLI ends as for any interrupt."""
    child = (
        "import tools.cli\n"
        "class Finalised:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "Finalised()\n"
        "print('went on')\n"
    )
    proc = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "", "error: interrupted\n")


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3])
def test_sigint_at_any_moment_is_exit_130_and_one_line(repo: Repo, delay: float) -> None:
    repo.commit("Start\n\nBody.\n", {IDX: HEADER})
    proc = subprocess.Popen(
        [sys.executable, "-c", _STARTED, "--repo", str(repo.path), "preflight"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None and proc.stderr.readline() == "up\n"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err
    if proc.returncode in (0, 1):
        return  # it had finished before the signal came: nothing to interrupt
    assert (proc.returncode, err) == (130, "error: interrupted\n")


def test_sigint_inside_a_command_is_exit_130_and_one_line(repo: Repo) -> None:
    """Interrupted inside a command: reading a commit message from stdin that never comes."""
    repo.commit("Start\n\nBody.\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools", "--repo", str(repo.path)]
        + ["trailers", "check", "--message-file", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # started, and waiting on stdin (it cannot finish before its input)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "error: interrupted\n")
