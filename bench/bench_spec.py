"""The spec gate: `tools spec check` (and `--staged`) over 20 specs with one evidence block
each, backed by a 100,000-record ledger; `tools spec render` of a block already in place; and
`tools ledger verify` of the same ledger for scale. No contract target of its own: the spec
gate runs inside `tools preflight --staged` (≤ 1 s, ≤ 200 MiB on the large repository).

    python bench/bench_spec.py [--runs 5] [--records 100000]

Figures are the median wall time of the real CLI (a fresh process per run, start-up
included) and the peak RSS of one run. Paste the printed section into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, median, peak_rss_kib, wall_times  # noqa: E402
from synth import fast_import  # noqa: E402

from tools import evidence  # noqa: E402
from tools.ledger import canonical_json, make_record  # noqa: E402

CREATED = "2026-11-30T05:20:00Z"
INDEX = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n" + "".join(
    f"| #{n} | R{n} | Issue {n} | bug |\n" for n in range(1, 201)
)
SPECS = 20
ARMS = 4


def arm(plan: str, name: str, i: int) -> dict:
    sha = f"{i:064x}"
    return make_record(
        "mutation-arm",
        {
            "plan": plan,
            "plan_sha256": "b" * 64,
            "base": "a" * 40,
            "arm": name,
            "mutation": "none" if name == "control" else f"revert src/f{i}.c to HEAD~1",
            "mutations": [],
            "overlay": [],
            "targets": [{"path": f"src/f{i}.c", "sha256_before": sha, "sha256_after": sha}],
            "applied": True,
            "numstat": [{"path": f"src/f{i}.c", "added": i % 7, "deleted": i % 3}],
            "build": "make",
            "test": "make test",
            "compile_rc": 0,
            "run_rc": i % 2,
            "run_rcs": [i % 2],
            "verdict": "RED" if i % 2 else "GREEN",
            "expect": None,
            "restored": True,
        },
        created=CREATED,
    )


def build(path: Path, records: int) -> Path:
    """Specs 0..19 each with the block of plan k; the ledger holds their runs and arms among
    ``records`` records in all (the rest are arms of plans no spec names)."""
    lines: list[bytes] = []
    specs: dict[str, bytes] = {}
    filler = records - SPECS * (ARMS + 1)
    for i in range(filler):
        lines.append(canonical_json(arm(f"plans/other{i % 500}.yaml", f"a{i}", i)) + b"\n")
    for k in range(SPECS):
        plan = f"plans/p{k}.yaml"
        arms = [arm(plan, "control" if j == 0 else f"M{j}", k * 10 + j) for j in range(ARMS)]
        run = make_record(
            "mutation-run",
            {
                "plan": plan,
                "plan_sha256": "b" * 64,
                "base": "a" * 40,
                "spec": f"specs/s{k}.md",
                "arms": [a["id"] for a in arms],
                "verdicts": {a["arm"]: a["verdict"] for a in arms},
                "overlay": [],
            },
            created=CREATED,
        )
        at = (k + 1) * filler // (SPECS + 1)  # spread through the ledger
        lines[at:at] = [canonical_json(r) + b"\n" for r in (*arms, run)]
        text = f"# Spec {k}\n\n## Owed\n\n- #{k + 1} and #{k + 2}.\n\n## Now\n\nState.\n"
        lookup = {r["id"]: r for r in (*arms, run)}.get
        specs[f"specs/s{k}.md"] = evidence.render_into(text, run, lookup, where="s").encode()
    files = {
        ".agents/issue-index.md": INDEX.encode(),
        ".agents/ledger.jsonl": b"".join(lines),
        **specs,
    }
    fast_import(path, iter([("Specs and ledger\n", files)]))
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--records", type=int, default=100_000)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-spec-") as tmp:
        repo = build(Path(tmp) / "repo", args.records)
        size = (repo / ".agents/ledger.jsonl").stat().st_size
        data = f"{SPECS} specs, {args.records:,} records ({size / 2**20:.0f} MiB)"
        rid = evidence.find_blocks((repo / "specs/s7.md").read_text())[0].id
        for label, cmd in (
            ("`tools --version` (start-up alone, for scale)", [*tools, "--version"]),
            ("`tools spec check`", [*tools, "spec", "check"]),
            ("`tools spec check --staged`", [*tools, "spec", "check", "--staged"]),
            ("`tools spec render specs/s7.md --id …` (unchanged)", [
                *tools, "spec", "render", "specs/s7.md", "--id", rid]),
            ("`tools ledger verify --base HEAD` (cold cache)", [
                *tools, "ledger", "verify", "--base", "HEAD"]),
        ):  # fmt: skip
            cold = (lambda: None) if "verify" not in cmd else (lambda: _forget(repo))
            walls, codes = wall_times(cmd, repo, args.runs, cold)
            cold()
            rss = peak_rss_kib(cmd, repo)
            out.append(
                f"| {label} | {data} | {median(walls):.3f} s | "
                f"{' '.join(f'{w:.2f}' for w in walls)} | {rss / 1024:.0f} MiB | {max(codes)} |"
            )
            print(out[-1], file=sys.stderr, flush=True)
    when = subprocess.run(["date"], capture_output=True, text=True).stdout.strip()
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print()
    print(
        f"Measured {when} on {os.cpu_count()} CPUs ({cpu_model()}), Python "
        f"{platform.python_version()}, {git_version.strip()}; median of {args.runs} runs."
    )
    print()
    print("| command | data | median | runs (s) | peak RSS | exit |")
    print("|---|---|---|---|---|---|")
    print("\n".join(out))


def _forget(repo: Path) -> None:
    """Drop what earlier `ledger verify` runs remembered, so each run verifies everything."""
    import shutil

    shutil.rmtree(repo / ".git" / "tools", ignore_errors=True)


if __name__ == "__main__":
    main()
