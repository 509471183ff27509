"""The trust boundary's bounds (SPEC §10, second pass): how fast a hostile input is refused.

- a findings baseline of 1,000,000 entries (73 MB): refused by its size under the default
  `limits.max_file_bytes` (64 MiB), and by its node count (100,000) with the size bound
  raised to 256 MiB, so that the count alone is measured; target <= 1 s each, exit 2;
- the node and depth measure itself on that document, in process (no start-up);
- a committed link to /dev/zero at the findings baseline, NOW.md, the index and the config:
  `tools preflight` refuses it (exit 2); target <= 1 s.

    python bench/bench_trust.py [--runs 5]

Figures are the median wall time of the real CLI (a fresh process per run, start-up
included). Paste the printed section into BENCHMARKS.md.
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

from measure import cpu_model, median, target_row, wall_times  # noqa: E402

from tools.bounded import check_json  # noqa: E402
from tools.errors import UsageError  # noqa: E402

CONFIG = "base: main\npreflight:\n  gates: [index, now, links]\n"
NOW = "# Now\n\n## Live claims\n\n- none\n\n## Current gate\n\n- ok\n\n## Next actions\n\n- none\n"
BASELINE = ".agents/baselines/findings.json"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def new_repo(path: Path, config: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / ".agents").mkdir()
    (path / ".agents/protocol.yaml").write_text(config)
    (path / ".agents/NOW.md").write_text(NOW)
    return path


def million_entries() -> bytes:
    entries = [
        {
            "gate": "links",
            "rule": "anchor-missing",
            "path": f"docs/page{i}.md",
            "fingerprint": f"{i:032x}",
            "message": "'#x': no heading of the page has the anchor #x",
        }
        for i in range(1_000_000)
    ]
    return json.dumps({"schema": "tools.findings-baseline/1", "findings": entries}).encode()


def loadavg() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    rows: list[str] = []
    print(
        f"Machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}\n",
        flush=True,
    )
    raw = million_entries()

    def measure(what: str, cmd: list[str], repo: Path, data: str) -> float:
        load0 = loadavg()
        walls, codes = wall_times(cmd, repo, args.runs)
        med = median(walls)
        rows.append(
            f"| {what} | {data} | {med * 1000:.0f} ms | {max(walls) * 1000:.0f} ms | "
            f"{','.join(map(str, sorted(codes)))} | {load0:.2f} / {loadavg():.2f} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
        target_row(what, f"{med * 1000:.0f} ms (exit {codes})", "—", "<= 1 s, exit 2", med <= 1)
        return med

    with tempfile.TemporaryDirectory(prefix="bench-trust-") as tmp:
        top = Path(tmp)
        size = f"1,000,000 entries, {len(raw) / 1e6:.0f} MB"
        repo = new_repo(top / "size", CONFIG)
        (repo / BASELINE).parent.mkdir(parents=True)
        (repo / BASELINE).write_bytes(raw)
        cmd = [*tools, "--repo", str(repo), "baseline", "show"]
        measure("`tools baseline show`, default limits (the size bound)", cmd, top, size)
        repo = new_repo(top / "nodes", CONFIG + "limits:\n  max_file_bytes: 268435456\n")
        (repo / BASELINE).parent.mkdir(parents=True)
        (repo / BASELINE).write_bytes(raw)
        cmd = [*tools, "--repo", str(repo), "now", "check"]
        # `now check` loads the config (whose limits then hold) and the baseline pass.
        measure("`tools now check`, max_file_bytes 256 MiB (the node bound)", cmd, top, size)
        walls = []
        for _ in range(args.runs):
            start = time.perf_counter()
            try:
                check_json(raw, BASELINE)
            except UsageError:
                pass
            walls.append(time.perf_counter() - start)
        rows.append(
            f"| `check_json` in process (the measure alone) | {size} | "
            f"{median(walls) * 1000:.0f} ms | {max(walls) * 1000:.0f} ms | — | — |"
        )
        for rel in (BASELINE, ".agents/NOW.md", ".agents/issue-index.md", ".agents/protocol.yaml"):
            repo = new_repo(top / rel.replace("/", "_"), CONFIG)
            full = repo / rel
            full.parent.mkdir(parents=True, exist_ok=True)
            full.unlink(missing_ok=True)
            full.symlink_to("/dev/zero")
            git(repo, "add", "-A")
            cmd = [*tools, "--repo", str(repo), "preflight"]
            measure(f"`tools preflight`, {rel} a link to /dev/zero", cmd, top, "—")
    print("| command | input | median | slowest | exit | load before / after |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
