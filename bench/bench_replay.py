"""Evidence replay: the cost per record of ``tools evidence replay`` (and ``evidence sign``)
beyond the arm's own build and test (SPEC §11; the issue's target: <= 0.5 s per arm).

    python bench/bench_replay.py [--runs 3] [--arms 4] [--files 2000]

On a ``--files``-file repository (``git fast-import``), a branch records ``--arms`` arms whose
build and test are ``true`` (``tools mutate run``, ledger committed); then, each in a fresh
process, start-up included:

- ``tools evidence replay --base main -j 1`` (every arm replayed, one at a time);
- the fixed cost: the same command on an empty range (``--base HEAD``: nothing to replay);
- ``tools evidence sign`` with a throwaway ed25519 key (the replay, ``ssh-keygen -Y sign``
  per record and the ledger append), on a copy of the ledger restored between runs.

Per arm = (replay - fixed - the arms' own build and test seconds, as the records measured
them) / arms. The worktree is part of the replay's overhead (as it is of ``mutate run``'s):
``tools mutate run -j 1`` of the same plan (to a receipt), less ``tools mutate matrix``, gives
the runner's own per-arm cost for comparison.
"""

from __future__ import annotations

import argparse
import json
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

from measure import cpu_model, median  # noqa: E402
from synth import fast_import, many_files  # noqa: E402

TOOLS = [sys.executable, "-m", "tools"]
LEDGER = ".agents/ledger.jsonl"
ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **ENV}
    )


def _recorded(repo: Path, arms: int) -> float:
    """A branch whose one commit adds ``arms`` arm records; their build + test seconds."""
    _git(repo, "checkout", "-q", "-b", "work")
    lines = ["build: 'true'", "test: 'true'", "arms:", "  - name: control"]
    for i in range(1, arms):
        lines += [f"  - name: M{i}", f"    replace: {{path: README, old: 'line', new: 'm{i}'}}"]
    (repo / "plans").mkdir(exist_ok=True)
    (repo / "plans" / "bench.yml").write_text("\n".join(lines) + "\n")
    subprocess.run(
        [*TOOLS, "mutate", "run", "plans/bench.yml"], cwd=repo, check=True, capture_output=True
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "record")
    own = 0.0
    for line in (repo / LEDGER).read_text().splitlines():
        r = json.loads(line)
        if r["kind"] == "mutation-arm":
            own += (r["durations"]["build"] or 0.0) + sum(r["durations"]["test"])
    return own


def _timed(cmd: list[str], cwd: Path, runs: int, restore: bytes | None = None) -> list[float]:
    walls = []
    for _ in range(runs):
        if restore is not None:
            (cwd / LEDGER).write_bytes(restore)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        if proc.returncode != 0:
            print(f"exit {proc.returncode}: {' '.join(cmd[2:])}\n{proc.stdout}{proc.stderr}")
    return walls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--arms", type=int, default=4)
    ap.add_argument("--files", type=int, default=2000)
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        repo = Path(tmp) / "repo"
        files = many_files(args.files, lambda i: f"// file {i}\n".encode())
        files["README"] = b"one line\n"
        fast_import(repo, iter([("start", files)]))
        _git(repo, "branch", "-M", "main")
        own = _recorded(repo, args.arms)
        key = Path(tmp) / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        replay = [*TOOLS, "evidence", "replay", "-j", "1"]
        walls = _timed([*replay, "--base", "main"], repo, args.runs)
        fixed = _timed([*replay, "--base", "HEAD"], repo, args.runs)
        receipt = Path(tmp) / "receipt.json"
        mutate = [*TOOLS, "mutate", "run", "plans/bench.yml", "-j", "1", "--receipt", str(receipt)]
        runs = _timed(mutate, repo, args.runs)
        matrix = _timed([*TOOLS, "mutate", "matrix", "plans/bench.yml"], repo, args.runs)
        kept = (repo / LEDGER).read_bytes()
        sign = [*TOOLS, "evidence", "sign", "--key", str(key), "--base", "main", "-j", "1"]
        signed = _timed(sign, repo, args.runs, restore=kept)
    per_arm = (median(walls) - median(fixed) - own) / args.arms
    per_sign = (median(signed) - median(walls)) / args.arms
    per_mutate = (median(runs) - median(matrix) - own) / args.arms
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{args.files}-file repository, {args.arms} arms of build `true`, test `true`:")
    print(
        f"  evidence replay -j 1: median {median(walls):.2f} s of {args.runs}; fixed cost "
        f"(empty range) {median(fixed):.2f} s; the arms' own build+test {own:.3f} s"
    )
    print(f"  per arm beyond its build and test: {per_arm:.3f} s (target <= 0.5 s)")
    print(
        f"  for comparison, mutate run -j 1 of the same arms: median {median(runs):.2f} s; "
        f"fixed cost (mutate matrix) {median(matrix):.2f} s; per arm {per_mutate:.3f} s"
    )
    print(f"  replay beyond mutate run, per arm: {per_arm - per_mutate:+.3f} s")
    print(f"  evidence sign: median {median(signed):.2f} s; signing per record {per_sign:.3f} s")


if __name__ == "__main__":
    main()
