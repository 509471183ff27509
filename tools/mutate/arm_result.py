"""What a mutation arm observed, and the one function that decides its verdict (SPEC §6).

:class:`ArmResult` is what an arm's run saw, field by field (the quiet wait, the apply, the
build and test steps with their exit codes, signals and output tails, the artifacts, the
targets' sha256 before, mutated and after, the timings); :func:`classify` turns it, and the
control arm's outcome when there is one, into a :class:`Classification`: the verdict, its
reason and the output line that decided it. Nothing else decides a verdict: the runner, the
ledger records, ``mutate collect`` and ``tools attribute`` all ask :func:`classify` (or its
cross-arm half, :func:`against_control`, for records already in the ledger).

The order (the first rule that holds decides):

1. ``NO-QUIET-WINDOW``: a quiet machine was asked for and never came (nothing ran);
2. ``ERROR``: the arm could not run its steps (an apply error, the overlay not applying, no
   worktree);
3. ``NOT-APPLIED``: the arm's own mutation changed nothing;
4. the build: ``TIMEOUT``; then ``KILLED`` (a kill signal tools did not send); then
   ``ENV-FAULT`` (a failing build whose output shows the machine failing); then ``NO-BUILD``
   (any other non-zero exit);
5. ``NO-BUILD``: an artifact is missing after the build;
6. each test run in turn: ``TIMEOUT``; then ``KILLED``; then ``ENV-FAULT`` (a failing run);
   then ``EMPTY`` (a run that exited 0, or pytest's 5, but ran nothing);
7. undecided (``verdict`` None) while fewer runs than ``repeat`` have ended;
8. the exit codes: ``FLAKY`` (the runs disagree), ``GREEN`` (every run exited 0), ``RED``
   (a crash signal included: it is the code's);
9. with the control's outcome: ``STALE`` when the arm's mutation applied, its test gave
   ``GREEN``, ``RED`` or ``FLAKY`` (or has not run yet) and its artifacts are
   byte-identical to the control's;
10. ``UNANCHORED`` when the control ran with the arm and is not ``GREEN`` (an arm run alone
    is never UNANCHORED).

A kill signal goes before a fault line (the step did not end by itself), a fault line before
"ran nothing" (it may be why nothing ran), and the machine verdicts before the exit codes, so a
killed, faulty or empty run is never RED or GREEN.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tools.mutate.verdicts import KILL_SIGNALS, Match, env_fault, ran_nothing


class Verdict(StrEnum):
    """An arm's verdict; the value is the word the ledger, receipts and tables carry."""

    GREEN = "GREEN"
    RED = "RED"
    NO_BUILD = "NO-BUILD"
    NOT_APPLIED = "NOT-APPLIED"
    TIMEOUT = "TIMEOUT"
    ERROR = "ERROR"
    FLAKY = "FLAKY"
    UNANCHORED = "UNANCHORED"
    KILLED = "KILLED"
    EMPTY = "EMPTY"
    STALE = "STALE"
    NO_QUIET_WINDOW = "NO-QUIET-WINDOW"
    ENV_FAULT = "ENV-FAULT"


# Tuples, not sets: a member equals its word, but hashes by its name.
# Verdicts that prove nothing about the code: a mutated arm with one is no evidence, and
# ``tools attribute`` skips a bisection step that gets one.
MACHINE = (
    Verdict.KILLED,
    Verdict.EMPTY,
    Verdict.STALE,
    Verdict.NO_QUIET_WINDOW,
    Verdict.ENV_FAULT,
)
# What the test's exit codes say; identical artifacts turn these into STALE.
BY_EXIT_CODES = (Verdict.GREEN, Verdict.RED, Verdict.FLAKY)


@dataclass(frozen=True)
class Step:
    """One build or test run as it ended: ``rc`` as a shell reports it (None: it timed
    out), the signal that ended it (never one tools sent), its output's tail, its time."""

    rc: int | None
    timed_out: bool = False
    signal: str | None = None
    tail: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class Target:
    """A target file's sha256 before the mutation, mutated, and after the restore (None:
    absent at that point)."""

    path: str
    sha256_before: str | None
    sha256_mutated: str | None
    sha256_after: str | None

    def record(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256_before": self.sha256_before,
            "sha256_mutated": self.sha256_mutated,
            "sha256_after": self.sha256_after,
        }


@dataclass(frozen=True)
class ArmResult:
    """What one arm's run observed. ``build`` is None without a build command (or when the
    arm stopped before it); ``tests`` holds the test runs that ended, a timed-out one
    included; ``artifacts`` (path, sha256 or None when missing) is None when the plan names
    none or the arm stopped before they were hashed. ``error`` / ``not_applied``: why the
    apply failed, in words. ``durations``, ``numstat``, ``conditions`` and ``conflicts`` are
    carried into the record as they are."""

    arm: str
    is_control: bool = False
    quiet: Mapping[str, Any] | None = None
    error: str | None = None
    not_applied: str | None = None
    applied: bool = False
    build: Step | None = None
    tests: tuple[Step, ...] = ()
    test_command: str = ""
    repeat: int = 1
    timeout: float = 0.0
    empty_when: re.Pattern[str] | None = None
    artifacts: tuple[tuple[str, str | None], ...] | None = None
    targets: tuple[Target, ...] = ()
    restored: bool | None = None
    numstat: tuple[Mapping[str, Any], ...] = ()
    conditions: Mapping[str, Any] | None = None
    durations: Mapping[str, Any] = field(default_factory=dict)
    conflicts: tuple[Mapping[str, Any], ...] = ()

    @property
    def run_rcs(self) -> list[int]:
        """The exit codes of the test runs that did not time out."""
        return [t.rc for t in self.tests if not t.timed_out and t.rc is not None]

    @property
    def signal(self) -> str | None:
        """The first signal that ended a step: the build's, else a test run's (a timed-out
        run's is never one)."""
        if self.build is not None and self.build.signal:
            return self.build.signal
        return next((t.signal for t in self.tests if not t.timed_out and t.signal), None)

    def artifact_map(self) -> dict[str, str] | None:
        """path → sha256 of every artifact, or None when there are none or one is missing."""
        if not self.artifacts:
            return None
        out: dict[str, str] = {}
        for path, sha in self.artifacts:
            if sha is None:
                return None
            out[path] = sha
        return out


@dataclass(frozen=True)
class Control:
    """The control arm's outcome, as the cross-arm rules need it: its verdict, its
    artifacts (path → sha256; None: it has none to compare), the id of its ledger record
    when it came from the ledger, and whether it ran with the arm (only then does its
    verdict anchor the arm)."""

    name: str
    verdict: str
    artifacts: Mapping[str, str] | None = None
    record_id: str | None = None
    ran_with: bool = True


@dataclass(frozen=True)
class Classification:
    """A verdict (None: undecided, the next step runs) with its ``reason`` and the output
    line that decided it (``match``). ``observed`` is the arm's own verdict (STALE
    included, UNANCHORED never) with ``observed_reason``; ``tested`` is what the exit codes
    said when STALE overrode them."""

    verdict: Verdict | None
    reason: str | None = None
    match: Match | None = None
    observed: Verdict | None = None
    observed_reason: str | None = None
    tested: Verdict | None = None


@dataclass(frozen=True)
class Judged:
    """A step's verdict beyond its exit code (None: the exit code decides), the reason, and
    the line that decided it."""

    verdict: Verdict | None
    reason: str | None = None
    match: Match | None = None


def judge_step(
    what: str,
    *,
    rc: int | None,
    signal: str | None,
    tail: str,
    command: str,
    empty_when: re.Pattern[str] | None = None,
    test: bool,
) -> Judged:
    """KILLED, ENV-FAULT or (a test only) EMPTY for one finished step, else no verdict.

    Order: a kill signal first (the step did not end by itself), then a machine fault in a
    failing step's tail (it may be why the step crashed), then a test that ran nothing."""
    if signal in KILL_SIGNALS:
        return Judged(Verdict.KILLED, f"the {what} was ended by {signal}, which tools did not send")
    if rc not in (0, None):
        fault = env_fault(tail)
        if fault is not None:
            return Judged(
                Verdict.ENV_FAULT,
                f"the {what} exited {rc} and its output shows: {fault.line}",
                fault,
            )
    if test:
        empty = ran_nothing(tail, rc, command, empty_when)
        if empty is not None:
            return Judged(Verdict.EMPTY, f"the test ran nothing ({empty.by}: {empty.line})", empty)
    return Judged(None)


def _decided(verdict: Verdict, reason: str | None, match: Match | None = None) -> Classification:
    return Classification(verdict, reason, match, verdict, reason)


def _before_the_test(result: ArmResult) -> Classification | None:
    """Rules 1 to 5: the arm never reached its test."""
    quiet = result.quiet
    if quiet is not None and not quiet.get("quiet"):
        load = quiet.get("load_per_cpu")
        seen = "unknown" if load is None else f"{load:g}"
        return _decided(
            Verdict.NO_QUIET_WINDOW,
            f"the 1-minute load per CPU ({seen}) stayed above {quiet['max_load']:g} "
            f"for {quiet['wait_s']:g} s",
        )
    if result.error is not None:
        return _decided(Verdict.ERROR, result.error)
    if result.not_applied is not None:
        return _decided(Verdict.NOT_APPLIED, result.not_applied)
    b = result.build
    if b is not None:
        if b.timed_out:
            return _decided(Verdict.TIMEOUT, f"the build ran past {result.timeout:g} s")
        # ``command`` names the test command for pytest's exit 5: a build has none.
        judged = judge_step("build", rc=b.rc, signal=b.signal, tail=b.tail, command="", test=False)
        if judged.verdict is not None:
            return _decided(judged.verdict, judged.reason, judged.match)
        if b.rc != 0:
            sig = f" ({b.signal})" if b.signal else ""
            return _decided(Verdict.NO_BUILD, f"the build exited {b.rc}{sig}")
    missing = [path for path, sha in result.artifacts or () if sha is None]
    if missing:
        after_what = "after the build exited 0" if b is not None else "(no build command)"
        return _decided(Verdict.NO_BUILD, f"artifact(s) {', '.join(missing)} missing {after_what}")
    return None


def _the_test(result: ArmResult) -> Classification:
    """Rules 6 to 8: the test runs, in turn, then their exit codes."""
    for i, t in enumerate(result.tests):
        if t.timed_out:
            return _decided(Verdict.TIMEOUT, f"test run {i + 1} ran past {result.timeout:g} s")
        judged = judge_step(
            "test",
            rc=t.rc,
            signal=t.signal,
            tail=t.tail,
            command=result.test_command,
            empty_when=result.empty_when,
            test=True,
        )
        if judged.verdict is not None:
            why = judged.reason if result.repeat == 1 else f"run {i + 1}: {judged.reason}"
            return _decided(judged.verdict, why, judged.match)
    rcs = result.run_rcs
    if len(rcs) < result.repeat:
        return Classification(None)
    passed = {rc == 0 for rc in rcs}
    if len(passed) > 1:
        return _decided(Verdict.FLAKY, None)
    if passed == {True}:
        return _decided(Verdict.GREEN, None)
    signal = result.signal
    return _decided(Verdict.RED, f"the test crashed ({signal})" if signal else None)


def against_control(
    own: Classification,
    *,
    arm: str,
    applied: bool,
    artifacts: Mapping[str, str] | None,
    control: Control | None,
) -> Classification:
    """Rules 9 and 10 on an arm whose own verdict is ``own``: STALE, then UNANCHORED (or
    ``own`` as it is). Used by :func:`classify`, and on its own for arm records read back
    from the ledger (``mutate collect``). An arm still undecided (its test not run yet)
    whose artifacts are the control's is STALE at once: its test would prove nothing."""
    if control is None or arm == control.name:
        return own
    verdict = own.verdict
    if (
        applied
        and (verdict is None or verdict in BY_EXIT_CODES)
        and control.artifacts is not None
        and artifacts is not None
        and dict(artifacts) == dict(control.artifacts)
    ):
        where = f" (record {control.record_id[:12]})" if control.record_id else ""
        ran = "ran" if verdict is not None else "would run"
        said = f"its {verdict.value} proves nothing" if verdict is not None else "it is not run"
        why = (
            f"its artifacts ({', '.join(sorted(artifacts))}) are byte-identical to those of "
            f"the control arm {control.name!r}{where}: the test {ran} without the mutation, "
            f"{said}"
        )
        # No line decided it: the test's own verdict (GREEN, RED, FLAKY) has no match.
        own = Classification(Verdict.STALE, why, None, Verdict.STALE, why, verdict)
    observed = own.observed or own.verdict
    if observed is not None and control.ran_with and control.verdict != Verdict.GREEN:
        why = (
            f"the control arm {control.name} is {control.verdict}, not GREEN: this arm's "
            f"{observed.value} proves nothing"
        )
        return Classification(
            Verdict.UNANCHORED, why, own.match, observed, own.observed_reason, own.tested
        )
    return own


def classify(result: ArmResult, control: Control | None = None) -> Classification:
    """The verdict of one arm from what it observed, with its reason, in the order the
    module's docstring lists (rules 1 to 10).

    ``control``: the control arm's outcome, for STALE and UNANCHORED; None when it is not
    known (the arm ran alone, or the record of the control is still to come). A result
    whose runs have not all ended yet (fewer test runs than ``repeat``, none of them
    deciding) is undecided: ``verdict`` None, and the caller runs the next step."""
    own = _before_the_test(result) or _the_test(result)
    return against_control(
        own,
        arm=result.arm,
        applied=result.applied,
        artifacts=result.artifact_map(),
        control=control,
    )


def verdict_of(word: object) -> Verdict | None:
    """The verdict a record's word names, or None when it names none."""
    if not isinstance(word, str):
        return None
    try:
        return Verdict(word)
    except ValueError:
        return None
