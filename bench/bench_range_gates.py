"""Range gates (trailers, style) over 5,000 agent commits, against one ``git log``.

Target (product contract, non-functional section): each range gate over the whole range
takes <= 3x the time of one ``git log`` that reads the same commits. Two baselines are timed:
``git log --format=%H%x00%P%x00%B`` (messages only) and the ``git log -z --name-status -M``
pass the gates actually share with the other range gates (messages and paths). Issue 19 sets
``tools trailers check`` at <= 6x the messages-only log.

    python bench/bench_range_gates.py [--commits 5000] [--runs 5] [--distinct-trailers]

A tenth of the commits are bad in assorted ways; the script checks that the gates name
exactly those commits before it reports any time. The good commits share one trailer
paragraph, as one agent's commits do; ``--distinct-trailers`` names a model per commit, so
that no two paragraphs are alike (the trailers gate then judges every one).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import (  # noqa: E402
    baseline_tools,
    installed_python,
    interleaved,
    log_with_paths,
    print_machine,
    target_row,
)
from synth import fast_import  # noqa: E402

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = (
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]\n"
)


def _good(n: int, distinct: bool) -> str:
    # distinct: every trailer paragraph differs (a model named per commit), so the trailers
    # gate judges each one; otherwise they repeat, as one agent's commits do.
    trailers = TRAILERS.replace("opus-4", f"opus-4-{n}") if distinct else TRAILERS
    return (
        f"Port kernel {n} from upstream\n\n"
        f"Brings kernel {n} over with its tests; see the spec for the numerics.\n"
        "The launch bounds follow the upstream defaults.\n\n"
        f"{MARKER}\n\n{trailers}"
    )


# Ways a commit goes bad: (gate it fails, how to spoil a good message).
_BAD = [
    ("trailers", lambda m: m.replace(f"{MARKER}\n\n", "")),
    ("trailers", lambda m: m.replace("AI-Assisted: true\n", "")),
    ("trailers", lambda m: m.replace("[claude-code]", "")),
    ("trailers", lambda m: m + "Signed-off-by: Claude <claude@example.com>\n"),
    ("trailers", lambda m: m + "\nhttps://example.com/pull/1\n"),
    ("trailers", lambda m: m.replace("Brings", "---\nBrings")),
    ("style", lambda m: m.replace(" from upstream\n", " from upstream.\n", 1)),
    ("style", lambda m: m.split("\n", 1)[0] + f"\n\n{MARKER}\n\n{TRAILERS}"),
]


def _commits(count: int, bad: dict[str, set[int]], distinct: bool):
    yield "Initial import\n\nThe base of the range.\n", {"README.md": b"synthetic\n"}
    for n in range(1, count + 1):
        msg = _good(n, distinct)
        if n % 10 == 0:
            gate, spoil = _BAD[(n // 10) % len(_BAD)]
            msg = spoil(msg)
            bad[gate].add(n)
        yield msg, {f"kernels/k{n % 400:03d}/kernel.cu": f"// kernel {n}\n".encode()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    # A checkout of the code before a change, run beside this one on the same repository.
    ap.add_argument("--baseline", type=Path, default=None)
    # Run the package as installed by pip in a venv of its own (and the baseline with that
    # venv's python), not from the environment this script runs in.
    ap.add_argument("--installed", action="store_true")
    # Every commit's trailer paragraph differs (by default they repeat).
    ap.add_argument("--distinct-trailers", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as venv_dir:
        python = installed_python(Path(venv_dir)) if args.installed else sys.executable
        _run(args, [python, "-m", "tools"], baseline_tools(args.baseline, python))


def _run(args: argparse.Namespace, tools: list[str], before: list[str]) -> None:
    bad: dict[str, set[int]] = {"trailers": set(), "style": set()}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "synth"
        t0 = time.perf_counter()
        fast_import(repo, _commits(args.commits, bad, args.distinct_trailers))
        build = time.perf_counter() - t0
        subprocess.run(["git", "branch", "base", f"HEAD~{args.commits}"], cwd=repo, check=True)
        (repo / ".agents").mkdir()
        (repo / ".agents/protocol.yaml").write_text("base: base\n")

        # The gates must name exactly the spoiled commits before any figure counts.
        shas = subprocess.run(
            ["git", "rev-list", "--reverse", "base..HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for gate in ("trailers", "style"):
            out = subprocess.run(
                [*tools, "--format", "json", gate, "check"], cwd=repo, capture_output=True
            )
            report = json.loads(out.stdout)["gates"][0]
            named = {f["commit"] for f in report["findings"] if f["severity"] == "error"}
            want = {shas[n - 1] for n in bad[gate]}
            assert named == want, f"{gate}: named {len(named)} commits, expected {len(want)}"
            assert report["stats"]["commits"] == args.commits

        log_msgs = ["git", "log", "--format=%H%x00%P%x00%B", "base..HEAD"]
        log_paths = log_with_paths("base..HEAD")
        load_before = os.getloadavg()[0]
        rows = interleaved(
            {
                "git log --format=%H%x00%P%x00%B": log_msgs,
                "git log -z --name-status -M (messages + paths)": log_paths,
                "tools trailers check": [*tools, "trailers", "check"],
                "tools style check": [*tools, "style", "check"],
                "tools --help (start-up alone)": [*tools, "--help"],
                **(
                    {
                        "baseline: tools trailers check": [*before, "trailers", "check"],
                        "baseline: tools style check": [*before, "style", "check"],
                    }
                    if before
                    else {}
                ),
            },
            repo,
            args.runs,
        )
        load_after = os.getloadavg()[0]
    msgs_wall, paths_wall = (row[0] for row in list(rows.values())[:2])
    print_machine(load_before, load_after)
    print(
        f"synthetic repo: {args.commits} agent commits ({len(bad['trailers'])} bad for trailers, "
        f"{len(bad['style'])} bad for style), built in {build:.1f} s; median of {args.runs} "
        "interleaved runs"
        + ("; every trailer paragraph distinct" if args.distinct_trailers else "")
    )
    print(
        f"  {'command':<48} {'wall ms':>8} {'spread':>11} {'cpu ms':>7}  {'wall / log':>18}  exit"
    )
    for name, (wall, cpu, codes, lo, hi) in rows.items():
        spread = f"{lo * 1000:.0f}-{hi * 1000:.0f}"
        print(
            f"  {name:<48} {wall * 1000:8.0f} {spread:>11} {cpu * 1000:7.0f}  "
            f"x{wall / msgs_wall:5.1f} | x{wall / paths_wall:5.2f}  {codes}"
        )
    print("  (wall / log: against the messages-only git log | the messages + paths git log)")
    how = "installed by pip in a venv of its own" if args.installed else f"{sys.executable} -m"
    print(f"  tools run as: {how} (the baseline with the same python)")
    ref = f"git log --format=%H%x00%P%x00%B {msgs_wall * 1000:.0f} ms"
    for gate in ("trailers", "style"):
        wall = rows[f"tools {gate} check"][0]
        ratio = wall / msgs_wall
        target_row(
            f"`tools {gate} check`, {args.commits} commits (reads messages only)",
            f"{wall * 1000:.0f} ms = {ratio:.1f}x",
            ref,
            "<= 4x",
            ratio <= 4,
        )
    wall = rows["tools trailers check"][0]
    target_row(
        f"`tools trailers check`, {args.commits} commits (issue 19)",
        f"{wall * 1000:.0f} ms = {wall / msgs_wall:.1f}x",
        ref,
        "<= 6x",
        wall / msgs_wall <= 6,
    )


if __name__ == "__main__":
    main()
