"""Only the numerics commands may import torch: ``tools --help``, every command's ``--help``
and the body of every other command leave ``torch`` out of ``sys.modules``.

CPU independence: no numerics are computed; only which modules a command imports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo

ROOT = Path(__file__).resolve().parents[2]
TORCH_GROUPS = ("golden", "numerics")
# Bodies not run here: `demo` builds whole example repositories and runs mutation experiments
# (its --help still is); it is covered by its own tests.
SLOW = (("demo",),)

SCRIPT = r"""
import json, sys
from typer.main import get_command
from typer.testing import CliRunner

import tools.cli.main as main

report = {"import": "torch" in sys.modules, "offenders": [], "ran": []}
TORCH_GROUPS, SLOW, repo = set(json.loads(sys.argv[1])), json.loads(sys.argv[2]), sys.argv[3]


def leaves(cmd, prefix):
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in sorted(subs.items()):
            yield from leaves(sub, prefix + [name])
    else:
        yield prefix


runner = CliRunner()
calls = [["--help"]]
for path in leaves(get_command(main.app), []):
    calls.append(path + ["--help"])
    if path[0] not in TORCH_GROUPS and path not in SLOW:
        calls.append(["--repo", repo] + path)
for args in calls:
    runner.invoke(main.app, args, input="")
    report["ran"].append(args)
    if "torch" in sys.modules:
        report["offenders"].append(args)
        break
print(json.dumps(report))
"""


def test_import_of_the_cli_leaves_torch_out() -> None:
    code = "import sys, tools.cli.main; sys.exit(1 if 'torch' in sys.modules else 0)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()


def test_every_non_numerics_command_leaves_torch_out(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "hello\n"})
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            json.dumps(TORCH_GROUPS),
            json.dumps([list(s) for s in SLOW]),
            str(repo.path),
        ],
        cwd=ROOT,
        capture_output=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout.decode().splitlines()[-1])
    assert report["import"] is False
    assert report["offenders"] == []
    ran = report["ran"]
    assert ["--help"] in ran and ["golden", "check", "--help"] in ran
    assert ["--repo", str(repo.path), "conflicts", "check"] in ran  # bodies did run


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch (the numerics extra) is not installed"
)
def test_a_numerics_command_does_import_torch(repo: Repo) -> None:
    # The probe above can see torch arrive: a numerics body imports it.
    code = (
        "import sys; from typer.testing import CliRunner; import tools.cli.main as m; "
        f"CliRunner().invoke(m.app, ['--repo', {str(repo.path)!r}, 'golden', 'check']); "
        "sys.exit(0 if 'torch' in sys.modules else 1)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
