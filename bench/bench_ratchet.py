"""Ratchet counting over a synthetic 20,000-file C++ tree against ``git grep -c``.

Target (product contract, non-functional section): ratchet counting over 20,000 files takes
at most 2x the time of ``git grep -c`` of the same patterns over the same files.

    python bench/bench_ratchet.py [--files 20000] [--runs 5] [--hostile]

The tree is one commit written with ``git fast-import``: C++ sources and headers of 2.5 to
11 KiB, about 7 KiB on average (``--functions 2 8`` gives about 3 KiB): includes, comments,
string and character literals, digit separators, functions;
2 % of them hold device tokens, 2 % mention tokens inside comments (every file does with
``--hostile``, so every file must be stripped), 5 % lie under ``cuda/`` folders that the
default ratchet excludes. The repository is repacked as ``git gc`` would leave it.

Timed: ``tools ratchet check --rev HEAD`` (a fresh process per run, start-up included; the
default ``device-leakage`` ratchet with its baseline in place), the same on the working tree,
and ``git grep -c -P`` of the four default bucket regexes at the same commit, limited by
the same include/exclude globs given as git pathspecs. Figures are medians of ``--runs``
runs after one warm-up run of each, the commands taking turns run by run; peak RSS is the
largest of the command's processes (git's included). Also printed: the counting alone, in
process (no interpreter start-up), and ``tools --help``. Paste the printed section into
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import cpu_model, median, peak_rss_kib, target_row, wall_times  # noqa: E402
from synth import fast_import  # noqa: E402

from tools.config import defaults  # noqa: E402

BODY = """\
// Copyright (c) the synthetic project. Licensed under the example license.
// {name}: part of module {mod}; "quoted" text and an apostrophe's here.
#pragma once
#include <vector>
#include <string>
#include <memory>
#include "proj/mod{mod}/common.h"
#include "proj/util/log.h"

namespace proj::mod{mod} {{

/* A block comment that spans
   a few lines; {note}
   and ends here. */
static const char* kName{n} = "unit {n}: \\"escaped\\" // not a comment";
static const char kSep{n} = '/';
constexpr long kBig{n} = 1'000'000;

{functions}{extra}
}}  // namespace proj::mod{mod}
"""
FUNCTIONS = """\
// compute_{n}_{r}: sums the multiples of {k}, subtracts the rest.
int compute_{n}_{r}(const std::vector<int>& xs) {{
  int total = 0;  // running sum
  for (int x : xs) {{
    if (x % {k} == 0) {{
      total += x * {k};
    }} else {{
      total -= x;  /* odd */
    }}
  }}
  return total;
}}

std::string describe_{n}_{r}(int v) {{
  if (v < 0) return "negative";
  LOG_DEBUG("describe_{n}_{r}: v=%d", v);
  return std::string("value=") + std::to_string(v) + ':' + "{r}";
}}

"""

DEVICE_LINES = [
    "auto dev{n} = at::Device(at::kCUDA);",
    "bool on_gpu_{n}(const at::Tensor& t) {{ return t.is_cuda(); }}",
    "#ifdef VT_CUDA\nint cuda_path_{n}();\n#endif",
    "#if defined(VT_ROCM) && VT_ROCM > 2\nint rocm_path_{n}();\n#endif",
]
INCLUDE_LINE = "#include <cuda_runtime.h>\n"


def _files(
    count: int, hostile: bool = False, spread: tuple[int, int] = (4, 20)
) -> dict[str, bytes]:
    rng = random.Random(20_000)
    files: dict[str, bytes] = {}
    for i in range(count):
        folder = f"src/d{i // 500:03d}"
        if i % 20 == 7:
            folder += "/cuda"  # excluded by the default ratchet
        ext = ".h" if i % 3 == 0 else ".cc"
        extra = ""
        if i % 50 == 3:
            extra = DEVICE_LINES[rng.randrange(len(DEVICE_LINES))].format(n=i)
        # Device tokens inside comments and strings: in every file with --hostile (each file
        # then has to be stripped), else in 2 % of them.
        note = "it mentions is_cuda() and kCUDA" if hostile or i % 50 == 11 else "plain"
        k = rng.randrange(2, 9)
        pairs = rng.randint(*spread)
        functions = "".join(FUNCTIONS.format(n=i, r=r, k=k) for r in range(pairs))
        body = BODY.format(
            name=f"f{i:05d}", mod=i % 37, n=i, functions=functions, extra=extra, note=note
        )
        if i % 97 == 5:
            body = INCLUDE_LINE + body
        files[f"{folder}/f{i:05d}{ext}"] = body.encode()
    return files


def _grep_command() -> list[str]:
    cfg = defaults()["ratchets"]["device-leakage"]
    cmd = ["git", "grep", "-c", "-P"]
    for bucket in cfg["buckets"].values():
        cmd += ["-e", bucket["regex"]]
    cmd += ["HEAD", "--"]
    cmd += [f":(glob){g}" for g in cfg["include"]]
    cmd += [f":(glob,exclude){g}" for g in cfg["exclude"]]
    return cmd


def _interleaved(cmds: list[list[str]], cwd: Path, runs: int) -> list[tuple[float, int, str]]:
    """(median wall, peak RSS KiB, exit codes and the spread) of each command. The commands
    take turns run by run, so a change in the machine's load weighs on all of them alike."""
    for cmd in cmds:
        wall_times(cmd, cwd, 1)  # warm-up: page cache, pyc files
    walls: list[list[float]] = [[] for _ in cmds]
    codes: list[set[int]] = [set() for _ in cmds]
    for _ in range(runs):
        for k, cmd in enumerate(cmds):
            wall, seen = wall_times(cmd, cwd, 1)
            walls[k] += wall
            codes[k] |= seen
    return [
        (
            median(walls[k]),
            peak_rss_kib(cmd, cwd),
            ",".join(map(str, sorted(codes[k])))
            + f" (spread {min(walls[k]) * 1000:.0f}-{max(walls[k]) * 1000:.0f} ms)",
        )
        for k, cmd in enumerate(cmds)
    ]


def _count_in_process(repo: Path, runs: int) -> float:
    """Median wall of the counting itself (engine.count over HEAD's tree, in this process,
    after one warm-up): the command's figure without interpreter start-up and imports."""
    from tools.context import Context
    from tools.options import Options
    from tools.ratchets import engine
    from tools.ratchets.tree import Tree

    ctx = Context(Options(repo=repo))
    ratchets = engine.load(ctx.config, ctx.config_source)
    sha = ctx.git.resolve("HEAD")
    assert sha is not None
    walls = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        engine.count(Tree(ctx.git, rev=sha), ratchets, ctx.config.index.path)
        walls.append(time.perf_counter() - start)
    return median(walls[1:])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--functions",
        type=int,
        nargs=2,
        default=(4, 20),
        metavar=("MIN", "MAX"),
        help="function pairs per file (the default gives about 7 KiB per file)",
    )
    ap.add_argument(
        "--hostile",
        action="store_true",
        help="put device tokens in a comment of every file (every file must be stripped)",
    )
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "synth"
        t0 = time.perf_counter()
        files = _files(args.files, args.hostile, tuple(args.functions))
        size = sum(len(b) for b in files.values())
        fast_import(repo, iter([("Add the tree\n\nBody.\n", files)]))
        # fast-import chains every blob to the one before (depth 50); repack as `git gc`
        # would, so that reading one blob costs what it costs in a real repository.
        subprocess.run(["git", "repack", "-a", "-d", "-f", "-q"], cwd=repo, check=True)
        subprocess.run(
            [*tools, "ratchet", "tighten"], cwd=repo, check=True, capture_output=True, env=env
        )
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=b",
                "-c",
                "user.email=b@example.com",
                "commit",
                "-qm",
                "Add the baseline\n\nBody.",
            ],
            cwd=repo,
            check=True,
        )
        build = time.perf_counter() - t0
        os.environ["PYTHONPATH"] = str(ROOT)
        check = [*tools, "ratchet", "check", "--rev", "HEAD", "--base", "HEAD"]
        worktree = [*tools, "ratchet", "check", "--base", "HEAD"]
        grep = _grep_command()
        (t_wall, t_rss, t_codes), (w_wall, w_rss, w_codes), (g_wall, g_rss, g_codes) = _interleaved(
            [check, worktree, grep], repo, args.runs
        )
        counting = _count_in_process(repo, args.runs)
        help_wall, _ = wall_times([*tools, "--help"], repo, args.runs)
        grep_lines = subprocess.run(grep, cwd=repo, capture_output=True, text=True).stdout
        report = subprocess.run(
            [*tools, "ratchet", "check", "--rev", "HEAD", "--base", "HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
        ).stdout
    grep_total = sum(int(line.rsplit(":", 1)[1]) for line in grep_lines.splitlines() if line)
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    kind = "hostile: every file mentions tokens in a comment" if args.hostile else "2 % sites"
    print(
        f"synthetic tree ({kind}): {args.files} files, {size / 2**20:.1f} MiB "
        f"(built in {build:.1f} s)"
    )
    print(
        f"tools ratchet check --rev HEAD: median {t_wall * 1000:.0f} ms of {args.runs}, "
        f"peak RSS {t_rss / 1024:.0f} MiB, exit codes {t_codes}"
    )
    print(
        f"tools ratchet check (working tree): median {w_wall * 1000:.0f} ms of {args.runs}, "
        f"peak RSS {w_rss / 1024:.0f} MiB, exit codes {w_codes}"
    )
    print(
        f"git grep -c -P (same patterns, same files, HEAD): median {g_wall * 1000:.0f} ms of "
        f"{args.runs}, peak RSS {g_rss / 1024:.0f} MiB, exit codes {g_codes}, "
        f"{grep_total} matching lines (comments and strings included)"
    )
    print(
        f"counting alone (engine.count over HEAD's tree, in process): median "
        f"{counting * 1000:.0f} ms; interpreter start-up (tools --help): median "
        f"{median(help_wall) * 1000:.0f} ms"
    )
    print(f"ratio --rev HEAD / git grep: {t_wall / g_wall:.2f} (target <= 2)")
    print(f"ratio counting alone / git grep: {counting / g_wall:.2f}")
    print("tools output:\n" + report)
    target_row(
        f"`tools ratchet check --rev HEAD`, {args.files} files"
        + (" (hostile: tokens in every file)" if args.hostile else ""),
        f"{t_wall * 1000:.0f} ms = {t_wall / g_wall:.2f}x",
        f"git grep -c -P {g_wall * 1000:.0f} ms",
        "<= 2x",
        t_wall / g_wall <= 2,
    )


if __name__ == "__main__":
    main()
