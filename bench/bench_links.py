"""`tools links check` over this repository and over a generated 2,000-file documentation tree,
beside the same command of a baseline checkout of `tools` (the code before a change).

    python bench/bench_links.py [--runs 7] [--baseline DIR]

DIR holds a checkout of the tools source to compare with (for example
``git archive main | tar -x -C DIR``); without it only this checkout is measured. Runs are
interleaved (each round runs every command once), so load from elsewhere falls on both alike.
The generated tree: 2,000 markdown files in 40 folders, each with headings (numbered, repeated,
with code and entities), a table, a fenced block, a list, and links to other files' headings,
lines and folders (every link resolves as GitHub reads it: this checkout passes; a checkout that
misreads entities in headings fails, having judged the same links).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from measure import interleaved, print_machine, target_row  # noqa: E402

FILES = 2000
FOLDERS = 40


def _page(k: int) -> str:
    folder, other = k % FOLDERS, (k * 7 + 3) % FILES
    there = f"../d{other % FOLDERS}/p{other}.md"
    lines = [f"# Page {k}", "", f"Intro of page {k}, see [the next]({there}#2-usage).", ""]
    for s in range(1, 9):
        # Section 2 is "2. Usage"; the others carry code and an entity in their text.
        there_anchor = "2-usage" if s == 2 else f"section-{s}-of-page{other}--more"
        here_anchor = "2-usage" if s == 2 else f"section-{s}-of-page{k}--more"
        lines += [
            f"## {s}. Usage" if s == 2 else f"## Section {s} of `page{k}` &amp; more",
            "",
            f"Text with [a link]({there}#{there_anchor}) and "
            f"[a line](../d{folder}/p{k}.md#L{s}) and [the folder](../d{folder}/).",
            "",
            "| name | value | link |",
            "|---|---|---|",
            f"| a{s} | `{s}` | [x](#{here_anchor}) |",
            f"| b{s} | b \\| c | [y]({there}) |",
            "",
            "```",
            "[not a link](nowhere.md)",
            "```",
            "",
            f"- item {s} with [a ref][r{s}]",
            "- another `code [x](no.md)` item",
            "",
            f"[r{s}]: {there}#{'2-usage' if s == 2 else 'page-' + str(other)}",
            "",
        ]
    return "\n".join(lines) + "\n"


def build_tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for k in range(FILES):
        path = root / f"d{k % FOLDERS}" / f"p{k}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_page(k), encoding="utf-8")
    (root / ".agents").mkdir()
    (root / ".agents" / "protocol.yaml").write_text("links:\n  paths: ['**/*.md']\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@e",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@e"
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "tree"], check=True, env=env)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", type=Path, default=None)
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "docs-tree"
        build_tree(tree)
        codes = {"this checkout": ROOT}
        if args.baseline is not None:
            codes["baseline"] = args.baseline.resolve()
        for label, where in (("this repository", ROOT), ("2,000-file docs tree", tree)):
            cmds = {
                name: [
                    "env",
                    f"PYTHONPATH={code}",
                    sys.executable,
                    "-P",  # the code comes from PYTHONPATH, never from the folder judged
                    "-m",
                    "tools",
                    "--repo",
                    str(where),
                    "links",
                    "check",
                ]
                for name, code in codes.items()
            }
            result = interleaved(cmds, where, args.runs)
            print(f"### `tools links check`, {label}")
            print("| code | median wall ms | median CPU ms | spread ms | exit |")
            print("|---|---|---|---|---|")
            for name, (wall, cpu, exits, lo, hi) in result.items():
                print(
                    f"| {name} | {wall * 1000:.0f} | {cpu * 1000:.0f} | "
                    f"{lo * 1000:.0f}-{hi * 1000:.0f} | {exits} |"
                )
            print()
            if "baseline" in result:
                now, before = result["this checkout"][0], result["baseline"][0]
                target_row(
                    f"`tools links check`, {label}",
                    f"{now * 1000:.0f} ms",
                    f"baseline {before * 1000:.0f} ms",
                    "no slower than the baseline",
                    now <= before * 1.05,  # within 5 %: the spread of a shared machine
                )
    print_machine(load_before, os.getloadavg()[0])
    print(f"finished: {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
