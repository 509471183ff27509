"""The git access layer and range selection, on real repositories."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable

import pytest

from tests.conftest import Repo
from tools.context import Context, Options
from tools.errors import UsageError
from tools.gates import style as style_gate
from tools.gates.commit_range import range_commits
from tools.git import Git
from tools.report import GateResult


def _ctx(repo: Repo, **kw: object) -> Context:
    return Context(Options(repo=repo.path, **kw))  # type: ignore[arg-type]


def raw_commit(repo: Repo, message: bytes, parent: str | None = None) -> str:
    """A commit object with exactly these message bytes (git commit would re-encode
    non-UTF-8 text as Latin-1; real histories still hold such objects)."""
    tree = repo.git("write-tree").strip()
    head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
    head += "author A <a@example.com> 1 +0000\ncommitter A <a@example.com> 1 +0000\n\n"
    obj = head.encode() + message
    return repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=obj).strip()


def test_log_reads_messages_byte_exact(repo: Repo) -> None:
    msgs = [
        b"Plain\n\nBody.\n",
        b"CRLF subject\r\n\r\nBody line\r\n",
        b"Latin-1 caf\xe9\n\nna\xefve\n",
        b"",
    ]
    shas: list[str] = []
    for m in msgs:
        shas.append(raw_commit(repo, m, shas[-1] if shas else None))
    commits = Git(repo.path).log([shas[-1]], paths=False)
    assert [c.sha for c in commits] == shas[::-1]
    got = {c.sha: c.message for c in commits}
    for sha, m in zip(shas, msgs, strict=True):
        assert got[sha] == m


def test_log_changes_with_renames_roots_and_merges(repo: Repo) -> None:
    root = repo.commit("Root\n\nB.\n", {"a.txt": "alpha\n" * 20, "keep.txt": "k\n"})
    repo.git("mv", "a.txt", "b.txt")
    renamed = repo.commit("Rename\n\nB.\n", {"new.txt": "n\n"})
    repo.branch("side", root)
    side = repo.commit("Side\n\nB.\n", {"side.txt": "s\n"})
    repo.checkout("main")
    repo.git("merge", "-q", "--no-edit", "side")
    merge = repo.head()
    commits = {c.sha: c for c in Git(repo.path).log(["HEAD"])}
    assert {(c.status, c.path) for c in commits[root].changes} == {
        ("A", "a.txt"),
        ("A", "keep.txt"),
    }
    ren = {c.path: c for c in commits[renamed].changes}
    assert ren["b.txt"].status == "R" and ren["b.txt"].old_path == "a.txt"
    assert ren["b.txt"].is_pure_rename
    assert ren["new.txt"].status == "A"
    assert commits[merge].is_merge and commits[merge].changes == []
    assert [c.path for c in commits[side].changes] == ["side.txt"]


def test_log_non_utf8_and_odd_paths(repo: Repo) -> None:
    odd = b"d\xe9j\xe0 vu\tx.txt".decode("utf-8", "surrogateescape")
    sha = repo.commit("Odd\n\nB.\n", {odd: "x\n", "line\nbreak.txt": "y\n"})
    paths = {c.path for c in Git(repo.path).log([sha], max_count=1)[0].changes}
    assert paths == {odd, "line\nbreak.txt"}
    assert Git(repo.path).blob(sha, odd) == b"x\n"


def test_blobs_at_revision_and_staged(repo: Repo) -> None:
    first = repo.commit("One\n\nB.\n", {"f.txt": "one\n"})
    repo.commit("Two\n\nB.\n", {"f.txt": "two\r\n"})
    repo.write("f.txt", "three\n")
    repo.git("add", "f.txt")
    git = Git(repo.path)
    assert git.blob(first, "f.txt") == b"one\n"
    assert git.blob("HEAD", "f.txt") == b"two\r\n"
    assert git.staged_blob("f.txt") == b"three\n"
    assert git.blob("HEAD", "absent.txt") is None
    assert [(c.status, c.path) for c in git.staged_changes()] == [("M", "f.txt")]


def test_staged_changes_in_a_repository_without_commits(repo: Repo) -> None:
    repo.write("a.txt", "x\n")
    repo.git("add", "a.txt")
    assert [(c.status, c.path) for c in Git(repo.path).staged_changes()] == [("A", "a.txt")]


def _history(repo: Repo) -> tuple[str, str]:
    """main: r, m1, m2; topic (from m1): t1, t2.  Returns (m1, t2)."""
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    m1 = repo.commit("M1\n\nB.\n", {"m1": "1\n"})
    repo.branch("topic")
    repo.commit("T1\n\nB.\n", {"t1": "1\n"})
    t2 = repo.commit("T2\n\nB.\n", {"t2": "2\n"})
    repo.checkout("main")
    repo.commit("M2\n\nB.\n", {"m2": "2\n"})
    repo.checkout("topic")
    return m1, t2


def test_range_is_merge_base_to_head_oldest_first(repo: Repo) -> None:
    m1, t2 = _history(repo)
    sel = _ctx(repo, base="main").range
    assert sel.merge_base == m1 and sel.head == t2
    assert [c.text.split("\n")[0] for c in sel.commits] == ["T1", "T2"]


def test_branch_behind_its_base_is_judged_on_its_own_commits(repo: Repo) -> None:
    _history(repo)
    sel = _ctx(repo, base="main").range
    assert "M2" not in [c.text.split("\n")[0] for c in sel.commits]


def test_empty_range_passes_with_info_and_require_commits_fails(repo: Repo) -> None:
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    result = GateResult(style_gate.NAME)
    assert range_commits(_ctx(repo, base="HEAD"), result) == []
    assert result.status == "pass" and result.stats["commits"] == 0
    assert [(f.rule, f.severity) for f in result.findings] == [("range-empty", "info")]
    strict = GateResult(style_gate.NAME)
    range_commits(_ctx(repo, base="HEAD", require_commits=True), strict)
    assert strict.status == "fail"


def test_default_base_that_does_not_resolve_is_a_skip_with_reason(repo: Repo) -> None:
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    result = GateResult(style_gate.NAME)
    assert range_commits(_ctx(repo), result) is None
    assert result.status == "skip"
    assert "origin/main" in (result.reason or "") and "does not resolve" in (result.reason or "")


def test_explicit_base_that_does_not_resolve_is_a_usage_error(repo: Repo) -> None:
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    with pytest.raises(UsageError, match="--base 'nope'"):
        _ctx(repo, base="nope")


def test_shallow_clone_without_merge_base_is_a_skip(make_repo, tmp_path) -> None:
    upstream = make_repo("upstream")
    _history(upstream)
    clone = tmp_path / "shallow"
    shallow = upstream.clone(clone, "--depth", "1", "--no-single-branch")
    shallow.git("checkout", "-q", "topic")
    assert Git(clone).is_shallow()
    result = GateResult(style_gate.NAME)
    assert range_commits(_ctx(shallow, base="origin/main"), result) is None
    assert result.status == "skip"
    assert "shallow clone" in (result.reason or "")


def test_unrelated_histories_are_a_skip(repo: Repo) -> None:
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    repo.git("checkout", "-q", "--orphan", "other")
    repo.commit("O\n\nB.\n", {"o": "o\n"})
    result = GateResult(style_gate.NAME)
    assert range_commits(_ctx(repo, base="main"), result) is None
    assert "no merge base" in (result.reason or "")


def test_unborn_head_is_a_skip(repo: Repo) -> None:
    result = GateResult(style_gate.NAME)
    assert range_commits(_ctx(repo), result) is None
    assert "no commits" in (result.reason or "")


def test_single_commit_mode(repo: Repo) -> None:
    _history(repo)
    sel = _ctx(repo, commit="HEAD~1").range
    assert sel.mode == "commit"
    assert [c.text.split("\n")[0] for c in sel.commits] == ["T1"]
    with pytest.raises(UsageError):
        _ctx(repo, commit="HEAD", staged=True)


def test_linked_worktree_has_its_own_git_dir_for_caches_and_merges(repo: Repo, tmp_path) -> None:
    repo.write(".agents/protocol.yaml", "preflight: {gates: [conflicts]}\n")
    repo.commit("R\n\nB.\n", {"r": "r\n"})
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    git = Git(linked)
    assert git.git_dir == (repo.path / ".git" / "worktrees" / "linked").resolve()
    assert git.root == linked.resolve() and not git.in_merge()
    run = repo.tools("--repo", str(linked), "conflicts", "check")
    assert run.exit_code == 0, run.stderr
    # The validated config is kept in the git directory every worktree shares.
    assert any((repo.path / ".git" / "tools" / "cache" / "config").iterdir())
    assert not (linked / ".git" / "tools").exists()  # .git is a file in a linked worktree
    (git.git_dir / "MERGE_HEAD").write_text(repo.head() + "\n")
    assert git.in_merge() and not Git(repo.path).in_merge()


def test_added_lines_per_commit_in_one_pass(repo: Repo) -> None:
    odd = 'q"uo\\te\tcaf\xe9 x.txt'  # a quote, a backslash, a tab, non-ASCII and a space
    root = repo.commit("Root\n\nBody.\n", {"a.txt": "one\n", odd: "first\n"})
    second = repo.commit(
        "Second\n\nBody.\n",
        {"a.txt": "one\ntwo\r\n", odd: "first\nsecond", "b.txt": b"caf\xe9\n+++ b/x\n"},
    )
    repo.git("mv", "a.txt", "c.txt")
    third = repo.commit("Rename with an edit\n\nBody.\n", {"c.txt": "one\ntwo\r\nthree\n"})
    git = Git(repo.path)
    got = git.added_lines([root, second, third], ["a.txt", "b.txt", "c.txt", odd])
    assert got == {
        root: {"a.txt": [b"one"], odd: [b"first"]},
        second: {"a.txt": [b"two\r"], odd: [b"second"], "b.txt": [b"caf\xe9", b"+++ b/x"]},
        third: {"c.txt": [b"three"]},
    }
    # Only the named paths are diffed.
    assert git.added_lines([second], ["b.txt"]) == {second: {"b.txt": [b"caf\xe9", b"+++ b/x"]}}
    assert git.added_lines([], ["b.txt"]) == {}


def test_staged_added_lines_and_untracked_files(repo: Repo) -> None:
    repo.commit("Root\n\nBody.\n", {"a.txt": "one\n", ".gitignore": "ignored/\n"})
    repo.write("a.txt", "one\nstaged\n")
    repo.git("add", "a.txt")
    repo.write("a.txt", "one\nstaged\nunstaged\n")
    repo.write("new.txt", "x\n")
    repo.write("ignored/y.txt", "y\n")
    git = Git(repo.path)
    assert git.staged_added_lines(["a.txt"]) == {"a.txt": [b"staged"]}
    assert git.untracked_files() == ["new.txt"]


def test_patch_chunks_stay_under_the_argv_budget() -> None:
    from tools.git.runner import ARGV_BUDGET as _ARGV_BUDGET
    from tools.git.runner import argv_chunks as _chunks

    paths = [f"dir/{i:06d}/" + "x" * 90 for i in range(3000)]
    chunks = list(_chunks(paths))
    assert len(chunks) > 1 and [p for c in chunks for p in c] == paths
    assert all(sum(len(p) + 1 for p in c) <= _ARGV_BUDGET + 200 for c in chunks)


def test_unquote_c() -> None:
    from tools.git import unquote_c

    assert unquote_c(b'"a\\tb\\"c\\\\d\\303\\251"') == b'a\tb"c\\d\xc3\xa9'
    assert unquote_c(b"plain name") == b"plain name"


# Names git must quote: a tab, a newline, a quote, a backslash, a control byte, UTF-8, bytes
# that are no UTF-8 at all, and one holding " b/" as a diff header's second name starts.
QUOTED_NAMES = [
    b"tab\there.txt",
    b"new\nline.txt",
    b'quote"d.txt',
    b"back\\slash.txt",
    b"ctl\x01.txt",
    b"caf\xc3\xa9.txt",
    b"raw\xff\xfe.txt",
    b"a b/c.txt",
    b"\\303 not octal.txt",
]


@pytest.mark.parametrize("quotepath", ["true", "false"])
def test_unquote_c_reads_back_every_name_git_quotes(repo: Repo, quotepath: str) -> None:
    import os

    from tools.git import decode, parse_patches, unquote_c

    repo.commit("Start\n\nBody.\n", {os.fsdecode(name): "x\n" for name in QUOTED_NAMES})
    listed = repo.path / "listed"
    with open(listed, "wb") as out:  # `ls-files` without -z: one C-quoted name a line
        import subprocess

        subprocess.run(
            ["git", "-c", f"core.quotePath={quotepath}", "ls-files"],
            cwd=repo.path,
            stdout=out,
            check=True,
        )
    lines = listed.read_bytes().splitlines()
    listed.unlink()
    quoted = [line for line in lines if line.startswith(b'"')]
    expected = {n for n in QUOTED_NAMES if n != b"a b/c.txt"}
    if quotepath == "false":
        expected -= {b"caf\xc3\xa9.txt", b"raw\xff\xfe.txt"}
    assert len(quoted) == len(expected)
    assert {unquote_c(line) for line in lines} == set(QUOTED_NAMES)
    # The patch reader names each file by its diff header, quoted or not.
    raw = Git(repo.path).out(
        "-c", f"core.quotePath={quotepath}", "diff-tree", "-r", "-p", "--root", "HEAD"
    )
    assert set(parse_patches(raw)) == {decode(n) for n in QUOTED_NAMES}


def test_unquote_c_leaves_what_git_never_writes() -> None:
    from tools.git import unquote_c

    assert unquote_c(b'"\\377\\000\\101"') == b"\xff\x00A"
    assert unquote_c(b'"a\\18\\q"') == b"a\\18\\q"  # no such escapes: kept as they are
    assert unquote_c(b'"no closing quote') == b'"no closing quote'
    assert unquote_c(b'"a\\\\" "b"') == b"a\\"  # the name ends at its closing quote
    assert unquote_c(b'"a\\\\\\"b"') == b'a\\"b'


def _merge(repo: Repo, other: str, message: str) -> str:
    repo.git("merge", "-q", "--no-ff", "--no-edit", "-m", message, other)
    return repo.head()


def _range(repo: Repo, base: str, head: str) -> tuple[str | None, list[str]]:
    merge_base, commits = Git(repo.path).log_from_merge_base(
        repo.head(base), repo.head(head), paths=False
    )
    return merge_base, [c.sha for c in commits]


def _git_range(repo: Repo, base: str, head: str) -> tuple[str, list[str]]:
    merge_base = repo.git("merge-base", base, head).strip()
    return merge_base, repo.git("log", "--format=%H", f"{merge_base}..{head}").split()


def test_the_range_and_its_merge_base_read_at_once_agree_with_git(repo: Repo) -> None:
    repo.commit("Root\n\nBody.\n", {"a.txt": "a\n"})
    repo.branch("side")
    repo.commit("Side 1\n\nBody.\n", {"s.txt": "1\n"})
    repo.checkout("main")
    repo.commit("Main 1\n\nBody.\n", {"m.txt": "1\n"})
    repo.checkout("side")
    _merge(repo, "main", "Merge main into side")
    repo.commit("Side 2\n\nBody.\n", {"s.txt": "2\n"})
    # One merge base: base..head is the same range, in git's order.
    assert _range(repo, "main", "side") == _git_range(repo, "main", "side")
    # A criss-cross: main takes side's first commit while side took main's.
    repo.checkout("main")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "-m", "Merge side 1", "side~2")
    repo.commit("Main 2\n\nBody.\n", {"m.txt": "2\n"})
    assert len(repo.git("merge-base", "--all", "main", "side").split()) == 2
    for base, head in (("main", "side"), ("side", "main")):
        found = _range(repo, base, head)
        assert found == _git_range(repo, base, head)
        # base..head alone would leave out the other merge base's side of the history.
        assert len(found[1]) > len(repo.git("log", "--format=%H", f"{base}..{head}").split())


def test_unrelated_histories_have_no_merge_base_and_no_range(repo: Repo) -> None:
    repo.commit("Root\n\nBody.\n", {"a.txt": "a\n"})
    repo.git("checkout", "-q", "--orphan", "other")
    repo.commit("Other root\n\nBody.\n", {"b.txt": "b\n"})
    assert _range(repo, "main", "other") == (None, [])


def test_the_index_view_agrees_with_git_ls_files_in_a_conflict(repo: Repo) -> None:
    repo.commit("Root\n\nBody.\n", {"a.txt": "a\n", "b.txt": "b\n", "link": "x"})
    repo.branch("side")
    repo.commit("Side\n\nBody.\n", {"a.txt": "side\n"})
    repo.checkout("main")
    repo.commit("Main\n\nBody.\n", {"a.txt": "main\n", "c.txt": "c\n"})
    repo.git("merge", "-q", "side", check=False)  # a.txt conflicts: stages 1, 2 and 3
    listing = [line.split(maxsplit=3) for line in repo.git("ls-files", "-s").splitlines()]
    assert {stage for _, _, stage, _ in listing} == {"0", "1", "2", "3"}
    git = Git(repo.path)
    assert git.unmerged_paths() == ["a.txt"]
    first: dict[str, str] = {}
    for mode, _, _, path in listing:
        first.setdefault(path, mode)
    assert git.tracked_modes() == first and list(git.tracked_modes()) == list(first)
    stage0 = {path: mode for mode, _, stage, path in listing if stage == "0"}
    assert git.tracked_modes(unmerged=False) == stage0
    assert [(e.mode, e.sha, e.path) for e in git.index_entries()] == [
        (mode, sha, path) for mode, sha, stage, path in listing if stage == "0"
    ]
    assert git.index_modes(["a.txt", "c.txt", "gone.txt"]) == {"c.txt": "100644"}


def test_the_index_views_symlinks_and_submodules_agree_with_git_ls_files(repo: Repo) -> None:
    # A symlink first in index order (the listing's first record), one inside a folder, a
    # submodule (a gitlink entry), an executable file, and a symlink that conflicts in a
    # merge (its stages 1-3 are not stage 0).
    repo.commit("Root\n\nBody.\n", {"b.txt": "b\n", "run.sh": "#!/bin/sh\n", "z.txt": "z\n"})
    repo.git("update-index", "--chmod=+x", "run.sh")
    (repo.path / "a-link").symlink_to("b.txt")
    (repo.path / "d").mkdir()
    (repo.path / "d/in-link").symlink_to("../z.txt")
    (repo.path / "torn").symlink_to("b.txt")
    repo.git("add", "a-link", "d/in-link", "torn")
    sub = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/sub")
    repo.git("commit", "-q", "-m", "Special entries\n\nBody.")
    repo.branch("side")
    (repo.path / "torn").unlink()
    (repo.path / "torn").symlink_to("run.sh")
    repo.git("add", "torn")
    repo.git("commit", "-q", "-m", "Side\n\nBody.")
    repo.checkout("main")
    (repo.path / "torn").unlink()
    (repo.path / "torn").symlink_to("z.txt")
    repo.git("add", "torn")
    repo.git("commit", "-q", "-m", "Main\n\nBody.")
    repo.git("merge", "-q", "side", check=False)
    listing = [line.split(maxsplit=3) for line in repo.git("ls-files", "-s").splitlines()]
    assert listing[0][3] == "a-link" and {s for _, _, s, p in listing if p == "torn"} == {
        "1",
        "2",
        "3",
    }
    git = Git(repo.path)
    stage0 = [(mode, path) for mode, _, stage, path in listing if stage == "0"]
    assert git.index_special() == {
        path: mode.encode() for mode, path in stage0 if mode in ("120000", "160000")
    }
    assert git.index_special() == {
        "a-link": b"120000",
        "d/in-link": b"120000",
        "vendor/sub": b"160000",
    }
    assert git.index_regular_files() == [
        path for mode, path in stage0 if mode in ("100644", "100755")
    ]
    assert git.index_regular_files() == ["b.txt", "run.sh", "z.txt"]


def test_an_index_of_regular_files_alone_lists_every_path(repo: Repo) -> None:
    repo.commit("Root\n\nBody.\n", {f"src/f{i}.cc": f"// {i}\n" for i in range(30)})
    git = Git(repo.path)
    assert git.index_special() == {}
    assert git.index_regular_files() == repo.git("ls-files").splitlines()


def _ls_files(repo: Repo) -> list[tuple[str, str, str, str]]:
    """``git ls-files -s -z`` as (mode, object id, stage, path), the path decoded as tools
    decodes it (UTF-8, undecodable bytes kept as surrogates)."""
    out: list[tuple[str, str, str, str]] = []
    for record in repo.git_bytes("ls-files", "-s", "-z").split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, sha, stage = meta.decode().split(" ")
            out.append((mode, sha, stage, path.decode("utf-8", "surrogateescape")))
    return out


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_index_view_reads_odd_paths_as_git_lists_them(
    make_repo: Callable[..., Repo], object_format: str
) -> None:
    """Paths with a tab, with the bytes of a stage (`` 1<TAB>``), with bytes that are no
    UTF-8, and a sha256 repository's longer object ids: what the index view gives is what
    git lists. The stage's bytes in a path send the listing through the careful pass, which
    must agree with the fast one."""
    repo = make_repo(init=False)
    repo.git("init", "-q", "-b", "main", f"--object-format={object_format}")
    names = ["plain.txt", "tab\there", "x 1\ty", "caf\u00e9.md"]
    for name in names:
        repo.write(name, name + "\n")
    # Bytes that are no UTF-8, and a multi-byte character cut short at the path's end (the
    # listing is decoded whole, each path was decoded alone: both give the same text).
    for raw in (b"n\xffq", b"cut\xe2\x82"):
        (repo.path / os.fsdecode(raw)).write_bytes(b"not utf-8\n")
    repo.git("add", "-A")
    listing = _ls_files(repo)
    assert len(listing) == 6 and {stage for _, _, stage, _ in listing} == {"0"}
    git = Git(repo.path)
    assert [(e.mode, e.sha, e.path) for e in git.index_entries()] == [
        (mode, sha, path) for mode, sha, _, path in listing
    ]
    modes = git.file_modes()
    assert list(modes) == [path for *_, path in listing]
    assert {p: modes[p] for p in modes} == {
        path: (mode.encode(), sha.encode()) for mode, sha, _, path in listing
    }
    assert "gone" not in modes and modes.get("gone") is None
    assert git.tracked_modes() == {path: mode for mode, _, _, path in listing}
    assert git.index_regular_files() == [path for *_, path in listing]
    assert git.unmerged_paths() == []


def test_config_values_read_once_agree_with_git_config_get(repo: Repo) -> None:
    repo.git("config", "core.commentChar", ";")
    repo.git("config", "--add", "commit.cleanup", "strip")
    repo.git("config", "--add", "commit.cleanup", "scissors")  # two values: the last one counts
    repo.git("config", "branch.Feature/X.merge", "refs/heads/Feature/X")
    (repo.path / ".git" / "config").write_text(
        (repo.path / ".git" / "config").read_text() + "[tools]\n\tbare\n\tempty =\n"
    )
    git = Git(repo.path)
    for key in (
        "core.commentChar",
        "CORE.COMMENTCHAR",
        "commit.cleanup",
        "branch.Feature/X.merge",
        "BRANCH.Feature/X.MERGE",
        "branch.feature/x.merge",
        "tools.bare",
        "tools.empty",
        "core.absent",
    ):
        got = subprocess.run(["git", "config", "--get", key], cwd=repo.path, capture_output=True)
        want = got.stdout.decode().rstrip("\n") if got.returncode == 0 else None
        assert git.config_value(key) == want, key


def test_config_items_of_a_section_agree_with_git_config_get_regexp(repo: Repo) -> None:
    repo.git("config", "i18n.commitEncoding", "ISO-8859-1")
    repo.git("config", "i18n.logOutputEncoding", "UTF-8")
    repo.git("config", "core.commentChar", ";")
    listed = subprocess.run(
        ["git", "config", "--get-regexp", r"^i18n\."], cwd=repo.path, capture_output=True
    ).stdout.decode()
    want = [tuple(line.split(" ", 1)) for line in listed.splitlines()]
    assert Git(repo.path).config_items("i18n") == want
    assert Git(repo.path).config_items("nothing") == []


def test_refs_resolved_ahead_answer_as_one_by_one(repo: Repo) -> None:
    """resolve_ahead asks git once for several refs; whatever it keeps is what resolve would
    have answered for each ref alone, and what it cannot answer is asked alone."""
    repo.commit("First\n\nBody.\n")
    repo.git("tag", "-a", "v1", "-m", "tagged")
    repo.commit("Second\n\nBody.\n", {"a.txt": "a\n"})
    repo.git("branch", "side", "HEAD~1")
    refs = [
        "HEAD", "HEAD~1", "main", "side", "v1", "nope", "HEAD..side", "side...HEAD", "^side",
        "HEAD^{tree}", ":/First", "HEAD^@", "HEAD^!", "a.txt", "", "-q", "@{-1}",
        repo.head()[:10], repo.head(),
    ]  # fmt: skip
    alone = {ref: Git(repo.path).resolve(ref) for ref in refs}
    assert alone["v1"] == repo.head("HEAD~1") and alone["nope"] is None
    for first in refs:
        for second in refs:
            git = Git(repo.path)
            git.resolve_ahead([first, second, "HEAD"])
            assert (git.resolve(first), git.resolve(second)) == (alone[first], alone[second])
