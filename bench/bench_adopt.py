"""Adoption: ``tools init --adopt`` on a repository of 1,000+ commits of agent history, and what
the findings-baseline match adds to ``tools preflight --staged`` on the 20,000-file repository.

Targets (issue 15): ``init --adopt`` on 1,000+ commits in under 30 s; the baseline match adds
no more than 10 % to ``tools preflight --staged`` on the 20,000-file benchmark.

    python bench/bench_adopt.py [--commits 1200] [--runs 3] [--files 20000] [--findings 400]
    python bench/bench_adopt.py --repo CLONE [--runs 3]    # adoption alone, on a real clone
    python bench/bench_adopt.py --habits [--runs 3]        # adoption alone, the learning history

``--repo`` copies a clone (with its checkout) once per run and times ``tools init --adopt``
there: the model repository where a clone is at hand. ``--habits`` builds the history of
``build(..., habits=True)`` (co-changing docs, a matrix, a device library, a bot) instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from bench_preflight import _commits, _every_gate  # noqa: E402
from measure import interleaved, median, print_machine, target_row  # noqa: E402
from synth import fast_import  # noqa: E402

from tests.adoption_history import build  # noqa: E402


def _adopt_times(
    tmp: Path, commits: int, runs: int, origin: Path | None = None, *, habits: bool = False
) -> tuple[list[float], set[int], str]:
    """Each run on a fresh copy of the history (adoption writes files), copying untimed."""
    # The console script, not `python -m tools`: a repository may have a tools/ folder of its
    # own (the model repository does), which `-m` would import from the working directory.
    script = Path(sys.executable).with_name("tools")
    tools = [str(script)] if script.exists() else [sys.executable, "-m", "tools"]
    if origin is None:
        origin = build(tmp / "history", commits, habits=habits)
    walls: list[float] = []
    codes: set[int] = set()
    out = ""
    for n in range(runs):
        repo = tmp / f"run{n}"
        shutil.copytree(origin, repo, symlinks=True)
        start = time.perf_counter()
        proc = subprocess.run([*tools, "init", "--adopt"], cwd=repo, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        codes.add(proc.returncode)
        out = proc.stdout
        shutil.rmtree(repo)
    return walls, codes, out


def _with_findings(repo: Path, findings: int) -> None:
    """Docs whose links are broken, committed, so preflight --staged has findings to match."""
    docs = repo / "docs/debt"
    docs.mkdir(parents=True, exist_ok=True)
    per_file = 20
    for f in range(findings // per_file):
        lines = [f"# Debt {f}", ""]
        lines += [f"See [note {i}](gone-{f}-{i}.md)." for i in range(per_file)]
        (docs / f"d{f:03d}.md").write_text("\n".join(lines) + "\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m",
         "Add docs with debt", "-m", "Body.", "-m", "FOLLOWING_AGENTS_PROTOCOL", "-m",
         "Following-Agents-Protocol: true\nAI-Assisted: false"],
        cwd=repo, check=True,
    )  # fmt: skip


def _adoption_only(repo: Path | None, commits: int, runs: int, *, habits: bool) -> None:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        origin = repo.resolve() if repo is not None else None
        walls, codes, out = _adopt_times(Path(tmp_name), commits, runs, origin, habits=habits)
    print_machine(load_before, os.getloadavg()[0])
    what = f"the clone {repo}" if repo is not None else f"{commits} commits (habits history)"
    print(f"history: {what}")
    print(
        f"tools init --adopt: median {median(walls):.2f} s of {runs} "
        f"(spread {min(walls):.2f}-{max(walls):.2f}), exit codes {sorted(codes)}"
    )
    print("its output:\n" + out)
    adopt = median(walls)
    target_row(f"`tools init --adopt`, {what}", f"{adopt:.2f} s", "—", "< 30 s", adopt < 30)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=1200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--preflight-commits", type=int, default=10_000)
    ap.add_argument("--preflight-runs", type=int, default=7)
    ap.add_argument("--findings", type=int, default=400)
    ap.add_argument("--repo", type=Path, help="time adoption alone, on copies of this clone")
    ap.add_argument("--habits", action="store_true", help="adoption alone, the habits history")
    args = ap.parse_args()
    if args.repo is not None or args.habits:
        _adoption_only(args.repo, args.commits, args.runs, habits=args.habits)
        return
    tools = [sys.executable, "-m", "tools"]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        walls, codes, out = _adopt_times(tmp, args.commits, args.runs)

        repo = tmp / "synth"
        fast_import(repo, _commits(args.files, args.preflight_commits))
        subprocess.run(["git", "branch", "base", "HEAD~50"], cwd=repo, check=True)
        _every_gate(repo)
        _with_findings(repo, args.findings)
        (repo / "src/d000/f00000.cc").write_text("// staged change\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        baseline = repo / ".agents/baselines/findings.json"
        subprocess.run(
            [*tools, "baseline", "write", "--add"], cwd=repo, check=True, capture_output=True
        )
        recorded = baseline.read_bytes()
        git = ["git", "-C", str(repo)]
        # The same tree judged twice: with its findings baseline (each finding matched, debt)
        # and with it moved aside (the same findings, unmatched). The difference is the match.
        aside = tmp / "findings.json"
        cmds = {
            "with baseline": [*tools, "preflight", "--staged"],
        }
        with_rows = []
        without_rows = []
        # --staged judges the index: the baseline is staged, or removed from it (untimed).
        for _ in range(args.preflight_runs):
            baseline.write_bytes(recorded)
            subprocess.run([*git, "add", str(baseline)], check=True)
            with_rows.append(interleaved(cmds, repo, 1)["with baseline"])
            subprocess.run([*git, "rm", "-q", "--cached", str(baseline)], check=True)
            shutil.move(baseline, aside)
            without_rows.append(interleaved(cmds, repo, 1)["with baseline"])
            shutil.move(aside, baseline)
        load_after = os.getloadavg()[0]
    print_machine(load_before, load_after)
    print(f"history: {args.commits} commits of tests/adoption_history.py (merges included)")
    adopt = median(walls)
    print(
        f"tools init --adopt: median {adopt:.2f} s of {args.runs} "
        f"(spread {min(walls):.2f}-{max(walls):.2f}), exit codes {sorted(codes)}"
    )
    print("its output:\n" + out)
    w = median([r[0] for r in with_rows])
    wo = median([r[0] for r in without_rows])
    w_codes = sorted({c for r in with_rows for c in r[2]})
    wo_codes = sorted({c for r in without_rows for c in r[2]})
    print(
        f"synthetic repo: {args.files} files, {args.preflight_commits} commits, "
        f"{args.findings} link findings"
    )
    print(
        f"tools preflight --staged with the findings baseline ({args.findings} entries): "
        f"median {w * 1000:.0f} ms of {args.preflight_runs}, exit codes {w_codes}"
    )
    print(
        f"tools preflight --staged without it (same findings, unmatched): "
        f"median {wo * 1000:.0f} ms, exit codes {wo_codes}"
    )
    added = (w - wo) / wo
    target_row(
        f"`tools init --adopt`, {args.commits} commits of agent history",
        f"{adopt:.2f} s",
        "—",
        "< 30 s",
        adopt < 30,
    )
    target_row(
        f"`tools preflight --staged`, {args.files} files: the findings-baseline match "
        f"({args.findings} entries)",
        f"{w * 1000:.0f} ms = {added:+.1%}",
        f"without a baseline {wo * 1000:.0f} ms",
        "<= +10 %",
        added <= 0.10,
    )


if __name__ == "__main__":
    main()
