"""Measuring helpers shared by the benchmarks: the CPU's name, a command's wall times and a
command's own peak RSS."""

from __future__ import annotations

import compileall
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# A fresh interpreter runs the command once and reports the peak RSS of its only child, so the
# figure is the command's own and not the benchmark's.
_RSS_PROBE = (
    "import resource,subprocess,sys;subprocess.run(sys.argv[1:],capture_output=True);"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def peak_rss_kib(cmd: list[str], cwd: Path) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE, *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int(out.strip())


ROOT = Path(__file__).resolve().parents[1]
_COMPILED: set[Path] = set()


def compile_bytecode(code: Path = ROOT) -> None:
    """Write the bytecode of the package under ``code`` (once per run), as ``pip install``
    does, so that a timed command does not compile its modules from source: where
    PYTHONDONTWRITEBYTECODE is set, every run of an uncompiled checkout would (about 30-50 ms
    of each start on the benchmark machine)."""
    code = code.resolve()
    if code not in _COMPILED:
        compileall.compile_dir(code / "tools", quiet=1)
        _COMPILED.add(code)


def wall_times(
    cmd: list[str], cwd: Path, runs: int, before: Callable[[], None] = lambda: None
) -> tuple[list[float], set[int]]:
    """Wall seconds of ``runs`` runs and the exit codes seen; ``before`` runs ahead of each
    run, outside the timing."""
    compile_bytecode()
    walls: list[float] = []
    codes: set[int] = set()
    for _ in range(runs):
        before()
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
        walls.append(time.perf_counter() - start)
        codes.add(proc.returncode)
    return walls, codes


def baseline_tools(code: Path | None, python: str = sys.executable) -> list[str]:
    """The command that runs the ``tools`` of a baseline checkout ``code`` (the code before a
    change; ``git archive REV | tar -x``) with ``python``, or [] when there is none. ``-P``:
    the code comes from PYTHONPATH, never from the folder judged (nor from a ``tools`` that
    ``python``'s own site-packages hold)."""
    if code is None:
        return []
    compile_bytecode(code)
    return ["env", f"PYTHONPATH={code.resolve()}", python, "-P", "-m", "tools"]


_NOT_COPIED = (".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")


def installed_python(tmp: Path) -> str:
    """The python of a venv of its own under ``tmp`` (no system site-packages) with a copy of
    the checkout installed by ``pip install`` (bytecode compiled): the package as a user has
    it, without what the development environment loads at every start. The copy keeps the
    build's ``build/`` folder out of the checkout. pip needs the package index, or a local
    mirror it is configured for."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*_NOT_COPIED))
    pip = [str(venv / "bin/pip"), "install", "-q", str(src)]
    subprocess.run(pip, check=True, capture_output=True)
    return str(venv / "bin/python")


def median(values: list[float]) -> float:
    return statistics.median(values)


def interleaved(
    cmds: dict[str, list[str]],
    cwd: Path,
    runs: int,
    before_each: Callable[[], None] | None = None,
) -> dict[str, tuple]:
    """Per command: median wall and CPU (user + sys of the child) seconds, the exit codes
    seen, and the spread (fastest, slowest wall). Runs are interleaved (each round runs every
    command once) so that load from elsewhere on the machine falls on all commands alike.
    ``before_each``: run before each command's run, outside its timing (a state put back)."""
    compile_bytecode()
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    codes: dict[str, set[int]] = {k: set() for k in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            if before_each is not None:
                before_each()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            codes[name].add(proc.returncode)
    return {
        k: (
            statistics.median(walls[k]),
            statistics.median(cpus[k]),
            sorted(codes[k]),
            min(walls[k]),
            max(walls[k]),
        )
        for k in cmds
    }


def target_row(what: str, measured: str, reference: str, target: str, met: bool | None) -> None:
    """Print one machine-readable row for bench/run_all.py's summary of targets: what was
    measured, the figure, the reference it is set beside, the target, and the verdict
    (None: no target, a figure for scale)."""
    verdict = "—" if met is None else ("met" if met else "MISSED")
    print("\t".join(["TARGET", what, measured, reference, target, verdict]))


def log_with_paths(rev_range: str) -> list[str]:
    """The ``git log`` pass the range gates make when they need paths (messages, parents and
    changed paths with rename detection, NUL-separated): their reference."""
    return [
        "git",
        "log",
        "-z",
        "--format=%x01%H%x00%P%x00%ct%x00%B%x00",
        "--name-status",
        "-M",
        rev_range,
        "--",
    ]


def print_machine(load_before: float, load_after: float) -> None:
    """The date, the machine and the load around the timed runs, as each report starts."""
    import os

    print(f"date: {time.strftime('%Y-%m-%d')}")
    print(f"machine: {cpu_model()}, nproc {os.cpu_count()}, Python {platform.python_version()}")
    print(f"load average (1 min) before/after: {load_before:.2f} / {load_after:.2f}")
