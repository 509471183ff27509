"""The C stripper against gcc's own lexer (SPEC §10, "The C stripper is a C lexer"): on
10,000 generated adversarial files and on real C/C++ trees, the characters and the lines
where gcc finds code and the stripper does not, or the other way round.

    python bench/bench_cstrip_differential.py [--files 10000] [--seed 0] [--tree DIR]...

``--tree``: a real tree to run whole (every regular file in it, binaries aside); by default
/usr/include, and the CUDA toolkit's headers (/usr/local/cuda/include) where installed.
How gcc is asked, what is compared and what is generated: tests/test_cstrip_differential.py,
whose pytest run is a sample of this one. Target: no difference at all. Without g++ it
prints why and exits 0 (nothing measured).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, target_row  # noqa: E402

from tests.test_cstrip_differential import (  # noqa: E402
    GXX,
    Tally,
    differential,
    generated,
    tree_files,
    tree_sources,
)

TREES = [Path("/usr/include"), Path("/usr/local/cuda/include")]


def row(name: str, tally: Tally, seconds: float, skipped: int = 0) -> None:
    print(
        f"| {name} | {tally.files:,} | {tally.lines:,} | {tally.chars:,} | {tally.line_diffs} "
        f"| {tally.char_diffs} | {tally.unplaced} | {tally.dropped_raw:,} | {skipped} "
        f"| {seconds:.0f} |"
    )
    for example in tally.examples:
        print(f"  difference: {example}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000, help="generated files")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first generated file")
    ap.add_argument("--tree", type=Path, action="append", help="a real tree, run whole")
    args = ap.parse_args()
    if GXX is None:
        print("g++ is not installed: no compiler to compare with, nothing measured")
        target_row("C stripper against gcc's lexer", "not measured (no g++)", "—", "0", None)
        return
    trees = args.tree or [t for t in TREES if t.is_dir()]
    gcc = subprocess.run([GXX, "--version"], capture_output=True, text=True).stdout
    print(
        f"# {cpu_model()}, nproc {os.cpu_count()}, Python {platform.python_version()}, "
        f"{gcc.splitlines()[0]}, {time.strftime('%Y-%m-%d', time.gmtime())}"
    )
    print(
        "| corpus | files | lines | bytes | lines that differ | characters that differ "
        "| gcc tokens not placed | raw strings gcc dropped | files skipped | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    results: list[tuple[str, Tally]] = []
    start = time.perf_counter()
    tally = differential(generated(args.files, seed=args.seed))
    row(
        f"generated (seeds {args.seed}…{args.seed + args.files - 1})",
        tally,
        time.perf_counter() - start,
    )
    results.append(("generated", tally))
    for tree in trees:
        skipped: list[str] = []
        start = time.perf_counter()
        tally = differential(tree_sources(tree_files(tree), skipped))
        row(f"{tree} (whole)", tally, time.perf_counter() - start, len(skipped))
        results.append((str(tree), tally))
    print(
        "\nlines: as gcc counts them; bytes: the files' sizes; files skipped: binary (a NUL "
        "byte) or holding gcc's record marker `{P:`; a difference is listed on stderr."
    )
    for name, tally in results:
        target_row(
            f"C stripper against gcc's lexer: {name} ({tally.files:,} files, "
            f"{tally.lines:,} lines)",
            f"{tally.line_diffs} lines, {tally.char_diffs} characters differ",
            "g++ -E -fdebug-cpp",
            "0 differences",
            tally.clean,
        )


if __name__ == "__main__":
    main()
