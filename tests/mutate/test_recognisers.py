"""The "ran nothing" recognisers (EMPTY) and the machine-fault lines (ENV-FAULT), on the real
output of the real tools where they are installed here (pytest, ctest, and doctest, Catch2
and GoogleTest binaries built in the test), and on captured text of each tool's format."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.mutate import verdicts as vd
from tools.mutate.arm_result import judge_step
from tools.mutate.conditions import wait_quiet
from tools.mutate.proc import signal_of


def _run(argv: list[str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _empty(tail: str, rc: int, command: str = "./t") -> str | None:
    found = vd.ran_nothing(tail, rc, command, None)
    return None if found is None else found.by


# -- captured text, in each tool's documented format --------------------------------------------
CAPTURED = {
    "pytest": "============================ no tests ran in 0.74s =============================\n",
    "ctest": "Test project /src/build\nNo tests were found!!!\n",
    "doctest": (
        "[doctest] test cases: 1 | 1 passed | 0 failed | 1 skipped\n"
        "[doctest] assertions: 0 | 0 passed | 0 failed |\n[doctest] Status: SUCCESS!\n"
    ),
    "catch2": "Filters: nomatch\n" + "=" * 79 + "\nNo tests ran\n\n",
    "googletest": (
        "[==========] Running 0 tests from 0 test suites.\n"
        "[==========] 0 tests from 0 test suites ran. (0 ms total)\n[  PASSED  ] 0 tests.\n"
    ),
}
RAN_SOMETHING = {
    "pytest": "..                                                   [100%]\n2 passed in 0.01s\n",
    "ctest": "100% tests passed, 0 tests failed out of 1\n",
    "doctest": (
        "[doctest] test cases: 10 | 10 passed | 0 failed | 0 skipped\n"
        "[doctest] assertions: 20 | 20 passed | 0 failed |\n"
    ),
    "catch2": "All tests passed (1 assertion in 1 test case)\n",
    "googletest": "[==========] Running 10 tests from 2 test suites.\n[  PASSED  ] 10 tests.\n",
}


@pytest.mark.parametrize("tool", sorted(CAPTURED))
def test_each_recogniser_on_captured_text(tool: str) -> None:
    assert _empty(CAPTURED[tool], 0) == tool
    assert _empty(RAN_SOMETHING[tool], 0) is None
    # A failing run is RED whatever it printed (only pytest's own exit 5 is EMPTY).
    assert _empty(CAPTURED[tool], 1) is None


def test_recognisers_see_through_colour_and_crlf() -> None:
    coloured = "\x1b[1m\x1b[33m[doctest] test cases: 0 | 0 passed |\x1b[0m\r\n"
    assert _empty(coloured, 0) == "doctest"


def test_a_line_that_only_mentions_the_words_is_not_a_recogniser() -> None:
    assert _empty("checking that No tests ran is printed\n", 0) is None
    assert _empty("[doctest] test cases: 10 | 10 passed\n", 0) is None
    assert _empty("[==========] Running 01 tests from 1 test suite.\n", 0) is None


def test_pytest_exit_5() -> None:
    assert _empty("", 5, "python -m pytest -q tests/") == "pytest"
    assert _empty("", 5, "./run_tests") is None  # another program's 5 is its own
    assert _empty("no tests ran in 0.01s\n", 5, "./run_tests") == "pytest"


def test_the_plans_empty_when_and_its_line() -> None:
    pattern = re.compile(r"^0 cases$", re.MULTILINE)
    found = vd.ran_nothing("setup\n0 cases\nbye\n", 0, "./t", pattern)
    assert found is not None and found.record() == {"by": "empty_when", "line": "0 cases"}
    assert vd.ran_nothing("setup\n10 cases\n", 0, "./t", pattern) is None


@pytest.mark.parametrize(
    ("tail", "by"),
    [
        ("ld: final link failed: No space left on device\n", "no-space"),
        ("fork: Cannot allocate memory\n", "no-memory"),
        ("CUDA error: out of memory\nOut of memory\n", "out-of-memory"),
        ("running suite\nKilled\n", "killed"),
    ],
)
def test_env_fault_lines(tail: str, by: str) -> None:
    found = vd.env_fault(tail)
    assert found is not None and found.by == by
    judged = judge_step("test", rc=1, signal=None, tail=tail, command="x", test=True)
    assert judged.verdict == "ENV-FAULT" and judged.match == found
    # A passing step is never an ENV-FAULT, whatever it printed.
    assert judge_step("test", rc=0, signal=None, tail=tail, command="x", test=True).verdict is None


def test_killed_alone_on_a_line_only() -> None:
    assert vd.env_fault("3 processes Killed by the harness\n") is None


def test_signals_by_name() -> None:
    assert (
        signal_of(137) == "SIGKILL" and signal_of(139) == "SIGSEGV" and signal_of(134) == "SIGABRT"
    )
    assert signal_of(1) is None and signal_of(128) is None and signal_of(200) is None
    assert signal_of(None) is None
    kill = judge_step("test", rc=137, signal="SIGKILL", tail="", command="x", test=True)
    assert kill.verdict == "KILLED"
    segv = judge_step("test", rc=139, signal="SIGSEGV", tail="", command="x", test=True)
    assert segv.verdict is None  # the exit code decides: RED
    for sig in ("SIGABRT", "SIGBUS", "SIGFPE", "SIGILL"):
        crash = judge_step("test", rc=1, signal=sig, tail="", command="x", test=True)
        assert crash.verdict is None
    # A supervisor's SIGTERM, and a build the OOM killer ended, prove nothing either.
    term = judge_step("test", rc=143, signal="SIGTERM", tail="", command="x", test=True)
    assert term.verdict == "KILLED"
    build = judge_step("build", rc=137, signal="SIGKILL", tail="", command="x", test=False)
    assert build.verdict == "KILLED" and "build" in (build.reason or "")
    # A kill signal wins over a fault line; a fault line wins over "ran nothing".
    both = judge_step(
        "test", rc=137, signal="SIGKILL", tail="Out of memory\n", command="x", test=True
    )
    assert both.verdict == "KILLED"


def test_the_quiet_wait_counts_down_on_a_fake_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.mutate import conditions

    now = [100.0]
    ticks: list[float] = []
    loads = iter([3.0, 2.5, 0.4])
    monkeypatch.setattr(conditions, "load_per_cpu", lambda: next(loads))
    got = wait_quiet(
        1.0,
        10,
        tick=lambda left, load: ticks.append(left),
        cancelled=lambda: False,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert got["quiet"] is True and got["waited_s"] == 2.0 and got["load_per_cpu"] == 0.4
    assert ticks == [10.0, 9.0]
    loads = iter([5.0] * 100)
    now[0] = 0.0
    got = wait_quiet(
        1.0,
        3,
        tick=lambda left, load: None,
        cancelled=lambda: False,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert got["quiet"] is False and got["waited_s"] == 3.0


# -- the real tools --------------------------------------------------------------------------------
def test_real_pytest_that_collects_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_none.py").write_text("X = 1\n")
    rc, out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
    assert rc == 5
    assert _empty(out, rc, "python -m pytest -q") == "pytest"
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    rc, out = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], tmp_path)
    assert rc == 0 and _empty(out, rc, "python -m pytest -q") is None


def test_real_ctest_without_tests(tmp_path: Path) -> None:
    if shutil.which("ctest") is None or shutil.which("cmake") is None:
        pytest.skip("ctest (CMake) is not installed")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) for CMake's project")
    src = tmp_path / "src"
    src.mkdir()
    lists = "cmake_minimum_required(VERSION 3.10)\nproject(p C)\nenable_testing()\n"
    (src / "CMakeLists.txt").write_text(lists)
    rc, out = _run(["cmake", "-S", str(src), "-B", str(tmp_path / "b")], tmp_path)
    assert rc == 0, out
    rc, out = _run(["ctest"], tmp_path / "b")
    assert rc == 0 and _empty(out, rc) == "ctest", out
    (src / "CMakeLists.txt").write_text(lists + "add_test(NAME ok COMMAND true)\n")
    assert _run(["cmake", "-S", str(src), "-B", str(tmp_path / "b")], tmp_path)[0] == 0
    rc, out = _run(["ctest"], tmp_path / "b")
    assert rc == 0 and _empty(out, rc) is None, out


def _cxx() -> str:
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler (c++) on this machine")
    return cxx


def _header(path: str, package: str) -> None:
    if not Path(path).is_file():
        pytest.skip(f"{path} is not installed (Debian package {package})")


def _build(tmp: Path, name: str, source: str, *flags: str) -> Path:
    (tmp / f"{name}.cpp").write_text(source)
    out = tmp / name
    rc, text = _run([_cxx(), "-o", str(out), str(tmp / f"{name}.cpp"), *flags], tmp)
    assert rc == 0, text
    return out


def test_real_doctest_binary(tmp_path: Path) -> None:
    _header("/usr/include/doctest/doctest.h", "doctest-dev")
    prog = _build(
        tmp_path,
        "d",
        "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n#include <doctest/doctest.h>\n"
        'TEST_CASE("adds") { CHECK(1 + 1 == 2); }\nTEST_CASE("checks nothing") {}\n',
    )
    rc, out = _run([str(prog)], tmp_path)
    assert rc == 0 and _empty(out, rc) is None, out
    # No test case at all, and one case with no assertion: both ran nothing.
    for args in (["--test-case=nomatch"], ["--test-case=checks nothing"]):
        rc, out = _run([str(prog), *args], tmp_path)
        assert rc == 0 and _empty(out, rc) == "doctest", out


def test_real_catch2_binary(tmp_path: Path) -> None:
    _header("/usr/include/catch2/catch.hpp", "catch2")
    prog = _build(
        tmp_path,
        "c",
        '#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\nTEST_CASE("adds") '
        "{ REQUIRE(1 + 1 == 2); }\n",
    )
    rc, out = _run([str(prog)], tmp_path)
    assert rc == 0 and _empty(out, rc) is None, out
    rc, out = _run([str(prog), "nomatch"], tmp_path)
    assert rc == 0 and _empty(out, rc) == "catch2", out


def test_real_googletest_binary(tmp_path: Path) -> None:
    _header("/usr/include/gtest/gtest.h", "libgtest-dev")
    prog = _build(
        tmp_path,
        "g",
        "#include <gtest/gtest.h>\nTEST(Calc, Adds) { EXPECT_EQ(1 + 1, 2); }\n",
        "-lgtest",
        "-lgtest_main",
        "-pthread",
    )
    rc, out = _run([str(prog)], tmp_path)
    assert rc == 0 and _empty(out, rc) is None, out
    rc, out = _run([str(prog), "--gtest_filter=nomatch"], tmp_path)
    assert rc == 0 and _empty(out, rc) == "googletest", out
