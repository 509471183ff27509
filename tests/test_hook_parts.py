"""The parts of tools/hooks.py below a hook run, as plain calls: what a hook prints (quiet by
design), which skips it leaves out, how it is installed beside a hook that is not ours, how it
recognises the pre-commit framework, and how it chains ``HOOK.local``. Real repositories for
what git decides (the hooks folder); hand-built reports for what is printed."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import hooks
from tools.config import load_merged
from tools.config_model import ProtocolConfig, protocol_config
from tools.errors import UsageError

# The gates whose rules the hand-built reports below file (a gate declares them on import).
from tools.gates import conflicts as _conflicts  # noqa: F401
from tools.gates import now as _now  # noqa: F401
from tools.git import Git
from tools.report import GateResult, Report

# -- what a hook prints ------------------------------------------------------------------------


def conflicts(*lines: int, path: str = "a.c") -> GateResult:
    gate = GateResult("conflicts")
    for line in lines:
        gate.add("conflict-marker", f"marker at {line}", path=path, line=line)
    return gate


def now(*, severity: str = "warning", debt: bool = False, count: int = 1) -> GateResult:
    gate = GateResult("now")
    for _ in range(count):
        f = gate.add("now-stale", "old", path=".agents/NOW.md", severity=severity)  # type: ignore[arg-type]
        if debt:
            f.baseline_state = "unchanged"
    return gate


def skipped(name: str = "docs", **stats: object) -> GateResult:
    gate = GateResult(name).skip("base x does not resolve")
    gate.stats.update(stats)
    return gate


def test_green_is_one_line_on_stdout() -> None:
    assert hooks.said("pre-commit", Report([GateResult("now")]), 0.04) == hooks.Said(
        "tools: 1 gate green (0.0 s)\n", ""
    )
    two = Report([GateResult("now"), GateResult("conflicts")])
    assert hooks.said("pre-push", two, 2.26).out == "tools: 2 gates green (2.3 s)\n"


def test_green_counts_warnings_and_debt_never_lists_them() -> None:
    report = Report([now(), now(debt=True)])
    assert hooks.said("pre-commit", report, 1).out == (
        "tools: 2 gates green, 1 warning (now-stale: tools preflight --staged shows it), "
        "1 finding of recorded debt (tools baseline show) (1.0 s)\n"
    )
    report = Report([now(count=2), now(debt=True, count=2)])
    assert hooks.said("pre-push", report, 1).out == (
        "tools: 2 gates green, 2 warnings (now-stale: tools preflight shows them), "
        "2 findings of recorded debt (tools baseline show) (1.0 s)\n"
    )


def test_refused_lists_the_errors_and_one_summary_line() -> None:
    said = hooks.said("pre-commit", Report([conflicts(1, 3), now()]), 1.24)
    assert said == hooks.Said(
        "",
        "error[conflict-marker] a.c:1: marker at 1\n"
        "error[conflict-marker] a.c:3: marker at 3\n"
        "tools: commit refused: 2 errors (conflicts 2); 1 warning not shown "
        "(tools preflight --staged shows them) (1.2 s)\n",
    )
    one = hooks.said("commit-msg", Report([conflicts(1), skipped()]), 0, args=["m.txt"])
    assert one.err.endswith(
        "SKIP docs: base x does not resolve\n"
        "tools: commit refused: 1 error (conflicts 1); 1 skipped (docs) (0.0 s)\n"
    )


def test_refused_caps_the_errors_shown_and_paints_them_on_request() -> None:
    report = Report([conflicts(1, 2, 3)])
    capped = hooks.said("pre-commit", report, 0, max_findings=1).err.splitlines()
    assert capped[1] == (
        "… 2 more error(s) of conflicts left out: tools preflight --staged prints them all"
    )
    assert len(hooks.said("pre-commit", report, 0).err.splitlines()) == 4
    assert "\x1b[" in hooks.said("pre-commit", report, 0, color=True).err
    assert "\x1b[" not in hooks.said("pre-commit", report, 0).err


def test_a_refused_push_counts_the_commits_of_every_ref() -> None:
    first, second, other = conflicts(1), GateResult("trailers"), GateResult("style")
    first.stats.update(ref="refs/heads/a", commits=3)
    second.stats.update(ref="refs/heads/a", commits=2)
    other.stats.update(ref="refs/heads/b", commits=1)
    said = hooks.said("pre-push", Report([first, second, other]), 0)
    assert said.err.endswith("tools: push refused: 1 error (conflicts 1) in 4 commits (0.0 s)\n")
    lone = conflicts(1)
    lone.stats.update(commits="many")  # not a count: no commit counted
    assert "in 0 commits" in hooks.said("pre-push", Report([lone]), 0).err
    lone.stats.update(commits=1)
    assert "in 1 commit (" in hooks.said("pre-push", Report([lone]), 0).err


def test_a_skip_that_should_have_judged_is_not_green() -> None:
    said = hooks.said("pre-commit", Report([skipped(), now()]), 1.24)
    assert said == hooks.Said(
        "",
        "SKIP docs: base x does not resolve\n"
        "tools: not green: 1 gate green, 1 skipped (docs); 1 warning (now-stale: tools "
        "preflight --staged shows it) (1.2 s)\n",
    )
    two = hooks.said("pre-push", Report([skipped(), skipped("merges")]), 0)
    assert two.err.endswith("tools: not green: 0 gates green, 2 skipped (docs, merges) (0.0 s)\n")


def test_nothing_to_judge_says_why_when_the_stage_left_it_out() -> None:
    assert hooks.said("pre-push", Report([]), 0) == hooks.Said(
        "tools: nothing to judge (0.0 s)\n", ""
    )
    empty = skipped("conflicts", files=0)
    assert hooks.said("pre-commit", Report([empty]), 0) == hooks.Said(
        "tools: nothing to judge at this stage (no staged text to examine) (0.0 s)\n", ""
    )
    merge, fixup = skipped("trailers", merges_skipped=1), skipped("style", fixups=1)
    assert hooks.said("commit-msg", Report([merge, fixup]), 0).out == (
        "tools: nothing to judge at this stage (a merge's message; a fixup!/squash!/amend! "
        "message) (0.0 s)\n"
    )


def test_only_the_two_stage_skips_are_left_out() -> None:
    na = hooks.not_applicable
    assert na("pre-commit", skipped("conflicts", files=0)) == "no staged text to examine"
    assert na("pre-commit", skipped("conflicts", files=0, unmerged=1)) is None
    assert na("pre-commit", skipped("conflicts", files=1)) is None
    assert na("pre-commit", skipped("conflicts")) is None  # files unknown: not "none"
    assert na("pre-push", skipped("conflicts", files=0)) is None
    assert na("commit-msg", skipped("trailers", merges_skipped=1)) == "a merge's message"
    assert na("commit-msg", skipped("style", fixups=2)) == "a fixup!/squash!/amend! message"
    assert na("commit-msg", skipped("docs", fixups=2)) is None
    assert na("pre-push", skipped("trailers", merges_skipped=1)) is None
    assert na("commit-msg", skipped("trailers")) is None
    passed = GateResult("conflicts")
    passed.stats.update(files=0)
    assert na("pre-commit", passed) is None  # it judged: shown
    failed = conflicts(1).skip("partly")
    failed.stats.update(files=0)
    assert na("pre-commit", failed) is None
    found = skipped("trailers", merges_skipped=1)
    found.findings.extend(now().findings)
    assert na("commit-msg", found) is None


def test_each_hook_names_the_command_that_shows_everything() -> None:
    assert hooks.shows("pre-commit", []) == "tools preflight --staged"
    assert hooks.shows("pre-push", ["origin"]) == "tools preflight"
    assert (
        hooks.shows("commit-msg", ["my msg.txt"]) == "tools preflight --message-file 'my msg.txt'"
    )
    assert hooks.shows("commit-msg", []) == "tools preflight"


# -- installing --------------------------------------------------------------------------------


def test_the_hook_script_fails_closed_when_tools_is_gone() -> None:
    assert hooks.script("commit-msg", ["/py", "-P", "-m", "tools"]).endswith(
        'exec /py -P -m tools hooks run commit-msg "$@"\n'
    )
    assert hooks.script("pre-push", ["/opt/my env/bin/tools"]) == (
        "#!/bin/sh\n"
        "# tools-hook: installed by `tools hooks install`; the work is `tools hooks run "
        "pre-push`.\n"
        "if [ ! -x '/opt/my env/bin/tools' ]; then\n"
        "    echo 'tools: pre-push hook: /opt/my env/bin/tools is gone; reinstall the hooks "
        "from the environment that has tools: tools hooks install --force' >&2\n"
        "    exit 1\n"
        "fi\n"
        "exec '/opt/my env/bin/tools' hooks run pre-push \"$@\"\n"
    )


def test_the_merge_driver_fails_closed_to_gits_own_conflict() -> None:
    value = hooks.driver_command(["/bin/py", "-m", "tools"])
    assert value == (
        "if [ -x /bin/py ]; then /bin/py -m tools index merge-driver %O %A %B; "
        "s=$?; [ $s -le 1 ] && exit $s; fi; "
        "echo 'agent-index: /bin/py is gone or failed: git'\"'\"'s own conflict is left to "
        "resolve by hand, keeping both sides'\"'\"' rows (reinstall the driver: tools init "
        "--force)' >&2; git merge-file -L ours -L base -L theirs %A %O %B; exit 1"
    )
    assert hooks.is_our_driver(value)
    assert not hooks.is_our_driver("git merge-file %A %O %B")


def executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_command_is_the_running_script_else_the_one_beside_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = executable(tmp_path / "bin" / "tools")
    monkeypatch.setattr(sys, "argv", [str(script), "hooks", "install"])
    assert hooks.tools_command() == [str(script)]
    python = tmp_path / "env" / "python"
    monkeypatch.setattr(sys, "argv", ["other"])
    monkeypatch.setattr(sys, "executable", str(python))
    assert hooks.tools_command() == [str(python), "-P", "-m", "tools"]
    beside = executable(tmp_path / "env" / "tools")
    assert hooks.tools_command() == [str(beside)]
    beside.chmod(0o644)  # not runnable: not the command
    assert hooks.tools_command() == [str(python), "-P", "-m", "tools"]
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "bin")])  # a folder, not a script
    assert hooks.tools_command()[0] == str(python)
    monkeypatch.setattr(sys, "argv", [""])
    assert hooks.tools_command()[0] == str(python)
    monkeypatch.setattr(sys, "argv", [])
    assert hooks.tools_command()[0] == str(python)


def test_the_hooks_folder_is_where_git_runs_them(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    root = Path(repo.git("rev-parse", "--show-toplevel").strip())
    assert hooks.hooks_dir(Git(repo.path)) == root / ".git" / "hooks"
    repo.git("config", "core.hooksPath", "my-hooks")
    assert hooks.hooks_dir(Git(repo.path)) == root / "my-hooks"
    repo.git("config", "core.hooksPath", str(root / "abs"))
    assert hooks.hooks_dir(Git(repo.path)) == root / "abs"


@pytest.fixture
def folder(make_repo: Callable[..., Repo], monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_repo()
    monkeypatch.setattr(hooks, "tools_command", lambda: ["/t/tools"])
    return hooks.hooks_dir(Git(repo.path))


def install(folder: Path, *, force: bool = False) -> dict[str, str]:
    git = Git(folder.parent.parent)
    return {item.path.name: item.verb for item in hooks.install(git, force=force)}


def test_install_writes_ours_then_leaves_them_unchanged(folder: Path) -> None:
    assert install(folder) == {hook: "wrote" for hook in hooks.HOOKS}
    for hook in hooks.HOOKS:
        assert (folder / hook).read_text() == hooks.script(hook, ["/t/tools"])
        assert stat.S_IMODE((folder / hook).stat().st_mode) == 0o755
    assert install(folder) == {hook: "unchanged" for hook in hooks.HOOKS}
    (folder / "pre-push").write_text(
        "#!/bin/sh\n# Installed by `tools init` / `tools hooks install`\n"
    )
    assert install(folder)["pre-push"] == "updated"


def test_install_keeps_a_foreign_hook_unless_forced_then_chains_it(folder: Path) -> None:
    mine = executable(folder / "pre-commit", "#!/bin/sh\necho mine\n")
    done = hooks.install(Git(folder.parent.parent), force=False)
    kept = next(item for item in done if item.path.name == "pre-commit")
    assert kept.verb == "kept (not ours; --force moves it to .local)" and kept.refused
    assert not any(item.refused for item in done if item is not kept)
    assert mine.read_text() == "#!/bin/sh\necho mine\n"
    verbs = install(folder, force=True)
    assert verbs["pre-commit"] == "moved yours to pre-commit.local, which runs first; wrote"
    assert (folder / "pre-commit.local").read_text() == "#!/bin/sh\necho mine\n"
    assert hooks.is_ours((folder / "pre-commit").read_text())


def test_install_keeps_a_foreign_link_or_binary_hook(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pre-commit").symlink_to(folder / "gone")
    (folder / "commit-msg").write_bytes(b"\x7fELF\xff\xfe")
    verbs = install(folder)
    assert (
        verbs["pre-commit"]
        == verbs["commit-msg"]
        == ("kept (not ours; --force moves it to .local)")
    )
    assert verbs["pre-push"] == "wrote"


def test_install_never_overwrites_a_local_hook(folder: Path) -> None:
    executable(folder / "commit-msg", "#!/bin/sh\necho mine\n")
    executable(folder / "commit-msg.local", "#!/bin/sh\necho older\n")
    with pytest.raises(UsageError) as refused:
        install(folder, force=True)
    assert refused.value.where == str(folder / "commit-msg")
    assert refused.value.message == (
        f"{folder / 'commit-msg.local'} exists already: merge commit-msg into it by hand, then "
        "run `tools hooks install --force` again"
    )
    assert (folder / "commit-msg").read_text() == "#!/bin/sh\necho mine\n"


FRAMEWORK_SCRIPT = (
    "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
    "ARGS=(hook-impl --config={config} --hook-type={hook})\n"
)


def test_install_leaves_a_framework_hook_that_runs_tools_already(folder: Path) -> None:
    root = folder.parent.parent
    (root / "cfg.yaml").write_text(
        "repos:\n- repo: https://example.com/tools\n  hooks:\n  - id: tools-pre-push\n"
    )
    executable(folder / "pre-push", FRAMEWORK_SCRIPT.format(config="cfg.yaml", hook="pre-push"))
    executable(folder / "pre-commit", FRAMEWORK_SCRIPT.format(config="cfg.yaml", hook="pre-commit"))
    verbs = install(folder)
    assert verbs["pre-push"] == (
        "left as it is: the pre-commit framework's hook runs tools already "
        "(tools-pre-push in cfg.yaml); not chained"
    )
    assert verbs["pre-commit"] == "kept (not ours; --force moves it to .local)"
    (root / "cfg.yaml").write_text(
        "repos:\n- repo: https://example.com/tools\n  hooks:\n  - id: tools-preflight\n"
    )
    (folder / "pre-push").unlink()
    verbs = install(folder)  # the hooks after a framework hook left as it is: installed
    assert verbs["pre-commit"].startswith("left as it is") and verbs["pre-push"] == "wrote"


def framework(
    root: Path, config: str, hook: str, name: str = ".pre-commit-config.yaml"
) -> str | None:
    (root / name).write_text(config)
    text = FRAMEWORK_SCRIPT.format(config=name, hook=hook)
    return hooks.framework_runs_tools(Git(root), hook, text)


def test_which_framework_hooks_run_tools_at_a_stage(make_repo: Callable[..., Repo]) -> None:
    root = make_repo().path
    ours = "repos:\n- repo: https://x/tools\n  hooks:\n  - id: tools-trailers\n"
    assert framework(root, ours, "commit-msg") == "tools-trailers in .pre-commit-config.yaml"
    assert framework(root, ours, "pre-commit") is None
    local = "repos:\n- repo: local\n  hooks:\n  - id: tools-trailers\n    entry: black\n"
    assert framework(root, local, "commit-msg") is None  # a local hook of the same id
    entry = (
        "default_stages: [push]\n"
        "repos:\n- repo: local\n  hooks:\n  - id: mine\n    entry: /venv/bin/tools preflight\n"
    )
    assert framework(root, entry, "pre-push") == "mine in .pre-commit-config.yaml"
    assert framework(root, entry, "pre-commit") is None
    every = "repos:\n- repo: meta\n  hooks:\n  - entry: python3 -m tools preflight\n"
    assert framework(root, every, "commit-msg") == "a hook in .pre-commit-config.yaml"
    staged = (
        "repos:\n- repo: https://x/tools\n  hooks:\n  - id: tools-preflight\n"
        "    stages: [commit, push]\n"
    )
    assert framework(root, staged, "pre-push") == "tools-preflight in .pre-commit-config.yaml"
    for broken in ("repos: 3\n", "- a\n", "repos:\n- 3\n- {hooks: 4}\n- {hooks: [5]}\n", "[\n"):
        assert framework(root, broken, "pre-commit") is None
    (root / ".pre-commit-config.yaml").unlink()
    text = FRAMEWORK_SCRIPT.format(config=".pre-commit-config.yaml", hook="pre-commit")
    assert hooks.framework_runs_tools(Git(root), "pre-commit", text) is None
    assert hooks.framework_runs_tools(Git(root), "pre-commit", "#!/bin/sh\ntools x\n") is None


def test_the_framework_config_is_the_scripts_own(tmp_path: Path) -> None:
    config = hooks._framework_config
    assert config("ARGS=(hook-impl --config=a/b.yaml --hook-type=x)\n") == "a/b.yaml"
    assert config("x\nARGS=(hook-impl '--config=my c.yaml')\n") == "my c.yaml"
    assert config("ARGS=(hook-impl --hook-type=x)\n") == ".pre-commit-config.yaml"
    assert config("ARGS=(hook-impl 'unclosed)\n") == ".pre-commit-config.yaml"
    assert config(" ARGS=(--config=a.yaml)\n") == ".pre-commit-config.yaml"
    assert config("ARGS=(--config=a.yaml\n") == ".pre-commit-config.yaml"
    stages = hooks._stage_names
    assert stages(["commit", "push", "merge-commit", "manual"]) == (
        "pre-commit",
        "pre-push",
        "pre-merge-commit",
        "manual",
    )
    assert stages("commit") is None and stages(None) is None


def test_which_entries_run_tools() -> None:
    runs = hooks._runs_tools
    assert runs("tools preflight") and runs("/venv/bin/tools") and runs("python3 -m tools x")
    assert runs("python3.11 -X dev -m tools")
    assert not runs("python -m pytest") and not runs("python -m") and not runs("python tools")
    assert not runs("mytools x") and not runs("'unclosed") and not runs("") and not runs(3)
    assert not runs("node -m tools")


# -- running -----------------------------------------------------------------------------------


def test_push_lines_are_four_words_blank_lines_skipped() -> None:
    z = hooks.ZERO_SHA
    data = f"\nrefs/heads/a {'1' * 40} refs/heads/b {z}\n  \n".encode()
    assert hooks.parse_push_lines(data) == [
        hooks.PushedRef("refs/heads/a", "1" * 40, "refs/heads/b", z)
    ]
    with pytest.raises(UsageError, match="pre-push input line 2 is not"):
        hooks.parse_push_lines(f"a {z} b {z}\na {z} b\n".encode())


def test_the_frameworks_pushed_range_comes_from_its_environment() -> None:
    ref = hooks.pre_commit_framework_ref
    assert ref({}) == [] and ref({"PRE_COMMIT_TO_REF": ""}) == []
    assert ref({"PRE_COMMIT_TO_REF": "abc"}) == [
        hooks.PushedRef("HEAD", "abc", "HEAD", hooks.ZERO_SHA)
    ]
    env = {
        "PRE_COMMIT_TO_REF": "abc",
        "PRE_COMMIT_FROM_REF": "def",
        "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/a",
        "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/b",
    }
    assert ref(env) == [hooks.PushedRef("refs/heads/a", "abc", "refs/heads/b", "def")]
    env.pop("PRE_COMMIT_REMOTE_BRANCH")
    assert ref(env)[0].remote_ref == "refs/heads/a"


def test_the_mark_adds_one_line_per_nested_run(make_repo: Callable[..., Repo]) -> None:
    git = Git(make_repo().path)
    mine = f"pre-push {git.root}"
    env = hooks.marked(git, "pre-push", {"PATH": "/bin", hooks.RUNNING_ENV: "a x\n\nb y"})
    assert env == {"PATH": "/bin", hooks.RUNNING_ENV: f"a x\nb y\n{mine}"}
    assert hooks.marked(git, "pre-push", {})[hooks.RUNNING_ENV] == mine
    assert hooks.reentered(git, "pre-push", env)
    assert not hooks.reentered(git, "commit-msg", env)
    assert not hooks.reentered(git, "pre-push", {hooks.RUNNING_ENV: mine + "x"})
    assert hooks.reentry_line("commit-msg") == (
        "tools: commit-msg hook re-entered (through commit-msg.local): passed through, the "
        "outer run judges\n"
    )


def test_the_local_hook_runs_first_with_gits_arguments_and_input(
    make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    git = Git(make_repo().path)
    seen = tmp_path / "seen"
    folder = hooks.hooks_dir(git)
    assert hooks.run_local(git, "pre-push", ["origin"], b"") == 0  # none: passes
    local = folder / "pre-push.local"
    body = (
        f'#!/bin/sh\necho "$@" > {seen}\ncat >> {seen}\n'
        f'echo "${hooks.RUNNING_ENV}" >> {seen}\nexit 4\n'
    )
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(body)
    assert hooks.run_local(git, "pre-push", ["origin", "url"], b"lines\n") == 0  # not runnable
    local.chmod(0o755)
    assert hooks.run_local(git, "pre-push", ["origin", "url"], b"lines\n") == 4
    assert seen.read_text() == f"origin url\nlines\npre-push {git.root}\n"
    assert os.environ.get(hooks.RUNNING_ENV) is None  # only the child's environment is marked


def config(text: str) -> ProtocolConfig:
    return protocol_config(load_merged(text.encode(), display="protocol.yaml", remember=False))


def test_a_hook_runs_the_configured_gates_its_stage_judges() -> None:
    some = config(
        "preflight:\n  gates: [conflicts, docs, merges]\n"
        "trailers:\n  enabled: false\nstyle:\n  enabled: true\n"
    )
    assert hooks.configured(hooks.PUSH_GATES, some) == ["style", "docs", "merges"]
    assert hooks.configured(hooks.CONTENT_GATES, some) == ["conflicts", "docs"]
    off = config("preflight:\n  gates: []\nstyle:\n  enabled: false\n")
    assert hooks.configured(hooks.MESSAGE_GATES, off) == ["trailers"]


# -- the edges of what is printed and parsed ----------------------------------------------------


def test_the_summary_counts_by_gate_and_names_each_rule_once() -> None:
    extra = GateResult("now")
    extra.add("now-stale", "old", path="N.md")
    said = hooks.said("pre-commit", Report([conflicts(1, 2), extra, skipped(), skipped("x")]), 0)
    assert said.err.endswith(
        "tools: commit refused: 3 errors (conflicts 2, now 1); 2 skipped (docs, x) (0.0 s)\n"
    )
    warned = GateResult("now")
    warned.add("now-stale", "old", path="N.md", severity="warning")
    warned.add("now-missing", "gone", path="N.md", severity="warning")
    warned.add("now-stale", "again", path="N.md", severity="warning")
    assert hooks.said("pre-push", Report([warned]), 0).out == (
        "tools: 1 gate green, 3 warnings (now-stale, now-missing: tools preflight shows them) "
        "(0.0 s)\n"
    )


def test_a_not_green_run_lists_every_note_and_paints_its_skips() -> None:
    said = hooks.said("pre-commit", Report([skipped(), now(), now(debt=True)]), 0, color=True)
    lines = said.err.splitlines()
    assert lines[0].startswith("\x1b[") and "docs: base x does not resolve" in lines[0]
    assert lines[1] == (
        "tools: not green: 2 gates green, 1 skipped (docs); 1 warning (now-stale: tools "
        "preflight --staged shows it); 1 finding of recorded debt (tools baseline show) (0.0 s)"
    )
    refused = hooks.said("pre-commit", Report([conflicts(1), skipped()]), 0, color=True)
    assert refused.err.splitlines()[1].startswith("\x1b[")


def test_the_message_hook_points_at_its_own_message_file() -> None:
    said = hooks.said("commit-msg", Report([now()]), 0, args=["m.txt"])
    assert "(now-stale: tools preflight --message-file m.txt shows it)" in said.out


def test_fifty_errors_of_a_gate_are_shown_by_default() -> None:
    shown = hooks.said("pre-commit", Report([conflicts(*range(1, 51))]), 0).err
    assert "more error(s)" not in shown
    capped = hooks.said("pre-commit", Report([conflicts(*range(1, 52))]), 0).err
    assert "… 1 more error(s) of conflicts left out" in capped


def test_a_ref_that_read_no_commit_counts_none() -> None:
    gate = conflicts(1)
    gate.stats.update(ref="refs/heads/a", commits=0)
    assert "in 0 commits" in hooks.said("pre-push", Report([gate]), 0).err


def test_elapsed_time_is_since_the_start() -> None:
    import time

    assert 4.9 < hooks.elapsed_since(time.monotonic() - 5) < 6


def test_push_lines_keep_bytes_that_are_not_utf8() -> None:
    z = hooks.ZERO_SHA
    (ref,) = hooks.parse_push_lines(b"refs/heads/caf\xe9 " + f"{z} refs/heads/x {z}\n".encode())
    assert ref.local_ref == "refs/heads/caf\udce9"


def test_framework_configs_are_read_past_what_runs_no_tools(
    make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    root = make_repo().path
    ours = "  hooks:\n  - id: tools-preflight\n"
    assert framework(root, "repos:\n- 3\n- repo: https://x/tools\n" + ours, "pre-commit")
    mixed = (
        "repos:\n- repo: https://x/tools\n  hooks:\n  - 3\n  - id: black\n  - id: tools-preflight\n"
    )
    assert framework(root, mixed, "pre-commit") == "tools-preflight in .pre-commit-config.yaml"
    meta = "repos:\n- repo: meta\n  hooks:\n  - id: tools-preflight\n    entry: check\n"
    assert framework(root, meta, "pre-commit") is None
    absolute = tmp_path / "abs.yaml"
    absolute.write_text("repos:\n- repo: https://x/tools\n" + ours)
    text = FRAMEWORK_SCRIPT.format(config=absolute, hook="pre-commit")
    assert hooks.framework_runs_tools(Git(root), "pre-commit", text) == (
        f"tools-preflight in {absolute}"
    )


def test_whether_a_commit_or_the_index_holds_the_protocol(
    make_repo: Callable[..., Repo],
) -> None:
    repo = make_repo()
    before = repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    after = repo.commit("Adopt\n\nBody.\n", {".agents/protocol.yaml": "{}\n"})
    git = Git(repo.path)
    assert hooks.commit_has_protocol(git, after) and not hooks.commit_has_protocol(git, before)
    assert hooks.staged_has_protocol(git)
    repo.git("rm", "-q", "--cached", ".agents/protocol.yaml")
    assert not hooks.staged_has_protocol(Git(repo.path))  # HEAD has it, the index not
