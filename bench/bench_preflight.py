"""Preflight --staged on a 20,000-file / 10,000-commit synthetic repository with every gate
configured, and CLI start.

Targets: preflight --staged median <= 1 s wall (SPEC §8) and <= 300 ms (the pre-commit hook
of an agent's every commit; <= 250 ms for issue 19), peak RSS of the protocol gates <= 200
MiB; CLI start (``tools --version``, ``tools --help``) <= 100 ms.

    python bench/bench_preflight.py [--files 20000] [--commits 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from measure import (  # noqa: E402
    baseline_tools,
    cpu_model,
    installed_python,
    interleaved,
    peak_rss_kib,
    target_row,
)
from synth import fast_import, many_files  # noqa: E402

# Messages that keep the default protocol, so the timed run is a realistic green preflight.
MESSAGE = (
    "Touch file {n}\n\nBody of commit {n}.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)


def _commits(files: int, commits: int):
    yield MESSAGE.format(n=0), many_files(files, lambda i: f"// file {i}\n".encode())
    for n in range(1, commits):
        i = (n * 7919) % files
        yield MESSAGE.format(n=n), {f"src/d{i // 500:03d}/f{i:05d}.cc": f"// v{n}\n".encode()}


def _every_gate(repo: Path) -> None:
    """Configure every gate, with files for each to judge, committed at the branch's start."""
    files = {
        ".agents/protocol.yaml": (
            "base: base\n"
            "docs:\n  rules:\n    - name: src-docs\n      when_changed: ['src/d001/**']\n"
            "      require_changed: ['docs/**']\n"
        ),
        ".agents/NOW.md": (
            "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n- [spec](../specs/a.md)\n"
            "## Current gate\n## Next actions\n"
        ),
        ".agents/issue-index.md": (
            "# Index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
            + "".join(f"| #{n} | R{n} | Issue {n} | feature |\n" for n in range(1, 201))
        ),
        ".agents/baselines/device-leakage.json": (
            '{"ratchet": "device-leakage", "buckets": {"kcuda": 0, "is_cuda": 0, '
            '"cuda_include": 0, "vt_macro": 1}}\n'
        ),
        "src/d001/vt.cc": "#ifdef VT_CUDA\nint x;\n#endif\n",
        "specs/a.md": "# A\n\n## Owed\n\n- #1\n\n## Now\n\n- [index](../.agents/issue-index.md)\n",
        "docs/guide.md": "# Guide\n\nSee [the spec](../specs/a.md#now).\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q",
         "-m", "Configure every gate", "-m", "Body.", "-m", "FOLLOWING_AGENTS_PROTOCOL",
         "-m", "Following-Agents-Protocol: true\nAI-Assisted: false"],
        cwd=repo, check=True,
    )  # fmt: skip
    from tools import ledger

    records = [ledger.make_record("bench", {"n": n}) for n in range(1000)]
    ledger.append_records(repo / ".agents/ledger.jsonl", records)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--commits", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    # A checkout of the code before a change, run beside this one on the same repository.
    ap.add_argument("--baseline", type=Path, default=None)
    # Run the package as installed by pip in a venv of its own (and the baseline with that
    # venv's python), not from the environment this script runs in.
    ap.add_argument("--installed", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as venv_dir:
        python = installed_python(Path(venv_dir)) if args.installed else sys.executable
        _run(args, [python, "-m", "tools"], baseline_tools(args.baseline, python))


def _how(args: argparse.Namespace) -> str:
    if args.installed:
        return "installed by pip in a venv of its own (the baseline with its python)"
    return f"{sys.executable} -m tools"


def _run(args: argparse.Namespace, tools: list[str], before: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "synth"
        t0 = time.perf_counter()
        fast_import(repo, _commits(args.files, args.commits))
        build = time.perf_counter() - t0
        # The repository's protocol: the branch's own commits start 50 commits back.
        subprocess.run(["git", "branch", "base", "HEAD~50"], cwd=repo, check=True)
        _every_gate(repo)
        (repo / "src/d000/f00000.cc").write_text("// staged change\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        cmds = {
            "tools preflight --staged": [*tools, "preflight", "--staged"],
            "git status (reference)": ["git", "status", "--porcelain"],
            "tools --version": [*tools, "--version"],
            "tools --help": [*tools, "--help"],
            **(
                {
                    "baseline: tools preflight --staged": [*before, "preflight", "--staged"],
                    "baseline: tools --version": [*before, "--version"],
                }
                if before
                else {}
            ),
        }
        rows = interleaved(cmds, repo, args.runs)
        pre_rss = peak_rss_kib(cmds["tools preflight --staged"], repo)
        out = subprocess.run(
            cmds["tools preflight --staged"], cwd=repo, capture_output=True, text=True
        ).stdout
        # A gate command's fixed cost beyond start-up: `tools now check` in a one-commit repo.
        tiny = Path(tmp) / "tiny"
        fast_import(tiny, iter([("Start\n\nBody.\n", {"README.md": b"x\n"})]))
        (tiny / ".agents").mkdir()
        (tiny / ".agents/NOW.md").write_text(
            "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n## Current gate\n"
            "## Next actions\n"
        )
        small = interleaved(
            {"tools now check": [*tools, "now", "check"], "tools --version": [*tools, "--version"]},
            tiny,
            args.runs,
        )
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"synthetic repo: {args.files} files, {args.commits} commits (built in {build:.1f} s)")
    print(f"tools run as: {_how(args)}")
    print(f"median of {args.runs} interleaved runs, wall ms (fastest-slowest), exit codes")
    for name, (wall, _cpu, codes, lo, hi) in {
        **rows,
        **{f"{k} (tiny repo)": v for k, v in small.items()},
    }.items():
        print(f"  {name:<36} {wall * 1000:6.0f}  ({lo * 1000:.0f}-{hi * 1000:.0f})  {codes}")
    print(f"tools preflight --staged: peak RSS {pre_rss / 1024:.0f} MiB")
    print("preflight output:\n" + out)
    pre = rows["tools preflight --staged"][0]
    status = f"git status {rows['git status (reference)'][0] * 1000:.0f} ms"
    what = f"`tools preflight --staged`, {args.files} files / {args.commits} commits, every gate"
    target_row(what, f"{pre * 1000:.0f} ms", status, "<= 300 ms", pre <= 0.3)
    target_row(what + " (SPEC §8)", f"{pre * 1000:.0f} ms", status, "<= 1 s", pre <= 1.0)
    target_row(what + " (issue 19)", f"{pre * 1000:.0f} ms", status, "<= 250 ms", pre <= 0.25)
    target_row(
        "`tools preflight --staged` peak RSS", f"{pre_rss / 1024:.0f} MiB", "—", "<= 200 MiB",
        pre_rss / 1024 <= 200,
    )  # fmt: skip
    for name in ("tools --version", "tools --help"):
        wall = rows[name][0]
        target_row(f"CLI start, `{name}`", f"{wall * 1000:.0f} ms", "—", "<= 100 ms", wall <= 0.1)
    fixed = small["tools now check"][0] - small["tools --version"][0]
    target_row(
        "a gate command's fixed cost beyond start-up (`tools now check` minus `tools --version`)",
        f"{fixed * 1000:.0f} ms",
        f"tools --version {small['tools --version'][0] * 1000:.0f} ms",
        "<= 100 ms",
        fixed <= 0.1,
    )


if __name__ == "__main__":
    main()
