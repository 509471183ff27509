"""Nothing this repository ships may depend on the CPU's vector width: its kernels' bytes, the
verdicts and bit-exact counts of its goldens, the top-p verdicts and the hand-built boundary row.

CPU independence, checked directly: ``tests/numerics/cpu_probe.py`` runs once per vector width
this CPU offers, each in its own process, with torch's ATen kernels held to that width
(``ATEN_CPU_CAPABILITY``) and MKL's transcendental functions to the matching instruction set
(``MKL_ENABLE_INSTRUCTIONS``; torch routes ``exp``/``erf`` over large tensors through MKL, which
picks its own code path by CPU), so a machine with AVX-512 also answers for an AVX2 machine and
a plain SSE one. Every width must report the same bytes and verdicts. Only the widths up to
the one torch detects on this CPU are run: torch does not fall back from a width the CPU lacks
(``ATEN_CPU_CAPABILITY=avx512`` on an AVX2-only CPU stops the process with SIGILL), and MKL
lowers only as far as the CPU goes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.numerics.margins import assert_clear_of_the_cut

ROOT = Path(__file__).resolve().parents[2]
# (ATen capability, the MKL instruction set of a CPU of that width, what torch then reports),
# narrowest first
WIDTHS = (
    ("default", "SSE4_2", "DEFAULT"),
    ("avx2", "AVX2", "AVX2"),
    ("avx512", "AVX512", "AVX512"),
)


def native_capability() -> str:
    """The widest vector width torch finds on this CPU (``ATEN_CPU_CAPABILITY`` unset)."""
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    proc = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()[-1]


def offered(native: str) -> list[tuple[str, str]]:
    """The widths this CPU offers: those up to ``native`` (a CPU of another family, which
    reports none of them: the plain build alone)."""
    names = [reported for _, _, reported in WIDTHS]
    top = names.index(native) if native in names else 0
    return [(aten, mkl) for aten, mkl, _ in WIDTHS[: top + 1]]


def test_the_widths_run_are_those_the_cpu_offers() -> None:
    assert offered("DEFAULT") == [("default", "SSE4_2")]
    assert offered("AVX2") == [("default", "SSE4_2"), ("avx2", "AVX2")]
    assert [aten for aten, _ in offered("AVX512")] == ["default", "avx2", "avx512"]
    assert offered("SVE256") == [("default", "SSE4_2")]


def probe(aten: str, mkl: str) -> dict:
    env = {**os.environ, "ATEN_CPU_CAPABILITY": aten, "MKL_ENABLE_INSTRUCTIONS": mkl}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.numerics.cpu_probe"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{aten}/{mkl}: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_vector_width_gives_the_same_bytes_and_verdicts() -> None:
    reports: dict[str, dict] = {}
    native = native_capability()
    for aten, mkl in offered(native):
        report = probe(aten, mkl)
        reports.setdefault(report["capability"], report)
    assert "DEFAULT" in reports  # the plain build is always there to compare with
    assert native in reports or native not in {reported for *_, reported in WIDTHS}
    (first_width, first), *rest = reports.items()
    for width, report in rest:
        for part in first["same"]:
            assert report["same"][part] == first["same"][part], (
                f"{part} differs between {first_width} and {width}"
            )
    same = first["same"]
    # ...and what they agree on is right: every shipped golden reproduces bit-exactly where
    # its manifest pins bits, the top-p verdicts are as shipped, the boundary row is as built.
    assert all(case["ok"] for case in same["goldens"].values()), same["goldens"]
    assert same["topp"]["flat"] == {
        "stock": "fail",
        "split": "pass",
        "counts": [[1799], [1800]],
    }
    shipped = yaml.safe_load((ROOT / "numerics" / "topp-plan.yaml").read_text())["cases"]
    probed = [case for case in shipped if case["name"] in same["topp"]]
    assert probed and len(same["topp"]) == len(probed) + 1
    for case in probed:  # the shipped plan's batch-4 forced cases, under stock too
        assert same["topp"][case["name"]] == {"stock": "pass", "split": "pass"}
        # stock's containment on their random rows rests on the kept side of each cut
        forced = {f["row"] for f in case.get("forced", [])}
        rows = [r for r in range(case["batch"]) if r not in forced]
        assert_clear_of_the_cut(case, rows, kept_side_only=True)
