"""bench/run_all.py writes BENCHMARKS.md from what the benchmarks printed: every TARGET row
lands in the summary with its verdict, a failed or skipped benchmark is said, never dropped."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _driver():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("run_all", ROOT / "bench" / "run_all.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["run_all"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.pop(0)


def test_targets_are_summarised_and_failures_said() -> None:
    run_all = _driver()
    out, rows = run_all.split_targets(
        "figure line\nTARGET\tpreflight\t364 ms\tgit status 12 ms\t<= 300 ms\tMISSED\n"
        "TARGET\tstart\t80 ms\t—\t<= 100 ms\tmet\n"
    )
    assert out == "figure line" and len(rows) == 2
    ok = run_all.Result("A", ["bench_a.py"], "what A measures", code=0, output=out, targets=rows)
    bad = run_all.Result("B", ["bench_b.py"], "what B measures", code=1, output="boom")
    skip = run_all.Result("C", ["bench_c.py"], "what C measures", skipped="no torch")
    header = {"date": "2026-11-30 21:00", "machine": "m", "software": "s"}
    text = run_all.render([ok, bad, skip], header)
    assert "| preflight | 364 ms | git status 12 ms | <= 300 ms | **MISSED** |" in text
    assert "| start | 80 ms | — | <= 100 ms | met |" in text
    assert "| B | the benchmark failed (exit 1) | — | — | FAILED |" in text
    assert "| C | skipped: no torch |" in text
    assert "Targets missed: 2." in text
    assert "TARGET\t" not in text and "```text\nfigure line\n```" in text
    assert "Command: `python bench/bench_a.py`" in text


def test_every_benchmark_script_exists() -> None:
    run_all = _driver()
    for _, argv, _ in run_all.BENCHES:
        assert (ROOT / "bench" / argv[0]).is_file(), argv[0]


def test_the_ratchet_benchmark_counts_in_process(repo, monkeypatch) -> None:
    # Its in-process figure calls the engine as the gate does: a change of the engine's or the
    # config's shape must break this test, not only the next full benchmark run.
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_ratchet", ROOT / "bench" / "bench_ratchet.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    from tools.ratchets import engine

    counted = []
    real = engine.count

    def count(*args, **kwargs):  # the engine itself, its counts kept for the test
        results, stats = real(*args, **kwargs)
        counted.append(results["device-leakage"].counts["kcuda"])
        return results, stats

    monkeypatch.setattr(engine, "count", count)
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "auto d = at::Device(at::kCUDA);\n"})
    assert module._count_in_process(repo.path, 1) > 0
    assert counted == [1, 1]  # the warm-up and the one timed run, each finding the site
