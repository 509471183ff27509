"""Hostile input: how long each parser family takes on its 1 MiB adversarial inputs.

The inputs are tests/hostile.py's (the tests run them under a generous guard); this prints
the median of several runs of each, for BENCHMARKS.md. Target (SPEC §8): ≤ 1 s each. Then
the documents that must be refused (an alias bomb, 100,000 levels of nesting in YAML and JSON):
target (SPEC §10) ≤ 0.1 s each.

    python bench/bench_hostile.py [--runs 5] [--family NAME]

``--family``: only that family's inputs (and no refusals), to re-measure one family.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from measure import cpu_model, median, target_row  # noqa: E402

from tests.hostile import cases, forget, refusals  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--family", default=None, help="only this family's inputs")
    args = ap.parse_args()
    chosen = [c for c in cases() if args.family is None or c.family == args.family]
    print(f"# {cpu_model()}, Python {platform.python_version()}, median of {args.runs} runs")
    print("| family | input (1 MiB) | median ms | max ms |")
    print("|---|---|---|---|")
    worst = 0.0
    for case in chosen:
        times = []
        for _ in range(args.runs):
            forget()
            start = time.perf_counter()
            case.judge(case.data)
            times.append(time.perf_counter() - start)
        worst = max(worst, max(times))
        ms = [t * 1000 for t in times]
        print(f"| {case.family} | {case.name} | {median(ms):.0f} | {max(ms):.0f} |")
    print(f"\nslowest single run: {worst * 1000:.0f} ms (target ≤ 1000 ms)")
    target_row(
        f"{args.family or 'every parser family'} on its 1 MiB hostile inputs "
        f"({len(chosen)} inputs)",
        f"slowest run {worst * 1000:.0f} ms",
        "—",
        "<= 1 s each",
        worst <= 1.0,
    )
    if args.family is not None:
        return
    print("\n| refused | input | median ms | max ms |")
    print("|---|---|---|---|")
    slowest = 0.0
    for case in refusals():
        case.judge(case.data)  # once untimed: the modules it imports load here
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            case.judge(case.data)
            times.append(time.perf_counter() - start)
        slowest = max(slowest, max(times))
        ms = [t * 1000 for t in times]
        print(f"| {case.family} | {case.name} | {median(ms):.1f} | {max(ms):.1f} |")
    print(f"\nslowest refusal: {slowest * 1000:.1f} ms (target ≤ 100 ms)")
    target_row(
        f"alias bomb and 100,000-level YAML/JSON refused ({len(refusals())} inputs)",
        f"slowest run {slowest * 1000:.1f} ms",
        "—",
        "<= 0.1 s each",
        slowest <= 0.1,
    )


if __name__ == "__main__":
    main()
