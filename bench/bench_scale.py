"""Scale (SPEC §10): `tools index check` on a 1,000,000-row index (42 MB), clean and with one
edited row, `tools preflight` on the edited repository, and `tools ledger verify` of a ledger
holding one 100 MB record. Targets: the index check <= 3 s and <= 300 MiB peak RSS; the ledger
verify streams the record within <= 300 MiB.

    python bench/bench_scale.py [--runs 5] [--rows 1000000] [--only index|ledger]

The repositories are written with `git fast-import` under a temp dir. Figures are the median
wall time of the real CLI (a fresh process per run, start-up included) and the peak RSS of one
run (getrusage of the finished child). Paste the printed section into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ledgers import FRAME, IDX, LED, Importer, arm_record, git, new_repo  # noqa: E402
from measure import cpu_model, median, peak_rss_kib, target_row, wall_times  # noqa: E402

from tools.ledger import canonical_json, make_record  # noqa: E402

MESSAGE = (
    "{subject}\n\nBody of the change.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)


def scale_row(n: int) -> str:
    """About 42 bytes a row at a million rows; every 100th title carries an escaped pipe."""
    title = f"Issue {n} \\| part" if n % 100 == 0 else f"Issue {n}"
    return f"| #{n} | R{n} | {title} | bug |\n"


def build_index_repo(path: Path, rows: int) -> dict:
    """main: ``rows`` rows. ``feature``: one commit appends a row. ``edited``: one commit
    appends a row and edits the title of the middle row (row-edited)."""
    repo = new_repo(path)
    body = "".join(scale_row(n) for n in range(1, rows + 1))
    base = (FRAME + body).encode()
    imp = Importer()
    cfg = {".agents/protocol.yaml": b"base: main\n"}
    m = imp.commit("refs/heads/main", [], {IDX: base, **cfg}, MESSAGE.format(subject="Base"))
    added = base + scale_row(rows + 1).encode()
    imp.commit("refs/heads/feature", [m], {IDX: added}, MESSAGE.format(subject="Append a row"))
    mid = rows // 2
    old, new = scale_row(mid), scale_row(mid).replace(f"Issue {mid}", f"Issue {mid} renamed")
    edited = added.replace(old.encode(), new.encode(), 1)
    imp.commit("refs/heads/edited", [m], {IDX: edited}, MESSAGE.format(subject="Edit a row"))
    imp.run(repo)
    git(repo, "checkout", "-q", "-f", "feature")
    return {"repo": repo, "bytes": len(added), "rows": rows + 1}


def build_ledger_repo(path: Path, megabytes: int) -> dict:
    """main: 1,000 records. The working tree appends one record whose payload is a
    ``megabytes`` MB string, then one ordinary record."""
    repo = new_repo(path)
    lines = [canonical_json(arm_record(i)) + b"\n" for i in range(1000)]
    base = b"".join(lines)
    imp = Importer()
    imp.commit("refs/heads/main", [], {LED: base}, "Ledger\n")
    imp.run(repo)
    git(repo, "checkout", "-q", "-f", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    unit = 'output line of a long run \\ "quoted" é\n'
    big = make_record(
        "mutation-run",
        {
            "log": unit
            * (megabytes * 1_000_000 // (len(json.dumps(unit, ensure_ascii=False)) - 2)),
            "rc": 0,
        },
        created="2026-12-01T10:00:00Z",
    )
    big_line = canonical_json(big) + b"\n"
    (repo / LED).write_bytes(base + big_line + canonical_json(arm_record(5000)) + b"\n")
    return {"repo": repo, "bytes": (repo / LED).stat().st_size, "record": len(big_line)}


def loadavg() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--megabytes", type=int, default=100)
    ap.add_argument("--only", choices=["index", "ledger"])
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    out: list[str] = []
    targets: list[tuple[str, float, int, float | None, float | None]] = []

    def measure(label: str, data: str, cmd: list[str], repo: Path, before=lambda: None, runs=0):
        load0 = loadavg()
        walls, codes = wall_times(cmd, repo, runs or args.runs, before)
        before()
        rss = peak_rss_kib(cmd, repo)
        load1 = loadavg()
        med = median(walls)
        out.append(
            f"| `{' '.join(cmd[2:])}` ({label}) | {data} | {med:.3f} s | "
            f"{' '.join(f'{w:.2f}' for w in walls)} | {rss / 1024:.0f} MiB | "
            f"{','.join(map(str, sorted(codes)))} | {load0:.2f} / {load1:.2f} |"
        )
        print(out[-1], file=sys.stderr, flush=True)
        return med, rss

    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        if args.only in (None, "index"):
            info = build_index_repo(Path(tmp) / "index", args.rows)
            repo = info["repo"]
            data = f"{info['rows']:,} rows, {info['bytes'] / 1e6:.0f} MB"
            check = [*tools, "index", "check", "--base", "main"]
            med, rss = measure("one row appended", data, check, repo)
            targets.append(("`tools index check`, 1,000,000 rows, one appended", med, rss, 3, 300))
            git(repo, "checkout", "-q", "-f", "edited")
            med, rss = measure("one row edited", data, check, repo)
            targets.append(("`tools index check`, 1,000,000 rows, one edited", med, rss, 3, 300))
            pre = [*tools, "preflight", "--base", "main"]
            # Every gate, the links gate's markdown parse of the 42 MB file included: slow, so
            # fewer runs.
            med, rss = measure(
                "one row edited, every gate", data, pre, repo, runs=min(3, args.runs)
            )
            targets.append(
                ("`tools preflight`, 1,000,000-row index, one edited", med, rss, None, None)
            )
        if args.only in (None, "ledger"):
            info = build_ledger_repo(Path(tmp) / "ledger", args.megabytes)
            repo = info["repo"]
            data = f"1,002 records, one of {info['record'] / 1e6:.0f} MB"

            def cold() -> None:  # forget what earlier runs verified
                shutil.rmtree(repo / ".git" / "tools", ignore_errors=True)

            verify = [*tools, "ledger", "verify", "--base", "main"]
            med, rss = measure("cold: nothing verified before", data, verify, repo, cold)
            targets.append(("`tools ledger verify`, a 100 MB record (cold)", med, rss, None, 300))
            led = repo / LED
            full = led.read_bytes()
            at = full.index(b'"log":"') + 100
            tampered = full[:at] + (b"X" if full[at : at + 1] != b"X" else b"Y") + full[at + 1 :]
            led.write_bytes(tampered)
            del full, tampered
            med, rss = measure("cold, the large record tampered", data, verify, repo, cold)
            targets.append(("`tools ledger verify`, a 100 MB record tampered", med, rss, None, 300))
    when = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    print()
    print(
        f"Measured {when} on {os.cpu_count()} CPUs ({cpu_model()}), Python "
        f"{platform.python_version()}, {git(ROOT, '--version').strip()}; "
        f"median of {args.runs} runs; peak RSS of one more run."
    )
    print()
    print("| command | data | median | runs (s) | peak RSS | exit | load avg before / after |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(out))
    for what, med, rss, max_s, max_mib in targets:
        if max_s is None:
            target_row(what, f"{med:.3f} s", "—", "—", None)
        else:
            target_row(what, f"{med:.3f} s", "—", f"<= {max_s} s", med <= max_s)
        if max_mib is not None:
            mib = rss / 1024
            target_row(
                what + ", peak RSS", f"{mib:.0f} MiB", "—", f"<= {max_mib} MiB", mib <= max_mib
            )


if __name__ == "__main__":
    main()
