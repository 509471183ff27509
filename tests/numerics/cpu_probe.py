"""The sensitive cases of the numerics, evaluated once in this process: run by
``test_cpu_independence.py`` as ``python -m tests.numerics.cpu_probe`` under each vector width
(``ATEN_CPU_CAPABILITY`` and ``MKL_ENABLE_INSTRUCTIONS`` must be set before torch loads, hence
one process each).

Prints one JSON object: ``capability`` (what torch runs with), ``same`` (what must be identical
under every vector width: the kernels' output bytes on every bf16 value and on a million fp32
values, the shipped goldens' verdicts and bit-exact counts, the top-p verdicts and the hand-built
boundary row's counts) and ``may_differ`` (figures documented as CPU-dependent, reported to
show what the check does not compare).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
import yaml

from kernels.activation import gelu_and_mul, gelu_f32, silu_and_mul, silu_f32
from kernels.norm import fused_add_rms_norm, rms_norm
from tests.conftest import run_cli
from tests.numerics.margins import FLAT_N, FLAT_P
from tools.numerics.tensors import cpu_capability

ROOT = Path(__file__).resolve().parents[2]
PLAN = ROOT / "numerics" / "topp-plan.yaml"


def _sha(t: torch.Tensor) -> str:
    bits = {torch.bfloat16: torch.int16, torch.float32: torch.int32}[t.dtype]
    return hashlib.sha256(t.contiguous().view(bits).numpy().tobytes()).hexdigest()


def kernel_bytes() -> dict[str, str]:
    """sha256 of every activation and norm variant's output, on inputs that do not come from
    torch's (CPU-dependent) randn: every finite bf16 value, and numpy-drawn values."""
    bits = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
    every_bf16 = torch.from_numpy(bits[np.isfinite(bits)].copy())
    rs = np.random.default_rng(20260101)
    fp32 = torch.from_numpy((rs.standard_normal(1 << 20) * 6).astype(np.float32))
    out = {}
    for name, t in (("every_bf16", every_bf16), ("fp32", fp32)):
        out[f"silu_f32/{name}"] = _sha(silu_f32(t))
        out[f"gelu_f32/{name}"] = _sha(gelu_f32(t))
        out[f"gelu_f32_tanh/{name}"] = _sha(gelu_f32(t, "tanh"))
    gate_up = torch.from_numpy((rs.standard_normal((64, 8192)) * 4).astype(np.float32))
    gate_up = gate_up.to(torch.bfloat16)
    x = torch.from_numpy((rs.standard_normal((64, 4096)) * 3).astype(np.float32))
    r = torch.from_numpy(rs.standard_normal((64, 4096)).astype(np.float32))
    w = torch.from_numpy((1 + 0.1 * rs.standard_normal(4096)).astype(np.float32))
    for v in ("upstream", "f32_once", "narrow_act"):
        out[f"silu_and_mul/{v}"] = _sha(silu_and_mul(gate_up, variant=v))
        out[f"gelu_and_mul/{v}"] = _sha(gelu_and_mul(gate_up, variant=v))
    for v in ("upstream", "f32_once"):
        for dtype in (torch.bfloat16, torch.float32):
            xs, rs_, ws = x.to(dtype), r.to(dtype), w.to(dtype)
            out[f"rms_norm/{v}/{dtype}"] = _sha(rms_norm(xs, ws, variant=v))
            fused = fused_add_rms_norm(xs, rs_, ws, variant=v)
            out[f"fused_add_rms_norm/{v}/{dtype}"] = _sha(fused["out"])
    return out


def goldens() -> dict[str, dict]:
    """Every shipped golden's verdict, and the bit-exact count of each output the manifest
    holds to `exact` or `bitwise` (a tolerance output's count may differ between CPUs)."""
    run = run_cli(["--repo", str(ROOT), "--format", "json", "golden", "check"])
    gate = json.loads(run.stdout)["gates"][0]
    out = {}
    for case, res in gate["stats"]["results"].items():
        manifest = yaml.safe_load((ROOT / "goldens" / case / "manifest.yaml").read_text())
        pinned = [k for k, tol in manifest["tolerance"].items() if tol in ("exact", "bitwise")]
        out[case] = {
            "ok": res["ok"],
            "bit_exact": {k: res["outputs"][k]["bit_exact"] for k in pinned},
        }
    return out


def topp() -> tuple[dict, dict]:
    """The hand-built boundary row and the shipped plan's forced cases, under stock and split;
    the shipped plan's large case is left out for speed (split's verdict there holds by
    construction, and the whole plan is run under each width by hand, see docs/numerics.md)."""
    shipped = yaml.safe_load(PLAN.read_text())["cases"]
    flat = {"name": "flat", "batch": 1, "vocab": FLAT_N, "seed": 1, "scale": 0.0, "p": FLAT_P}
    plan = {
        "kernels": {
            "stock": "kernels.sampling:top_p_stock",
            "split": "kernels.sampling:top_p_split",
        },
        "cases": [flat] + [c for c in shipped if c["batch"] <= 4],
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.yaml"
        path.write_text(yaml.safe_dump(plan, sort_keys=False))
        run = run_cli(
            ["--repo", str(ROOT), "--format", "json", "numerics", "topp-count", str(path)]
            + ["--no-record"]
        )
    cases = json.loads(run.stdout)["gates"][0]["stats"]["cases"]
    same = {}
    differ = {}
    for c in cases:
        same[c["name"]] = {k: v["verdict"] for k, v in c["kernels"].items()}
        differ[c["name"]] = {"logits_sha256": c["logits_sha256"], "K": c["kernels"]["split"]["K"]}
    by_name = {c["name"]: c for c in cases}
    same["flat"]["counts"] = [by_name["flat"]["native_counts"], by_name["flat"]["binary64_counts"]]
    return same, differ


def main() -> None:
    topp_same, topp_differ = topp()
    report = {
        "capability": cpu_capability(),
        "same": {"kernels": kernel_bytes(), "goldens": goldens(), "topp": topp_same},
        "may_differ": {"topp": topp_differ},
    }
    json.dump(report, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
