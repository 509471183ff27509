"""The text report a person reads: one line per gate, its findings indented under it, a blank
line and the summary; colour on a terminal only, never with NO_COLOR, never when piped (the
real console script under a real pseudo-terminal); terminal controls from hostile input shown
escaped, never acted on."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools.report import GateResult, Report, render

HUNK = "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"
GOOD = (
    "Add a thing\n\nBody.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)
SGR = re.compile(r"\x1b\[[0-9;]*m")
GATE_LINE = re.compile(r"^(ok  |FAIL|SKIP) [a-z-]+( \([^)]*\))?(: .+)?$")


@pytest.fixture
def topic(repo: Repo) -> Repo:
    repo.commit(GOOD, {"README.md": "hello\n"})
    repo.branch("topic")
    repo.commit("Bad subject.\n", {"a.txt": HUNK})
    return repo


def test_one_line_per_gate_findings_under_it_then_the_summary(topic: Repo) -> None:
    gates = ["conflicts", "trailers", "style", "docs"]
    args = [a for g in gates for a in ("--gate", g)]
    run = topic.tools("preflight", "--base", "main", *args)
    assert run.exit_code == 1
    report = topic.tools("--format", "json", "preflight", "--base", "main", *args).json()
    lines = run.stdout.splitlines()
    assert "\x1b" not in run.stdout  # not a terminal: no colour
    heads = [i for i, line in enumerate(lines) if not line.startswith("  ") and line]
    assert [lines[i].split()[1] for i in heads[:-1]] == gates
    for i in heads[:-1]:
        assert GATE_LINE.match(lines[i]), lines[i]
    # each gate's findings, and only them, indented under it, in the report's order
    for gate, start, end in zip(report["gates"], heads, heads[1:], strict=False):
        block = [line for line in lines[start + 1 : end] if line]
        assert len(block) == len(gate["findings"])
        for line, f in zip(block, gate["findings"], strict=True):
            assert line.startswith(f"  {f['severity']}[{f['rule']}] ")
            assert line.endswith(f["message"])
    assert lines[0] == "FAIL conflicts (3 errors)"
    assert lines[1] == "  error[conflict-marker] a.txt:1: conflict marker <<<<<<< at column 0"
    sha = topic.head()[:12]
    assert lines[heads[2]] == "FAIL style (1 commit, 2 errors)"
    assert lines[heads[2] + 1].startswith(f"  error[subject-period] {sha} line 1: ")
    assert lines[heads[3]] == "ok   docs (1 info)"
    assert lines[-2] == ""
    assert lines[-1] == "Not green: 3 failed (conflicts, trailers, style), 1 passed."


def test_a_skip_says_why_and_is_never_green(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "a\n"})
    run = repo.tools("preflight", "--gate", "conflicts", "--gate", "trailers")
    assert run.exit_code == 0
    assert run.stdout.splitlines() == [
        "ok   conflicts",
        "SKIP trailers: base 'origin/main' (config `base`) does not resolve; fetch it or pass "
        "--base",
        "",
        "Not green: 1 skipped (trailers), 1 passed.",
    ]


def test_single_gate_commands_share_the_renderer_without_a_summary(topic: Repo) -> None:
    run = topic.tools("style", "check", "--base", "main")
    lines = run.stdout.splitlines()
    assert lines[0] == "FAIL style (1 commit, 2 errors)"
    assert all(line.startswith("  error[") for line in lines[1:])
    assert "Not green" not in run.stdout


def test_terminal_controls_in_hostile_input_are_shown_escaped(repo: Repo) -> None:
    """A file name carrying an escape sequence and a bidi override is printed visibly."""
    repo.commit(GOOD, {"x\x1b[2Jy\u202e.txt": HUNK})
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 1
    assert "\x1b" not in run.stdout and "\u202e" not in run.stdout
    assert "x\\x1b[2Jy\\u202e.txt:1:" in run.stdout


def test_a_message_of_several_lines_keeps_its_shape() -> None:
    gate = GateResult("conflicts")
    gate.add("conflict-marker", "first\nsecond\x07", path="a.txt", line=1)
    text = render(Report([gate]), "text", summary=False)
    assert text.splitlines() == [
        "FAIL conflicts (1 error)",
        "  error[conflict-marker] a.txt:1: first",
        "      second\\x07",
    ]


def test_a_refusing_hook_prints_the_errors_alone_unindented_and_capped() -> None:
    """What a hook prints above its summary line: the errors of each gate, no gate lines, no
    warnings or notices, at most N per gate and then how many more and what shows them."""
    from tools.gates import docs, style
    from tools.report.text import failing_lines, skip_line

    marks = GateResult("conflicts")
    for n in range(4):
        marks.add("conflict-marker", f"marker {n}\nnext\x1b", path="a.txt", line=n + 1)
    warned = GateResult(style.NAME)
    warned.add("subject-length", "long", commit="a" * 40)
    notes = GateResult(docs.NAME)
    notes.add("docs-absent", "none configured")
    report = Report([warned, marks, notes])
    assert failing_lines(report, max_findings=2, show_all="tools preflight --staged") == [
        "error[conflict-marker] a.txt:1: marker 0",
        "    next\\x1b",
        "error[conflict-marker] a.txt:2: marker 1",
        "    next\\x1b",
        "… 2 more error(s) of conflicts left out: tools preflight --staged prints them all",
    ]
    assert len(failing_lines(report, max_findings=0)) == 8
    skipped = GateResult("trailers").skip("base gone\x1b[2J")
    assert skip_line(skipped) == "SKIP trailers: base gone\\x1b[2J"
    assert skip_line(skipped, color=True) == "\x1b[1;33mSKIP\x1b[0m trailers: base gone\\x1b[2J"


def test_colour_codes_only_in_text_on_request() -> None:
    gate = GateResult("conflicts")
    gate.add("conflict-marker", "m", path="a.txt", line=1)
    report = Report([gate, GateResult("now").skip("why")])
    coloured = render(report, "text", color=True)
    assert "\x1b[1;31mFAIL\x1b[0m conflicts" in coloured
    assert "\x1b[1;33mSKIP\x1b[0m now (" not in coloured  # a skip without findings: no counts
    assert "\x1b[1;33mSKIP\x1b[0m now: why" in coloured
    assert SGR.sub("", coloured) == render(report, "text")
    for fmt in ("json", "github", "sarif"):
        assert "\x1b" not in render(report, fmt, color=True)


# -- the real console script under a pseudo-terminal -----------------------------------------
def _script() -> str:
    path = Path(sysconfig.get_path("scripts")) / "tools"
    assert path.exists(), f"the console script is not installed at {path}"
    return str(path)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _on_terminal(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``tools args`` with stdout and stderr on a fresh pseudo-terminal."""
    main, sub = os.openpty()
    try:
        proc = subprocess.Popen(
            [_script(), *args], stdin=subprocess.DEVNULL, stdout=sub, stderr=sub, env=env, cwd=cwd
        )
    finally:
        os.close(sub)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=60)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def _piped(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(
        [_script(), *args], capture_output=True, env=env, cwd=cwd, stdin=subprocess.DEVNULL
    )
    return proc.returncode, proc.stdout.decode()


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_colour_on_a_terminal_never_with_no_color_nor_piped(topic: Repo) -> None:
    args = ["preflight", "--base", "main", "--gate", "conflicts", "--gate", "docs"]
    code, out = _on_terminal(args, _env(), topic.path)
    assert code == 1
    assert "\x1b[1;31mFAIL\x1b[0m conflicts (3 errors)" in out
    assert "\x1b[32mok\x1b[0m   docs" in out
    assert "\x1b[1;31mNot green: 1 failed (conflicts), 1 passed.\x1b[0m" in out
    plain = SGR.sub("", out)

    # NO_COLOR set to anything non-empty: no colour, same text
    code, out = _on_terminal(args, _env(NO_COLOR="1"), topic.path)
    assert code == 1 and "\x1b" not in out and out == plain
    # an empty NO_COLOR is as good as unset (no-color.org)
    code, out = _on_terminal(args, _env(NO_COLOR=""), topic.path)
    assert code == 1 and "\x1b[1;31mFAIL" in out
    # a dumb terminal: no colour
    code, out = _on_terminal(args, _env(TERM="dumb"), topic.path)
    assert "\x1b" not in out
    # piped: no colour
    code, out = _piped(args, _env(), topic.path)
    assert code == 1 and "\x1b" not in out and out == plain
    # machine formats on a terminal: never coloured
    code, out = _on_terminal(["--format", "json", *args], _env(), topic.path)
    assert code == 1 and "\x1b" not in out and out.startswith('{"schema": "tools.report/1"')


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_all_green_is_green_on_a_terminal(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "fine\n"})
    code, out = _on_terminal(["preflight", "--gate", "conflicts"], _env(), repo.path)
    assert code == 0
    assert out.endswith("\x1b[32mAll gates green.\x1b[0m\n")
