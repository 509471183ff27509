"""The boundaries of :func:`tools.mutate.arm_result.classify`, one verdict and one ordering
decision at a time, as plain calls on observed results (no process runs)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tools.mutate import records
from tools.mutate.arm_result import (
    MACHINE,
    ArmResult,
    Classification,
    Control,
    Step,
    Target,
    Verdict,
    against_control,
    classify,
    verdict_of,
)
from tools.mutate.plan import VERDICTS, Arm, Plan

ROOT = Path(__file__).resolve().parents[2]
OK = Step(0, tail="1 passed\n")
FAIL = Step(1, tail="assert failed\n")
ART = (("prog", "a" * 64),)
ART_MAP = {"prog": "a" * 64}


def _arm(**kw: Any) -> ArmResult:
    base: dict[str, Any] = {"arm": "M1", "applied": True, "timeout": 5.0, "test_command": "./t"}
    return ArmResult(**{**base, **kw})


def _v(result: ArmResult, control: Control | None = None) -> Verdict | None:
    return classify(result, control).verdict


# -- one verdict each -------------------------------------------------------------------------


def test_green_red_and_flaky_from_the_exit_codes() -> None:
    assert _v(_arm(tests=(OK,))) is Verdict.GREEN
    assert _v(_arm(tests=(FAIL,))) is Verdict.RED
    assert _v(_arm(tests=(Step(2),))) is Verdict.RED
    assert _v(_arm(tests=(OK, OK), repeat=2)) is Verdict.GREEN
    assert _v(_arm(tests=(FAIL, FAIL), repeat=2)) is Verdict.RED
    assert _v(_arm(tests=(OK, FAIL), repeat=2)) is Verdict.FLAKY
    assert _v(_arm(tests=(FAIL, OK, FAIL), repeat=3)) is Verdict.FLAKY
    assert classify(_arm(tests=(OK,))).reason is None
    assert classify(_arm(tests=(FAIL,))).reason is None


def test_undecided_until_every_run_has_ended() -> None:
    assert _v(_arm()) is None
    assert _v(_arm(tests=(OK,), repeat=2)) is None
    assert _v(_arm(tests=(OK, OK), repeat=2)) is Verdict.GREEN
    # A build that passed decides nothing yet.
    assert _v(_arm(build=Step(0))) is None


def test_no_quiet_window_before_everything() -> None:
    quiet = {"quiet": False, "load_per_cpu": 2.5, "max_load": 1.0, "wait_s": 30.0}
    got = classify(_arm(quiet=quiet, error="boom", tests=(OK,)))
    assert got.verdict is Verdict.NO_QUIET_WINDOW
    assert got.reason == "the 1-minute load per CPU (2.5) stayed above 1 for 30 s"
    unknown = classify(_arm(quiet={**quiet, "load_per_cpu": None}))
    assert "(unknown)" in (unknown.reason or "")
    assert _v(_arm(quiet={**quiet, "quiet": True}, tests=(OK,))) is Verdict.GREEN


def test_error_before_not_applied_before_the_build() -> None:
    got = classify(_arm(error="ApplyError: gone", not_applied="no match", tests=(OK,)))
    assert (got.verdict, got.reason) == (Verdict.ERROR, "ApplyError: gone")
    got = classify(_arm(not_applied="old text not found", build=Step(1), tests=(OK,)))
    assert (got.verdict, got.reason) == (Verdict.NOT_APPLIED, "old text not found")


def test_the_build_timeout_killed_env_fault_and_no_build() -> None:
    timed = classify(_arm(build=Step(None, timed_out=True), tests=(OK,)))
    assert (timed.verdict, timed.reason) == (Verdict.TIMEOUT, "the build ran past 5 s")
    killed = classify(_arm(build=Step(137, signal="SIGKILL", tail="Out of memory\n")))
    assert (killed.verdict, killed.reason) == (
        Verdict.KILLED,
        "the build was ended by SIGKILL, which tools did not send",
    )
    assert (killed.observed, killed.observed_reason) == (killed.verdict, killed.reason)
    # A build's "ran nothing" line is no EMPTY: only a test runs tests.
    assert _v(_arm(build=Step(0, tail="No tests ran\n"), tests=(OK,))) is Verdict.GREEN
    full = classify(_arm(build=Step(2, tail="ld: No space left on device\n")))
    assert full.verdict is Verdict.ENV_FAULT
    assert full.match is not None and full.match.by == "no-space"
    failed = classify(_arm(build=Step(2, tail="error: x undeclared\n")))
    assert (failed.verdict, failed.reason) == (Verdict.NO_BUILD, "the build exited 2")
    crashed = classify(_arm(build=Step(139, signal="SIGSEGV")))
    assert (crashed.verdict, crashed.reason) == (Verdict.NO_BUILD, "the build exited 139 (SIGSEGV)")
    # A build that passed, whatever it printed, is no fault.
    assert _v(_arm(build=Step(0, tail="Out of memory\n"), tests=(OK,))) is Verdict.GREEN


def test_a_missing_artifact_is_no_build() -> None:
    missing = (("prog", None), ("lib.a", "b" * 64), ("t", None))
    got = classify(_arm(build=Step(0), artifacts=missing, tests=(OK,)))
    assert got.verdict is Verdict.NO_BUILD
    assert got.reason == "artifact(s) prog, t missing after the build exited 0"
    alone = classify(_arm(artifacts=missing[:1]))
    assert alone.reason == "artifact(s) prog missing (no build command)"
    assert _v(_arm(build=Step(0), artifacts=ART, tests=(OK,))) is Verdict.GREEN


def test_a_test_timeout_names_its_run() -> None:
    got = classify(_arm(tests=(OK, Step(None, timed_out=True)), repeat=3))
    assert (got.verdict, got.reason) == (Verdict.TIMEOUT, "test run 2 ran past 5 s")


def test_a_killed_test_is_killed_never_red() -> None:
    for sig, rc in (("SIGKILL", 137), ("SIGTERM", 143)):
        got = classify(_arm(tests=(Step(rc, signal=sig),)))
        assert got.verdict is Verdict.KILLED
        assert got.reason == f"the test was ended by {sig}, which tools did not send"


def test_a_crash_signal_is_red_with_its_name() -> None:
    for sig in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL"):
        got = classify(_arm(tests=(Step(128 + 6, signal=sig),)))
        assert (got.verdict, got.reason) == (Verdict.RED, f"the test crashed ({sig})")


def test_env_fault_only_on_a_failing_test() -> None:
    got = classify(_arm(tests=(Step(1, tail="x\nCannot allocate memory\n"),)))
    assert got.verdict is Verdict.ENV_FAULT
    assert got.reason == "the test exited 1 and its output shows: Cannot allocate memory"
    assert _v(_arm(tests=(Step(0, tail="Cannot allocate memory\n"),))) is Verdict.GREEN
    assert _v(_arm(tests=(Step(1, tail="3 processes Killed by the harness\n"),))) is Verdict.RED
    assert _v(_arm(tests=(Step(1, tail="  Killed\n"),))) is Verdict.ENV_FAULT


@pytest.mark.parametrize(
    "tail",
    [
        "[doctest] test cases: 0 | 0 passed | 0 failed |\n",
        "[doctest] test cases: 4 | 4 passed | 0 failed |\n[doctest] assertions: 0 | 0 passed |\n",
        "No tests were found!!!\n",
        "No tests ran\n",
        "[==========] Running 0 tests from 0 test suites.\n",
        "============ no tests ran in 0.01s ============\n",
        "\x1b[33mno tests ran\x1b[0m in 0.01s\n",
    ],
)
def test_a_test_that_ran_nothing_is_empty_never_green(tail: str) -> None:
    got = classify(_arm(tests=(Step(0, tail=tail),)))
    assert got.verdict is Verdict.EMPTY
    assert got.match is not None and got.reason == (
        f"the test ran nothing ({got.match.by}: {got.match.line})"
    )


def test_empty_boundaries() -> None:
    ran = "[doctest] test cases: 4 | 4 passed |\n[doctest] assertions: 10 | 10 passed |\n"
    assert _v(_arm(tests=(Step(0, tail=ran),))) is Verdict.GREEN
    # pytest's own "no tests collected" exit (5) is EMPTY only for pytest.
    assert _v(_arm(tests=(Step(5),), test_command="python -m pytest -q")) is Verdict.EMPTY
    assert _v(_arm(tests=(Step(5),), test_command="./t")) is Verdict.RED
    # The plan's empty_when, on a passing run only.
    pattern = re.compile(r"^0 cases$", re.MULTILINE)
    got = classify(_arm(tests=(Step(0, tail="setup\n0 cases\n"),), empty_when=pattern))
    assert got.verdict is Verdict.EMPTY and got.match is not None
    assert got.match.record() == {"by": "empty_when", "line": "0 cases"}
    assert _v(_arm(tests=(Step(1, tail="0 cases\n"),), empty_when=pattern)) is Verdict.RED


# -- the order ---------------------------------------------------------------------------------


def test_a_kill_signal_goes_before_a_fault_line_and_a_fault_before_ran_nothing() -> None:
    both = Step(137, signal="SIGKILL", tail="Out of memory\n")
    assert _v(_arm(tests=(both,))) is Verdict.KILLED
    empty_and_full = Step(5, tail="No space left on device\nno tests ran in 0.1s\n")
    assert _v(_arm(tests=(empty_and_full,), test_command="pytest")) is Verdict.ENV_FAULT


def test_the_first_deciding_run_wins_and_names_its_run() -> None:
    runs = (OK, Step(137, signal="SIGKILL"), FAIL)
    got = classify(_arm(tests=runs, repeat=3))
    assert got.verdict is Verdict.KILLED
    assert got.reason == "run 2: the test was ended by SIGKILL, which tools did not send"
    # With one run there is no run number.
    assert classify(_arm(tests=(runs[1],))).reason == (
        "the test was ended by SIGKILL, which tools did not send"
    )


def test_the_build_decides_before_the_test() -> None:
    assert _v(_arm(build=Step(1), tests=(Step(137, signal="SIGKILL"),))) is Verdict.NO_BUILD
    missing = (("prog", None),)
    assert _v(_arm(build=Step(0), artifacts=missing, tests=(OK,))) is Verdict.NO_BUILD


def test_the_signal_is_the_builds_first_then_a_finished_runs() -> None:
    arm = _arm(build=Step(0, signal="SIGUSR1"), tests=(Step(139, signal="SIGSEGV"),))
    assert arm.signal == "SIGUSR1"
    later = _arm(tests=(Step(None, timed_out=True, signal="SIGKILL"),))
    assert later.signal is None
    assert _arm(tests=(OK, Step(134, signal="SIGABRT")), repeat=2).signal == "SIGABRT"


# -- against the control ------------------------------------------------------------------------


def test_stale_when_the_artifacts_are_the_controls() -> None:
    ctl = Control("control", "GREEN", ART_MAP, record_id="c" * 64, ran_with=False)
    got = classify(_arm(build=Step(0), artifacts=ART, tests=(FAIL,)), ctl)
    assert (got.verdict, got.observed, got.tested) == (Verdict.STALE, Verdict.STALE, Verdict.RED)
    assert got.reason == got.observed_reason
    assert got.reason == (
        "its artifacts (prog) are byte-identical to those of the control arm 'control' "
        "(record cccccccccccc): the test ran without the mutation, its RED proves nothing"
    )


def test_stale_names_every_artifact_and_no_record_when_it_has_none() -> None:
    two = (("b.so", "b" * 64), ("a.out", "a" * 64))
    ctl = Control("control", "GREEN", dict(two), ran_with=False)
    got = classify(_arm(artifacts=two, tests=(OK,)), ctl)
    assert got.reason == (
        "its artifacts (a.out, b.so) are byte-identical to those of the control arm "
        "'control': the test ran without the mutation, its GREEN proves nothing"
    )


def test_stale_boundaries() -> None:
    ctl = Control("control", "GREEN", ART_MAP, ran_with=False)
    other = (("prog", "b" * 64),)
    assert _v(_arm(artifacts=other, tests=(OK,)), ctl) is Verdict.GREEN
    assert _v(_arm(artifacts=ART, tests=(OK,), applied=False), ctl) is Verdict.GREEN
    assert _v(_arm(arm="control", artifacts=ART, tests=(OK,)), ctl) is Verdict.GREEN
    # Only the exit codes' verdicts turn STALE; a machine verdict stays what it is.
    assert _v(_arm(artifacts=ART, tests=(Step(137, signal="SIGKILL"),)), ctl) is Verdict.KILLED
    assert _v(_arm(artifacts=ART, tests=(OK, FAIL), repeat=2), ctl) is Verdict.STALE
    no_arts = Control("control", "GREEN", None, ran_with=False)
    assert _v(_arm(artifacts=ART, tests=(OK,)), no_arts) is Verdict.GREEN
    assert _v(_arm(tests=(OK,)), ctl) is Verdict.GREEN
    # Undecided (its test not run yet): STALE at once, nothing tested.
    early = classify(_arm(artifacts=ART), ctl)
    assert (early.verdict, early.tested) == (Verdict.STALE, None)
    assert (early.reason or "").endswith("the test would run without the mutation, it is not run")


def test_unanchored_only_for_a_control_that_ran_with_the_arm_and_is_not_green() -> None:
    for word in ("RED", "EMPTY", "NO-BUILD"):
        got = classify(_arm(tests=(FAIL,)), Control("control", word))
        assert (got.verdict, got.observed) == (Verdict.UNANCHORED, Verdict.RED)
        assert got.reason == (
            f"the control arm control is {word}, not GREEN: this arm's RED proves nothing"
        )
    assert _v(_arm(tests=(FAIL,)), Control("control", "GREEN")) is Verdict.RED
    assert _v(_arm(tests=(FAIL,)), Control("control", "RED", ran_with=False)) is Verdict.RED
    assert _v(_arm(arm="control", tests=(FAIL,)), Control("control", "RED")) is Verdict.RED
    assert _v(_arm(tests=(FAIL,), repeat=2), Control("control", "RED")) is None


def test_stale_then_unanchored_keeps_both() -> None:
    ctl = Control("control", "EMPTY", ART_MAP)
    got = classify(_arm(artifacts=ART, tests=(OK,)), ctl)
    assert (got.verdict, got.observed, got.tested) == (
        Verdict.UNANCHORED,
        Verdict.STALE,
        Verdict.GREEN,
    )
    assert "this arm's STALE proves nothing" in (got.reason or "")
    assert (got.observed_reason or "").startswith("its artifacts (prog)")


def test_against_control_without_a_control_is_the_arms_own() -> None:
    own = Classification(Verdict.RED, "why", None, Verdict.RED, "why")
    assert against_control(own, arm="M1", applied=True, artifacts=ART_MAP, control=None) is own
    # A verdict given without its ``observed``: the verdict is what the arm observed.
    bare = Classification(Verdict.RED)
    got = against_control(
        bare, arm="M1", applied=False, artifacts=None, control=Control("c", "RED")
    )
    assert (got.verdict, got.observed) == (Verdict.UNANCHORED, Verdict.RED)


def test_unanchored_keeps_the_line_that_decided_the_arm() -> None:
    got = classify(_arm(tests=(Step(0, tail="No tests ran\n"),)), Control("control", "RED"))
    assert (got.verdict, got.observed) == (Verdict.UNANCHORED, Verdict.EMPTY)
    assert got.match is not None and got.match.by == "catch2"
    assert got.observed_reason == "the test ran nothing (catch2: No tests ran)"


# -- the words -------------------------------------------------------------------------------------


def test_the_words_are_the_records_and_the_schemas() -> None:
    schema = json.loads((ROOT / "tools/data/mutate-plan.schema.json").read_text())
    found = json.dumps(schema)
    for word in VERDICTS:
        assert f'"{word}"' in found
    assert VERDICTS == (
        "GREEN", "RED", "NO-BUILD", "NOT-APPLIED", "TIMEOUT", "ERROR", "FLAKY", "UNANCHORED",
        "KILLED", "EMPTY", "STALE", "NO-QUIET-WINDOW", "ENV-FAULT",
    )  # fmt: skip
    assert json.dumps([Verdict.NO_BUILD]) == '["NO-BUILD"]'
    assert f"{Verdict.ENV_FAULT}" == "ENV-FAULT"
    assert [v.value for v in MACHINE] == [
        "KILLED",
        "EMPTY",
        "STALE",
        "NO-QUIET-WINDOW",
        "ENV-FAULT",
    ]
    assert "NO-QUIET-WINDOW" in MACHINE and "RED" not in MACHINE
    assert verdict_of("NO-BUILD") is Verdict.NO_BUILD
    assert verdict_of("nope") is None and verdict_of(None) is None


def test_an_arm_result_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _arm().applied = False  # type: ignore[misc]


# -- the record built from it ---------------------------------------------------------------------


def _plan(**kw: Any) -> Plan:
    arms = [Arm("control", [], "arms[0]")]
    fields: dict[str, Any] = {
        "path": "plans/p.yml",
        "sha256": "p" * 64,
        "base": "b" * 40,
        "base_rev": "HEAD",
        "test": "./t",
        "build": "make",
        "timeout": 5.0,
        "repeat": 1,
        "arms": arms,
        "expect": {"control": "GREEN"},
    }
    return Plan(**{**fields, **kw})


def test_the_arm_record_is_built_from_the_result() -> None:
    plan = _plan()
    result = _arm(
        arm="control",
        is_control=True,
        build=Step(0, tail="built\n", seconds=1.5),
        tests=(Step(1, tail="Cannot allocate memory\n", seconds=2.0),),
        artifacts=ART,
        targets=(Target("a.c", "1" * 64, "2" * 64, "1" * 64),),
        restored=True,
        durations={"setup": 0.1, "build": 1.5, "test": [2.0], "apply": 0.2, "total": 4.0},
    )
    got = classify(result)
    payload = records.arm_payload(plan, plan.arms[0], result, got, "worktree")
    assert list(payload) == [
        "plan", "plan_sha256", "base", "arm", "mutation", "mutations", "overlay", "targets",
        "applied", "numstat", "build", "test", "compile_rc", "run_rc", "run_rcs", "verdict",
        "expect", "restored", "observed", "reason", "observed_reason", "repeat", "timeout",
        "mode", "tails", "durations", "signal", "matched", "artifacts", "quiet", "conditions",
    ]  # fmt: skip
    assert payload["verdict"] == payload["observed"] == "ENV-FAULT"
    assert type(payload["verdict"]) is str
    assert payload["compile_rc"] == 0 and payload["run_rc"] == 1 and payload["run_rcs"] == [1]
    assert payload["tails"] == {"build": "built\n", "test": ["Cannot allocate memory\n"]}
    assert payload["matched"] == {"by": "no-memory", "line": "Cannot allocate memory"}
    assert payload["artifacts"] == [{"path": "prog", "sha256": "a" * 64}]
    hashes = {"sha256_before": "1" * 64, "sha256_mutated": "2" * 64, "sha256_after": "1" * 64}
    assert payload["targets"] == [{"path": "a.c", **hashes}]
    assert payload["applied"] is True and payload["expect"] == "GREEN"
    quiet = {"quiet": False, "load_per_cpu": 3.0, "max_load": 1.0, "wait_s": 1.0}
    waited = _arm(quiet=quiet, conflicts=({"path": "a.c"},))
    stopped = records.arm_payload(plan, plan.arms[0], waited, classify(waited), "in-place")
    assert stopped["applied"] is None and stopped["verdict"] == "NO-QUIET-WINDOW"
    assert stopped["conflicts"] == [{"path": "a.c"}] and stopped["compile_rc"] is None


def test_records_apply_the_cross_arm_rules_to_payloads() -> None:
    control = {"arm": "control", "verdict": "EMPTY", "observed": "EMPTY", "artifacts": None}
    arm = {"arm": "M1", "verdict": "RED", "observed": "RED", "observed_reason": None}
    records.anchor([control, arm], "control")
    assert arm["verdict"] == "UNANCHORED" and arm["observed"] == "RED"
    assert type(arm["verdict"]) is str
    control["verdict"] = "GREEN"
    records.anchor([control, arm], "control")
    assert arm["verdict"] == "RED" and arm["reason"] is None
