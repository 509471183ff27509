"""The per-run context as plain calls on real repositories: which tree the config comes from
(``--config-from base``, a bare repository), which commits a range holds or why it holds none,
and which tree a gate reads a path from."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import __version__
from tools.context import Context, RangeSelection, has_protocol
from tools.errors import UsageError
from tools.options import Options

PROTOCOL = ".agents/protocol.yaml"
CONFIG = "preflight:\n  gates: [conflicts]\n"


@pytest.fixture
def repo(make_repo: Callable[..., Repo]) -> Repo:
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {PROTOCOL: CONFIG, "a.txt": "a\n"})
    return repo


def bare_of(repo: Repo, tmp_path: Path) -> Path:
    bare = tmp_path / "bare.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(repo.path), str(bare)], check=True, capture_output=True
    )
    return bare


# -- where the config comes from -------------------------------------------------------------


def test_a_protocol_judges_when_named_or_in_the_tree(
    make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    plain = make_repo()
    plain.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    assert not has_protocol(Options(repo=plain.path))
    assert has_protocol(Options(repo=plain.path, config=tmp_path / "elsewhere.yaml"))
    (plain.path / ".agents").mkdir()
    (plain.path / PROTOCOL).symlink_to("gone.yaml")  # a dangling link is still a protocol file
    assert has_protocol(Options(repo=plain.path))


def test_under_config_from_base_the_base_tree_may_hold_the_protocol(repo: Repo) -> None:
    base = repo.head()
    repo.git("rm", "-q", PROTOCOL)
    repo.commit("Drop\n\nBody.\n")
    assert not has_protocol(Options(repo=repo.path))
    assert has_protocol(Options(repo=repo.path, config_from="base", base=base))


def test_a_bare_repository_judges_by_the_protocol_at_head(repo: Repo, tmp_path: Path) -> None:
    bare = bare_of(repo, tmp_path)
    assert has_protocol(Options(repo=bare))
    ctx = Context(Options(repo=bare, bare_ok=True))
    assert ctx.config_source == f"HEAD:{PROTOCOL}"
    assert list(ctx.config.preflight.gates) == ["conflicts"]
    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
    assert not has_protocol(Options(repo=empty))
    ctx = Context(Options(repo=empty, bare_ok=True))
    assert ctx.config_source is None and "merges" in ctx.config.preflight.gates
    named = tmp_path / "named.yaml"
    named.write_text("preflight:\n  gates: [now]\n")
    ctx = Context(Options(repo=bare, bare_ok=True, config=named))
    assert list(ctx.config.preflight.gates) == ["now"]


def test_a_bare_repository_has_no_index_or_message_in_progress(repo: Repo, tmp_path: Path) -> None:
    bare = bare_of(repo, tmp_path)
    for opts in (Options(staged=True), Options(message_file="m.txt")):
        with pytest.raises(UsageError, match="a bare repository has no index"):
            Context(opts._replace(repo=bare, bare_ok=True))


def test_config_from_base_reads_the_merge_base_of_base_and_head(repo: Repo) -> None:
    base = repo.head()
    repo.branch("feature")
    repo.commit("Relax\n\nBody.\n", {PROTOCOL: "preflight:\n  gates: [now]\n"})
    ctx = Context(Options(repo=repo.path, config_from="base", base="main"))
    assert ctx.config_rev == base
    assert ctx.config_source == f"{base[:12]}:{PROTOCOL}"
    assert list(ctx.config.preflight.gates) == ["conflicts"]
    mine = Context(Options(repo=repo.path))
    assert mine.config_rev is None and list(mine.config.preflight.gates) == ["now"]
    staged = Context(Options(repo=repo.path, config_from="base", staged=True))
    assert staged.config_rev == repo.head()  # the commit being made's parent: HEAD


def test_a_base_without_a_protocol_leaves_the_heads_config(
    make_repo: Callable[..., Repo],
) -> None:
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    repo.branch("feature")
    repo.commit("Adopt\n\nBody.\n", {PROTOCOL: CONFIG})
    ctx = Context(Options(repo=repo.path, config_from="base", base="main"))
    assert ctx.config_rev is None
    assert list(ctx.config.preflight.gates) == ["conflicts"]


@pytest.mark.parametrize(
    ("opts", "said"),
    [
        (Options(config=Path("x.yaml")), "--config cannot be combined with --config-from base"),
        (Options(), "--config-from base needs --base"),
        (Options(base="nope"), "--base 'nope' does not resolve to a commit"),
        (Options(base="main", head="nope"), "--head 'nope' does not resolve to a commit"),
    ],
)
def test_config_from_base_refuses_what_names_no_base(repo: Repo, opts: Options, said: str) -> None:
    with pytest.raises(UsageError) as refused:
        Context(opts._replace(repo=repo.path, config_from="base"))
    assert said in refused.value.message


def test_config_from_base_needs_shared_history_and_a_born_head(
    repo: Repo, make_repo: Callable[..., Repo]
) -> None:
    repo.git("checkout", "-q", "--orphan", "other")
    repo.commit("Other\n\nBody.\n", {"b.txt": "b\n"})
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=repo.path, config_from="base", base="main"))
    assert refused.value.message == (
        "--config-from base: no merge base of main and HEAD to read the config from: they "
        "share no history"
    )
    unborn = make_repo()
    with pytest.raises(UsageError, match="HEAD is unborn, there is no base tree"):
        Context(Options(repo=unborn.path, config_from="base", staged=True))


def test_the_merge_base_outside_a_shallow_clone_says_how_to_deepen(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("Two\n\nBody.\n", {"b.txt": "b\n"})
    repo.branch("feature")
    repo.commit("Three\n\nBody.\n", {"c.txt": "c\n"})
    repo.checkout("main")
    repo.commit("Four\n\nBody.\n", {"d.txt": "d\n"})
    shallow = repo.clone(tmp_path / "shallow", "--depth", "1", "--no-single-branch")
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=shallow.path, config_from="base", base="origin/feature"))
    assert refused.value.message == (
        "--config-from base: no merge base of origin/feature and HEAD to read the config "
        "from: the merge base is not in this shallow clone (git fetch --unshallow)"
    )
    ctx = Context(Options(repo=shallow.path, base="origin/feature"))
    assert ctx.range.skip_reason == (
        "shallow clone: the merge base of origin/feature and HEAD is not in the fetched "
        "history; deepen the clone (git fetch --unshallow)"
    )


def test_refs_named_on_the_command_line_must_resolve(repo: Repo) -> None:
    for flag, opts in (
        ("--base", Options(base="nope")),
        ("--head", Options(head="nope")),
        ("--commit", Options(commit="nope")),
    ):
        with pytest.raises(UsageError) as refused:
            Context(opts._replace(repo=repo.path))
        assert refused.value.message == f"{flag} 'nope' does not resolve to a commit"
    for opts in (Options(staged=True), Options(base="main"), Options(head="main")):
        with pytest.raises(UsageError, match="--commit cannot be combined with"):
            Context(opts._replace(repo=repo.path, commit="HEAD"))


# -- the range ---------------------------------------------------------------------------------


def test_a_range_is_the_commits_since_the_merge_base_oldest_first(repo: Repo) -> None:
    base = repo.head()
    repo.branch("feature")
    one = repo.commit("One\n\nBody.\n", {"b.txt": "b\n"})
    two = repo.commit("Two\n\nBody.\n", {"c.txt": "c\n"})
    ctx = Context(Options(repo=repo.path, base="main"))
    ctx.prefetch_range()
    ctx.prefetch_range()  # a second start reads nothing more
    sel = ctx.range
    assert (sel.mode, sel.head, sel.base_ref, sel.base, sel.merge_base) == (
        "range",
        two,
        "main",
        base,
        base,
    )
    assert [c.sha for c in sel.commits] == [one, two] and sel.skip_reason is None
    assert ctx.describe()["range"] == {
        "base": base,
        "head": two,
        "merge_base": base,
        "commits": 2,
    }
    staged = Context(Options(repo=repo.path, base="main", staged=True)).range
    assert staged.mode == "staged" and [c.sha for c in staged.commits] == [one, two]
    upto = Context(Options(repo=repo.path, base="main", head=one)).range
    assert [c.sha for c in upto.commits] == [one]


def test_one_commit_is_a_range_of_one(repo: Repo) -> None:
    first = repo.head()
    second = repo.commit("Two\n\nBody.\n", {"b.txt": "b\n"})
    sel = Context(Options(repo=repo.path, commit=first)).range
    assert (sel.mode, sel.head, [c.sha for c in sel.commits]) == ("commit", first, [first])
    ctx = Context(Options(repo=repo.path, commit=second))
    assert ctx.range.commits[0].sha == second
    assert "range" not in ctx.describe()  # one commit is no range


def test_a_range_that_cannot_be_read_says_why(repo: Repo, make_repo: Callable[..., Repo]) -> None:
    sel = Context(Options(repo=repo.path)).range  # the config's base: origin/main
    assert sel.base_ref == "origin/main" and sel.base is None
    assert sel.skip_reason == (
        "base 'origin/main' (config `base`) does not resolve; fetch it or pass --base"
    )
    unborn = Context(Options(repo=make_repo().path)).range
    assert unborn.head is None
    assert unborn.skip_reason == "the repository has no commits yet (HEAD is unborn)"
    repo.git("checkout", "-q", "--orphan", "other")
    repo.commit("Other\n\nBody.\n", {"b.txt": "b\n"})
    apart = Context(Options(repo=repo.path, base="main")).range
    assert apart.skip_reason == "main and HEAD share no history (no merge base)"


def test_what_a_report_says_it_judged(repo: Repo) -> None:
    ctx = Context(Options(repo=repo.path))
    canonical = json.dumps(ctx.config_data, sort_keys=True, separators=(",", ":"))
    assert ctx.describe() == {
        "tool": {"name": "tools", "version": __version__},
        "config_sha256": hashlib.sha256(canonical.encode()).hexdigest(),
    }
    assert not isinstance(ctx.describe().get("range"), RangeSelection)
    _ = ctx.range  # no base: nothing to describe
    assert "range" not in ctx.describe()


# -- contents ----------------------------------------------------------------------------------


def test_a_path_is_read_from_the_index_or_the_working_tree(repo: Repo) -> None:
    repo.write("a.txt", "staged\n")
    repo.git("add", "a.txt")
    repo.write("a.txt", "worktree\n")
    repo.write("new/n.txt", "n\n")
    staged = Context(Options(repo=repo.path, staged=True))
    assert staged.read_current("a.txt") == b"staged\n"
    assert staged.has_path("a.txt") and not staged.has_path("new")
    now = Context(Options(repo=repo.path))
    assert now.read_current("a.txt") == b"worktree\n"
    assert now.read_current("gone.txt") is None
    assert now.has_path("new") and now.has_path("new/n.txt") and not now.has_path("gone")


def test_a_path_of_the_judged_commit_counts_though_the_tree_lacks_it(repo: Repo) -> None:
    first = repo.head()
    repo.git("rm", "-q", "a.txt")
    repo.commit("Drop\n\nBody.\n")
    assert not Context(Options(repo=repo.path)).has_path("a.txt")
    assert Context(Options(repo=repo.path, commit=first)).has_path("a.txt")
    assert Context(Options(repo=repo.path, head=first, base=first)).has_path("a.txt")
    assert not Context(Options(repo=repo.path, commit=first)).has_path("b.txt")


def test_the_staged_change_is_read_once(repo: Repo) -> None:
    repo.write("a.txt", "changed\n")
    repo.git("add", "a.txt")
    ctx = Context(Options(repo=repo.path, staged=True))
    ctx.prefetch_staged_changes()
    ctx.prefetch_staged_changes()
    assert [c.path for c in ctx.staged_changes] == ["a.txt"]
    assert [c.path for c in Context(Options(repo=repo.path)).staged_changes] == ["a.txt"]


# -- the boundaries the messages and the lazy reads keep ----------------------------------------


def test_no_protocol_anywhere_is_no_protocol(repo: Repo, tmp_path: Path) -> None:
    repo.git("rm", "-q", PROTOCOL)
    base = repo.commit("Drop\n\nBody.\n")
    assert not has_protocol(Options(repo=repo.path, config_from="base", base=base))
    assert not has_protocol(Options(repo=bare_of(repo, tmp_path)))  # HEAD without one


def test_what_each_refusal_says(repo: Repo, tmp_path: Path) -> None:
    def said(opts: Options) -> str:
        with pytest.raises(UsageError) as refused:
            Context(opts)
        return refused.value.message

    assert said(Options(repo=repo.path, commit="HEAD", staged=True)) == (
        "--commit cannot be combined with --staged, --base or --head"
    )
    bare = bare_of(repo, tmp_path)
    assert said(Options(repo=bare, bare_ok=True, staged=True)) == (
        "a bare repository has no index or commit in progress: judge a range (--base/--head) "
        "or one --commit"
    )
    base = Options(repo=repo.path, config_from="base")
    assert said(base._replace(config=Path("x.yaml"))) == (
        "--config cannot be combined with --config-from base"
    )
    assert said(base) == (
        "--config-from base needs --base: the base ref cannot come from the config being judged"
    )
    repo.git("checkout", "-q", "--orphan", "unborn")
    assert said(base._replace(base="main")) == "--head 'HEAD' does not resolve to a commit"
    assert said(base._replace(staged=True)) == (
        "--config-from base: HEAD is unborn, there is no base tree"
    )


def test_a_bad_config_is_named_by_the_tree_it_came_from(repo: Repo, tmp_path: Path) -> None:
    repo.write(PROTOCOL, "preflight: 3\n")
    bad = repo.commit("Break\n\nBody.\n")
    repo.branch("feature")
    repo.commit("Fix\n\nBody.\n", {PROTOCOL: CONFIG})
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=repo.path, config_from="base", base="main"))
    assert f"{bad[:12]}:{PROTOCOL}" in str(refused.value)
    repo.checkout("main")
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=bare_of(repo, tmp_path), bare_ok=True))
    assert f"HEAD:{PROTOCOL}" in str(refused.value)


def test_a_named_config_and_its_rules_are_checked_by_name(repo: Repo, tmp_path: Path) -> None:
    named = tmp_path / "named.yaml"
    named.write_text("preflight:\n  gates: [now]\n")
    ctx = Context(Options(repo=repo.path, config=named))
    assert list(ctx.config.preflight.gates) == ["now"] and ctx.config_source == str(named)
    repo.write(PROTOCOL, CONFIG + "rules:\n  no-such-rule: warning\n")
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=repo.path))
    assert refused.value.where == f"{PROTOCOL}: rules.no-such-rule"


def test_a_fresh_context_has_read_nothing_yet(repo: Repo) -> None:
    ctx = Context(Options(repo=repo.path))
    assert ctx.prefetched == {} and ctx.message_bytes is None
    ctx.prefetch_range()
    started = ctx._pending_range
    assert started is not None
    ctx.prefetch_range()
    assert ctx._pending_range is started  # one read, however often it is asked to start
    _ = ctx.range
    assert ctx._pending_range is None
    ctx.prefetch_range()
    assert ctx._pending_range is None  # read already: nothing more to start
    ctx.prefetch_staged_changes()
    staged = ctx._pending_staged
    assert staged is not None
    ctx.prefetch_staged_changes()
    assert ctx._pending_staged is staged
    _ = ctx.staged_changes
    ctx.prefetch_staged_changes()
    assert ctx._pending_staged is None


def test_a_commit_is_read_alone_with_its_changed_paths(repo: Repo) -> None:
    second = repo.commit("Two\n\nBody.\n", {"b.txt": "b\n"})
    sel = Context(Options(repo=repo.path, commit=second)).range
    assert [c.sha for c in sel.commits] == [second]
    assert [ch.path for ch in sel.commits[0].changes] == ["b.txt"]
    assert (sel.base_ref, sel.base, sel.merge_base) == (None, None, None)
    bare = Context(Options(repo=repo.path, commit=second, range_paths=False)).range
    assert bare.commits[0].changes == []


def test_a_range_reads_changed_paths_except_under_staged(repo: Repo) -> None:
    repo.branch("feature")
    repo.commit("One\n\nBody.\n", {"b.txt": "b\n"})
    paths = Context(Options(repo=repo.path, base="main")).range.commits[0].changes
    assert [ch.path for ch in paths] == ["b.txt"]
    staged = Context(Options(repo=repo.path, base="main", staged=True)).range
    assert staged.commits[0].changes == []
    quiet = Context(Options(repo=repo.path, base="main", range_paths=False)).range
    assert quiet.commits[0].changes == []


def test_an_unborn_range_holds_no_commits(make_repo: Callable[..., Repo]) -> None:
    sel = Context(Options(repo=make_repo().path)).range
    assert sel.commits == [] and sel.base_ref is None and sel.merge_base is None


def test_a_path_is_taken_literally_and_never_read_through_a_link(
    repo: Repo, tmp_path: Path
) -> None:
    first = repo.head()
    judged = Context(Options(repo=repo.path, commit=first))
    assert judged.has_path("a.txt") and not judged.has_path("*.txt")
    assert not judged.has_path(":/a.txt")  # no pathspec magic: a name, as the tree holds it
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (repo.path / "link.txt").symlink_to(outside)
    with pytest.raises(UsageError) as refused:
        Context(Options(repo=repo.path)).read_current("link.txt")
    assert "link.txt" in str(refused.value)
