"""Pieces of the runner on their own: steps, the live display, anchoring, failures."""

from __future__ import annotations

import io
import subprocess
import time
from pathlib import Path

from tools.attribute import _SHA_LINE, _SHA_ONLY
from tools.mutate import records
from tools.mutate.proc import _AFTER_JOURNAL, TAIL_BYTES, Registry, journal, run_step
from tools.mutate.runner import LiveProgress, Progress


def test_step_keeps_only_the_tail_and_reports_signals_as_a_shell(tmp_path: Path) -> None:
    r = run_step(
        "yes 0123456789 | head -c 200000; echo END", tmp_path, timeout=30, registry=Registry()
    )
    assert r.rc == 0 and not r.timed_out
    assert len(r.tail.encode()) <= TAIL_BYTES and r.tail.endswith("END\n")
    r = run_step("kill -9 $$", tmp_path, timeout=30, registry=Registry())
    assert r.rc == 137
    r = run_step("exit 3", tmp_path, timeout=30, registry=Registry())
    assert r.rc == 3


def test_step_timeout(tmp_path: Path) -> None:
    start = time.monotonic()
    r = run_step("sleep 30", tmp_path, timeout=0.2, registry=Registry())
    assert r.timed_out and r.rc is None
    assert time.monotonic() - start < 20


def test_step_stdin_is_empty(tmp_path: Path) -> None:
    r = run_step("cat; echo done", tmp_path, timeout=30, registry=Registry())
    assert r.rc == 0 and r.tail == "done\n"


def test_a_step_runs_only_once_its_group_is_in_the_journal(tmp_path: Path) -> None:
    """The command itself reads the journal: its own process group is there already, so a
    tools killed at any moment leaves no step running that a sweep cannot find."""
    tools_dir = tmp_path / "tools"
    with journal(tools_dir):
        r = run_step(
            f"cat {tools_dir}/mutate/groups/*.jsonl; echo pgid=$$",
            tmp_path,
            timeout=30,
            registry=Registry(),
        )
    assert r.rc == 0
    pgid = r.tail.rsplit("pgid=", 1)[1].strip()
    assert f'"pgid": {pgid},' in r.tail


def test_a_step_whose_tools_died_before_the_journal_never_runs(tmp_path: Path) -> None:
    """The shell's input ends before its line comes (tools was killed): it exits, 125,
    without running the command."""
    ran = tmp_path / "ran"
    shell = subprocess.run(
        ["/bin/sh", "-c", _AFTER_JOURNAL + f"touch {ran}"], stdin=subprocess.DEVNULL, check=False
    )
    assert shell.returncode == 125 and not ran.exists()


def _payload(name: str, verdict: str, **extra: object) -> dict:
    return {
        "arm": name,
        "verdict": verdict,
        "observed": verdict,
        "expect": None,
        "restored": None,
        "run_rcs": [],
        "compile_rc": None,
        "durations": {"total": 1.0},
        **extra,
    }


def test_anchor_and_unanchor() -> None:
    arms = [_payload("control", "RED"), _payload("B", "GREEN"), _payload("C", "NO-BUILD")]
    records.anchor(arms, "control")
    assert [a["verdict"] for a in arms] == ["RED", "UNANCHORED", "UNANCHORED"]
    assert arms[1]["observed"] == "GREEN"
    arms[0]["verdict"] = "GREEN"
    records.anchor(arms, "control")
    assert [a["verdict"] for a in arms] == ["GREEN", "GREEN", "NO-BUILD"]
    alone = [_payload("B", "RED")]
    records.anchor(alone, "control")
    assert alone[0]["verdict"] == "RED"


def test_failures() -> None:
    assert records.failures([_payload("a", "FLAKY")]) == []
    # NOT-APPLIED fails the run unless the plan expects it: the arm tested nothing it names.
    assert records.failures([_payload("b", "NOT-APPLIED")]) == ["arm b: NOT-APPLIED"]
    assert records.failures([_payload("b", "NOT-APPLIED", expect="NOT-APPLIED")]) == []
    # The machine verdicts count like NO-BUILD: no failure alone, an expect on them unmet.
    for verdict in ("NO-BUILD", "KILLED", "EMPTY", "STALE", "NO-QUIET-WINDOW", "ENV-FAULT"):
        assert records.failures([_payload("b", verdict)]) == []
        assert records.failures([_payload("b", verdict, expect="RED")]) == [
            f"arm b: expected RED, got {verdict}"
        ]
    assert records.failures([_payload("a", "ERROR", reason="x")]) == ["arm a: ERROR (x)"]
    assert records.failures([_payload("a", "TIMEOUT")]) == ["arm a: TIMEOUT"]
    assert records.failures([_payload("a", "TIMEOUT", expect="TIMEOUT")]) == []
    assert records.failures([_payload("a", "RED", expect="GREEN")]) == [
        "arm a: expected GREEN, got RED"
    ]
    assert records.failures([_payload("a", "GREEN", restored=False)]) == [
        "arm a: the restore did not verify by sha256"
    ]


def test_plain_and_live_progress() -> None:
    out = io.StringIO()
    plain = Progress(out)
    plain.queued(["control", "B"])
    plain.state("B", "testing")
    plain.done("B", _payload("B", "RED", run_rcs=[1]))
    assert out.getvalue().splitlines() == [
        "mutate: queued: control, B",
        "mutate: B: testing",
        "mutate: B: RED (run_rc 1, 1.0 s)",
    ]
    out = io.StringIO()
    live = LiveProgress(out)
    live.queued(["control", "B"])
    live.state("control", "building")
    live.done("B", _payload("B", "RED"))
    live.close()
    text = out.getvalue()
    assert "control" in text and "building" in text and "RED" in text


def test_bisect_output_patterns_are_linear() -> None:
    hostile = b"a" * (1 << 20) + b" is the first bad commit"
    start = time.monotonic()
    assert _SHA_LINE.search(hostile) is None
    assert _SHA_LINE.search(b"\n".join([b"0" * 40] * (1 << 15))) is None
    assert _SHA_ONLY.match(b"f" * (1 << 20)) is None
    assert time.monotonic() - start < 5
    found = _SHA_LINE.search(b"x\n" + b"ab" * 20 + b" is the first bad commit\n")
    assert found is not None and found.group(1) == b"ab" * 20


def test_quiet_countdown_and_interrupted_arms_in_plain_and_live_progress() -> None:
    out = io.StringIO()
    plain = Progress(out)
    plain.queued(["control", "B", "C"])
    plain.countdown("control", 30.0, 2.5)
    plain.countdown("control", 29.0, 2.4)  # within 30 s of the last line: not repeated
    plain.done("control", _payload("control", "GREEN"))
    assert plain.interrupted() == ["B", "C"]
    assert out.getvalue().splitlines() == [
        "mutate: queued: control, B, C",
        "mutate: control: waiting for a quiet machine: load per CPU 2.5, 30 s left",
        "mutate: control: GREEN (1.0 s)",
        "mutate: B: interrupted",
        "mutate: C: interrupted",
    ]
    out = io.StringIO()
    live = LiveProgress(out)
    live.queued(["control", "B"])
    live.countdown("control", 12.0, None)
    assert live._rows["control"][0] == (
        "waiting for a quiet machine: load per CPU unknown, 12 s left"
    )
    live.countdown("control", 11.0, None)  # redrawn on every tick
    assert live._rows["control"][0].endswith("11 s left")
    assert live.interrupted() == ["control", "B"]
    live.close()
    assert "interrupted" in out.getvalue()


def _arm_record(name: str, **extra: object) -> dict:
    from tools import ledger

    payload = {
        "arm": name,
        "mutation": "none" if name == "control" else f"replace in {name}.c",
        "applied": True,
        "numstat": [],
        "targets": [],
        "compile_rc": 0,
        "run_rc": 0,
        "run_rcs": [0],
        "verdict": "GREEN",
        "restored": None,
        **extra,
    }
    return ledger.make_record("mutation-arm", payload, created="2026-12-01T00:00:00Z")


def _table(arms: list[dict], **run: object) -> str:
    from tools import evidence, ledger

    record = ledger.make_record(
        "mutation-run",
        {"plan": "p.yml", "arms": [a["id"] for a in arms], "verdicts": {}, **run},
        created="2026-12-01T00:00:00Z",
    )
    known = {a["id"]: a for a in arms}
    return evidence.render_table(record, known.get)


def test_table_formats_old_and_new() -> None:
    target = {"path": "a.c", "sha256_before": "1" * 64, "sha256_mutated": "2" * 64}
    target["sha256_after"] = "1" * 64
    cond = {
        "cpus": 2,
        "start": {"load": [0.5, 0.25, 0.125], "mem_available": 3 * 2**30},
        "end": {"load": [1.5, 0.5, 0.25], "mem_available": 2 * 2**30},
        "disk_free": 10 * 2**30,
        "versions": [{"command": "cc --version", "rc": 0, "output": "cc 12.2\nCopyright"}],
    }
    control = _arm_record("control", artifacts=[{"path": "prog", "sha256": "a" * 64}])
    b = _arm_record(
        "B",
        targets=[target],
        run_rc=139,
        run_rcs=[139],
        verdict="RED",
        signal="SIGSEGV",
        artifacts=[{"path": "prog", "sha256": None}],
        conditions=cond,
    )
    # A record without table_format renders the columns it always had.
    old = _table([control, b])
    assert old.splitlines()[0] == (
        "| arm | mutation | applied | sha256 before → after | compile_rc | run_rc | verdict "
        "| restored |"
    )
    assert "Conditions" not in old and "SIGSEGV" not in old
    new = _table([control, b], table_format=2).splitlines()
    assert new[0] == (
        "| arm | mutation | applied | sha256 before → mutated → after | artifacts | compile_rc "
        "| run_rc | signal | verdict | restored |"
    )
    assert new[2] == "| control | none | yes | — | `prog` aaaaaaaaaaaa | 0 | 0 | — | GREEN | — |"
    assert new[3] == (
        "| B | replace in B.c | yes | `a.c` 111111111111 → 222222222222 → 111111111111 "
        "| `prog` missing | 0 | 139 | SIGSEGV | RED | — |"
    )
    assert new[4] == ""
    assert new[5] == (
        "Conditions: 2 CPUs; load average (1/5/15 min) 0.50/0.25/0.12 at start, 1.50/0.50/0.25 "
        "at end; available memory 3.0 GiB at start, 2.0 GiB at end; free disk 10.0 GiB; "
        "`cc --version`: cc 12.2."
    )
    # Without signals or artifacts those columns stay out.
    plain = _table([_arm_record("control", conditions=cond)], table_format=2).splitlines()
    assert "signal" not in plain[0] and "artifacts" not in plain[0]


def test_stale_needs_the_controls_artifacts_and_an_applied_mutation() -> None:
    art = [{"path": "prog", "sha256": "a" * 64}]
    control = _payload("control", "GREEN", artifacts=art, applied=True, id="c" * 64)
    same = _payload("S", "GREEN", artifacts=art, applied=True)
    other = _payload("O", "RED", artifacts=[{"path": "prog", "sha256": "b" * 64}], applied=True)
    unapplied = _payload("N", "NOT-APPLIED", artifacts=art, applied=False)
    no_build = _payload("X", "NO-BUILD", artifacts=art, applied=True)
    records.judge_stale([control, same, other, unapplied, no_build], control)
    assert [p["verdict"] for p in (control, same, other, unapplied, no_build)] == [
        "GREEN",
        "STALE",
        "RED",
        "NOT-APPLIED",
        "NO-BUILD",
    ]
    assert same["tested"] == "GREEN" and "cccccccccccc" in same["reason"]
    # A control without artifacts (it did not build) judges nothing.
    lone = _payload("S", "GREEN", artifacts=art, applied=True)
    records.judge_stale([lone], _payload("control", "NO-BUILD", artifacts=None))
    assert lone["verdict"] == "GREEN"
