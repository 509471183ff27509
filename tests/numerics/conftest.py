"""The numerics tests need torch, which the `dev` extra does not pull (a bare requirement would
fetch a multi-gigabyte CUDA build). Without it those modules are not collected and
`test_torch_present.py` reports one visible skip; CI sets TOOLS_REQUIRE_NUMERICS=1, which turns
that skip into a failure.

The numerics commands import the ops a manifest or plan names from the repository they judge,
never from this one: here `repo` is a repository that carries its own copy of this repository's
`kernels/` and of the test ops (`tests/numerics/ops.py`), as a user's repository carries its
own kernels. `bare_repo` has neither."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.conftest import Repo

NEEDS_TORCH = [
    "test_kernels.py",
    "test_topp.py",
    "test_goldens.py",
    "test_schemas.py",
    "test_gridtie.py",
    "test_op_import.py",
    "test_cpu_independence.py",
]

collect_ignore = NEEDS_TORCH if importlib.util.find_spec("torch") is None else []

ROOT = Path(__file__).resolve().parents[2]


def carry_kernels(repo: Repo) -> Repo:
    """Copy this repository's kernels and test ops into ``repo`` (sources only)."""
    shutil.copytree(
        ROOT / "kernels", repo.path / "kernels", ignore=shutil.ignore_patterns("__pycache__")
    )
    for rel in ("tests/__init__.py", "tests/numerics/__init__.py", "tests/numerics/ops.py"):
        (repo.path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, repo.path / rel)
    return repo


@pytest.fixture
def bare_repo(make_repo) -> Repo:
    return make_repo("repo")


@pytest.fixture
def repo(bare_repo: Repo) -> Repo:
    return carry_kernels(bare_repo)
