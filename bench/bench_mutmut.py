"""Mutation score of decision modules with mutmut 3 (a benchmark, not a CI step).

    python bench/bench_mutmut.py --module tools/trailer_block.py \\
        --tests tests/test_decision_boundaries.py --tests tests/test_trailers_parser.py \\
        [--max-children 2] [--out FILE] [--keep DIR | --resume DIR]

The repository's files (``git ls-files -co --exclude-standard``: tracked, and untracked but not
ignored) are copied into a temporary directory; a ``[tool.mutmut]`` section is appended to the
copy's pyproject.toml that mutates only the ``--module`` files (repeatable; paths or globs
relative to the repository root) and runs only the ``--tests`` files (repeatable; pick fast
ones: every mutant reruns the tests that reach the mutated function). mutmut copies the whole
``tools/`` package to ``mutants/`` and puts that first on ``sys.path``, so the tests import the
mutated copy. The working tree is never written.

Printed (and written to ``--out``): killed, survived, no tests, timeout, other, total, the
score (mutants detected, killed or timed out, over all of them, in %), then the diff of each
mutant not killed (``mutmut show NAME``: survivors, timeouts, mutants no test reached).
Exit status: 0 when mutmut ran, 2 when it could not run (the log's tail is printed).
mutmut 3.8 is in the ``dev`` extra. CPU: ``--max-children`` (default 1) bounds the workers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tools"
KILLED = {"killed", "caught by type check"}


def tracked_files(root: Path) -> list[str]:
    """The files git would hand over: tracked plus untracked-not-ignored."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout
    return sorted({p for p in out.decode().split("\0") if p})


def copy_tree(root: Path, dest: Path) -> None:
    """Copy the listed files; a file deleted since listing is skipped, not an error."""
    for rel in tracked_files(root):
        src = root / rel
        if not src.is_file() or src.is_symlink():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def write_config(dest: Path, modules: list[str], tests: list[str]) -> None:
    """Append mutmut's section to the copy's pyproject.toml (mutmut reads it from there)."""
    pyproject = dest / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.mutmut]" in text:
        raise SystemExit("pyproject.toml already has [tool.mutmut]; remove it first")
    # Everything at the top level but the package: tests import kernels/, data, goldens.
    also = sorted(p.name for p in dest.iterdir() if p.name not in {PACKAGE, "mutants", ".git"})
    section = (
        "\n[tool.mutmut]\n"
        f'source_paths = ["{PACKAGE}"]\n'
        f"only_mutate = {_toml_list(modules)}\n"
        f"also_copy = {_toml_list(also)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]\n'
        # The copy is no git repository: nothing to detect changes against.
        "use_git_change_detection = false\n"
    )
    pyproject.write_text(text + section, encoding="utf-8")


def mutmut(work: Path, *args: str, log: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mutmut ARGS`` in the copy (output to ``log`` when given)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-m", "mutmut", *args]
    if log is None:
        return subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    with log.open("w", encoding="utf-8") as fh:
        return subprocess.run(
            cmd, cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT, text=True
        )


def parse_results(text: str) -> dict[str, str]:
    """``mutmut results --all true`` lines ``    NAME: STATUS`` as {name: status}."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name and "__mutmut_" in name:
            found[name] = status
    return found


def summary(statuses: dict[str, str]) -> tuple[Counter[str], float]:
    """Counts per bucket and the score: detected (killed, or a timeout: the mutant made the
    tests hang) over every mutant."""
    counts: Counter[str] = Counter()
    for status in statuses.values():
        if status in KILLED:
            counts["killed"] += 1
        elif status in {"survived", "no tests", "timeout"}:
            counts[status] += 1
        else:
            counts["other"] += 1
    total = len(statuses)
    counts["total"] = total
    detected = counts["killed"] + counts["timeout"]
    return counts, (100.0 * detected / total if total else 0.0)


def resume(work: Path, modules: list[str]) -> list[str]:
    """Refresh ``work``'s tests from the repository and name the mutants to retest: those an
    earlier run there did not kill. Refused when a mutated module changed since (its
    mutants would be stale)."""
    if not (work / "mutants").is_dir():
        raise SystemExit(f"{work}: no mutmut run to resume (run with --keep first)")
    for pattern in modules:
        for path in sorted(ROOT.glob(pattern)):
            rel = path.relative_to(ROOT)
            if path.read_bytes() != (work / rel).read_bytes():
                raise SystemExit(f"{rel} changed since that run: start afresh")
    for rel in tracked_files(ROOT):
        src = ROOT / rel
        if rel.startswith("tests/") and src.is_file() and not src.is_symlink():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / rel)
    statuses = parse_results(mutmut(work, "results", "--all", "true").stdout)
    return sorted(name for name, status in statuses.items() if status not in KILLED)


def module_of(name: str) -> str:
    """``tools.gates.merges`` of a mutant name ``tools.gates.merges.x_f__mutmut_3`` (a method's
    mutants are ``….xǁClassǁmethod__mutmut_N``)."""
    return re.split(r"\.x(?:_|ǁ)", name, maxsplit=1)[0]


def _counts_line(statuses: dict[str, str]) -> str:
    counts, score = summary(statuses)
    return (
        f"killed {counts['killed']}  survived {counts['survived']}  "
        f"no-tests {counts['no tests']}  timeout {counts['timeout']}  other {counts['other']}  "
        f"total {counts['total']}  score {score:.1f}%"
    )


def report(work: Path, modules: list[str], tests: list[str], statuses: dict[str, str]) -> str:
    lines = [
        f"modules: {' '.join(modules)}",
        f"tests: {' '.join(tests)}",
        f"all: {_counts_line(statuses)}",
    ]
    for module in sorted({module_of(name) for name in statuses}):
        mine = {k: v for k, v in statuses.items() if module_of(k) == module}
        lines.append(f"{module}: {_counts_line(mine)}")
    lines.append("(score: mutants detected, killed or timed out, over all of them)")
    names = sorted(name for name, status in statuses.items() if status not in KILLED)
    for name, diff in zip(names, diffs(work, names), strict=True):
        lines += ["", f"## {name} ({statuses[name]})", diff]
    return "\n".join(lines) + "\n"


# What `mutmut show NAME` prints of a mutant, for many names in one process (a process per
# name costs a second each on a loaded machine); \0 between diffs.
_DIFFS = """
import sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
for name in sys.argv[1:]:
    sys.stdout.write(get_diff_for_mutant(name, path=find_mutant(name).path).strip() + "\\0")
"""


def diffs(work: Path, names: list[str]) -> list[str]:
    """Each mutant's diff against the module, in ``names``' order."""
    if not names:
        return []
    out = subprocess.run(
        [sys.executable, "-c", _DIFFS, *names], cwd=work, capture_output=True, text=True
    )
    found = out.stdout.split("\0")[: len(names)]
    if out.returncode != 0 or len(found) != len(names):
        # Fall back to one `mutmut show` per name (a mutmut whose internals moved).
        return [mutmut(work, "show", name).stdout.strip() for name in names]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--module",
        action="append",
        required=True,
        metavar="PATH",
        help="module to mutate, relative to the repository root (repeatable, globs ok)",
    )
    ap.add_argument(
        "--tests",
        action="append",
        required=True,
        metavar="PATH",
        help="test file or node id run against each mutant (repeatable)",
    )
    ap.add_argument("--max-children", type=int, default=1, help="mutmut workers (default 1)")
    ap.add_argument("--out", type=Path, help="also write the report to this file")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, help="work in this new directory and keep it")
    where.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="a directory an earlier --keep run left: copy the repository's tests/ into it "
        "again and retest only the mutants not killed there (the modules must be unchanged)",
    )
    args = ap.parse_args(argv)

    if args.resume is not None:
        work = args.resume.resolve()
        retest = resume(work, args.module)
    elif args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
        work = args.keep.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    try:
        if args.resume is None:
            copy_tree(ROOT, work)
            write_config(work, args.module, args.tests)
            retest = []
        log = work / "mutmut-run.log"
        print(f"mutmut runs in {work} (progress: {log})", file=sys.stderr, flush=True)
        run = mutmut(work, "run", "--max-children", str(args.max_children), *retest, log=log)
        statuses = parse_results(mutmut(work, "results", "--all", "true").stdout)
        if run.returncode != 0 or not statuses:
            tail = log.read_text(encoding="utf-8", errors="replace")[-4000:]
            print(f"mutmut run failed (exit {run.returncode}):\n{tail}", file=sys.stderr)
            return 2
        text = report(work, args.module, args.tests, statuses)
        print(text, end="")
        if args.out is not None:
            args.out.write_text(text, encoding="utf-8")
        return 0
    finally:
        if args.keep is None and args.resume is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
