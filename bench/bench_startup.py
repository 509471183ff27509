"""CLI start as a user has it: a venv of its own (no system site-packages) with the package
installed by ``pip install`` (bytecode compiled), beside the interpreter's own start and the
import of the CLI framework alone.

Targets: ``tools --version`` <= 60 ms (issue 19); the commit-msg hook (``tools hooks run
commit-msg MSG``, as an installed hook runs it, on a repository with a protocol) <= 2.5x
``python -c pass`` (SPEC §12). The framework's import is the floor of any command of a typer
CLI (the hook's command line never imports it); ``tools now check`` in a one-commit
repository is a gate command's start.

    python bench/bench_startup.py [--runs 15]

pip installs the package and its dependencies into the venv under a temp dir (it needs the
package index, or a local mirror pip is configured for).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import installed_python, interleaved, print_machine, target_row  # noqa: E402
from synth import fast_import  # noqa: E402

# The defaults' marker and trailers, so the hook judges a message it passes.
PROTOCOL = "now: {path: .agents/NOW.md}\n"
TRAILERS = (
    "FOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: A:model-1 [tool]\n"
)
NOW_MD = (
    "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n## Current gate\n## Next actions\n"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        python = installed_python(Path(tmp))
        repo = Path(tmp) / "tiny"
        fast_import(repo, iter([("Start\n\nBody.\n", {"README.md": b"x\n"})]))
        (repo / ".agents").mkdir()
        (repo / ".agents/NOW.md").write_text(NOW_MD)
        (repo / ".agents/protocol.yaml").write_text(PROTOCOL)
        (repo / "MSG").write_text("Add the parser\n\nBody.\n\n" + TRAILERS)
        # Staged: the hook judges the commit being made, which must hold the protocol.
        subprocess.run(["git", "add", ".agents"], cwd=repo, check=True)
        tools = str(Path(python).with_name("tools"))
        cmds = {
            "python -c pass": [python, "-c", "pass"],
            'python -c "import typer"': [python, "-c", "import typer"],
            "tools --version": [tools, "--version"],
            "tools --help": [tools, "--help"],
            "tools now check (one-commit repository)": [tools, "now", "check"],
            "tools hooks run commit-msg MSG": [tools, "hooks", "run", "commit-msg", "MSG"],
        }
        load_before = os.getloadavg()[0]
        rows = interleaved(cmds, repo, args.runs)
        load_after = os.getloadavg()[0]
    print_machine(load_before, load_after)
    print(f"a venv without system site-packages, `pip install .`; median of {args.runs} runs")
    print("| command | median ms | fastest-slowest | exit |")
    print("|---|---|---|---|")
    for name, (wall, _cpu, codes, lo, hi) in rows.items():
        print(f"| `{name}` | {wall * 1000:.0f} | {lo * 1000:.0f}-{hi * 1000:.0f} | {codes} |")
    version, floor = rows["tools --version"][0], rows['python -c "import typer"'][0]
    target_row(
        "CLI start, `tools --version`, installed in a venv of its own",
        f"{version * 1000:.0f} ms",
        f'python -c "import typer" {floor * 1000:.0f} ms',
        "<= 60 ms (issue 19)",
        version <= 0.06,
    )
    hook, bare = rows["tools hooks run commit-msg MSG"], rows["python -c pass"][0]
    target_row(
        "the commit-msg hook, installed in a venv of its own",
        f"{hook[0] * 1000:.0f} ms ({hook[0] / bare:.2f}x, exit {hook[2]})",
        f"python -c pass {bare * 1000:.0f} ms",
        "<= 2.5x (SPEC §12)",
        hook[0] <= 2.5 * bare and set(hook[2]) == {0},
    )


if __name__ == "__main__":
    main()
