"""Hostile input: how long each parser family takes on its 1 MiB adversarial inputs.

The inputs are tests/hostile.py's (the tests run them under a generous guard); this prints
the median of several runs of each, for BENCHMARKS.md. Target (SPEC §8): ≤ 1 s each. Then
the documents that must be refused (an alias bomb, 100,000 levels of nesting in YAML and JSON):
target (SPEC §10) ≤ 0.1 s each.

    python bench/bench_hostile.py [--runs 5] [--family NAME]...

``--family``: only that family's inputs (and no refusals), to re-measure one family; given
several times, those families. The families of SPEC §10's linear rules: ``config patterns``
(a backtracking bomb in each kind of config regex, and the densest RE2 program allowed),
``ai-authorship`` (12,000 Assisted-by against 12,000 Co-authored-by lines), ``sections`` (a
spec of 260,000 headings) and ``tables`` (a matrix table of 100,000 rows).
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
from tests.test_hostile_inputs import stripper_cases  # noqa: E402  (the C stripper's family)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--family", action="append", default=None, help="only this family's inputs (repeatable)"
    )
    args = ap.parse_args()
    families = None if args.family is None else ", ".join(args.family)
    every = cases() + stripper_cases()
    chosen = [c for c in every if args.family is None or c.family in args.family]
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
        f"{families or 'every parser family'} on its 1 MiB hostile inputs ({len(chosen)} inputs)",
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
