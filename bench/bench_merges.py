"""The merges gate: `tools merges check` over a 1,000-commit range holding 47 merges of the
base into the branch. Target (issue 18): under 2 s.

    python bench/bench_merges.py [--runs 7] [--files 2000]

The synthetic repository is written with `git fast-import`: a tree of ``--files`` files of
40 lines; main edits lines 25-39 of some files, the branch lines 0-14 of others and of the
same ones, so that most merges are real content merges of both sides (clean: the edits are
ten lines apart). Each merge's tree is built as git merges it, and the benchmark checks that
the gate agrees (47 merges judged, no finding): a figure of a gate that judged nothing, or
misjudged, is not a figure. The real CLI runs in fresh processes, start-up included; the
reference is git's own work, one `git merge-tree --write-tree` per merge in one shell.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure import interleaved, print_machine, target_row  # noqa: E402

RANGE = 1000
MERGES = 47
LINES = 40


def _lines(i: int) -> list[bytes]:
    return [f"file {i} line {k}\n".encode() for k in range(LINES)]


def build(path: Path, files: int) -> dict:
    """main and ``feature``: the range merge-base(main, feature)..feature holds ``RANGE``
    commits of which ``MERGES`` merge main's tip, the last one the range's last commit."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    w = proc.stdin.write
    mark = 0
    tick = 1_700_000_000

    def commit(ref: str, parents: list[str], changed: dict[str, bytes], msg: str) -> str:
        nonlocal mark, tick
        mark += 1
        tick += 1
        data = msg.encode()
        w(f"commit {ref}\nmark :{mark}\n".encode())
        w(f"committer Bench <bench@example.com> {tick} +0000\n".encode())
        w(b"data %d\n%s\n" % (len(data), data))
        if parents:
            w(f"from {parents[0]}\n".encode())
            for parent in parents[1:]:
                w(f"merge {parent}\n".encode())
        for rel, content in changed.items():
            w(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(content), content))
        w(b"\n")
        return f":{mark}"

    def name(i: int) -> str:
        return f"src/d{i // 200:02d}/f{i:05d}.txt"

    main = {i: _lines(i) for i in range(files)}
    base = commit("refs/heads/main", [], {name(i): b"".join(ls) for i, ls in main.items()}, "B\n")
    feature = {i: list(ls) for i, ls in main.items()}
    main_tip = feature_tip = base
    own = RANGE - MERGES
    per_merge = own // MERGES
    made = merges = 0
    n = 0
    main_changed: set[int] = set()
    while made < own or merges < MERGES:
        # A few commits on main, then the branch's own commits, then the merge of main.
        for _ in range(3):
            n += 1
            i = (n * 7919) % files
            main[i][25 + n % 15] = f"main {n}\n".encode()
            main_changed.add(i)
            main_tip = commit(
                "refs/heads/main", [main_tip], {name(i): b"".join(main[i])}, f"Main {n}\n"
            )
        quota = per_merge if merges < MERGES - 1 else own - made
        for _ in range(quota):
            n += 1
            made += 1
            # Every other edit lands in a file main just changed: a content merge of both.
            i = sorted(main_changed)[n % len(main_changed)] if n % 2 else (n * 104729) % files
            feature[i][n % 15] = f"work {n}\n".encode()
            feature_tip = commit(
                "refs/heads/feature", [feature_tip], {name(i): b"".join(feature[i])}, f"W {n}\n"
            )
        merged: dict[str, bytes] = {}
        for i in main_changed:
            # git's clean merge: the branch's lines 0-14 with main's lines 25-39.
            feature[i] = feature[i][:25] + main[i][25:]
            merged[name(i)] = b"".join(feature[i])
        main_changed = set()
        merges += 1
        feature_tip = commit(
            "refs/heads/feature", [feature_tip, main_tip], merged, f"Merge main {merges}\n"
        )
    w(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "-f", "feature"], cwd=path, check=True)
    count = subprocess.run(
        ["git", "rev-list", "--count", "main..feature"],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = subprocess.run(
        ["git", "rev-list", "--count", "--merges", "main..feature"],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return {"repo": path, "commits": int(count), "merges": int(found)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=2000)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    with tempfile.TemporaryDirectory(prefix="bench-merges-") as tmp:
        built = build(Path(tmp) / "repo", args.files)
        repo = built["repo"]
        assert (built["commits"], built["merges"]) == (RANGE, MERGES), built
        # The gate must judge all 47 merges and find nothing before its time means anything.
        check = [*tools, "merges", "check", "--base", "main"]
        out = subprocess.run([*check, "--format", "json"], cwd=repo, capture_output=True)
        gate = json.loads(out.stdout)["gates"][0]
        assert out.returncode == 0 and gate["status"] == "pass", out.stdout[-2000:]
        assert gate["findings"] == [] and gate["stats"]["merges"] == MERGES, gate
        assert gate["stats"]["commits"] == RANGE, gate
        loop = (
            "for m in $(git rev-list --merges main..feature); do "
            'git merge-tree --write-tree "$m^1" "$m^2" >/dev/null; done'
        )
        cmds = {
            "tools merges check --base main": check,
            "git merge-tree per merge (reference)": ["sh", "-c", loop],
            "tools --version": [*tools, "--version"],
            "tools preflight --staged --gate conflicts": [
                *tools,
                "preflight",
                "--staged",
                "--gate",
                "conflicts",
            ],
            "... --gate conflicts --gate merges": [
                *tools,
                "preflight",
                "--staged",
                "--gate",
                "conflicts",
                "--gate",
                "merges",
            ],
        }
        load_before = os.getloadavg()[0]
        figures = interleaved(cmds, repo, args.runs)
        load_after = os.getloadavg()[0]
    print_machine(load_before, load_after)
    print(
        f"synthetic repo: {args.files} files of {LINES} lines; range main..feature: "
        f"{RANGE} commits, {MERGES} merges of main (content merges of both sides, all clean)"
    )
    print(f"median of {args.runs} interleaved runs, wall ms (fastest-slowest), exit codes")
    for label, (wall, _cpu, codes, fast, slow) in figures.items():
        print(f"  {label:<44} {wall * 1000:5.0f}  ({fast * 1000:.0f}-{slow * 1000:.0f})  {codes}")
    gate_wall = figures["tools merges check --base main"][0]
    ref_wall = figures["git merge-tree per merge (reference)"][0]
    target_row(
        f"`tools merges check`, {RANGE} commits with {MERGES} merges",
        f"{gate_wall:.2f} s",
        f"{MERGES} x git merge-tree {ref_wall:.2f} s",
        "< 2 s",
        gate_wall < 2.0,
    )
    staged = figures["tools preflight --staged --gate conflicts"][0]
    with_merges = figures["... --gate conflicts --gate merges"][0]
    target_row(
        "`tools preflight --staged`: what the merges gate adds",
        f"{(with_merges - staged) * 1000:+.0f} ms",
        f"without it {staged * 1000:.0f} ms",
        "nothing judged (no target)",
        None,
    )


if __name__ == "__main__":
    main()
