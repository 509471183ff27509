"""Reads started ahead of the gates (``tools.gates.prefetch``: the range, the ratchet's
search) change no verdict: the same report, the same error, with them and without them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Repo, Run
from tools import gates
from tools.context import Context
from tools.options import Options

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [x]\n"
GOOD = f"Add the widget\n\nWhy it is needed.\n\n{MARKER}\n\n{TRAILERS}"
IDX = ".agents/issue-index.md"
INDEX = (
    "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n| #2 | F1 | A | bug |\n"
)
CLEAN = "int f() { return 0; }\n"
LEAK = "auto d = at::Device(at::kCUDA);\n"


@pytest.fixture
def busy(repo: Repo) -> Repo:
    """main with a tightened ratchet baseline; branch ``work`` with a good commit, a bad
    message and a new device site; then a staged site and a different unstaged one, so that
    the index, the working tree and HEAD count differently."""
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, "src/a.cc": CLEAN})
    assert repo.tools("ratchet", "tighten").exit_code == 0
    repo.commit(GOOD)
    repo.branch("work")
    repo.commit(GOOD, {"src/b.cc": CLEAN})
    repo.commit("wip", {"src/c.cc": LEAK})
    repo.write("src/d.cc", LEAK + LEAK)
    repo.git("add", "src/d.cc")
    repo.write("src/a.cc", LEAK * 3)  # unstaged
    return repo


COMMANDS = [
    ["preflight", "--base", "main"],
    ["preflight", "--staged", "--base", "main"],
    ["trailers", "check", "--base", "main"],
    ["style", "check", "--base", "main"],
    ["docs", "check", "--base", "main"],
    ["ratchet", "check", "--staged"],
    ["ratchet", "check", "--rev", "HEAD~1"],
    ["ratchet", "check"],
    ["trailers", "check", "--base", "no-such-ref"],
    ["ratchet", "check", "--rev", "no-such-ref"],
    ["preflight", "--staged", "--head", "no-such-ref"],
]


def _same_either_way(repo: Repo, args: list[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run ``args`` with the reads started ahead, then without; both runs must agree byte for
    byte (exit code, stdout, stderr). Returns the first."""
    ahead = repo.tools("--format", "json", *args)
    with monkeypatch.context() as m:
        m.setattr(gates, "prefetch", lambda names, ctx: None)
        inline = repo.tools("--format", "json", *args)
    assert (ahead.exit_code, ahead.stdout, ahead.stderr) == (
        inline.exit_code,
        inline.stdout,
        inline.stderr,
    )
    return ahead


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_reads_started_ahead_change_nothing(
    busy: Repo, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead = _same_either_way(busy, args, monkeypatch)
    assert ahead.exit_code in (0, 1, 2)


def test_the_gates_start_their_reads_before_any_runs(busy: Repo) -> None:
    ctx = Context(Options(repo=Path(busy.path), staged=True, base="main"))
    gates.prefetch(["trailers", "ratchet"], ctx)
    assert "ratchet" in ctx.prefetched
    started = ctx.range  # the range read on its thread
    fresh = Context(Options(repo=Path(busy.path), staged=True, base="main")).range
    assert [c.sha for c in started.commits] == [c.sha for c in fresh.commits]
    assert len(started.commits) == 2
    # The run takes what was started, once.
    gates.run("ratchet", ctx)
    assert "ratchet" not in ctx.prefetched


def test_the_ratchets_search_starts_before_the_other_gates_reads(
    busy: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's search of every file takes longest: its gate's prefetch goes first, the others
    in the configured order."""
    asked: list[str] = []
    real_module = gates.module

    def module(name: str) -> object:
        asked.append(name)
        return real_module(name)

    monkeypatch.setattr(gates, "module", module)
    ctx = Context(Options(repo=Path(busy.path), staged=True, base="main"))
    gates.prefetch(["conflicts", "trailers", "ratchet", "links"], ctx)
    assert asked == ["ratchet", "conflicts", "trailers", "links"]
    assert "ratchet" in ctx.prefetched


def test_a_tree_on_disk_is_left_to_the_run(busy: Repo) -> None:
    # The working tree is listed (symlinked folders left out) before git searches it.
    ctx = Context(Options(repo=Path(busy.path)))
    gates.prefetch(["ratchet"], ctx)
    assert "ratchet" not in ctx.prefetched


@pytest.fixture
def conflicted(repo: Repo) -> Repo:
    """A merge stopped on a conflict, and a conflict marker staged in another file."""
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, "a.txt": "one\n", "b.txt": "x\n"})
    repo.branch("other")
    repo.commit(GOOD, {"a.txt": "two\n"})
    repo.checkout("main")
    repo.commit(GOOD, {"a.txt": "three\n"})
    repo.git("merge", "other", check=False)
    repo.write("b.txt", "<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n")
    repo.git("add", "b.txt")
    return repo


@pytest.mark.parametrize(
    "args",
    [["preflight", "--staged"], ["conflicts", "check", "--staged"], ["conflicts", "check"]],
    ids=" ".join,
)
def test_a_conflicted_merge_reads_the_same_ahead(
    conflicted: Repo, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead = _same_either_way(conflicted, args, monkeypatch)
    rules = {f["rule"] for g in ahead.json()["gates"] for f in g["findings"]}
    assert {"conflict-unmerged", "conflict-marker"} <= rules
