"""The recognisers behind the verdicts that tell the code from the machine (SPEC §6): what a
step's signal and output tail say beyond its exit code. The verdicts themselves, and the order
in which these findings decide one, live in :mod:`tools.mutate.arm_result`.

- KILLED: a step ended by SIGKILL or SIGTERM that ``tools`` did not send (the OOM killer, a
  supervisor). A crash signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL) is the code's: RED.
- ENV-FAULT: a non-zero step whose tail shows the machine failing (a full disk, no memory).
- EMPTY: a test that exited 0 (or pytest's 5) but ran nothing, by the test tools' own
  "ran nothing" lines or the plan's ``empty_when``.

The recognisers read the output's kept tail line by line, after removing ANSI colour
sequences; every pattern is anchored and linear (no nested repetition).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KILL_SIGNALS = ("SIGKILL", "SIGTERM")
CRASH_SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_LINE_MAX = 300  # characters of a matched line that the record keeps

# (name, pattern): the machine failing, as the C library and the kernel word it.
ENV_FAULTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("no-space", re.compile(r"No space left on device")),
    ("no-memory", re.compile(r"Cannot allocate memory")),
    ("out-of-memory", re.compile(r"Out of memory")),
    ("killed", re.compile(r"^[ \t]*Killed[ \t]*$")),
)

# (name, pattern): "ran nothing" as each tool prints it (from each tool's output format).
EMPTY_RECOGNISERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # pytest: the summary line, `no tests ran in 0.01s`, with or without its `=` rule.
    ("pytest", re.compile(r"^=*[ \t]*no tests ran\b")),
    # ctest: `No tests were found!!!`
    ("ctest", re.compile(r"^No tests were found\b")),
    # doctest: `[doctest] test cases: 0 | …` or `[doctest] assertions: 0 | …`
    ("doctest", re.compile(r"^\[doctest\] (?:test cases|assertions):[ \t]*0[ \t]*\|")),
    # Catch2: `No tests ran`
    ("catch2", re.compile(r"^No tests ran\b")),
    # GoogleTest: `[==========] Running 0 tests from 0 test suites.`
    ("googletest", re.compile(r"^\[=+\] Running 0 tests? from\b")),
)
_PYTEST_WORD = re.compile(r"(?:^|[\s/.])pytest(?:$|[\s.])")
PYTEST_NO_TESTS = 5  # pytest's exit code when it collected nothing


@dataclass(frozen=True)
class Match:
    """What decided a verdict from the output: the recogniser's name and the line."""

    by: str
    line: str

    def record(self) -> dict[str, str]:
        return {"by": self.by, "line": self.line}


def _lines(tail: str) -> list[str]:
    return _ANSI.sub("", tail).replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _first(patterns: tuple[tuple[str, re.Pattern[str]], ...], tail: str) -> Match | None:
    for line in _lines(tail):
        for name, pattern in patterns:
            if pattern.search(line):
                return Match(name, line.strip()[:_LINE_MAX])
    return None


def env_fault(tail: str) -> Match | None:
    """The first line of ``tail`` that shows the machine failing, or None."""
    return _first(ENV_FAULTS, tail)


def ran_nothing(
    tail: str, rc: int | None, command: str, empty_when: re.Pattern[str] | None
) -> Match | None:
    """Why a test step ran nothing (EMPTY), or None: exit 0 with a recogniser's line or a
    match of the plan's ``empty_when``, or pytest's exit 5."""
    if rc == PYTEST_NO_TESTS:
        found = _first(EMPTY_RECOGNISERS[:1], tail)
        if found is not None:
            return found
        if _PYTEST_WORD.search(command):
            return Match("pytest", "exit 5 (no tests collected)")
        return None
    if rc != 0:
        return None
    if empty_when is not None:
        clean = _ANSI.sub("", tail)
        hit = empty_when.search(clean)
        if hit is not None:
            start = clean.rfind("\n", 0, hit.start()) + 1
            end = clean.find("\n", hit.start())
            line = clean[start : end if end >= 0 else len(clean)]
            return Match("empty_when", (line.strip() or hit.group(0))[:_LINE_MAX])
    return _first(EMPTY_RECOGNISERS, tail)
