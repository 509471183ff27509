"""``tools golden check|explain|capture`` on real repositories built in temp dirs.

CPU independence: the kernels round where the CPU's vector width cannot change the result
(activations and the RMS variance in binary64, rounded once to fp32), so the shipped goldens
are bit-exact on every CPU; the stock top-k/top-p golden sums fp32 probabilities, and a test
shows each of its rows' cuts lies far from ``1 - p``. The logprobs golden's max abs error may
differ between CPUs within its tolerance; no test asserts it. The other cases use constant ops.
``test_cpu_independence.py`` reruns every shipped golden under every vector width.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

from tests.conftest import Repo
from tests.numerics.margins import FP32_SPREAD, boundary_margins
from tools import ledger
from tools.numerics.tensors import Tolerance, compare

ROOT = Path(__file__).resolve().parents[2]
SILU = "silu_and_mul_bf16_8x256"


def copy_golden(repo: Repo, case: str) -> Path:
    dest = repo.path / "goldens" / case
    shutil.copytree(ROOT / "goldens" / case, dest)
    return dest


def write_case(
    repo: Repo,
    name: str,
    op: str,
    inputs: dict[str, np.ndarray],
    outputs: dict[str, np.ndarray],
    tolerance: dict[str, Any],
    *,
    args: dict[str, Any] | None = None,
    dtypes: dict[str, str] | None = None,
    variant: str | None = None,
) -> Path:
    """A case folder with its .npy files and a manifest whose hashes match them."""
    folder = repo.path / "goldens" / name
    folder.mkdir(parents=True)
    dtypes = dtypes or {}
    manifest: dict[str, Any] = {
        "op": op,
        "args": args or {},
        "seed": 0,
        "generator": f"torch {torch.__version__}",
        "oracle": {"source": "test", "commit": "0" * 40},
    }
    if variant:
        manifest["variant"] = variant
    for section, arrays in (("inputs", inputs), ("outputs", outputs)):
        manifest[section] = {}
        for key, arr in arrays.items():
            file = f"{section}-{key}.npy"
            np.save(folder / file, arr, allow_pickle=False)
            manifest[section][key] = {
                "file": file,
                "sha256": hashlib.sha256((folder / file).read_bytes()).hexdigest(),
                "dtype": dtypes.get(key, str(arr.dtype)),
                "shape": list(arr.shape),
            }
    manifest["tolerance"] = tolerance
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder


def const_case(repo: Repo, name: str) -> Path:
    """A one-element case whose op returns the constant 0.0, its golden 0.0 (exact)."""
    return write_case(
        repo,
        name,
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": "exact"},
        args={"value": 0.0},
    )


def one(value: float, dtype: Any = np.float32) -> np.ndarray:
    return np.array([value], dtype=dtype)


# -- the shipped goldens --------------------------------------------------------------------
def test_every_shipped_golden_reproduces(repo: Repo) -> None:
    for case in sorted(p.name for p in (ROOT / "goldens").iterdir()):
        copy_golden(repo, case)
    run = repo.tools("--format", "json", "golden", "check")
    assert run.exit_code == 0, run.stdout + run.stderr
    gate = run.json()["gates"][0]
    assert gate["gate"] == "golden" and gate["status"] == "pass"
    assert gate["stats"]["cases"] == len(list((ROOT / "goldens").iterdir())) >= 7
    assert {f["rule"] for f in gate["findings"]} == {"golden-result"}


def test_the_bitwise_stock_golden_is_clear_of_its_cuts() -> None:
    # Stock sums fp32 probabilities whose rounding depends on the vector width: its golden's
    # bits are the same on every CPU only because each row's cut lies far from 1 - p.
    folder = ROOT / "goldens" / "top_k_top_p_stock_f32_4x4096"
    logits, k, p = (np.load(folder / f"{n}.npy") for n in ("logits", "k", "p"))
    for row in range(logits.shape[0]):
        below, above = boundary_margins(logits[row], float(p[row]), int(k[row]))
        assert min(below, above) > FP32_SPREAD, (row, below, above)


def test_silu_8x256_is_bit_exact_only_under_the_upstream_polarity(repo: Repo) -> None:
    copy_golden(repo, SILU)
    run = repo.tools("golden", "explain", SILU)
    assert run.exit_code == 0, run.stderr
    table = {line.split()[0]: line for line in run.stdout.splitlines()[2:5]}
    assert "reproduces the golden bit-exactly" in table["upstream"]
    assert "mismatch" in table["f32_once"] and "mismatch" in table["narrow_act"]
    data = repo.tools("--format", "json", "golden", "explain", SILU).json()
    stats = data["gates"][0]["stats"]
    assert stats["bit_exact_variants"] == ["upstream"]
    by = {v["variant"]: v for v in stats["variants"]}
    assert by["upstream"]["bit_exact"] == by["upstream"]["total"] == 8 * 256
    assert 0 < by["f32_once"]["bit_exact"] < 8 * 256
    assert by["f32_once"]["max_abs_err"] > 0 and by["f32_once"]["worst_margin"] == "inf"
    assert by["narrow_act"]["bit_exact"] == 0  # fp32 output: never the golden's bf16 bits


def test_explain_reads_variants_from_the_op_attribute(repo: Repo) -> None:
    x = one(1.5)
    write_case(
        repo,
        "v",
        "tests.numerics.ops:with_variants",
        {"x": x},
        {"out": x},
        {"out": "exact"},
        variant="a",
    )
    data = repo.tools("--format", "json", "golden", "explain", "v").json()
    stats = data["gates"][0]["stats"]
    assert [v["variant"] for v in stats["variants"]] == ["a", "b"]
    assert stats["bit_exact_variants"] == ["a"]


# -- tolerance modes --------------------------------------------------------------------------
def test_float32_0_008_against_0_with_atol_0_008_fails_just_above_one(repo: Repo) -> None:
    write_case(
        repo,
        "atol",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": {"atol": 0.008, "rtol": 0.0}},
        args={"value": 0.008},
    )
    run = repo.tools("--format", "json", "golden", "check", "atol")
    assert run.exit_code == 1
    gate = run.json()["gates"][0]
    [finding] = [f for f in gate["findings"] if f["rule"] == "golden-mismatch"]
    margin = float(np.float32(0.008)) / 0.008  # float32(0.008) = 0.00800000037997961...
    assert margin > 1
    out = gate["stats"]["results"]["atol"]["outputs"]["out"]
    assert out["worst_margin"] == margin and out["worst_index"] == [0]
    assert out["got"] == float(np.float32(0.008)) and out["want"] == 0.0
    assert repr(margin) in finding["message"]
    assert finding["path"] == "goldens/atol/manifest.yaml"


def test_the_same_value_within_a_wider_atol_passes(repo: Repo) -> None:
    write_case(
        repo,
        "atol",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": {"atol": 0.00801}},
        args={"value": 0.008},
    )
    assert repo.tools("golden", "check").exit_code == 0


@pytest.mark.parametrize("mode,code", [("exact", 0), ("bitwise", 1)])
def test_negative_zero_passes_exact_and_fails_bitwise(repo: Repo, mode: str, code: int) -> None:
    write_case(
        repo,
        "zero",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": mode},
        args={"value": -0.0},
    )
    run = repo.tools("golden", "check")
    assert run.exit_code == code, run.stdout
    assert ("golden-mismatch" in run.stdout) == bool(code)


@pytest.mark.parametrize(
    "mode,got,want,code",
    [
        ("exact", "nan", float("nan"), 1),  # non-finite fails exact even when both are NaN
        ({"atol": 1.0}, "nan", 0.0, 1),  # ...and any tolerance
        ({"atol": 1.0}, 0.0, float("inf"), 1),  # a non-finite golden fails too
        ("exact", "inf", float("inf"), 1),
        ("bitwise", "nan", float("nan"), 0),  # identical NaN bits pass bitwise
        ({"atol": 0.0, "rtol": 1e-3}, 1000.5, 1000.0, 0),  # margin 0.5
        ({"atol": 0.0, "rtol": 1e-3}, 1001.5, 1000.0, 1),  # margin 1.5
    ],
)
def test_tolerance_modes(repo: Repo, mode: Any, got: Any, want: float, code: int) -> None:
    write_case(
        repo,
        "t",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(want)},
        {"out": mode},
        args={"value": got},
    )
    run = repo.tools("golden", "check")
    assert run.exit_code == code, run.stdout


def test_compare_reports_the_worst_element_with_its_index() -> None:
    want = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    got = torch.tensor([[1.0, 2.5], [3.0, 4.25]])
    c = compare(got, want, Tolerance("tol", atol=0.1, rtol=0.1))
    # margins: 0.5/(0.1+0.2) = 1.667 at [0, 1]; 0.25/(0.1+0.4) = 0.5 at [1, 1]
    assert c.worst_index == [0, 1] and c.worst_margin == pytest.approx(0.5 / 0.3)
    assert c.max_abs_err == 0.5 and c.bit_exact == 2 and not c.ok
    assert compare(got, want, Tolerance("tol", atol=0.5)).ok


def test_a_kernel_returning_another_dtype_or_shape_mismatches(repo: Repo) -> None:
    write_case(
        repo,
        "dt",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(1.0)},
        {"out": {"atol": 1.0}},
        args={"value": 1.0, "dtype": "float64"},
    )
    run = repo.tools("golden", "check")
    assert run.exit_code == 1 and "dtype float64 != golden float32" in run.stdout


def test_a_kernel_that_raises_is_a_mismatch(repo: Repo) -> None:
    write_case(
        repo,
        "boom",
        "tests.numerics.ops:broken",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": "exact"},
    )
    run = repo.tools("golden", "check")
    assert run.exit_code == 1 and "this kernel always fails" in run.stdout


# -- tampering ----------------------------------------------------------------------------------
def test_a_changed_byte_is_tampered(repo: Repo) -> None:
    folder = copy_golden(repo, SILU)
    data = bytearray((folder / "out.npy").read_bytes())
    data[-1] ^= 1
    (folder / "out.npy").write_bytes(bytes(data))
    run = repo.tools("--format", "json", "golden", "check")
    assert run.exit_code == 1
    [f] = [f for f in run.json()["gates"][0]["findings"] if f["severity"] == "error"]
    assert f["rule"] == "golden-tampered" and "sha256" in f["message"]


def test_a_missing_file_is_tampered(repo: Repo) -> None:
    folder = copy_golden(repo, SILU)
    (folder / "x.npy").unlink()
    run = repo.tools("golden", "check", SILU)
    assert run.exit_code == 1 and "golden-tampered" in run.stdout and "is missing" in run.stdout


def test_a_shape_that_differs_from_the_manifest_is_tampered(repo: Repo) -> None:
    folder = const_case(repo, "s")
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    manifest["outputs"]["out"]["shape"] = [2]
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    run = repo.tools("golden", "check")
    assert run.exit_code == 1 and "golden-tampered" in run.stdout and "shape [1]" in run.stdout


# -- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda m: m.pop("oracle"), "'oracle' is a required property"),
        (lambda m: m["outputs"]["out"].update(dtype="float128"), "outputs.out.dtype"),
        (lambda m: m.update(tolerance={"other": "exact"}), "tolerance"),
        (lambda m: m.update(tolerance={"out": "close"}), "tolerance.out"),
        (lambda m: m["inputs"]["x"].update(file="../x.npy"), "inputs.x.file"),
        (lambda m: m.update(surprise=1), "unknown key"),
    ],
)
def test_a_malformed_manifest_is_exit_2_naming_the_field(repo: Repo, edit, field: str) -> None:
    folder = const_case(repo, "m")
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    edit(manifest)
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    run = repo.tools("golden", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: goldens/m/manifest.yaml") and field in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1


def test_a_duplicate_key_in_a_manifest_is_exit_2(repo: Repo) -> None:
    folder = const_case(repo, "dup")
    text = (folder / "manifest.yaml").read_text()
    (folder / "manifest.yaml").write_text(text + "seed: 1\n")  # `seed` a second time
    run = repo.tools("golden", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error: goldens/dup/manifest.yaml")
    assert "duplicate key 'seed'" in run.stderr and len(run.stderr.splitlines()) == 1


def test_a_numeric_seed_written_as_a_float_is_exit_2(repo: Repo) -> None:
    folder = const_case(repo, "f")
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    manifest["seed"] = 1.0
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))
    run = repo.tools("golden", "check")
    assert run.exit_code == 2 and "goldens/f/manifest.yaml: seed" in run.stderr


def test_an_op_that_cannot_be_imported_is_exit_2(repo: Repo) -> None:
    write_case(
        repo, "imp", "kernels.nowhere:silu", {"x": one(0.0)}, {"out": one(0.0)}, {"out": "exact"}
    )
    run = repo.tools("golden", "check")
    assert run.exit_code == 2 and "cannot import 'kernels.nowhere'" in run.stderr


def test_an_unknown_case_is_exit_2(repo: Repo) -> None:
    copy_golden(repo, SILU)
    run = repo.tools("golden", "check", "no_such_case")
    assert run.exit_code == 2 and "no golden case 'no_such_case'" in run.stderr


def test_no_goldens_folder_passes_with_golden_absent(repo: Repo) -> None:
    run = repo.tools("--format", "json", "golden", "check")
    assert run.exit_code == 0
    assert [f["rule"] for f in run.json()["gates"][0]["findings"]] == ["golden-absent"]


def test_the_goldens_folder_comes_from_the_config(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "goldens: {dir: golden-cases}\n")
    shutil.copytree(ROOT / "goldens" / SILU, repo.path / "golden-cases" / SILU)
    run = repo.tools("golden", "check")
    assert run.exit_code == 0 and SILU in run.stdout


# -- capture ----------------------------------------------------------------------------------
RECIPE = """\
op: kernels.activation:silu_and_mul
variant: upstream
seed: 7
oracle: {source: vllm csrc/activation_kernels.cu, commit: 00ccbd42dc1f40412cc711c5737cc4be0e7a8145}
inputs:
  x: {dtype: bfloat16, shape: [2, 16], init: {dist: randn, scale: 2.0}}
outputs:
  out: {}
tolerance: {out: exact}
"""


def test_capture_generates_checks_refuses_and_records(repo: Repo) -> None:
    repo.write("goldens/small/manifest.yaml", RECIPE)
    run = repo.tools("golden", "capture", "small")
    assert run.exit_code == 0, run.stderr
    folder = repo.path / "goldens" / "small"
    manifest = yaml.safe_load((folder / "manifest.yaml").read_text())
    assert manifest["outputs"]["out"]["shape"] == [2, 8]
    assert manifest["outputs"]["out"]["dtype"] == "bfloat16"
    assert manifest["generator"] == f"torch {torch.__version__}"
    assert np.load(folder / "x.npy").dtype == np.uint16  # bf16 as its bit patterns
    first = {f: (folder / f).read_bytes() for f in ("x.npy", "out.npy")}
    assert repo.tools("golden", "check").exit_code == 0

    again = repo.tools("golden", "capture", "small")
    assert again.exit_code == 2 and "--force" in again.stderr
    assert repo.tools("golden", "capture", "small", "--force").exit_code == 0
    assert {f: (folder / f).read_bytes() for f in first} == first  # same seed, same bytes

    records = [r for _, r in ledger.read_records(repo.path / ".agents/ledger.jsonl")]
    assert records and all(r["kind"] == "golden-capture" for r in records)
    assert records[0]["case"] == "small" and records[0]["seed"] == 7
    assert records[0]["files"]["out.npy"] == manifest["outputs"]["out"]["sha256"]
    assert ledger.verify_record(records[0]) is None


def test_capture_of_a_case_whose_op_returns_the_wrong_dtype_is_exit_2(repo: Repo) -> None:
    repo.write("goldens/small/manifest.yaml", RECIPE.replace("out: {}", "out: {dtype: float32}"))
    run = repo.tools("golden", "capture", "small")
    assert run.exit_code == 2 and "outputs.out.dtype" in run.stderr
    assert not (repo.path / "goldens/small/x.npy").exists()  # nothing half-written


def test_github_format_annotates_the_manifest(repo: Repo) -> None:
    write_case(
        repo,
        "zero",
        "tests.numerics.ops:const",
        {"x": one(0.0)},
        {"out": one(0.0)},
        {"out": "bitwise"},
        args={"value": -0.0},
    )
    run = repo.tools("--format", "github", "golden", "check")
    assert run.exit_code == 1
    assert "::error file=goldens/zero/manifest.yaml,title=golden/golden-mismatch::" in run.stdout
    json.loads(repo.tools("--format", "json", "golden", "check").stdout)


def test_capture_into_a_linked_case_folder_is_exit_2_and_writes_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "manifest.yaml").write_text(RECIPE)
    (repo.path / "goldens").mkdir()
    (repo.path / "goldens" / "small").symlink_to(outside)
    run = repo.tools("golden", "capture", "small")
    assert run.exit_code == 2, run.stderr
    assert "goldens/small" in run.stderr and "symbolic link" in run.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["manifest.yaml"]
    assert (outside / "manifest.yaml").read_text() == RECIPE


def test_check_refuses_a_case_folder_linked_out_of_the_repository(
    repo: Repo, tmp_path: Path
) -> None:
    # A pull request's golden case that is a link to a folder of the CI machine: its
    # manifest is neither read nor quoted (SPEC §10), whatever it holds.
    outside = tmp_path / "outside-case"
    outside.mkdir()
    (outside / "manifest.yaml").write_text("op: gho_SECRET_TOKEN_1234\nseed: [\n")
    (repo.path / "goldens").mkdir()
    (repo.path / "goldens" / "small").symlink_to(outside)
    for args in (["golden", "check", "small"], ["golden", "check"]):
        run = repo.tools(*args)
        assert run.exit_code == 2, run.stdout
        assert "gho_SECRET" not in run.stdout + run.stderr
        (line,) = run.stderr.splitlines()
        assert line.startswith("error: goldens/small/manifest.yaml") and "symbolic link" in line


def test_check_refuses_a_tensor_file_linked_out_of_the_repository(
    repo: Repo, tmp_path: Path
) -> None:
    folder = const_case(repo, "small")
    outside = tmp_path / "big.npy"
    shutil.copy(folder / "inputs-x.npy", outside)
    (folder / "inputs-x.npy").unlink()
    (folder / "inputs-x.npy").symlink_to(outside)
    run = repo.tools("--format", "json", "golden", "check", "small")
    assert run.exit_code == 1
    (finding,) = run.json()["gates"][0]["findings"]
    assert finding["rule"] == "golden-tampered" and "leaves the repository" in finding["message"]
