"""Restores are atomic against edits (SPEC §10): a save the user makes while an in-place
restore runs is never lost, in any interleaving.

Deterministic: the restore's own step hook (``between``) saves the file at every step
boundary, in each way an editor saves (writing into the file by name, renaming a new file
over it, writing through a descriptor opened before the restore began). Racing: a separate
process saves the file at a random moment while restores run, many times, and while the real
``tools mutate recover`` runs. Killed: a restore SIGKILLed between its steps loses nothing,
and the next one finishes it. Real files and processes throughout; nothing is mocked."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import run_tools, write_plan
from tools.mutate.apply import FileState
from tools.mutate.inplace import restore_file

ROOT = Path(__file__).resolve().parents[2]
ORIGINAL = b"def add(a, b):\n    return a + b\n"
MUTANT = b"def add(a, b):\n    return a - b\n"
USER = b"def add(a, b):\n    return a + b  # the user's own save\n"
STEPS = ("checked", "staged", "aside", "verified", "placed", "rechecked")
SAVES = ("write", "rename", "descriptor")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Tree:
    """A working tree with one target file, and the in-place folder beside it."""

    def __init__(self, base: Path, original: bytes = ORIGINAL, mutant: bytes = MUTANT):
        self.root = base / "tree"
        self.folder = self.root / ".git" / "tools" / "mutate" / "inplace"
        self.folder.mkdir(parents=True)
        self.path = "src/calc.py"
        self.full = self.root / self.path
        self.full.parent.mkdir()
        self.original, self.mutant = original, mutant
        self.full.write_bytes(mutant)

    def restore(self, between: Callable[[str], None] | None = None) -> Any:
        return restore_file(
            self.root,
            self.path,
            FileState(self.original, 0o644),
            [_sha(self.mutant)],
            folder=self.folder,
            between=between,
        )

    def leftovers(self) -> list[str]:
        """Work files of a restore anywhere: none may outlive it."""
        work = self.folder / "work"
        found = sorted(p.name for p in work.iterdir()) if work.exists() else []
        return found + sorted(p.name for p in self.full.parent.iterdir() if ".tools-" in p.name)


def _save(full: Path, how: str, data: bytes, held: Any = None) -> None:
    """Save ``data`` the way editors do: into the file by name (truncating it), by renaming a
    new file over it, or through a descriptor opened earlier."""
    if how == "write":
        with open(full, "wb") as handle:
            handle.write(data)
    elif how == "rename":
        tmp = full.with_name(full.name + ".save~")
        tmp.write_bytes(data)
        os.replace(tmp, full)
    else:
        held.seek(0)
        held.truncate()
        held.write(data)
        held.flush()


@contextmanager
def _held(full: Path, how: str) -> Iterator[Any]:
    if how != "descriptor":
        yield None
        return
    with open(full, "r+b") as handle:
        yield handle


@pytest.mark.parametrize("how", SAVES)
@pytest.mark.parametrize("at", STEPS)
def test_a_save_at_any_step_of_a_restore_is_kept(tmp_path: Path, at: str, how: str) -> None:
    if (at, how) == ("rechecked", "descriptor"):
        # The one case no restore can cover (docs/mutation.md, "--in-place"): a process that
        # kept the file open from before the restore writes through that descriptor after
        # the restore's last look, into a file that no longer has a name. A save that opens
        # the file at that moment (the other two ways) is kept, as below.
        pytest.skip("a write through a descriptor after the last look: the documented limit")
    tree = Tree(tmp_path)
    seen: list[str] = []

    with _held(tree.full, how) as held:

        def between(step: str) -> None:
            seen.append(step)
            if step == at:
                _save(tree.full, how, USER, held)

        done = tree.restore(between)
    assert at in seen, seen
    assert tree.full.read_bytes() == USER, (at, how, done)
    assert done.outcome == "conflict", done
    assert done.now.sha256 == _sha(USER)
    assert done.kept == ()  # nothing else of the user's was in the way
    assert tree.leftovers() == []


def test_the_steps_are_those_documented_and_a_quiet_restore_restores(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    seen: list[str] = []
    done = tree.restore(seen.append)
    assert seen == list(STEPS)
    assert done.outcome == "restored" and done.kept == ()
    assert tree.full.read_bytes() == ORIGINAL and done.now.sha256 == _sha(ORIGINAL)
    assert tree.leftovers() == []


def test_a_late_write_through_an_open_descriptor_goes_back_to_the_name(tmp_path: Path) -> None:
    """A write that reaches the mutant after it was verified aside (through a descriptor
    opened before): the exchange is undone, so the written file, the very one the writer
    holds, has the name again, and later writes through it land there too."""
    tree = Tree(tmp_path)
    with open(tree.full, "r+b") as held:

        def between(step: str) -> None:
            if step == "placed":
                _save(tree.full, "descriptor", USER, held)

        done = tree.restore(between)
        assert done.outcome == "conflict"
        held.write(b"# and more\n")
        held.flush()
    assert tree.full.read_bytes() == USER + b"# and more\n"
    assert tree.leftovers() == []


def test_two_saves_racing_one_restore_keep_both(tmp_path: Path) -> None:
    """A write into the file and then a save by rename, both while it is aside: the name has
    the later save; the earlier one is kept under saved/ and named, never deleted."""
    tree = Tree(tmp_path)
    first = USER + b"# first\n"
    with open(tree.full, "r+b") as held:

        def between(step: str) -> None:
            if step == "aside":
                _save(tree.full, "descriptor", first, held)
                _save(tree.full, "rename", USER)

        done = tree.restore(between)
    assert tree.full.read_bytes() == USER
    assert done.outcome == "conflict"
    (kept,) = done.kept
    assert (tree.root / kept).read_bytes() == first
    assert kept == f".git/tools/mutate/inplace/saved/{_sha(first)}"
    assert tree.leftovers() == []


@pytest.mark.parametrize("how", ("write", "rename"))
@pytest.mark.parametrize("at", ("checked", "staged", "placed"))
def test_a_deleted_file_is_put_back_only_where_nothing_appeared(
    tmp_path: Path, at: str, how: str
) -> None:
    """The arm deleted the file: the original goes back with a link, which never replaces a
    file the user created meanwhile."""
    tree = Tree(tmp_path)
    tree.full.unlink()

    def between(step: str) -> None:
        if step == at:
            _save(tree.full, how, USER)

    done = restore_file(
        tree.root,
        tree.path,
        FileState(ORIGINAL, 0o644),
        [None],
        folder=tree.folder,
        between=between,
    )
    assert tree.full.read_bytes() == USER and done.outcome == "conflict"
    assert tree.leftovers() == []


@pytest.mark.parametrize("how", ("write", "rename"))
@pytest.mark.parametrize("at", ("checked", "aside", "verified", "rechecked"))
def test_a_file_the_arm_created_is_removed_only_while_it_is_the_mutant(
    tmp_path: Path, at: str, how: str
) -> None:
    tree = Tree(tmp_path)

    def between(step: str) -> None:
        if step == at:
            _save(tree.full, how, USER)

    done = restore_file(
        tree.root,
        tree.path,
        FileState(None),
        [_sha(MUTANT)],
        folder=tree.folder,
        between=between,
    )
    assert tree.full.read_bytes() == USER and done.outcome == "conflict"
    assert tree.leftovers() == []


# -- a restore killed between its steps ----------------------------------------------------------
_KILLED = """
import os, signal, sys
from pathlib import Path
from tools.mutate.apply import FileState
from tools.mutate.inplace import restore_file
root, folder, at, original, mutant = sys.argv[1:6]
def between(step):
    if step == at:
        os.kill(os.getpid(), signal.SIGKILL)
restore_file(Path(root), "src/calc.py", FileState(bytes.fromhex(original), 0o644),
             [mutant], folder=Path(folder), between=between)
"""


def _killed_at(tree: Tree, at: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED, str(tree.root), str(tree.folder), at]
        + [ORIGINAL.hex(), _sha(MUTANT)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize("at", STEPS)
def test_a_restore_killed_at_any_step_is_finished_by_the_next(tmp_path: Path, at: str) -> None:
    tree = Tree(tmp_path)
    _killed_at(tree, at)
    if at in ("aside", "verified"):
        assert not tree.full.exists()  # between the aside and the placing: the name is empty
    done = tree.restore()
    assert tree.full.read_bytes() == ORIGINAL
    assert done.outcome in ("restored", "unchanged") and done.kept == ()
    assert tree.leftovers() == []


@pytest.mark.parametrize("how", ("write", "rename"))
def test_a_save_after_a_restore_was_killed_mid_way_is_kept(tmp_path: Path, how: str) -> None:
    """Killed with the file aside and the name empty; the user saves (creating the file);
    the next restore keeps the save and drops only tools's own mutant."""
    tree = Tree(tmp_path)
    _killed_at(tree, "aside")
    _save(tree.full, how, USER)
    done = tree.restore()
    assert tree.full.read_bytes() == USER and done.outcome == "conflict"
    assert done.kept == ()
    assert tree.leftovers() == []


# -- a real writer racing real restores ----------------------------------------------------------
# Reads "DELAY HOW N SIZE" lines; sleeps DELAY, saves a content of SIZE bytes that names N
# (by writing into the file, or by renaming a new file over it), then says "saved N".
_WRITER = """
import os, sys, time
path = sys.argv[1]
for line in sys.stdin:
    delay, how, n, size = line.split()
    data = (("user save %s " % n).encode() * (int(size) // 10 + 1))[: int(size)]
    time.sleep(float(delay))
    if how == "write":
        with open(path, "wb") as handle:
            handle.write(data)
    else:
        tmp = path + ".save~"
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    print("saved", n, flush=True)
"""


def _user(n: int, size: int) -> bytes:
    return ((f"user save {n} ").encode() * (size // 10 + 1))[:size]


def race(
    full: Path,
    mutant: bytes,
    restore: Callable[[], object],
    *,
    rounds: int,
    seconds: float,
    seed: int,
) -> list[int]:
    """``rounds`` times (or until ``seconds`` have gone): the mutant in place, a save at a
    random moment of a restore run meanwhile; after both, the file must hold that save. The
    rounds whose save was lost (none, for a restore that is atomic against edits)."""
    rng = random.Random(seed)
    # The span of one quiet restore spreads the saves over it (the assert is on content
    # only, never on time, so a slow or fast machine changes only where the saves land).
    span = 0.0
    for _ in range(2):
        full.write_bytes(mutant)
        t0 = time.monotonic()
        restore()
        span = max(span, time.monotonic() - t0)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(full)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    lost: list[int] = []
    end = time.monotonic() + seconds
    try:
        for n in range(rounds):
            if time.monotonic() > end:
                break
            full.write_bytes(mutant)
            how = ("write", "rename")[n % 2]
            writer.stdin.write(f"{rng.uniform(0, span * 1.2):.6f} {how} {n} {len(mutant)}\n")
            writer.stdin.flush()
            restore()
            assert writer.stdout.readline().split() == ["saved", str(n)]
            if full.read_bytes() != _user(n, len(mutant)):
                lost.append(n)
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
    return lost


def test_a_writer_racing_restores_never_loses_a_save(tmp_path: Path) -> None:
    size = 8 << 20  # big enough that a restore takes a while to check, stage and place
    original = bytes(random.Random(1).getrandbits(8) for _ in range(4096)) * (size // 4096)
    mutant = original[:-8] + b"MUTATED!"
    tree = Tree(tmp_path, original, mutant)
    lost = race(tree.full, mutant, tree.restore, rounds=40, seconds=120, seed=11)
    assert lost == []
    assert tree.leftovers() == []


def test_a_writer_racing_mutate_recover_never_loses_a_save(repo: Repo, tmp_path: Path) -> None:
    """The real ``tools mutate recover`` on a pending restore left by a real killed run,
    again and again, with a save landing at a random moment of each."""
    size = 16 << 20
    big = (b"0123456789abcdef" * 4 + b"\n") * (size // 65)
    repo.commit("Add the data\n\nBody.\n", {"data/big.txt": big.decode()})
    marker = tmp_path / "shell.pid"
    plan = write_plan(
        repo,
        {
            "test": f"echo $$ > {marker}; sleep 600",
            "arms": [
                {
                    "name": "M",
                    "replace": {"path": "data/big.txt", "old": "f\n0", "new": "F\n0", "count": 1},
                }
            ],
        },
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tools",
            "--repo",
            str(repo.path),
            "mutate",
            "run",
            plan,
            "--in-place",
        ],
        cwd=repo.path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    end = time.monotonic() + 120
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < end:
        time.sleep(0.02)
    shell = int(marker.read_text())
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    os.killpg(shell, signal.SIGKILL)
    full = repo.path / "data/big.txt"
    mutant = full.read_bytes()
    assert mutant != big
    pending = repo.path / ".git/tools/mutate/inplace"
    kept = tmp_path / "pending"
    shutil.copytree(pending, kept)
    shutil.rmtree(repo.path / ".git/tools/mutate/groups", ignore_errors=True)

    outputs: list[subprocess.CompletedProcess[str]] = []

    def recover() -> None:
        shutil.rmtree(pending)
        shutil.copytree(kept, pending)  # the same pending restore each time
        run = run_tools(repo, "mutate", "recover")
        assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr
        if run.returncode == 1:
            assert "inplace-conflict: data/big.txt" in run.stderr, run.stderr
        outputs.append(run)

    lost = race(full, mutant, recover, rounds=12, seconds=120, seed=5)
    assert lost == []
    assert any(r.returncode == 0 for r in outputs[:2])  # the quiet ones restored
