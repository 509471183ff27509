"""Regenerate every figure of BENCHMARKS.md in one command.

    python bench/run_all.py [--out BENCHMARKS.md]

Runs each benchmark of this folder in turn (a fresh process each, the real CLI in fresh
processes inside), keeps what each printed, and writes BENCHMARKS.md: a summary of every
target (the figure, the reference it is set beside, the target, met or MISSED), then each
benchmark's own report verbatim. A benchmark that fails is written down as failed, never
left out. Byte-code is written as on a user's machine (``PYTHONDONTWRITEBYTECODE`` is
dropped), and the load average is recorded around each benchmark.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from measure import cpu_model  # noqa: E402

# (name, script and arguments, what it measures). Order: cheapest first.
BENCHES: list[tuple[str, list[str], str]] = [
    (
        "CLI start, installed",
        ["bench_startup.py", "--runs", "15"],
        "`tools --version`, `--help` and a gate command in a venv of its own with the package "
        "installed by pip, beside `python -c pass` and the import of typer alone.",
    ),
    (
        "CLI start and preflight --staged",
        ["bench_preflight.py", "--runs", "7"],
        "`tools preflight --staged` on a 20,000-file / 10,000-commit repository with every gate "
        "configured (a docs rule, the default ratchet with a baseline, a spec, markdown with "
        "links, an index of 200 rows, a ledger of 1,000 records), beside `git status`; CLI "
        "start; a gate command's fixed cost.",
    ),
    (
        "Range gates that read messages",
        ["bench_range_gates.py", "--runs", "5"],
        "`tools trailers check` and `tools style check` over 5,000 commits, beside one `git log` "
        "of the same messages (and one that also reads paths).",
    ),
    (
        "Range gates that read paths",
        ["bench_docs.py", "--runs", "5"],
        "`tools docs check` (and `tools index check`, the fixed cost of a range gate that reads "
        "paths) over 5,000 commits, beside `git log --name-status` of the same range.",
    ),
    (
        "Ratchet counting",
        ["bench_ratchet.py", "--runs", "7"],
        "`tools ratchet check --rev HEAD` over a 20,000-file C++ tree, beside `git grep -c` of "
        "the same patterns over the same files.",
    ),
    (
        "Ratchet counting, hostile tree",
        ["bench_ratchet.py", "--runs", "5", "--hostile"],
        "The same with the bucket tokens in a comment of every file (every file read and "
        "stripped).",
    ),
    (
        "Spec gate",
        ["bench_spec.py", "--runs", "5"],
        "`tools spec check` over 20 specs whose evidence blocks name records of a 100,000-record "
        "ledger (no target of its own: it runs inside preflight).",
    ),
    (
        "Links",
        ["bench_links.py", "--runs", "7"],
        "`tools links check` over this repository and over a generated 2,000-file documentation "
        "tree (every link resolves), beside a baseline checkout when `--baseline DIR` is given.",
    ),
    (
        "Markdown parsers",
        ["bench_markdown_parsers.py", "--runs", "3"],
        "pyromark, cmarkgfm and markdown-it-py (capped at 10 s an input) on the 1 MiB hostile "
        "markdown of tests/hostile.py, beside the whole read of tools.markdown.parse.",
    ),
    (
        "C stripper against gcc",
        ["bench_cstrip_differential.py", "--files", "10000"],
        "Where gcc's lexer (`g++ -E -fdebug-cpp`) finds code and `strip: c` leaves it, on 10,000 "
        "generated adversarial files and the whole of /usr/include (and the CUDA headers).",
    ),
    (
        "Hostile input",
        ["bench_hostile.py", "--runs", "5"],
        "Every parser family on its 1 MiB adversarial inputs (tests/hostile.py), memo caches "
        "cleared before each run.",
    ),
    (
        "Output formats",
        ["bench_formats.py", "--runs", "7"],
        "`tools conflicts check` with 15,000 findings in each `--format`; what importing rich "
        "would cost at start-up (no target).",
    ),
    (
        "Mutation runs (worktrees on disk)",
        ["bench_mutate.py", "--runs", "3"],
        "`-j 4` with four arms that sleep 2 s; the per-arm worktree overhead on a 20,000-file "
        "repository, worktrees under the default temp dir.",
    ),
    (
        "Mutation runs (worktrees on tmpfs)",
        ["bench_mutate.py", "--runs", "3", "--tmpdir", "/dev/shm"],
        "The same with `TMPDIR=/dev/shm`.",
    ),
    (
        "Ledgers",
        ["bench_ledgers.py", "--runs", "5"],
        "`tools index check` over 1,000 commits of a 20,000-row index; `tools ledger verify` "
        "of 100,000 records, cold and warm.",
    ),
    (
        "Scale",
        ["bench_scale.py", "--runs", "5"],
        "`tools index check` on a 1,000,000-row index (one row appended; one row edited), "
        "`tools preflight` on the edited repository, `tools ledger verify` of a ledger holding "
        "one 100 MB record (clean; tampered).",
    ),
    (
        "Trust, second pass",
        ["bench_trust.py", "--runs", "5"],
        "How fast the read bounds refuse a hostile file: a findings baseline of 1,000,000 "
        "entries (its size; its node count), committed links to /dev/zero.",
    ),
    (
        "Adoption",
        ["bench_adopt.py", "--runs", "3", "--preflight-runs", "7"],
        "`tools init --adopt` on 1,200 commits of agent history (tests/adoption_history.py); "
        "what matching a 400-entry findings baseline adds to `tools preflight --staged` on "
        "the 20,000-file repository (the same tree with the baseline staged, and without it).",
    ),
    (
        "Merges gate",
        ["bench_merges.py", "--runs", "7"],
        "`tools merges check` over a 1,000-commit range with 47 merges of the base (content "
        "merges of both sides, all clean), beside one `git merge-tree --write-tree` per merge; "
        "what the gate adds to `tools preflight --staged` (it judges nothing there).",
    ),
    (
        "Verdict cache",
        ["bench_cache.py", "--sizes", "1000", "20000", "--runs", "11"],
        "A re-check of a branch after one new commit with the message gates' verdict cache "
        "warm (SPEC §12), beside the single-commit run, on 1,000- and 20,000-commit branches.",
    ),
    (
        "SPEC 12 ratios",
        ["bench_ratios.py", "--runs", "7"],
        "Every ratio of SPEC §12 in one run, each gate beside the git or the peer it reads "
        "(the model repository's rows need --model and --model-config; see the script).",
    ),
    (
        "Numerics: the top-p kept-count gate",
        ["bench_topp.py", "--runs", "5", "--gate-runs", "3"],
        "stock, split and the binary64 reference at batch 64 x vocab 154,856; the whole "
        "`tools numerics topp-count` plan (needs torch).",
    ),
]

TARGET = "TARGET\t"

# Analysis written beside a benchmark's figures (not figures: the reading of them).
NOTES: dict[str, str] = {
    "Range gates that read messages": (
        "Reading the misses: 4x the messages-only `git log` (first row) is less than the "
        "CLI's start alone (`tools --help`, last row) plus a gate command's imports and the "
        "range read, before any message is judged; judging the 5,000 messages is the rest. The "
        "gates read no changed paths (messages only, one `git log`), and against the `git log` "
        "that also reads paths they stay under 3x. A verdict cache per commit would not reach "
        "4x either: start-up, imports and the log alone exceed it on this machine."
    ),
    "Ratchet counting, hostile tree": (
        "Every file holds the bucket tokens in a comment, so git's literal prefilter can skip "
        "none: every file is read and its comments and strings stripped in Python before "
        "counting, where `git grep` counts the raw lines (comments included, which the ratchet "
        "must not). The ordinary tree, where the prefilter works, meets the target."
    ),
}


@dataclass
class Result:
    name: str
    argv: list[str]
    what: str
    code: int | None = None
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    output: str = ""
    skipped: str | None = None
    targets: list[list[str]] = field(default_factory=list)


def split_targets(output: str) -> tuple[str, list[list[str]]]:
    """The report without its TARGET rows, and the rows (what, figure, reference, target,
    verdict)."""
    kept, rows = [], []
    for line in output.splitlines():
        if line.startswith(TARGET):
            cells = line.split("\t")[1:]
            rows.append((cells + ["?"] * 5)[:5])
        else:
            kept.append(line)
    return "\n".join(kept).strip("\n"), rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(results: list[Result], header: dict[str, str]) -> str:
    """BENCHMARKS.md from the results (pure: the tests call it with made-up results)."""
    out = [
        "# Benchmarks",
        "",
        "Every figure below was written by `python bench/run_all.py`, which runs each benchmark "
        "of `bench/` in turn (the real CLI in fresh processes, start-up included) and keeps "
        "what it printed. Never by timed tests. Regenerate them all with that one command.",
        "",
        f"- date (UTC): {header['date']}",
        f"- machine: {header['machine']}",
        f"- software: {header['software']}",
        "- byte-code written as on a user's machine (`PYTHONDONTWRITEBYTECODE` dropped); "
        "medians of several runs, the spread (fastest-slowest) beside them where the benchmark "
        "prints it; the 1-minute load average is recorded before and after each benchmark.",
        "",
        "## Targets",
        "",
        "| what | measured | reference | target | verdict |",
        "|---|---|---|---|---|",
    ]
    missed = 0
    for res in results:
        if res.skipped is not None:
            out.append(f"| {_cell(res.name)} | skipped: {_cell(res.skipped)} | — | — | — |")
            continue
        if res.code != 0:
            out.append(
                f"| {_cell(res.name)} | the benchmark failed (exit {res.code}) | — | — | FAILED |"
            )
            missed += 1
            continue
        for what, figure, reference, target, verdict in res.targets:
            missed += verdict == "MISSED"
            shown = f"**{verdict}**" if verdict == "MISSED" else verdict
            out.append(
                f"| {_cell(what)} | {_cell(figure)} | {_cell(reference)} | {_cell(target)} "
                f"| {shown} |"
            )
    out += ["", f"Targets missed: {missed}." if missed else "Every target met.", ""]
    for res in results:
        out += [f"## {res.name}", "", res.what, ""]
        if res.name in NOTES:
            out += [NOTES[res.name], ""]
        out.append(f"Command: `python bench/{' '.join(res.argv)}`")
        if res.skipped is not None:
            out += ["", f"Skipped: {res.skipped}.", ""]
            continue
        out.append(
            f"({res.seconds:.0f} s; load average {res.load[0]:.2f} before, {res.load[1]:.2f} "
            f"after; exit {res.code})"
        )
        out += ["", "```text", res.output, "```", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _header() -> dict[str, str]:
    def version(*cmd: str) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "?"

    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    torch = version(sys.executable, "-c", "import torch; print(torch.__version__)")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "machine": f"{cpu_model()}, nproc {os.cpu_count()}, {mem} memory, {platform.machine()}",
        "software": (
            f"Python {platform.python_version()}, {version('git', '--version')}, torch {torch}"
        ),
    }


def run(name: str, argv: list[str], what: str) -> Result:
    res = Result(name, argv, what)
    if argv[0] == "bench_topp.py" and importlib.util.find_spec("torch") is None:
        res.skipped = "torch is not installed (pip install torch==2.13.0)"
        return res
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(HERE / argv[0]), *argv[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    res.seconds = time.perf_counter() - start
    res.load = (before, os.getloadavg()[0])
    res.code = proc.returncode
    # The report is stdout; stderr carries progress rows (printed again in the final table),
    # kept only when the benchmark failed, to say why.
    shown = proc.stdout if proc.returncode == 0 else proc.stdout + proc.stderr
    res.output, res.targets = split_targets(shown)
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = ap.parse_args()
    header = _header()
    results = []
    for name, argv, what in BENCHES:
        print(f"{time.strftime('%H:%M:%S')} {name}: python bench/{' '.join(argv)}", flush=True)
        results.append(run(name, argv, what))
        res = results[-1]
        state = res.skipped or f"exit {res.code}, {res.seconds:.0f} s"
        print(f"  {state}", flush=True)
    text = render(results, header)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
