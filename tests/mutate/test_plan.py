"""Bad plans and bad arguments are exit 2 with the key path; hostile text parses in linear
time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import PY_TEST_CMD, fingerprint, py_project, write_plan
from tools.git import unquote_c as _unquote
from tools.mutate.apply import _rename_sources


def _usage(run, *needles: str) -> None:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    for needle in needles:
        assert needle in run.stderr, run.stderr


def _plan(**over: object) -> dict:
    plan: dict = {
        "test": PY_TEST_CMD,
        "arms": [
            {"name": "control"},
            {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
        ],
    }
    plan.update(over)
    return plan


@pytest.mark.parametrize(
    ("plan", "needles"),
    [
        (
            _plan(
                arms=[{"name": "x", "replace": {"path": "../etc/passwd", "old": "a", "new": "b"}}]
            ),
            ["arms[0].replace.path", "inside the repository"],
        ),
        (
            _plan(arms=[{"name": "x", "revert": {"path": "/etc/passwd", "to": "HEAD"}}]),
            ["arms[0].revert.path"],
        ),
        (
            _plan(arms=[{"name": "x", "revert": {"path": ".git/config", "to": "HEAD"}}]),
            ["arms[0].revert.path", ".git"],
        ),
        (
            _plan(arms=[{"name": "x", "revert": {"path": "src/calc.py", "to": "no-such-rev"}}]),
            ["arms[0].revert.to", "does not resolve", "arm 'x'", "src/calc.py", "no-such-rev"],
        ),
        # A mutation of a path the base does not hold tests nothing: named with arm and base.
        (
            _plan(arms=[{"name": "y", "replace": {"path": "src/gone.py", "old": "a", "new": "b"}}]),
            ["arms[0].replace.path", "arm 'y'", "src/gone.py", "does not exist at base 'HEAD'"],
        ),
        (
            _plan(arms=[{"name": "z", "revert": {"path": "src/gone.py", "to": "HEAD"}}]),
            ["arms[0].revert.path", "arm 'z'", "src/gone.py", "HEAD"],
        ),
        (
            _plan(overlay=[{"replace": {"path": "nowhere.c", "old": "a", "new": "b"}}]),
            ["overlay[0].replace.path", "the overlay", "nowhere.c"],
        ),
        (_plan(empty_when="(unclosed"), ["empty_when", "not a regular expression"]),
        (_plan(empty_when=""), ["empty_when"]),
        (_plan(quiet={"max_load": 1}), ["quiet", "wait_s"]),
        (_plan(quiet={"max_load": 1, "wait_s": -1}), ["quiet.wait_s"]),
        (_plan(quiet={"max_load": "low", "wait_s": 1}), ["quiet.max_load"]),
        (_plan(artifacts=[]), ["artifacts"]),
        (_plan(artifacts=["../prog"]), ["artifacts[0]"]),
        (_plan(versions=[""]), ["versions[0]"]),
        (_plan(base="nope~3"), ["base", "does not resolve"]),
        (_plan(arms=[{"name": "x", "patch": "missing.diff"}]), ["arms[0].patch", "not found"]),
        (_plan(arms=[{"name": "x", "patch": "../outside.diff"}]), ["arms[0].patch"]),
        (_plan(overlay=[{"patch": "../o.diff"}]), ["overlay[0].patch"]),
        (
            _plan(arms=[{"name": "a"}, {"name": "a", "patch": "p.diff"}]),
            ["arms[1].name", "repeats"],
        ),
        (_plan(arms=[{"name": "a"}, {"name": "b"}]), ["arms[1]", "control"]),
        (
            _plan(arms=[{"name": "x", "patch": "p.diff", "revert": {"path": "a", "to": "HEAD"}}]),
            ["arms[0]", "both"],
        ),
        (_plan(expect={"ghost": "RED"}), ["expect.ghost", "names no arm"]),
        (_plan(expect={"control": "PURPLE"}), ["expect.control"]),
        (_plan(expect={"control": "NOT-APPLIED"}), ["expect.control", "control"]),
        (_plan(repeat=0), ["repeat"]),
        (_plan(repeat=1.0), ["repeat"]),
        (_plan(timeout=-1), ["timeout"]),
        (_plan(colour="blue"), ["colour", "unknown key"]),
        (_plan(arms=[]), ["arms"]),
        (_plan(arms=[{"name": "bad name"}]), ["arms[0].name"]),
        (
            _plan(arms=[{"name": "x", "replace": {"path": "a", "old": "", "new": "b"}}]),
            ["arms[0].replace.old"],
        ),
        (
            _plan(
                arms=[{"name": "x", "replace": {"path": "a", "old": "a", "new": "b", "count": 0}}]
            ),
            ["arms[0].replace.count"],
        ),
        (
            _plan(arms=[{"name": "x", "mutations": [{"patch": "p.diff", "replace": {}}]}]),
            ["arms[0].mutations[0]"],
        ),
        (_plan(spec="specs/missing.md"), ["spec", "not found"]),
        ({"arms": [{"name": "c"}]}, ["test"]),
    ],
)
def test_bad_plans_exit_2_with_the_key_path(repo: Repo, plan: dict, needles: list[str]) -> None:
    py_project(repo)
    repo.write("p.diff", "diff --git a/x b/x\n")
    path = write_plan(repo, plan)
    before = fingerprint(repo)
    _usage(repo.tools("mutate", "run", path), "plans/plan.yml", *needles)
    assert fingerprint(repo) == before


def test_not_yaml_and_not_a_mapping(repo: Repo) -> None:
    py_project(repo)
    repo.write("plans/a.yml", "arms: [\n")
    _usage(repo.tools("mutate", "run", str(repo.path / "plans/a.yml")), "invalid YAML", "a.yml:")
    repo.write("plans/b.yml", "- 1\n- 2\n")
    _usage(repo.tools("mutate", "run", str(repo.path / "plans/b.yml")), "wrong type")
    repo.write("plans/c.yml", "test: a\ntest: b\narms: [{name: c}]\n")
    _usage(repo.tools("mutate", "run", str(repo.path / "plans/c.yml")), "duplicate key")
    repo.write("plans/d.yml", b"test: \xff\n")
    _usage(repo.tools("mutate", "run", str(repo.path / "plans/d.yml")), "not UTF-8")


def test_plan_file_outside_the_repository_or_missing(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    outside = tmp_path / "elsewhere.yml"
    outside.write_text("test: 'true'\narms: [{name: c}]\n")
    _usage(repo.tools("mutate", "run", str(outside)), "outside the repository")
    _usage(repo.tools("mutate", "run", str(repo.path / "nope.yml")), "no such file")


def test_bad_arguments(repo: Repo) -> None:
    py_project(repo)
    path = write_plan(repo, _plan())
    _usage(repo.tools("mutate", "run", path, "--arm", "ghost"), "--arm", "ghost")
    _usage(repo.tools("mutate", "run", path, "--in-place", "-j", "2"), "-j")
    run = repo.tools("mutate", "run", path, "-j", "0")
    assert run.exit_code == 2 and run.stderr.startswith("error:")


def test_matrix_prints_one_job_per_arm(repo: Repo) -> None:
    py_project(repo)
    path = write_plan(repo, _plan())
    run = repo.tools("mutate", "matrix", path)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == '{"arm": ["control", "B"]}\n'


def test_schema_is_valid_json_schema() -> None:
    import jsonschema

    from tools.schema import load_schema

    jsonschema.Draft202012Validator.check_schema(load_schema("mutate-plan.schema.json"))


def test_a_one_mebibyte_plan_value_is_judged_quickly(repo: Repo) -> None:
    py_project(repo)
    huge = "x" * (1 << 20)
    path = write_plan(
        repo,
        _plan(
            arms=[
                {"name": "c"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": huge, "new": "y"}},
            ]
        ),
    )
    start = time.monotonic()
    run = repo.tools("mutate", "matrix", path)
    assert run.exit_code == 0
    assert time.monotonic() - start < 5


def test_patch_header_parsing_is_linear_on_hostile_input() -> None:
    line = b"diff --git " + b"\\" * (1 << 20)
    hostile = b"\n".join([line, b"rename from " + b'"' + b"\\" * (1 << 20) + b'"', b"@@"])
    start = time.monotonic()
    _rename_sources(hostile)
    _unquote(b'"' + b"\\0" * (1 << 19) + b'"')
    assert time.monotonic() - start < 5


def test_unquote_and_rename_sources() -> None:
    assert _unquote(b'"a\\tb\\303\\251\\"c"') == b'a\tb\xc3\xa9"c'
    assert _unquote(b"plain") == b"plain"
    patch = (
        b"diff --git a/old name b/new\nsimilarity index 90%\nrename from old name\n"
        b"rename to new\n--- a/old name\n+++ b/new\n@@ -1 +1 @@\n-rename from fake\n+x\n"
        b'diff --git "a/q\\tx" b/y\nrename from "q\\tx"\nrename to y\n'
    )
    assert _rename_sources(patch) == ["old name", "q\tx"]
