"""Ledgers: `tools index check` on a 20,000-row index over a 1,000-commit range, and
`tools ledger verify` of 100,000 records. Target (the ledgers issue): each under 1 s.

    python bench/bench_ledgers.py [--runs 5] [--only index|ledger]

Synthetic repositories are written with `git fast-import` under a temp dir. Figures are the
median wall time of the real CLI (a fresh process per run, start-up included) and the peak
RSS of one run. Paste the printed section into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, median, peak_rss_kib, target_row, wall_times  # noqa: E402

from tools.ledger import canonical_json, make_record  # noqa: E402

IDX = ".agents/issue-index.md"
LED = ".agents/ledger.jsonl"
FRAME = (
    "# Issue index\n\nOne row per issue, appended at the tail.\n\n"
    "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
)


def row(n: int) -> str:
    return (
        f"| [#{n}](https://example.com/o/r/issues/{n}) | R{n} | Issue title {n} \\| part | bug |\n"
    )


class Importer:
    """A tiny `git fast-import` stream writer (commits with inline blobs, merges)."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.mark = 0
        self.tick = 1_700_000_000

    def commit(self, ref: str, parents: list[str], files: dict[str, bytes], msg: str) -> str:
        self.mark += 1
        self.tick += 1
        w = self.out.append
        w(f"commit {ref}\nmark :{self.mark}\n".encode())
        w(f"committer Bench <bench@example.com> {self.tick} +0000\n".encode())
        data = msg.encode()
        w(b"data %d\n%s\n" % (len(data), data))
        if parents:
            w(f"from {parents[0]}\n".encode())
            for p in parents[1:]:
                w(f"merge {p}\n".encode())
        for path, blob in files.items():
            w(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(blob), blob))
        return f":{self.mark}"

    def run(self, repo: Path) -> None:
        subprocess.run(
            ["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(self.out), check=True
        )


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def build_index_repo(path: Path, *, base_rows: int, commits: int, every: int) -> dict:
    """main: ``base_rows`` rows at the merge base, then 20 more on main (the base tip moves).
    feature: ``commits`` commits in the range; every ``every``-th appends a row (``every``=1:
    all of them), and every 100th is a union-style merge of a side commit that appended one."""
    repo = new_repo(path)
    imp = Importer()
    rows = [row(n) for n in range(1, base_rows + 1)]
    m = imp.commit("refs/heads/main", [], {IDX: (FRAME + "".join(rows)).encode()}, "Base\n")
    tip, main_rows = m, list(rows)
    for k in range(20):
        main_rows.append(row(900_000 + k))
        tip = imp.commit(
            "refs/heads/main", [tip], {IDX: (FRAME + "".join(main_rows)).encode()}, f"Main {k}\n"
        )
    head, cur, next_n, made, touching = m, list(rows), base_rows + 1, 0, 0
    while made < commits:
        made += 1
        if made % 100 == 0 and made + 1 <= commits:
            # A side commit forked from the previous head appends one row; our last commit
            # appended another; the merge keeps both (what a union merge leaves).
            side_rows = cur + [row(500_000 + made)]
            side = imp.commit(
                "refs/heads/side",
                [head],
                {IDX: (FRAME + "".join(side_rows)).encode()},
                f"Side {made}\n",
            )
            made += 1
            cur = cur + [row(500_000 + made - 1)]
            head = imp.commit(
                "refs/heads/feature",
                [head, side],
                {IDX: (FRAME + "".join(cur)).encode()},
                f"Merge {made}\n",
            )
            touching += 2
            continue
        if made % every == 0:
            cur = cur + [row(next_n)]
            next_n += 1
            files = {IDX: (FRAME + "".join(cur)).encode()}
            touching += 1
        else:
            files = {f"src/f{made % 50}.txt": f"v{made}\n".encode()}
        head = imp.commit("refs/heads/feature", [head], files, f"Commit {made}\n")
    imp.run(repo)
    git(repo, "checkout", "-q", "feature")
    n_range = int(git(repo, "rev-list", "--count", "main..feature").strip())
    rows_now = (repo / IDX).read_text().count("\n| [#")
    return {"repo": repo, "range": n_range, "rows": rows_now, "touching": touching}


def arm_record(i: int) -> dict:
    """A record shaped like a mutation-arm record (about 440 bytes)."""
    return make_record(
        "mutation-arm",
        {
            "arm": f"a{i}",
            "rc": i % 3,
            "sha256_before": "ab" * 32,
            "sha256_after": "cd" * 32,
            "duration": 1.25 + i,
            "tail": "output line\n" * 5,
            "paths": ["src/x.cpp"],
        },
        created="2026-11-30T05:20:00Z",
    )


def build_ledger_repo(path: Path, *, records: int, appended: int) -> dict:
    """main: ``records - appended`` records committed; the working tree appends the rest."""
    repo = new_repo(path)
    lines = [canonical_json(arm_record(i)) + b"\n" for i in range(records)]
    base = b"".join(lines[: records - appended])
    imp = Importer()
    imp.commit("refs/heads/main", [], {LED: base}, "Ledger\n")
    imp.run(repo)
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "branch", "feature")
    git(repo, "checkout", "-q", "feature")
    (repo / LED).write_bytes(b"".join(lines))
    return {"repo": repo, "records": records, "bytes": (repo / LED).stat().st_size}


def measure(
    cmd: list[str], cwd: Path, runs: int, before: Callable[[], None] = lambda: None
) -> tuple[float, list[float], int, int]:
    """(median wall s, all walls, peak RSS KiB of one run, exit code); ``before`` runs
    ahead of each run, outside the timing."""
    walls, codes = wall_times(cmd, cwd, runs, before)
    before()
    return median(walls), walls, peak_rss_kib(cmd, cwd), max(codes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", choices=["index", "ledger"])
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    out: list[str] = []
    figures: list[tuple[str, float, int]] = []  # (what, median seconds, peak RSS KiB)
    with tempfile.TemporaryDirectory(prefix="bench-ledgers-") as tmp:
        # For scale: what any command pays before it judges anything.
        med, walls, rss, code = measure([*tools, "--version"], ROOT, args.runs)
        out.append(
            f"| `tools --version` (start-up alone, for scale) | — | {med:.3f} s | "
            f"{' '.join(f'{w:.2f}' for w in walls)} | {rss / 1024:.0f} MiB | {code} |"
        )
        print(out[-1], file=sys.stderr, flush=True)
        tiny = build_ledger_repo(Path(tmp) / "tiny", records=1, appended=0)
        med, walls, rss, code = measure(
            [*tools, "ledger", "verify", "--base", "main"], tiny["repo"], args.runs
        )
        out.append(
            f"| `tools ledger verify --base main` (a 1-record ledger: the fixed cost of a gate "
            f"command) | 1 record | {med:.3f} s | {' '.join(f'{w:.2f}' for w in walls)} | "
            f"{rss / 1024:.0f} MiB | {code} |"
        )
        print(out[-1], file=sys.stderr, flush=True)
        if args.only in (None, "index"):
            for label, every in (
                ("typical: 1 commit in 10 appends", 10),
                ("worst: every commit appends", 1),
            ):
                info = build_index_repo(
                    Path(tmp) / f"index{every}",
                    base_rows=20_000 - (1000 // every),
                    commits=1000,
                    every=every,
                )
                cmd = [*tools, "index", "check", "--base", "main"]
                med, walls, rss, code = measure(cmd, info["repo"], args.runs)
                figures.append(
                    (f"`tools index check`, 20,000 rows, 1,000 commits ({label})", med, rss)
                )
                out.append(
                    f"| `tools index check --base main` ({label}) | {info['rows']:,} rows, "
                    f"{info['range']:,} commits, {info['touching']} touch the index | "
                    f"{med:.3f} s | {' '.join(f'{w:.2f}' for w in walls)} | "
                    f"{rss / 1024:.0f} MiB | {code} |"
                )
                print(out[-1], file=sys.stderr, flush=True)
        if args.only in (None, "ledger"):
            info = build_ledger_repo(Path(tmp) / "ledger", records=100_000, appended=1_000)
            repo = info["repo"]
            cmd = [*tools, "ledger", "verify", "--base", "main"]

            def cold() -> None:  # forget what earlier runs verified
                shutil.rmtree(repo / ".git" / "tools", ignore_errors=True)

            def row_for(label: str, before: Callable[[], None]) -> None:
                med, walls, rss, code = measure(cmd, repo, args.runs, before)
                figures.append((f"`tools ledger verify`, 100,000 records ({label})", med, rss))
                out.append(
                    f"| `tools ledger verify --base main` ({label}) | {info['records']:,} "
                    f"records, {info['bytes'] / 2**20:.0f} MiB | {med:.3f} s | "
                    f"{' '.join(f'{w:.2f}' for w in walls)} | {rss / 1024:.0f} MiB | {code} |"
                )
                print(out[-1], file=sys.stderr, flush=True)

            row_for("cold: nothing verified before", cold)
            # Warm: an earlier run verified the first 99,000 records (the branch's base
            # state); this run re-verifies only the 1,000 appended since.
            led = repo / LED
            full = led.read_bytes()
            cut = len(b"".join(full.splitlines(keepends=True)[:99_000]))

            def warm() -> None:
                cold()
                led.write_bytes(full[:cut])
                subprocess.run(cmd, cwd=repo, capture_output=True, check=True)
                led.write_bytes(full)

            row_for("warm: 99,000 verified before, 1,000 appended", warm)
            # The keyed path: one base record edited, so the prefix test fails (and the
            # edited record is reported twice: tampered, and altered since the base).
            led.write_bytes(full.replace(b'"arm":"a5"', b'"arm":"a6"', 1))
            row_for("cold, one base record edited: keyed base comparison", cold)
    when = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    print()
    print(
        f"Measured {when} on {os.cpu_count()} CPUs ({cpu_model()}), Python "
        f"{platform.python_version()}, {git(ROOT, '--version').strip()}; "
        f"median of {args.runs} runs."
    )
    print()
    print("| command | data | median | runs (s) | peak RSS | exit |")
    print("|---|---|---|---|---|---|")
    print("\n".join(out))
    for what, med, rss in figures:
        if "edited" in what:  # a failing run: the keyed comparison has no target of its own
            target_row(what, f"{med:.3f} s, {rss / 1024:.0f} MiB", "—", "—", None)
            continue
        target_row(what, f"{med:.3f} s", "—", "<= 1 s", med <= 1.0)
        if "ledger verify" in what:
            target_row(
                what + ", peak RSS", f"{rss / 1024:.0f} MiB", "—", "<= 300 MiB", rss / 1024 <= 300
            )


if __name__ == "__main__":
    main()
