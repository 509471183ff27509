"""Top-p at batch 64 x vocab 154,856: stock vs split vs the binary64 reference, and the gate.

Each method runs in its own process (so its peak RSS is its own): logits are drawn as the
plan draws them (seed 42, ``randn`` fp32, p = float32(0.95)), then the method runs ``--runs``
times; the median wall time is reported with the process's peak RSS and its RSS before the
first run. Then ``tools numerics topp-count numerics/topp-plan.yaml --no-record`` (the whole
gate, whose largest case is this shape) is timed end to end with its peak RSS.

Targets (product contract, non-functional section): split faster than stock; the top-p gate at
batch 64 x vocab 154,856 within 2 GiB peak RSS.

    python bench/bench_topp.py [--runs 5] [--gate-runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BATCH, VOCAB, SEED, P = 64, 154856, 42, 0.949999988079071
sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import cpu_model, median, peak_rss_kib, target_row, wall_times  # noqa: E402

METHODS = ("stock", "split", "binary64")


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def worker(method: str, runs: int) -> None:
    sys.path.insert(0, str(ROOT))
    import torch

    from kernels.sampling import top_p_split, top_p_stock
    from tools.numerics.topp import reference_count, stable_order

    logits = torch.randn(BATCH, VOCAB, generator=torch.Generator().manual_seed(SEED))
    p = torch.full((BATCH,), P, dtype=torch.float32)
    x = logits.numpy()

    def binary64() -> list[int]:
        return [reference_count(x[r], P, stable_order(x[r]))[0] for r in range(BATCH)]

    fn = {
        "stock": lambda: top_p_stock(logits, p),
        "split": lambda: top_p_split(logits, p),
        "binary64": binary64,
    }[method]
    before = _rss_kib()
    times, counts = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        counts = out if isinstance(out, list) else torch.isfinite(out).sum(1).tolist()
        del out
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "method": method,
                "times": times,
                "rss_before_kib": before,
                "peak_rss_kib": peak,
                "kept": counts,
            }
        )
    )


def run_method(method: str, runs: int) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--worker", method, "--runs", str(runs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_gate(runs: int) -> tuple[float, int, int]:
    cmd = [
        sys.executable,
        "-m",
        "tools",
        "numerics",
        "topp-count",
        "numerics/topp-plan.yaml",
        "--no-record",
    ]
    walls, codes = wall_times(cmd, ROOT, runs)
    return median(walls), peak_rss_kib(cmd, ROOT), max(codes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--gate-runs", type=int, default=3)
    ap.add_argument("--worker", choices=METHODS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.runs)
        return
    print(f"machine: nproc {os.cpu_count()}, {cpu_model()}; python {platform.python_version()}")
    print(f"shape: batch {BATCH} x vocab {VOCAB}, seed {SEED}, p {P}; median of {args.runs}")
    results = {m: run_method(m, args.runs) for m in METHODS}
    med = {m: statistics.median(r["times"]) for m, r in results.items()}
    print("| method | median wall (s) | runs (s) | peak RSS (MiB) | RSS before (MiB) |")
    print("|---|---|---|---|---|")
    for m, r in results.items():
        runs = ", ".join(f"{t:.3f}" for t in r["times"])
        print(
            f"| {m} | {med[m]:.3f} | {runs} | {r['peak_rss_kib'] / 1024:.0f} | "
            f"{r['rss_before_kib'] / 1024:.0f} |"
        )
    print(
        f"stock / split = {med['stock'] / med['split']:.2f}x "
        f"(split is {'faster' if med['split'] < med['stock'] else 'NOT faster'})"
    )
    kept = {m: r["kept"] for m, r in results.items()}
    d = max(abs(a - b) for a, b in zip(kept["stock"], kept["split"], strict=True))
    print(
        f"kept counts: max |stock - split| = {d}; max |binary64 - stock| = "
        f"{max(abs(a - b) for a, b in zip(kept['binary64'], kept['stock'], strict=True))}"
    )
    wall, rss, code = run_gate(args.gate_runs)
    print(
        f"gate: tools numerics topp-count numerics/topp-plan.yaml --no-record: median "
        f"{wall:.2f} s of {args.gate_runs}, peak RSS {rss / 1024:.0f} MiB, exit {code}"
    )
    target_row(
        "top-p: split against stock, batch 64 x vocab 154,856",
        f"split {med['split']:.3f} s",
        f"stock {med['stock']:.3f} s",
        "split faster",
        med["split"] < med["stock"],
    )
    target_row(
        "`tools numerics topp-count numerics/topp-plan.yaml`, peak RSS",
        f"{rss / 1024:.0f} MiB ({wall:.2f} s)",
        "—",
        "<= 2 GiB",
        rss / 1024 <= 2048 and code == 0,
    )


if __name__ == "__main__":
    main()
