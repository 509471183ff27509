"""Ops named in manifests and plans come from the repository under judgement, never from this
one: not from an installed package, not from a module this process imported before.

CPU independence: the ops judged here return constants or keep every token, so no verdict
below depends on floating-point rounding.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

import kernels.activation
import kernels.sampling
from tests.conftest import Repo

ROOT = Path(__file__).resolve().parents[2]
SILU = "silu_and_mul_bf16_8x256"

OTHER_ACTIVATION = """\
import torch


def silu_and_mul(x, *, variant="upstream"):
    # Not this repository's op: a constant, so a golden tells the two apart.
    return torch.full_like(x[..., : x.shape[-1] // 2], 7.0)
"""

OTHER_SAMPLING = """\
def top_p_stock(logits, p):
    # Not this repository's op: keeps every token.
    return logits.clone()
"""


def own_kernels(repo: Repo, files: dict[str, str]) -> None:
    repo.write("kernels/__init__.py", "")
    for name, text in files.items():
        repo.write(f"kernels/{name}", text)


def sevens_case(repo: Repo) -> None:
    """A case whose golden is what the repository's own silu_and_mul returns: all 7.0."""
    folder = repo.path / "goldens" / "sevens"
    folder.mkdir(parents=True)
    arrays = {"x.npy": np.zeros((2, 8), np.float32), "out.npy": np.full((2, 4), 7.0, np.float32)}
    for name, arr in arrays.items():
        np.save(folder / name, arr, allow_pickle=False)

    def spec(name: str) -> dict:
        data = (folder / name).read_bytes()
        arr = arrays[name]
        return {
            "file": name,
            "sha256": hashlib.sha256(data).hexdigest(),
            "dtype": "float32",
            "shape": list(arr.shape),
        }

    manifest = {
        "op": "kernels.activation:silu_and_mul",
        "seed": 0,
        "oracle": {"source": "test", "commit": "0" * 40},
        "inputs": {"x": spec("x.npy")},
        "outputs": {"out": spec("out.npy")},
        "tolerance": {"out": "exact"},
    }
    (folder / "manifest.yaml").write_text(yaml.safe_dump(manifest))


def test_this_repositorys_kernels_are_importable_here() -> None:
    # The premise of the tests below: in this process `kernels` resolves to this repository.
    assert Path(kernels.activation.__file__).resolve().is_relative_to(ROOT / "kernels")


def test_a_repository_is_judged_with_its_own_op(bare_repo: Repo) -> None:
    own_kernels(bare_repo, {"activation.py": OTHER_ACTIVATION})
    sevens_case(bare_repo)
    shutil.copytree(ROOT / "goldens" / SILU, bare_repo.path / "goldens" / SILU)
    ours = sys.modules["kernels.activation"]
    run = bare_repo.tools("--format", "json", "golden", "check")
    assert run.exit_code == 1, run.stderr
    gate = run.json()["gates"][0]
    by_case = {}
    for f in gate["findings"]:
        by_case.setdefault(f["message"].split(":")[0], set()).add(f["rule"])
    # its own op returns 7.0: its own golden passes, this repository's silu golden does not
    assert by_case == {"sevens": {"golden-result"}, SILU: {"golden-mismatch"}}
    # and this process's `kernels` is this repository's again, the very same module
    assert sys.modules["kernels.activation"] is ours
    assert not (bare_repo.path / "kernels" / "__pycache__").exists()  # nothing written there


def test_explain_and_capture_use_the_repositorys_own_op(bare_repo: Repo) -> None:
    own_kernels(bare_repo, {"activation.py": OTHER_ACTIVATION})
    sevens_case(bare_repo)
    run = bare_repo.tools("--format", "json", "golden", "explain", "sevens")
    assert run.exit_code == 0, run.stdout + run.stderr
    manifest = bare_repo.path / "goldens" / "sevens" / "manifest.yaml"
    recipe = yaml.safe_load(manifest.read_text())
    recipe["inputs"]["x"] = {"dtype": "float32", "shape": [3, 4]}
    recipe["outputs"]["out"] = {}
    manifest.write_text(yaml.safe_dump(recipe))
    run = bare_repo.tools("golden", "capture", "sevens", "--force")
    assert run.exit_code == 0, run.stderr
    assert (np.load(manifest.parent / "out.npy") == 7.0).all()


def test_a_plan_is_judged_with_the_repositorys_own_kernel(bare_repo: Repo) -> None:
    own_kernels(bare_repo, {"sampling.py": OTHER_SAMPLING})
    ours = kernels.sampling.top_p_stock
    plan = {
        "kernels": {"stock": "kernels.sampling:top_p_stock"},
        "cases": [{"name": "small", "batch": 2, "vocab": 4096, "seed": 1, "p": 0.5}],
    }
    bare_repo.write("plan.yaml", yaml.safe_dump(plan))
    run = bare_repo.tools(
        "--format",
        "json",
        "numerics",
        "topp-count",
        str(bare_repo.path / "plan.yaml"),
        "--no-record",
    )
    assert run.exit_code == 1, run.stderr
    stock = run.json()["gates"][0]["stats"]["cases"][0]["kernels"]["stock"]
    assert [r["kernel"] for r in stock["rows"]] == [4096, 4096]  # its own: keeps everything
    assert "topp-count-rule" in stock["failures"]
    assert sys.modules["kernels.sampling"].top_p_stock is ours


def test_an_op_the_judged_repository_lacks_is_exit_2(bare_repo: Repo) -> None:
    # `kernels` is importable in this process (this repository's), but not from the judged one.
    assert importlib.util.find_spec("kernels") is not None
    shutil.copytree(ROOT / "goldens" / SILU, bare_repo.path / "goldens" / SILU)
    run = bare_repo.tools("golden", "check")
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith(f"error: goldens/{SILU}/manifest.yaml: op")
    assert "no package or module 'kernels'" in run.stderr
    assert "internal error" not in run.stderr and len(run.stderr.splitlines()) == 1


def test_a_plan_kernel_the_judged_repository_lacks_is_exit_2(bare_repo: Repo) -> None:
    plan = {
        "kernels": {"stock": "kernels.sampling:top_p_stock"},
        "cases": [{"name": "small", "batch": 1, "vocab": 64, "seed": 1, "p": 0.5}],
    }
    bare_repo.write("plan.yaml", yaml.safe_dump(plan))
    run = bare_repo.tools("numerics", "topp-count", str(bare_repo.path / "plan.yaml"))
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith("error: plan.yaml: kernels.stock")
    assert "no package or module 'kernels'" in run.stderr
    assert "internal error" not in run.stderr


def test_an_op_of_this_programs_own_package_is_exit_2(bare_repo: Repo) -> None:
    plan = {
        "kernels": {"x": "tools.numerics.common:num"},
        "cases": [{"name": "small", "batch": 1, "vocab": 64, "seed": 1, "p": 0.5}],
    }
    bare_repo.write("plan.yaml", yaml.safe_dump(plan))
    run = bare_repo.tools("numerics", "topp-count", str(bare_repo.path / "plan.yaml"))
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith("error: plan.yaml: kernels.x") and "own package" in run.stderr
    assert "internal error" not in run.stderr


def test_the_installed_package_carries_no_kernels(tmp_path: Path) -> None:
    # Outside the repository (no source tree on the path) `kernels` must not be importable:
    # the installed package is `tools` alone.
    code = "import importlib.util as u; print(u.find_spec('kernels'), u.find_spec('tools'))"
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    kernels_spec, tools_spec = proc.stdout.split(" ", 1)
    assert kernels_spec == "None" and tools_spec.strip() != "None"
