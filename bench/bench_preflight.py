"""Preflight --staged on a 20,000-file / 10,000-commit synthetic repository with every gate
configured, and CLI start.

Targets: preflight --staged median <= 1 s wall (SPEC §8) and <= 300 ms (the pre-commit hook
of an agent's every commit), peak RSS of the protocol gates <= 200 MiB; CLI start
(``tools --version``, ``tools --help``) <= 100 ms.

    python bench/bench_preflight.py [--files 20000] [--commits 10000] [--runs 5]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from measure import cpu_model, median, peak_rss_kib, wall_times  # noqa: E402
from synth import fast_import, many_files  # noqa: E402

# Messages that keep the default protocol, so the timed run is a realistic green preflight.
MESSAGE = (
    "Touch file {n}\n\nBody of commit {n}.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)


def _commits(files: int, commits: int):
    yield MESSAGE.format(n=0), many_files(files, lambda i: f"// file {i}\n".encode())
    for n in range(1, commits):
        i = (n * 7919) % files
        yield MESSAGE.format(n=n), {f"src/d{i // 500:03d}/f{i:05d}.cc": f"// v{n}\n".encode()}


def _every_gate(repo: Path) -> None:
    """Configure every gate, with files for each to judge, committed at the branch's start."""
    files = {
        ".agents/protocol.yaml": (
            "base: base\n"
            "docs:\n  rules:\n    - name: src-docs\n      when_changed: ['src/d001/**']\n"
            "      require_changed: ['docs/**']\n"
        ),
        ".agents/NOW.md": (
            "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n- [spec](../specs/a.md)\n"
            "## Current gate\n## Next actions\n"
        ),
        ".agents/issue-index.md": (
            "# Index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
            + "".join(f"| #{n} | R{n} | Issue {n} | feature |\n" for n in range(1, 201))
        ),
        ".agents/baselines/device-leakage.json": (
            '{"ratchet": "device-leakage", "buckets": {"kcuda": 0, "is_cuda": 0, '
            '"cuda_include": 0, "vt_macro": 1}}\n'
        ),
        "src/d001/vt.cc": "#ifdef VT_CUDA\nint x;\n#endif\n",
        "specs/a.md": "# A\n\n## Owed\n\n- #1\n\n## Now\n\n- [index](../.agents/issue-index.md)\n",
        "docs/guide.md": "# Guide\n\nSee [the spec](../specs/a.md#now).\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q",
         "-m", "Configure every gate", "-m", "Body.", "-m", "FOLLOWING_AGENTS_PROTOCOL",
         "-m", "Following-Agents-Protocol: true\nAI-Assisted: false"],
        cwd=repo, check=True,
    )  # fmt: skip
    from tools import ledger

    records = [ledger.make_record("bench", {"n": n}) for n in range(1000)]
    ledger.append_records(repo / ".agents/ledger.jsonl", records)


def _median_run(cmd: list[str], cwd: Path, runs: int) -> tuple[float, int, str]:
    walls, codes = wall_times(cmd, cwd, runs)
    return median(walls), peak_rss_kib(cmd, cwd), ",".join(map(str, sorted(codes)))


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
        _every_gate(repo)
        (repo / "src/d000/f00000.cc").write_text("// staged change\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        pre_wall, pre_rss, pre_codes = _median_run(
            [*tools, "preflight", "--staged"], repo, args.runs
        )
        help_wall, _, _ = _median_run([*tools, "--help"], repo, args.runs)
        version_wall, _, _ = _median_run([*tools, "--version"], repo, args.runs)
        out = subprocess.run(
            [*tools, "preflight", "--staged"], cwd=repo, capture_output=True, text=True
        ).stdout
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"synthetic repo: {args.files} files, {args.commits} commits (built in {build:.1f} s)")
    print(
        f"tools preflight --staged: median {pre_wall * 1000:.0f} ms of {args.runs}, "
        f"peak RSS {pre_rss / 1024:.0f} MiB, exit codes {pre_codes}"
    )
    print(f"tools --help: median {help_wall * 1000:.0f} ms of {args.runs}")
    print(f"tools --version: median {version_wall * 1000:.0f} ms of {args.runs}")
    print("preflight output:\n" + out)


if __name__ == "__main__":
    main()
