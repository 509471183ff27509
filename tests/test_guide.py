"""docs/guide.md quotes what the commands really print: every transcript in it (a ```text
block that starts with a `$ command` line) is found in the output of
scripts/guide_transcripts.sh, which builds the guide's example repositories and runs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
SCRIPT = ROOT / "scripts" / "guide_transcripts.sh"
ELIDED = "…"  # a line of its own in a transcript: output cut there
# Ledger ids carry the time a record was made: the one id that differs between runs.
_LEDGER_ID = re.compile(r"\b[0-9a-f]{64}\b")


def transcripts(text: str) -> list[list[str]]:
    """The guide's transcript blocks, as lists of lines."""
    blocks, current, inside = [], None, False
    for line in text.splitlines():
        if not inside and line == "```text":
            inside, current = True, []
        elif inside and line == "```":
            inside = False
            if current and current[0].startswith("$ "):
                blocks.append(current)
        elif inside and current is not None:
            current.append(line)
    return blocks


def segments(block: list[str]) -> list[list[str]]:
    """A block cut into the runs of lines that must appear contiguously: one per command
    (a command's output ends where the next `$` line starts), cut again at elisions."""
    out: list[list[str]] = []
    for line in block:
        if line.startswith("$ ") or line == ELIDED or not out:
            out.append([])
        if line != ELIDED:
            out[-1].append(line)
    return [[line for line in seg] for seg in out if any(s.strip() for s in seg)]


# A green hook's one line says how long it took: the guide shows `(0.2 s)`, any figure matches.
_SECONDS = re.compile(r"\((\d+\.\d) s\)$")


def _normal(line: str) -> str:
    return _SECONDS.sub("(N s)", _LEDGER_ID.sub("<ledger id>", line))


def find(seg: list[str], lines: list[str], start: int) -> int:
    """The index just after the first occurrence of ``seg`` in ``lines`` from ``start``."""
    want = [_normal(s) for s in seg]
    while want and not want[-1].strip():
        want.pop()
    for i in range(start, len(lines) - len(want) + 1):
        if lines[i : i + len(want)] == want:
            return i + len(want)
    return -1


def test_segments_cut_at_commands_and_elisions() -> None:
    block = ["$ a", "out", "", "$ b | head", "x", ELIDED, "y", "[exit 0]"]
    assert segments(block) == [["$ a", "out", ""], ["$ b | head", "x"], ["y", "[exit 0]"]]


@pytest.mark.skipif(
    shutil.which("cc") is None or shutil.which("make") is None or shutil.which("bash") is None,
    reason="the guide's examples build a C project with cc and make",
)
def test_every_transcript_of_the_guide_is_what_the_commands_print(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if shutil.which("tools", path=env["PATH"]) is None:
        pytest.skip("the `tools` console script is not installed")
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr
    lines = [_normal(line) for line in proc.stdout.splitlines()]
    blocks = transcripts(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 15
    for block in blocks:
        at = 0
        for seg in segments(block):
            found = find(seg, lines, at)
            assert found >= 0, (
                "docs/guide.md quotes output that scripts/guide_transcripts.sh does not print "
                "(rerun the script and update the guide):\n" + "\n".join(seg)
            )
            at = found
    assert list(tmp_path.iterdir()) == []  # the script leaves nothing behind
