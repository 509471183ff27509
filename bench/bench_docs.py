"""The docs gate over 5,000 commits, against the ``git log --name-status`` of the same range.

Target (product contract, non-functional section): a range gate over 5,000 commits takes
<= 3x the time of one ``git log`` that reads the same commits and paths. Two baselines are
timed: the plain ``git log --name-status`` of the range and the ``git log -z --name-status -M``
pass the range gates actually share (messages and paths, with rename detection).

    python bench/bench_docs.py [--commits 5000] [--runs 5]

The synthetic history exercises every part of the gate: a plain rule (a change under
``src/cli/`` needs ``docs/``), a ``when_added_line`` rule (a public function added under
``src/api/`` needs ``docs/api.md``, so those commits' diffs are read), and a ``spec_now``
matrix whose rows move state. Some commits of each kind are bad; the script checks that the
gate names exactly those commits before it reports any time. ``tools index check`` (which
reads the same range pass and finds no index file here) is timed beside it: the fixed cost of
any range gate that reads paths, so that the docs gate's own work shows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import interleaved, log_with_paths, print_machine, target_row  # noqa: E402
from synth import fast_import  # noqa: E402

CONFIG = """base: base
docs:
  rules:
    - name: cli-docs
      when_changed: ["src/cli/**"]
      require_changed: ["docs/**", "README.md"]
    - name: api-docs
      when_changed: ["src/api/**"]
      when_added_line: '^def public_'
      require_changed: ["docs/api.md"]
  spec_now:
    - matrix: docs/matrix.md
      spec_link: '\\]\\((?P<spec>[^)\\s]+)\\)'
      states: [planned, wip, done]
"""

ROWS = 40
STATES = ["planned", "wip", "done"]


def _matrix(states: list[str]) -> bytes:
    rows = "".join(
        f"| k{r:02d} | `{s}` | [spec](../specs/k{r:02d}.md) |\n" for r, s in enumerate(states)
    )
    return ("# Kernels\n\n| Kernel | State | Spec |\n|---|---|---|\n" + rows).encode()


def _spec(n: int) -> bytes:
    return f"# Spec\n\n## Owed\n- #1\n\n## 6. Now\nRun {n} matches upstream.\n".encode()


def _commits(count: int, bad: dict[str, set[int]]) -> Iterator[tuple[str, dict[str, bytes]]]:
    states = ["planned"] * ROWS
    base = {
        ".agents/protocol.yaml": CONFIG.encode(),
        "README.md": b"synthetic\n",
        "docs/matrix.md": _matrix(states),
        **{f"specs/k{r:02d}.md": _spec(0) for r in range(ROWS)},
    }
    yield "Initial import\n\nThe base of the range.\n", base
    api_lines: dict[int, str] = {}
    for n in range(1, count + 1):
        msg = f"Change {n}\n\nBody of change {n}.\n"
        files: dict[str, bytes] = {f"src/core/m{n % 300:03d}.py": f"# core {n}\n".encode()}
        kind = n % 10
        if kind == 1:  # a CLI change: documented unless n % 40 == 1
            files[f"src/cli/c{n % 30:02d}.py"] = f"# cli {n}\n".encode()
            if n % 40 == 1:
                bad["checkpoint-missed"].add(n)
            else:
                files["docs/cli.md"] = f"cli docs {n}\n".encode()
        elif kind == 3:  # an API change: adds a public function (undocumented when n % 30 == 3)
            mod = n % 20
            api_lines[mod] = api_lines.get(mod, "") + f"def public_{n}(): ...\n"
            files[f"src/api/a{mod:02d}.py"] = api_lines[mod].encode()
            if n % 30 == 3:
                bad["checkpoint-missed"].add(n)
            else:
                files["docs/api.md"] = f"api docs {n}\n".encode()
        elif kind == 5:  # an API change that adds no public function: never fires
            files[f"src/api/a{n % 20:02d}.py"] = (
                api_lines.get(n % 20, "") + f"# private {n}\n"
            ).encode()
        elif kind == 7 and n % 50 == 7:  # a lifecycle move; its spec is missing half the time
            row = (n // 50) % ROWS
            states[row] = STATES[(STATES.index(states[row]) + 1) % len(STATES)]
            files["docs/matrix.md"] = _matrix(states)
            if n % 100 == 7:
                bad["spec-now-missing"].add(n)
            else:
                files[f"specs/k{row:02d}.md"] = _spec(n)
        yield msg, files


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    bad: dict[str, set[int]] = {"checkpoint-missed": set(), "spec-now-missing": set()}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "synth"
        t0 = time.perf_counter()
        fast_import(repo, _commits(args.commits, bad))
        build = time.perf_counter() - t0
        subprocess.run(["git", "branch", "base", f"HEAD~{args.commits}"], cwd=repo, check=True)

        # The gate must name exactly the spoiled commits before any figure counts.
        shas = subprocess.run(
            ["git", "rev-list", "--reverse", "base..HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        out = subprocess.run(
            [*tools, "--format", "json", "docs", "check"], cwd=repo, capture_output=True
        )
        report = json.loads(out.stdout)["gates"][0]
        assert report["stats"]["commits"] == args.commits, report["stats"]
        for rule, spoiled in bad.items():
            named = {f["commit"] for f in report["findings"] if f["rule"] == rule}
            want = {shas[n - 1] for n in spoiled}
            assert named == want, f"{rule}: named {len(named)} commits, expected {len(want)}"

        log_plain = ["git", "log", "--name-status", "base..HEAD"]
        log_shared = log_with_paths("base..HEAD")
        load_before = os.getloadavg()[0]
        rows = interleaved(
            {
                "git log --name-status": log_plain,
                "git log -z --name-status -M (the shared pass)": log_shared,
                "tools docs check": [*tools, "docs", "check"],
                "tools index check (same log pass, no index)": [*tools, "index", "check"],
                "tools --help (start-up alone)": [*tools, "--help"],
            },
            repo,
            args.runs,
        )
        load_after = os.getloadavg()[0]
    plain_wall, shared_wall = (row[0] for row in list(rows.values())[:2])
    print_machine(load_before, load_after)
    print(
        f"synthetic repo: {args.commits} commits ({len(bad['checkpoint-missed'])} "
        f"checkpoint-missed, {len(bad['spec-now-missing'])} spec-now-missing), built in "
        f"{build:.1f} s; median of {args.runs} interleaved runs"
    )
    print(
        f"  {'command':<48} {'wall ms':>8} {'spread':>11} {'cpu ms':>7}  {'wall / log':>18}  exit"
    )
    for name, (wall, cpu, codes, lo, hi) in rows.items():
        spread = f"{lo * 1000:.0f}-{hi * 1000:.0f}"
        print(
            f"  {name:<48} {wall * 1000:8.0f} {spread:>11} {cpu * 1000:7.0f}  "
            f"x{wall / plain_wall:5.2f} | x{wall / shared_wall:5.2f}  {codes}"
        )
    print("  (wall / log: against git log --name-status | the shared -z -M pass; target <= 3x)")
    print(
        "  (tools index check reads the same range pass and has no file to judge here: the fixed\n"
        "   cost of a range gate that reads paths, against which the docs gate's own work shows)"
    )
    ref = f"git log --name-status {plain_wall * 1000:.0f} ms"
    for name, label in (("tools docs check", "docs"), ("tools index check", "index")):
        key = next(k for k in rows if k.startswith(name))
        wall = rows[key][0]
        target_row(
            f"`tools {label} check`, {args.commits} commits (reads paths)",
            f"{wall * 1000:.0f} ms = {wall / plain_wall:.2f}x",
            ref,
            "<= 3x",
            wall / plain_wall <= 3,
        )


if __name__ == "__main__":
    main()
