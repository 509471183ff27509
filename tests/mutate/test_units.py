"""Pieces of the runner on their own: steps, the live display, anchoring, failures."""

from __future__ import annotations

import io
import time
from pathlib import Path

from tools.attribute import _SHA_LINE, _SHA_ONLY
from tools.mutate import records
from tools.mutate.proc import TAIL_BYTES, Registry, run_step
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
