"""Preflight --staged on a 20,000-file / 10,000-commit synthetic repository, and CLI start.

Targets (product contract, non-functional section): preflight --staged median <= 1 s wall,
peak RSS of the protocol gates <= 200 MiB; CLI start (``tools --help``) <= 150 ms.

    python bench/bench_preflight.py [--files 20000] [--commits 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import fast_import, many_files  # noqa: E402

MESSAGE = "Touch file {n}\n\nBody of commit {n}.\n"


def _commits(files: int, commits: int):
    yield "Initial import\n\nAll files.\n", many_files(files, lambda i: f"// file {i}\n".encode())
    for n in range(1, commits):
        i = (n * 7919) % files
        yield MESSAGE.format(n=n), {f"src/d{i // 500:03d}/f{i:05d}.cc": f"// v{n}\n".encode()}


def _timed(cmd: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, exit code, peak RSS KiB of this child)."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
    wall = time.perf_counter() - start
    return wall, proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def _median_run(cmd: list[str], cwd: Path, runs: int) -> tuple[float, int, str]:
    walls, codes = [], set()
    for _ in range(runs):
        wall, code, _ = _timed(cmd, cwd)
        walls.append(wall)
        codes.add(code)
    # Peak RSS measured in a separate child so the figure is this command's own.
    rss = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource,subprocess,sys;subprocess.run(sys.argv[1:],capture_output=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
            *cmd,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return statistics.median(walls), int(rss), ",".join(map(str, sorted(codes)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "synth"
        t0 = time.perf_counter()
        fast_import(repo, _commits(args.files, args.commits))
        build = time.perf_counter() - t0
        # The repository's protocol: the branch's own commits start 50 commits back.
        subprocess.run(["git", "branch", "base", "HEAD~50"], cwd=repo, check=True)
        (repo / ".agents").mkdir()
        (repo / ".agents/protocol.yaml").write_text("base: base\n")
        (repo / ".agents/NOW.md").write_text(
            "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n## Current gate\n"
            "## Next actions\n"
        )
        (repo / "src/d000/f00000.cc").write_text("// staged change\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        pre_wall, pre_rss, pre_codes = _median_run(
            [*tools, "preflight", "--staged"], repo, args.runs
        )
        help_wall, _, _ = _median_run([*tools, "--help"], repo, args.runs)
        out = subprocess.run(
            [*tools, "preflight", "--staged"], cwd=repo, capture_output=True, text=True
        ).stdout
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print(f"synthetic repo: {args.files} files, {args.commits} commits (built in {build:.1f} s)")
    print(
        f"tools preflight --staged: median {pre_wall * 1000:.0f} ms of {args.runs}, "
        f"peak RSS {pre_rss / 1024:.0f} MiB, exit codes {pre_codes}"
    )
    print(f"tools --help: median {help_wall * 1000:.0f} ms of {args.runs}")
    print("preflight output:\n" + out)


if __name__ == "__main__":
    main()
