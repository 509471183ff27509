"""Mutation runs: parallel arms, and the per-arm worktree overhead on a large repository.

Target (product contract, non-functional section): with ``-j N``, the wall time is about the
slowest arm plus at most 0.5 s of worktree overhead per arm.

    python bench/bench_mutate.py [--runs 3] [--files 20000] [--tmpdir DIR]

1. Four arms whose test sleeps 2 s, ``tools mutate run -j 4`` (and ``-j 1`` for contrast) on
   a tiny repository: the wall time should be near 2 s, not 8 s.
2. On a ``--files``-file repository (built with ``git fast-import``): the cost of one arm's
   worktree (``git worktree add --detach`` of the base, then its removal), measured through
   the module the runner uses; and ``tools mutate run -j 1`` of four arms whose test is
   ``true``, minus the CLI's fixed cost (``tools mutate matrix`` on the same plan), per arm.

``--tmpdir`` puts the worktrees there (``TMPDIR``), for instance a tmpfs such as /dev/shm:
a worktree is a checkout of every file, so the file system's cost per file decides it.
Every timed command is the real CLI in a fresh process, start-up included.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, median, target_row  # noqa: E402
from synth import fast_import, many_files  # noqa: E402

TOOLS = [sys.executable, "-m", "tools"]


def _plan(repo: Path, test: str, arms: int) -> Path:
    lines = [f"test: {test!r}", "arms:", "  - name: control"]
    for i in range(1, arms):
        lines += [
            f"  - name: M{i}",
            f"    replace: {{path: README, old: 'line', new: 'mutation {i}'}}",
        ]
    path = repo / "plans" / "bench.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _small_repo(at: Path) -> Path:
    repo = at / "small"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README").write_text("one line\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b")
    env["GIT_COMMITTER_EMAIL"] = "b@x"
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=repo, check=True, env=env)
    return repo


def _run_cmd(repo: Path, plan: Path, jobs: int, receipt: Path) -> list[str]:
    return [*TOOLS, "mutate", "run", str(plan), "-j", str(jobs), "--receipt", str(receipt)]


def _timed(cmd: list[str], cwd: Path, runs: int) -> tuple[list[float], set[int]]:
    """Like measure.wall_times, and a run that exits non-zero shows its output (a benchmark
    of failing runs measures nothing)."""
    walls: list[float] = []
    codes: set[int] = set()
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        codes.add(proc.returncode)
        if proc.returncode != 0:
            print(f"exit {proc.returncode}: {' '.join(cmd[2:])}\n{proc.stdout}{proc.stderr}")
    return walls, codes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--tmpdir", type=Path, default=None, help="where worktrees go (TMPDIR)")
    args = ap.parse_args()
    repos_at = tempfile.gettempdir()  # the repositories stay where they are; only arms move
    if args.tmpdir is not None:
        os.environ["TMPDIR"] = str(args.tmpdir)
        tempfile.tempdir = None
    os.environ["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="bench-mutate-", dir=repos_at) as tmp:
        tmp_path = Path(tmp)
        receipt = tmp_path / "receipt.json"

        small = _small_repo(tmp_path)
        plan = _plan(small, "sleep 2", 4)
        par, codes4 = _timed(_run_cmd(small, plan, 4, receipt), small, args.runs)
        seq, codes1 = _timed(_run_cmd(small, plan, 1, receipt), small, 1)

        big = tmp_path / "big"
        t0 = time.perf_counter()
        files = many_files(args.files, lambda i: f"// file {i}\n".encode())
        files["README"] = b"one line\n"
        fast_import(big, iter([("start", files)]))
        built = time.perf_counter() - t0
        from tools.git import Git
        from tools.mutate.worktree import Worktrees

        git = Git(big)
        base = git.head()
        assert base is not None
        adds, removes = [], []
        with Worktrees(git.root, git.tools_dir()) as wts:
            for i in range(args.runs):
                start = time.perf_counter()
                path = wts.add(f"bench{i}", base)
                adds.append(time.perf_counter() - start)
                start = time.perf_counter()
                wts.remove(path)
                removes.append(time.perf_counter() - start)
        big_plan = _plan(big, "true", 4)
        arms_wall, codes_big = _timed(_run_cmd(big, big_plan, 1, receipt), big, args.runs)
        fixed, _ = _timed([*TOOLS, "mutate", "matrix", str(big_plan)], big, args.runs)

    where = args.tmpdir or Path(repos_at)
    per_arm = (median(arms_wall) - median(fixed)) / 4
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"worktrees under: {where}")
    print(
        f"4 arms sleeping 2 s, -j 4: median {median(par):.2f} s of {args.runs} "
        f"(exit codes {sorted(codes4)}); -j 1: {median(seq):.2f} s"
    )
    print(f"{args.files}-file repository (built in {built:.1f} s):")
    print(
        f"  worktree add: median {median(adds):.3f} s, remove: median {median(removes):.3f} s "
        f"of {args.runs}"
    )
    print(
        f"  tools mutate run -j 1, 4 arms of `true`: median {median(arms_wall):.2f} s "
        f"(exit codes {sorted(codes_big)}); CLI fixed cost (mutate matrix) "
        f"{median(fixed):.2f} s; per arm {per_arm:.3f} s (target <= 0.5 s)"
    )
    target_row(
        f"`tools mutate run -j 4`, 4 arms whose test sleeps 2 s (worktrees under {where})",
        f"{median(par):.2f} s (spread {min(par):.2f}-{max(par):.2f})",
        f"-j 1: {median(seq):.2f} s",
        "about the slowest arm (2 s) + <= 0.5 s per arm",
        median(par) <= 2.0 + 0.5 * 4,
    )
    target_row(
        f"per-arm worktree overhead, {args.files}-file repository (worktrees under {where})",
        f"{per_arm:.3f} s",
        f"git worktree add {median(adds):.3f} s",
        "<= 0.5 s",
        per_arm <= 0.5,
    )
    del codes1


if __name__ == "__main__":
    main()
