"""The verdict cache (SPEC §12): a re-check of a branch after one more commit, against the run
that judges that one commit.

    python bench/bench_cache.py [--sizes 1000 20000] [--runs 7] [--write BENCHMARKS.md]

For each size, a synthetic branch of that many agent commits (a tenth of them bad, every
trailer paragraph distinct) is built with ``git fast-import``; each gate runs once over it, so
that its verdict cache holds every commit; then one commit is added. Before every timed run
the cache folder is put back as it was before that commit, so each run of the range pays for
the one new verdict, as the next CI run or pre-push of a branch does. Timed side by side
(interleaved rounds), per gate (``trailers``, ``style``):

- the re-check: ``tools G check`` over the whole branch, the cache warm but for the new commit;
- the single-commit run: ``tools G check --base HEAD~1`` (the same command over a range of
  one commit, the target's reference), and ``tools G check --commit HEAD``;
- for scale: the branch with ``--no-cache`` (every verdict computed), and the messages-only
  ``git log`` of the branch.

Target: the re-check <= 1.3x the single-commit run. Before any figure, the cached and the
uncached reports of the branch must be the same bytes. ``--write FILE`` replaces (or adds)
the section "## Verdict cache" of FILE with the figures: the commands, runs, medians, the load
(``uptime``) around them and the date.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import cpu_model, interleaved, target_row  # noqa: E402
from synth import fast_import  # noqa: E402

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TARGET = 1.3
SECTION = "## Verdict cache"
GATES = ("trailers", "style")


def _message(n: int) -> str:
    msg = (
        f"Port kernel {n} from upstream\n\n"
        f"Brings kernel {n} over with its tests; see the spec for the numerics.\n\n"
        f"{MARKER}\n\nFollowing-Agents-Protocol: true\nAI-Assisted: true\n"
        f"Assisted-by: claude:opus-4-{n} [claude-code]\n"
    )
    if n % 10 == 0:  # a tenth bad, in turn for each gate
        msg = msg.replace(" from upstream\n", " from upstream.\n", 1) if n % 20 else msg + "\nx\n"
    return msg


def _commits(count: int) -> Iterator[tuple[str, dict[str, bytes]]]:
    yield "Initial import\n\nThe base of the branch.\n", {"README.md": b"synthetic\n"}
    for n in range(1, count + 1):
        yield _message(n), {f"kernels/k{n % 400:03d}.cu": f"// kernel {n}\n".encode()}


def uptime() -> str:
    try:
        out = subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        one, five, fifteen = os.getloadavg()
        return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"
    return out.strip()


def _restore(snapshot: Path, cache: Path) -> None:
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(snapshot, cache)


def measure(count: int, runs: int, tools: list[str], tmp: Path) -> tuple[list[str], list[tuple]]:
    """The report lines for one branch size, and its target rows."""
    repo = tmp / f"branch-{count}"
    t0 = time.perf_counter()
    fast_import(repo, _commits(count))
    build = time.perf_counter() - t0
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "branch", "base", f"HEAD~{count}"], check=True)
    (repo / ".agents").mkdir()
    (repo / ".agents/protocol.yaml").write_text("base: base\n")
    for gate in GATES:  # the cache of the branch as it was
        subprocess.run([*tools, gate, "check"], cwd=repo, capture_output=True)
    cache = repo / ".git/tools/cache"
    snapshot = tmp / f"cache-{count}"
    shutil.copytree(cache, snapshot)
    subprocess.run(
        [*git, "commit", "-q", "--allow-empty", "--no-verify", "-F", "-"],
        input=_message(count + 1).encode(),
        check=True,
    )
    # The cached and the uncached reports must be the same bytes before anything is timed.
    for gate in GATES:
        _restore(snapshot, cache)
        runs_of = [
            subprocess.run(
                [*tools, "--format", "json", gate, "check", *extra], cwd=repo, capture_output=True
            )
            for extra in ([], ["--no-cache"], [])
        ]
        outs = {(r.returncode, r.stdout) for r in runs_of}
        assert len(outs) == 1, f"{gate}: the cache changed the report"
        assert runs_of[0].returncode == 1  # the bad commits are found

    cmds: dict[str, list[str]] = {}
    for gate in GATES:
        cmds[f"tools {gate} check (re-check, warm but for the new commit)"] = [
            *tools,
            gate,
            "check",
        ]
        cmds[f"tools {gate} check --base HEAD~1 (single-commit run)"] = [
            *tools,
            gate,
            "check",
            "--base",
            "HEAD~1",
        ]
        cmds[f"tools {gate} check --commit HEAD"] = [*tools, gate, "check", "--commit", "HEAD"]
        cmds[f"tools {gate} check --no-cache (every verdict computed)"] = [
            *tools,
            gate,
            "check",
            "--no-cache",
        ]
    cmds["git log --format=%H%x00%P%x00%B base..HEAD"] = [
        "git",
        "log",
        "--format=%H%x00%P%x00%B",
        "base..HEAD",
    ]
    load_before = uptime()
    timed = interleaved(cmds, repo, runs, before_each=lambda: _restore(snapshot, cache))
    load_after = uptime()
    med = {k: v[0] for k, v in timed.items()}
    cpu = {k: v[1] for k, v in timed.items()}
    lines = [
        f"### {count:,} commits",
        "",
        f"Branch built by `git fast-import` in {build:.1f} s ({count} agent commits, a tenth "
        f"bad, every trailer paragraph distinct), then one more commit. Median of {runs} "
        "interleaved runs; before each run the cache folder is put back as it was before that "
        "commit.",
        "",
        f"- load before: `{load_before}`",
        f"- load after: `{load_after}`",
        "",
        "| command | median wall ms | spread ms | median CPU ms | exit |",
        "|---|---|---|---|---|",
    ]
    for name, (wall, used, codes, fastest, slowest) in timed.items():
        spread = f"{fastest * 1000:.0f}-{slowest * 1000:.0f}"
        lines.append(f"| `{name}` | {wall * 1000:.0f} | {spread} | {used * 1000:.0f} | {codes} |")
    lines.append("")
    rows = []
    for gate in GATES:
        key_again = f"tools {gate} check (re-check, warm but for the new commit)"
        key_single = f"tools {gate} check --base HEAD~1 (single-commit run)"
        again, single = med[key_again], med[key_single]
        commit = med[f"tools {gate} check --commit HEAD"]
        cold = med[f"tools {gate} check --no-cache (every verdict computed)"]
        ratio = again / single
        cpu_ratio = cpu[key_again] / cpu[key_single]
        lines.append(
            f"- `{gate}`: re-check {again * 1000:.0f} ms = **{ratio:.2f}x** the single-commit "
            f"run ({single * 1000:.0f} ms; {again / commit:.2f}x `--commit HEAD`, "
            f"{commit * 1000:.0f} ms); without the cache {cold * 1000:.0f} ms "
            f"({cold / single:.2f}x); in CPU time {cpu_ratio:.2f}x. Target <= {TARGET}x "
            "(wall): " + ("**met**." if ratio <= TARGET else "**MISSED**.")
        )
        rows.append(
            (
                f"`tools {gate} check`, {count} commits, one new (verdict cache)",
                f"{again * 1000:.0f} ms = {ratio:.2f}x (CPU {cpu_ratio:.2f}x)",
                f"`--base HEAD~1` {single * 1000:.0f} ms",
                f"<= {TARGET}x",
                ratio <= TARGET,
            )
        )
    log = med["git log --format=%H%x00%P%x00%B base..HEAD"]
    singles = [med[f"tools {gate} check --base HEAD~1 (single-commit run)"] for gate in GATES]
    lines.append(
        f"- floor: the messages-only `git log` of the branch alone takes {log * 1000:.0f} ms, "
        f"{log / min(singles):.2f}x the faster single-commit run; a re-check reads that log "
        "before any verdict."
    )
    lines.append("")
    return lines, rows


def write_section(path: Path, body: list[str]) -> None:
    """Replace the section ``## Verdict cache`` of ``path`` (up to the next ``## ``), or add
    it at the end."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    section = [SECTION, "", *body]
    try:
        start = lines.index(SECTION)
    except ValueError:
        out = text.rstrip("\n") + "\n\n" + "\n".join(section).rstrip("\n") + "\n"
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        kept = lines[:start] + section + ([""] if end < len(lines) else []) + lines[end:]
        out = "\n".join(kept).rstrip("\n") + "\n"
    path.write_text(out, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 20000])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()
    tools = [sys.executable, "-m", "tools"]
    command = "python bench/bench_cache.py " + " ".join(sys.argv[1:])
    body = [
        f"Command: `{command.strip()}` ({time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; "
        f"{cpu_model()}, nproc {os.cpu_count()}, Python {platform.python_version()}). "
        "SPEC §12: a re-check of a branch after one more commit pays for that commit only, "
        f"<= {TARGET}x the single-commit run. Each gate's verdicts live in "
        "`.git/tools/cache/<gate>/` and its result of each range it judged in "
        "`.git/tools/cache/range-<gate>/` (tools/range_memo.py): the re-check finds the "
        "branch's kept range one commit below its head, reads that commit alone "
        "(`git log P..HEAD`) and judges it.",
        "",
    ]
    all_rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.sizes:
            lines, rows = measure(count, args.runs, tools, Path(tmp))
            body += lines
            all_rows += rows
    body.append("| what | measured | reference | target | verdict |")
    body.append("|---|---|---|---|---|")
    for what, measured, ref, target, met in all_rows:
        verdict = "met" if met else "**MISSED**"
        body.append(f"| {what} | {measured} | {ref} | {target} | {verdict} |")
    body += [
        "",
        "What the kept range removes: without it a range run reads the whole branch (one "
        "`git log` of every commit's sha, parents and message, its row above) and looks up "
        "one verdict per commit, which grows with the branch (3.4x the single-commit run on "
        "20,000 commits with only the verdicts kept: `trailers`, 2026-12-04 14:28, 7 runs; "
        "3.8-4.5x in the run this section replaced). With it the re-check reads no "
        "more than the commits after the kept head and computes no merge base, so the "
        "branch's length no longer shows. The kept range is not used under "
        "`trailers.exceptions`, after a merge on top or a moved base: then the range is read "
        "whole, as before.",
        "",
    ]
    print("\n".join(body))
    for row in all_rows:
        target_row(*row)
    if args.write is not None:
        write_section(args.write, body)


if __name__ == "__main__":
    main()
