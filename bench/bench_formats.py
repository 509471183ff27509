"""Output formats: what each costs on a report with many findings, and what a styling library
would cost the CLI's start-up (the reason the text report colours with plain SGR codes).

A temp repository holds one file with N conflict hunks (3 findings each); ``tools conflicts
check --format F`` runs for each format, interleaved, several times.

    python bench/bench_formats.py [--hunks 5000] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, interleaved  # noqa: E402

FORMATS = ("text", "json", "github", "sarif")


def _repo(root: Path, hunks: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "B",
        "GIT_AUTHOR_EMAIL": "b@example.com",
        "GIT_COMMITTER_NAME": "B",
        "GIT_COMMITTER_EMAIL": "b@example.com",
    }
    (repo / "a.txt").write_text("<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n" * hunks)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "Add\n\nBody."]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hunks", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    tools = str(Path(sysconfig.get_path("scripts")) / "tools")
    py = sys.executable
    print(f"# {cpu_model()}, Python {platform.python_version()}, median of {args.runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repo(Path(tmp), args.hunks)
        start = interleaved(
            {
                "python -c pass": [py, "-c", "pass"],
                "python -c 'import rich.console'": [py, "-c", "import rich.console"],
                "tools --help": [tools, "--help"],
            },
            repo,
            args.runs,
        )
        base = start["python -c pass"][0]
        print("\n| start-up | median ms | spread ms | beyond a bare interpreter, ms |")
        print("|---|---|---|---|")
        for name, (wall, _cpu, _codes, lo, hi) in start.items():
            spread = f"{lo * 1000:.0f}-{hi * 1000:.0f}"
            print(f"| `{name}` | {wall * 1000:.0f} | {spread} | {(wall - base) * 1000:.0f} |")
        cmds = {
            fmt: [tools, "--repo", str(repo), "--format", fmt, "conflicts", "check"]
            for fmt in FORMATS
        }
        res = interleaved(cmds, repo, args.runs)
        findings = 3 * args.hunks
        text = res["text"][0]
        print(
            f"\n| `tools conflicts check`, {findings} findings | median ms | spread ms | vs text "
            "| exit |"
        )
        print("|---|---|---|---|---|")
        for fmt, (wall, _cpu, codes, lo, hi) in res.items():
            spread = f"{lo * 1000:.0f}-{hi * 1000:.0f}"
            print(
                f"| `--format {fmt}` | {wall * 1000:.0f} | {spread} | {wall / text:.2f}× "
                f"| {codes} |"
            )


if __name__ == "__main__":
    main()
