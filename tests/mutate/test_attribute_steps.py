"""The label of one bisection step of ``tools attribute`` (SPEC §6): the verdicts the
classifier gives a step, and the ``git bisect run`` protocol for the rest. Real commands in a
real repository, one step at a time (no bisection, no worktree)."""

from __future__ import annotations

import re
from typing import Any

from tests.conftest import Repo
from tools.attribute import Job, _Runner
from tools.mutate.plan import Quiet
from tools.mutate.proc import Registry


def _step(
    repo: Repo,
    test: str,
    *,
    build: str | None = None,
    artifacts: list[str] | None = None,
    quiet: Quiet | None = None,
) -> tuple[str, dict[str, Any]]:
    if not repo.git("rev-parse", "--verify", "-q", "HEAD", check=False).strip():
        repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    job = Job("g" * 40, "b" * 40, test, build, None, None, artifacts or [], None, quiet)
    return _Runner(job, repo.path, 30.0, Registry()).step()


def test_the_exit_codes_label_by_the_bisect_protocol(repo: Repo) -> None:
    assert _step(repo, "exit 0")[0] == "good"
    assert _step(repo, "exit 1")[0] == "bad"
    assert _step(repo, "exit 127")[0] == "bad"
    assert _step(repo, "exit 200")[0] == "abort"
    assert _step(repo, "kill -SEGV $$")[0] == "bad"  # a crash is the code's
    label, info = _step(repo, "exit 125")
    assert (label, info["verdict"], info["run_rc"]) == ("skip", None, 125)
    assert _step(repo, "exit 0")[1]["verdict"] is None  # good and bad name no verdict


def test_a_killed_or_empty_step_is_a_skip_never_good_or_bad(repo: Repo) -> None:
    label, info = _step(repo, "kill -KILL $$")
    assert (label, info["verdict"], info["signal"]) == ("skip", "KILLED", "SIGKILL")
    assert "matched" not in info
    label, info = _step(repo, "echo 'no tests ran in 0.01s'")
    assert (label, info["verdict"], info["run_rc"]) == ("skip", "EMPTY", 0)
    assert info["matched"] == {"by": "pytest", "line": "no tests ran in 0.01s"}
    label, info = _step(repo, "echo 'Cannot allocate memory'; exit 1")
    assert (label, info["verdict"]) == ("skip", "ENV-FAULT")


def test_a_build_that_fails_is_a_skip_the_test_not_run(repo: Repo) -> None:
    label, info = _step(repo, "exit 0", build="exit 2")
    assert (label, info["verdict"], info["compile_rc"], info["run_rc"]) == (
        "skip",
        "NO-BUILD",
        2,
        None,
    )
    label, info = _step(repo, "exit 0", build="echo 'No space left on device'; exit 1")
    assert (info["verdict"], info["matched"]["by"]) == ("ENV-FAULT", "no-space")
    assert _step(repo, "exit 0", build="true")[0] == "good"


def test_artifacts_missing_or_unchanged_from_another_commit_skip(repo: Repo) -> None:
    first = repo.commit("One\n\nBody.\n", {"a.txt": "1\n"})
    job = Job("g" * 40, "b" * 40, "exit 1", "cp a.txt out", None, None, ["out"], None, None)
    runner = _Runner(job, repo.path, 30.0, Registry())
    assert runner.step()[0] == "bad"
    # The same commit again: not stale (nothing says it should have rebuilt).
    assert runner.step()[0] == "bad"
    repo.commit("Two\n\nBody.\n", {"b.txt": "2\n"})
    label, info = runner.step()
    assert (label, info["verdict"], info["stale_of"]) == ("skip", "STALE", first)
    assert info["run_rc"] is None  # the test is not run
    repo.commit("Three\n\nBody.\n", {"a.txt": "3\n"})
    assert runner.step()[0] == "bad"
    gone = Job("g" * 40, "b" * 40, "exit 0", "true", None, None, ["nope"], None, None)
    label, info = _Runner(gone, repo.path, 30.0, Registry()).step()
    assert (label, info["verdict"]) == ("skip", "NO-BUILD")


def test_no_quiet_window_is_a_skip(repo: Repo) -> None:
    label, info = _step(repo, "exit 0", quiet=Quiet(-1.0, 0.0))
    assert (label, info["verdict"]) == ("skip", "NO-QUIET-WINDOW")
    assert info["quiet"]["quiet"] is False
    assert re.fullmatch(r"[0-9a-f]{40}", info["commit"])


def _prove(repo: Repo, test: str) -> dict[str, Any]:
    """The revert leg of the two-way proof at HEAD, for the commit that changed ``lib.c``,
    with an artifact (``prog``) that no build rewrites."""
    from tools.attribute import _prove as prove

    repo.commit("Start\n\nBody.\n", {"lib.c": "2 * x\n", "prog": "binary\n"})
    bad = repo.commit("Break\n\nBody.\n", {"lib.c": "3 * x\n"})
    job = Job("g" * 40, bad, test, "true", None, None, ["prog"], None, None)
    runner = _Runner(job, repo.path, 30.0, Registry())
    steps = [{"check": "bad", "artifacts": [{"path": "prog", "sha256": _sha("binary\n")}]}]
    revert, _, changed = prove(runner, bad, ["lib.c"], steps, lambda line: None)
    assert changed
    return revert


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_a_revert_that_did_not_rebuild_is_stale_over_its_exit_code(repo: Repo) -> None:
    assert _prove(repo, "exit 1")["verdict"] == "STALE"


def test_a_killed_revert_stays_killed_with_unchanged_artifacts(repo: Repo) -> None:
    # The classifier's order: a machine verdict of the test goes before STALE.
    assert _prove(repo, "kill -KILL $$")["verdict"] == "KILLED"
