"""A message file is judged as git will store it: :mod:`tools.commit_messages` against real git.

Each case commits the same bytes with real ``git commit`` (``-F`` without an editor, or through
an editor that leaves the file as it is) and compares what git stored with what the module
says git will store.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tools.commit_messages import (
    Cleaned,
    as_git_will_store,
    clean,
    comment_prefix,
    edited,
    effective_mode,
)
from tools.git import Git, decode

TEMPLATE = (
    "\n# Please enter the commit message for your changes. Lines starting\n"
    "# with '#' will be ignored, and an empty message aborts the commit.\n#\n"
)
SCISSORS = "# ------------------------ >8 ------------------------\n"


def _stored(repo: Repo, message: bytes, *args: str, editor: bool = False) -> str:
    """Commit ``message`` as git does (``-F``, or ``-e -F`` with an editor that keeps the
    file); return the message git stored."""
    env = dict(os.environ)
    cmd = ["git", "commit", "-q", "--allow-empty", "--no-verify", *args]
    if editor:
        env["GIT_EDITOR"] = "true"  # the file is left as git wrote it for the editor
        cmd += ["-e"]
    cmd += ["-F", "-"]
    proc = subprocess.run(cmd, cwd=repo.path, input=message, env=env, capture_output=True)
    if proc.returncode != 0:
        return ""  # git refused: an empty message after cleanup
    return _message(repo)


def _message(repo: Repo) -> str:
    """HEAD's message exactly as stored (``git log --format=%B`` would add a newline)."""
    raw = repo.git_bytes("cat-file", "commit", "HEAD")
    return decode(raw.split(b"\n\n", 1)[1])


def _ours(repo: Repo, text: str) -> str:
    return as_git_will_store(text, Git(repo.path)).text


@pytest.fixture
def committed(repo: Repo) -> Repo:
    repo.commit("Root\n")
    return repo


CASES = [
    "fix: the thing\n\n#123 was caused by the cache\n\nKey: v\n",
    "Subject  \r\n\n\n\nBody\t\n# a comment\n\nKey: v\n",
    "\n\n\nSubject\n\n\n",
    "# only comment lines\n#\n",
]
# Not among them: a file given with -F that holds git's scissors line. The hook cannot tell
# it from an editor session with `git commit -v`, and judges it as the editor's (SPEC §4.2).


@pytest.mark.parametrize("text", CASES)
def test_message_given_with_F_is_stored_as_judged(committed: Repo, text: str) -> None:
    assert _ours(committed, text) == _stored(committed, text.encode())


@pytest.mark.parametrize("mode", ["strip", "whitespace", "verbatim", "scissors"])
@pytest.mark.parametrize("text", CASES)
def test_commit_cleanup_config_is_honoured(committed: Repo, mode: str, text: str) -> None:
    committed.git("config", "commit.cleanup", mode)
    assert _ours(committed, text) == _stored(committed, text.encode())


@pytest.mark.parametrize("text", CASES)
def test_message_edited_in_the_editor_is_stored_as_judged(committed: Repo, text: str) -> None:
    # What the hook sees after `git commit -e -F`: the text, then git's template comments.
    hooked = text + TEMPLATE
    assert edited(hooked, "#")
    assert _ours(committed, hooked) == _stored(committed, text.encode(), editor=True)


def test_scissors_part_is_dropped_only_when_git_drops_it(committed: Repo) -> None:
    text = "Subject\n\nBody\n" + TEMPLATE + SCISSORS + "# Do not modify\ndiff --git a/x b/x\n"
    assert _ours(committed, text) == "Subject\n\nBody\n"
    committed.git("config", "commit.cleanup", "whitespace")
    assert "diff --git" in _ours(committed, text)


def test_core_comment_char_is_honoured(committed: Repo) -> None:
    committed.git("config", "core.commentChar", ";")
    text = "Subject\n\n#123 stays\n; Please enter the commit message\n; a comment\n"
    assert _ours(committed, text) == "Subject\n\n#123 stays\n"
    assert comment_prefix(text, "auto") == ";"
    assert comment_prefix("no template\n", "auto") == "#"


def test_effective_mode_table() -> None:
    assert effective_mode(None, True) == "strip"
    assert effective_mode(None, False) == "whitespace"
    assert effective_mode("scissors", False) == "whitespace"
    assert effective_mode("scissors", True) == "scissors"
    assert effective_mode("STRIP", False) == "strip"
    assert effective_mode("bogus", False) == "whitespace"


_LINE = st.sampled_from(
    ["", " ", "\t", "Subject", "Body text  ", "#123 ref", "# comment", "Key: v", "\r", "   x"]
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_LINE, max_size=8), mode=st.sampled_from(["strip", "whitespace"]))
def test_clean_matches_git_stripspace(lines: list[str], mode: str) -> None:
    text = "\n".join(lines) + "\n"
    args = ["git", "stripspace"] + (["--strip-comments"] if mode == "strip" else [])
    real = subprocess.run(args, input=text.encode(), capture_output=True, check=True).stdout
    assert clean(text, mode).text.encode() == real


def test_cleaned_lines_map_back_to_the_file() -> None:
    cleaned = clean("\n\n# c\nSubject  \r\n\n\n\nBody\t\n# x\n\nKey: v\n", "strip")
    assert cleaned.text == "Subject\n\nBody\n\nKey: v\n"
    assert [cleaned.original_line(n) for n in (1, 3, 5)] == [4, 8, 11]


def test_a_message_without_a_line_map_keeps_its_own_lines() -> None:
    """``origin`` defaults to no map: each line is its own (the default was once a
    dataclasses ``field`` object, which a named tuple keeps as the value itself)."""
    bare = Cleaned("Subject\n")
    assert bare.origin == () and bare.original_line(1) == 1 and bare.original_line(None) is None


def test_a_collapsed_blank_line_maps_to_the_first_blank_it_stands_for() -> None:
    """A finding on the blank line that stands for a run names the run's first line."""
    cleaned = clean("\n\n# c\nSubject  \r\n\n\n\nBody\t\n# x\n\nKey: v\n", "strip")
    assert [cleaned.original_line(n) for n in (2, 4)] == [5, 10]
    spaced = clean("Subject\n \n\t\n\nBody\n", "whitespace")
    assert spaced.text == "Subject\n\nBody\n"
    assert spaced.original_line(2) == 2 and spaced.original_line(3) == 5


def test_hook_sees_what_the_module_judges(committed: Repo, tmp_path: Path) -> None:
    """The commit-msg hook receives the file before cleanup: record it, then compare."""
    hook = committed.path / ".git" / "hooks" / "commit-msg"
    keep = tmp_path / "seen"
    hook.write_text(f'#!/bin/sh\ncp "$1" {keep}\n')
    hook.chmod(0o755)
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "fix: a", "-m", "#1 was it", "-m", "K: v"],
        cwd=committed.path,
        check=True,
    )
    seen = keep.read_text()
    stored = _message(committed)
    assert _ours(committed, seen) == stored
    assert "#1 was it" in stored
