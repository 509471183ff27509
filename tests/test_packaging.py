"""The distribution adopters install: its name, what the wheel and the sdist hold, a fresh
virtual environment where the console script runs, and why a repository with a `tools`
package of its own must run the console script rather than `python -m tools`.

The sdist and the wheel are built once per module with `python -m build` (the sdist first,
then the wheel from the sdist, so a wheel here proves the sdist holds what a build needs).
`.ci/run` builds them into `dist/` and names that folder in ``TOOLS_DIST_DIR``: the tests then
judge the artefacts CI built instead of building their own.
"""

from __future__ import annotations

import ast
import email.parser
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.snapshot import ROOT, copy_tree, source_files
from tools import __version__

DIST_NAME = "agent-protocol-gates"
# The wheel and sdist file names use the normalised name (PEP 427, PEP 625).
FILE_STEM = DIST_NAME.replace("-", "_")


@dataclass
class Dist:
    wheel: Path
    sdist: Path


def _clean_env() -> dict[str, str]:
    """The environment of a shell outside this test run's virtual environment."""
    env = dict(os.environ)
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH"):
        env.pop(key, None)
    return env


def _run(args: list[str | Path], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_clean_env(), capture_output=True, text=True
    )


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {folder}, found {[p.name for p in found]}"
    return found[0]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    given = os.environ.get("TOOLS_DIST_DIR")
    if given:
        out = Path(given) if Path(given).is_absolute() else ROOT / given
    else:
        base = tmp_path_factory.mktemp("dist")
        src = copy_tree(base / "src")
        out = base / "out"
        proc = _run([sys.executable, "-m", "build", "--outdir", out, src])
        assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout}\n{proc.stderr}"
    return Dist(wheel=_one(out, f"{FILE_STEM}-*.whl"), sdist=_one(out, f"{FILE_STEM}-*.tar.gz"))


@pytest.fixture(scope="module")
def venv(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel (and its dependencies) installed."""
    path = tmp_path_factory.mktemp("venv") / "env"
    proc = _run([sys.executable, "-m", "venv", path])
    assert proc.returncode == 0, proc.stderr
    proc = _run([path / "bin" / "python", "-m", "pip", "install", "--quiet", dist.wheel])
    assert proc.returncode == 0, f"pip install of the wheel failed:\n{proc.stdout}\n{proc.stderr}"
    return path


def _package_files() -> set[str]:
    return {p for p in source_files() if p.startswith("tools/") and "__pycache__" not in p}


def _metadata(dist: Dist) -> email.message.Message:
    with zipfile.ZipFile(dist.wheel) as zf:
        text = zf.read(f"{FILE_STEM}-{__version__}.dist-info/METADATA").decode()
    return email.parser.Parser().parsestr(text)


# -- the distribution ------------------------------------------------------------------------


def test_the_distribution_has_its_own_name_and_the_package_is_tools(dist: Dist) -> None:
    assert dist.wheel.name == f"{FILE_STEM}-{__version__}-py3-none-any.whl"
    meta = _metadata(dist)
    assert meta["Name"] == DIST_NAME
    assert meta["Version"] == __version__
    with zipfile.ZipFile(dist.wheel) as zf:
        info = f"{FILE_STEM}-{__version__}.dist-info"
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        top_level = zf.read(f"{info}/top_level.txt").decode().split()
    assert "tools = tools.cli.main:main" in entry_points
    assert top_level == ["tools"]


def test_torch_is_only_an_extra(dist: Dist) -> None:
    requires = _metadata(dist).get_all("Requires-Dist") or []
    torch = [r for r in requires if r.split(";")[0].strip().startswith("torch")]
    assert torch, "the numerics extra names torch"
    assert all('extra == "numerics"' in r for r in torch), torch


def _imported_top_levels(folder: Path, skip: Path) -> set[str]:
    """Top-level modules imported under ``folder`` but not under ``skip`` (inside functions
    too)."""
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        if path.is_relative_to(skip):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_every_imported_library_is_a_declared_dependency(dist: Dist) -> None:
    # tools/numerics/ imports the numerics extra (torch, numpy); the rest only base dependencies.
    imported = _imported_top_levels(ROOT / "tools", ROOT / "tools" / "numerics")
    libraries = imported - set(sys.stdlib_module_names) - {"tools", "__future__"}
    requires = _metadata(dist).get_all("Requires-Dist") or []
    base = {
        re.split(r"[ <>=!~;\[]", r, maxsplit=1)[0].lower().replace("_", "-")
        for r in requires
        if "extra ==" not in r
    }
    owners = importlib.metadata.packages_distributions()
    undeclared = sorted(
        m for m in libraries if not {d.lower().replace("_", "-") for d in owners.get(m, [m])} & base
    )
    assert undeclared == [], f"imported but not a declared dependency: {undeclared}"


def test_the_wheel_holds_the_package_and_nothing_else(dist: Dist) -> None:
    with zipfile.ZipFile(dist.wheel) as zf:
        names = set(zf.namelist())
    info = f"{FILE_STEM}-{__version__}.dist-info/"
    outside = sorted(n for n in names if not n.startswith(("tools/", info)))
    assert outside == [], f"the wheel carries files outside the package: {outside}"
    shipped = {n for n in names if n.startswith("tools/")}
    missing = sorted(_package_files() - shipped)
    assert missing == [], f"not in the wheel (package-data in pyproject.toml?): {missing}"
    extra = sorted(shipped - _package_files())
    assert extra == [], f"in the wheel but not in the source tree: {extra}"


def test_the_sdist_holds_what_the_build_needs_and_no_tests(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as tf:
        members = [m.name for m in tf.getmembers() if m.isfile()]
    prefix = f"{FILE_STEM}-{__version__}/"
    assert all(m.startswith(prefix) for m in members), members[:5]
    rel = {m[len(prefix) :] for m in members}
    assert {"PKG-INFO", "pyproject.toml", "README.md"} <= rel
    missing = sorted(_package_files() - rel)
    assert missing == [], f"not in the sdist: {missing}"
    stray = sorted(p for p in rel if p.startswith(("tests/", "kernels/", "goldens/", "bench/")))
    assert stray == [], f"the sdist carries what is not the product: {stray}"


# -- the installed console script ------------------------------------------------------------


def test_the_wheel_installs_into_a_fresh_venv_and_runs(venv: Path, tmp_path: Path) -> None:
    proc = _run([venv / "bin" / "tools", "--version"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"tools {__version__}\n"
    proc = _run([venv / "bin" / "tools", "--help"], cwd=tmp_path)
    assert proc.returncode == 0 and "preflight" in proc.stdout, proc.stderr
    # Only the package: neither torch (an extra) nor this repository's kernels came with it.
    for module in ("torch", "kernels"):
        proc = _run([venv / "bin" / "python", "-c", f"import {module}"], cwd=tmp_path)
        assert proc.returncode != 0, f"{module} is importable from the fresh venv"
    proc = _run([venv / "bin" / "python", "-m", "pip", "check"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


FOREIGN = "the tools package of the repository itself"


def _repo_with_its_own_tools(path: Path, *, main: bool) -> Path:
    """A repository like the model one: a `tools/` Python package of its own at the root."""
    (path / "tools").mkdir(parents=True)
    (path / "tools" / "__init__.py").write_text(
        f"import sys\nsys.stderr.write('imported {FOREIGN}\\n')\n"
    )
    if main:
        (path / "tools" / "__main__.py").write_text(f"print('ran {FOREIGN}')\n")
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


@pytest.mark.parametrize("main", [False, True], ids=["no-main", "own-main"])
def test_in_a_repo_with_its_own_tools_package_only_the_console_script_is_ours(
    venv: Path, tmp_path: Path, main: bool
) -> None:
    repo = _repo_with_its_own_tools(tmp_path / "model", main=main)
    # The console script: its sys.path starts at the venv's bin/, never at the cwd.
    proc = _run([venv / "bin" / "tools", "--version"], cwd=repo)
    assert proc.returncode == 0 and proc.stdout == f"tools {__version__}\n", proc.stderr
    assert FOREIGN not in proc.stderr
    proc = _run([venv / "bin" / "tools", "config", "show"], cwd=repo)
    assert proc.returncode == 0 and "preflight:" in proc.stdout, proc.stderr
    assert FOREIGN not in proc.stderr
    # `python -m tools` from that root puts the cwd first on sys.path: the repository's own
    # package shadows ours (it runs, or fails to run, the wrong code).
    proc = _run([venv / "bin" / "python", "-m", "tools", "--version"], cwd=repo)
    assert f"imported {FOREIGN}" in proc.stderr
    assert f"tools {__version__}" not in proc.stdout
    if main:
        assert f"ran {FOREIGN}" in proc.stdout
    else:
        assert proc.returncode != 0 and "cannot be directly executed" in proc.stderr
    # From a directory without a `tools` package, `python -m tools` is ours.
    proc = _run([venv / "bin" / "python", "-m", "tools", "--version"], cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == f"tools {__version__}\n", proc.stderr


@pytest.mark.skipif(sys.version_info < (3, 11), reason="python -P is new in Python 3.11")
def test_python_dash_p_keeps_the_cwd_off_sys_path(venv: Path, tmp_path: Path) -> None:
    repo = _repo_with_its_own_tools(tmp_path / "model", main=True)
    proc = _run([venv / "bin" / "python", "-P", "-m", "tools", "--version"], cwd=repo)
    assert proc.returncode == 0 and proc.stdout == f"tools {__version__}\n", proc.stderr
    assert FOREIGN not in proc.stderr
