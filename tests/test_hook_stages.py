"""The decisions of a hook run, pinned as plain function calls on real repositories: what each
stage judges (:func:`tools.hooks.run_hook`), which range a pushed ref is judged over
(:func:`tools.hooks.push_options`), and which tree ``--config-from base`` reads the config from.
test_hooks.py drives the same hooks through ``git commit`` and ``git push``; these run in well
under a second each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import hooks
from tools.context import Context
from tools.errors import UsageError
from tools.git import Git
from tools.options import Options

PROTOCOL = ".agents/protocol.yaml"
# Only the conflicts gate: a staged change is judged in milliseconds.
CONFLICTS_ONLY = "preflight:\n  gates: [conflicts]\n"
MARKERS = "<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"
CLEAN = "int main(void) { return 0; }\n"
UNKNOWN_SHA = "1234567890abcdef" * 2 + "12345678"


@pytest.fixture(autouse=True)
def _outside_any_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    # A run under a hook's mark would pass through unjudged (the re-entry guard).
    monkeypatch.delenv(hooks.RUNNING_ENV, raising=False)
    for key in ("PRE_COMMIT_TO_REF", "PRE_COMMIT_FROM_REF"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def repo(make_repo: Callable[..., Repo]) -> Repo:
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {PROTOCOL: CONFLICTS_ONLY, "app.c": CLEAN})
    return repo


def rules(run: hooks.HookRun) -> list[str]:
    assert run.report is not None, run
    return [f.rule for g in run.report.gates for f in g.findings]


# -- pre-commit: the index, never the working tree --------------------------------------------


def test_pre_commit_passes_a_clean_index_whatever_the_working_tree_holds(repo: Repo) -> None:
    repo.write("app.c", MARKERS)  # not staged
    run = hooks.run_hook("pre-commit", Options(repo=repo.path), [], b"")
    assert run.exit_code == 0 and rules(run) == []


def test_pre_commit_refuses_a_staged_marker_the_working_tree_no_longer_has(repo: Repo) -> None:
    repo.write("app.c", MARKERS)
    repo.git("add", "app.c")
    repo.write("app.c", CLEAN)  # fixed in the working tree, not staged
    run = hooks.run_hook("pre-commit", Options(repo=repo.path), [], b"")
    assert run.exit_code == 1
    assert set(rules(run)) == {"conflict-marker"}


def test_pre_commit_without_a_staged_protocol_passes_in_one_line(repo: Repo) -> None:
    repo.git("rm", "-q", "--cached", PROTOCOL)  # still in the working tree
    repo.write("app.c", MARKERS)
    repo.git("add", "app.c")
    run = hooks.run_hook("pre-commit", Options(repo=repo.path), [], b"")
    assert run == hooks.HookRun(0, out=hooks.NO_PROTOCOL)


def test_a_re_entered_hook_passes_through_without_reading_its_input(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("app.c", MARKERS)
    repo.git("add", "app.c")
    git_root = Path(repo.git("rev-parse", "--show-toplevel").strip())
    monkeypatch.setenv(hooks.RUNNING_ENV, f"other /elsewhere\npre-push {git_root}")

    def unread() -> bytes:
        raise AssertionError("a re-entered run read git's input")

    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], unread)
    assert run == hooks.HookRun(0, out=hooks.reentry_line("pre-push"))
    # Another hook of the same repository is no re-entry: it judges.
    assert hooks.run_hook("pre-commit", Options(repo=repo.path), [], b"").exit_code == 1


def test_a_failing_local_hook_fails_the_run_before_any_gate(repo: Repo) -> None:
    local = repo.path / ".git" / "hooks" / "pre-commit.local"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text("#!/bin/sh\nexit 3\n")
    local.chmod(0o755)
    run = hooks.run_hook("pre-commit", Options(repo=repo.path), [], b"")
    assert run == hooks.HookRun(
        1, err="tools: pre-commit.local (your own hook) failed with exit 3\n"
    )


def test_a_pending_in_place_restore_blocks_every_hook(repo: Repo) -> None:
    """A killed in-place mutation run may have left a mutant in the tree: no hook judges it,
    whatever is staged (and whatever git wrote to it)."""
    import hashlib

    from tools.mutate import inplace

    run = inplace.InPlace(repo.path, repo.path / ".git" / "tools", ["app.c"], "plans/p.yml")
    run.begin()
    mutant = "int main(void) { return 1; }\n"
    run.expect("M1", {"app.c": [hashlib.sha256(mutant.encode()).hexdigest()]})
    repo.write("app.c", mutant)
    run.abandon()  # the run is gone, its restore pending
    for hook, args in (("pre-commit", []), ("commit-msg", ["m.txt"]), ("pre-push", [])):
        done = hooks.run_hook(hook, Options(repo=repo.path), args, b"")
        assert done.exit_code == 1 and rules(done) == ["inplace-restore-pending"], hook
        # Through the one report path: the report says what judged it.
        assert done.report is not None and done.report.meta["tool"]["name"] == "tools"


def test_commit_msg_takes_exactly_the_message_file(repo: Repo) -> None:
    for args in ([], ["a", "b"]):
        with pytest.raises(UsageError) as refused:
            hooks.run_hook("commit-msg", Options(repo=repo.path), args, b"")
        assert str(refused.value) == "the commit-msg hook takes one argument: the message file"
    with pytest.raises(UsageError) as refused:
        hooks.run_hook("pre-rebase", Options(repo=repo.path), [], b"")
    assert str(refused.value) == (
        "unknown hook 'pre-rebase' (expected one of pre-commit, commit-msg, pre-push)"
    )


# -- pre-push: the range of each pushed ref ---------------------------------------------------


def pushed(repo: Repo, remote_sha: str, local_sha: str | None = None) -> hooks.PushedRef:
    local = local_sha or repo.head()
    return hooks.PushedRef("refs/heads/main", local, "refs/heads/main", remote_sha)


def test_a_known_remote_sha_bounds_the_pushed_range(repo: Repo) -> None:
    first = repo.head()
    second = repo.commit("More\n\nBody.\n", {"b.c": CLEAN})
    opts = hooks.push_options(Git(repo.path), Options(repo=repo.path), pushed(repo, first))
    assert opts is not None
    assert (opts.base, opts.head, opts.range_run) == (first, second, True)


def test_a_force_push_over_unfetched_work_is_judged_from_the_merge_base(repo: Repo) -> None:
    """The remote's sha is not in this clone: the range cannot start there (it would not
    resolve, exit 2); it is judged from the configured base's merge base instead."""
    git = Git(repo.path)
    for remote in (UNKNOWN_SHA, hooks.ZERO_SHA):
        opts = hooks.push_options(git, Options(repo=repo.path), pushed(repo, remote))
        assert opts is not None and opts.base is None and opts.head == repo.head()
    line = f"refs/heads/main {repo.head()} refs/heads/main {UNKNOWN_SHA}\n".encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), ["origin", "url"], line)
    assert run.exit_code == 0 and run.report is not None


def test_a_deleted_ref_is_not_judged(repo: Repo) -> None:
    gone = pushed(repo, repo.head(), local_sha=hooks.ZERO_SHA)
    assert hooks.push_options(Git(repo.path), Options(repo=repo.path), gone) is None


def test_a_push_of_branches_made_before_adoption_passes_in_one_line(
    make_repo: Callable[..., Repo],
) -> None:
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {"app.c": MARKERS})
    line = f"refs/heads/main {repo.head()} refs/heads/main {hooks.ZERO_SHA}\n".encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], line)
    assert run == hooks.HookRun(0, out=hooks.NO_PROTOCOL)


# -- --config-from base --commit X: X's parent's config ---------------------------------------


def test_config_from_base_of_one_commit_reads_its_parents_config(repo: Repo) -> None:
    parent = repo.head()
    child = repo.commit("Relax\n\nBody.\n", {PROTOCOL: "preflight:\n  gates: [now]\n"})
    ctx = Context(Options(repo=repo.path, commit=child, config_from="base"))
    assert ctx.config_rev == parent
    assert list(ctx.config.preflight.gates) == ["conflicts"]


def test_config_from_base_of_a_root_commit_has_no_tree_to_read(repo: Repo) -> None:
    with pytest.raises(UsageError, match="has no parent to read the config from"):
        Context(Options(repo=repo.path, commit=repo.head(), config_from="base"))


# -- commit-msg: the message being written, alone ---------------------------------------------

GOOD = (
    "Add the widget\n\nThe widget was missing.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: {who}\n"
)


def message(tmp_path: Path, who: str = "codex:o3 [git]") -> str:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(GOOD.format(who=who))
    return str(path)


def test_commit_msg_judges_the_message_not_the_history_behind_it(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(PROTOCOL, CONFLICTS_ONLY + "base: main\n")
    repo.commit("Base\n\nBody.\n")
    repo.branch("feature")
    repo.commit("no protocol here\n")  # a bad message already in the branch
    run = hooks.run_hook("commit-msg", Options(repo=repo.path), [message(tmp_path)], b"")
    assert run.exit_code == 0 and rules(run) == []
    assert [g.gate for g in run.report.gates] == ["trailers", "style"]  # type: ignore[union-attr]


def test_commit_msg_refuses_the_unfilled_template(repo: Repo, tmp_path: Path) -> None:
    unfilled = message(tmp_path, "AGENT:MODEL [TOOL]")
    run = hooks.run_hook("commit-msg", Options(repo=repo.path), [unfilled], b"")
    assert run.exit_code == 1 and "placeholder" in rules(run)


# -- pre-push: every pushed ref, judged over its own range ------------------------------------


def push_line(local_ref: str, sha: str, remote_sha: str = hooks.ZERO_SHA) -> str:
    return f"{local_ref} {sha} {local_ref} {remote_sha}\n"


def test_each_pushed_ref_is_judged_and_named_on_its_results(repo: Repo) -> None:
    repo.write(PROTOCOL, "preflight:\n  gates: [trailers]\nbase: main\n")
    base = repo.commit("Base\n\nBody.\n")
    repo.branch("a")
    a = repo.commit("no protocol here\n")
    repo.branch("b", base)
    b = repo.commit("nor here\n")
    data = (push_line("refs/heads/a", a, base) + push_line("refs/heads/b", b, base)).encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], data)
    assert run.exit_code == 1 and run.report is not None
    assert [(g.gate, g.stats["ref"]) for g in run.report.gates] == [
        ("trailers", "refs/heads/a"),
        ("style", "refs/heads/a"),
        ("trailers", "refs/heads/b"),
        ("style", "refs/heads/b"),
    ]
    assert {f.commit for g in run.report.gates for f in g.findings} == {a, b}


def test_a_ref_made_before_adoption_is_left_out_beside_one_after(repo: Repo) -> None:
    adopted = repo.head()
    repo.git("checkout", "-q", "--orphan", "old")
    repo.git("rm", "-q", "-r", "--cached", ".")
    (repo.path / PROTOCOL).unlink()
    old = repo.commit("Old\n\nBody.\n", {"o.txt": "o\n"})
    data = (push_line("refs/heads/old", old) + push_line("refs/heads/main", adopted)).encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], data)
    assert run.report is not None and {g.stats["ref"] for g in run.report.gates} == {
        "refs/heads/main"
    }
    only_old = push_line("refs/heads/old", old).encode()
    assert hooks.run_hook("pre-push", Options(repo=repo.path), [], only_old).out == (
        hooks.NO_PROTOCOL
    )
    named = repo.path.parent / "named.yaml"
    named.write_text(CONFLICTS_ONLY)
    forced = hooks.run_hook("pre-push", Options(repo=repo.path, config=named), [], only_old)
    assert forced.report is not None and forced.report.gates  # a named config judges it


def test_a_push_of_deletions_alone_judges_nothing(repo: Repo) -> None:
    gone = push_line("refs/heads/x", hooks.ZERO_SHA, repo.head()).encode()
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], gone)
    assert run.exit_code == 0 and run.report is not None and run.report.gates == []


def test_the_frameworks_range_is_judged_when_git_wrote_nothing(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write(PROTOCOL, "preflight:\n  gates: [trailers]\n")
    bad = repo.commit("no protocol here\n")
    monkeypatch.setenv("PRE_COMMIT_TO_REF", bad)
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", repo.head("HEAD~1"))
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [])  # git wrote nothing
    assert run.exit_code == 1 and "marker-missing" in rules(run)


def test_pre_push_reads_gits_input_once_and_hands_it_to_the_local_hook(
    repo: Repo, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    local = Path(repo.git("rev-parse", "--git-path", "hooks").strip())
    local = (local if local.is_absolute() else repo.path / local) / "pre-push.local"
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(f"#!/bin/sh\ncat > {seen}\n")
    local.chmod(0o755)
    repo.git("rm", "-q", "--cached", PROTOCOL)  # the index is not what pre-push judges
    line = push_line("refs/heads/main", repo.head())
    reads: list[int] = []

    def stdin() -> bytes:
        reads.append(1)
        return line.encode()

    run = hooks.run_hook("pre-push", Options(repo=repo.path), ["origin", "url"], stdin)
    assert reads == [1] and seen.read_text() == line
    assert run.report is not None and {g.stats["ref"] for g in run.report.gates} == {
        "refs/heads/main"
    }


def test_a_deleted_ref_does_not_end_the_push(repo: Repo) -> None:
    data = push_line("refs/heads/x", hooks.ZERO_SHA, repo.head()) + push_line(
        "refs/heads/main", repo.head()
    )
    run = hooks.run_hook("pre-push", Options(repo=repo.path), [], data.encode())
    assert run.report is not None and {g.stats["ref"] for g in run.report.gates} == {
        "refs/heads/main"
    }
