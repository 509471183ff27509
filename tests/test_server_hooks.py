"""Server-side hooks (SPEC §13), through a real bare repository and real ``git push``: a good
push accepted, a bad one refused with one line naming the ref and its findings, a push that
also relaxes the protocol refused (the branch's current protocol judges), a new branch judged
from its merge base with HEAD, a deletion allowed, and the ``update`` hook refusing one ref."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import hooks

CONFIG = "base: main\npreflight:\n  gates: [trailers, style]\n"
RELAXED = (
    "base: main\npreflight:\n  gates: []\ntrailers: {enabled: false}\nstyle: {enabled: false}\n"
)
GOOD = (
    "Add a thing\n\nBody.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)
BAD = "bad message\n"


class Server:
    """A bare repository with the server hook installed, and a clone that pushes to it."""

    def __init__(self, tmp: Path, make_repo) -> None:  # type: ignore[no-untyped-def]
        seed = make_repo("seed")
        # Made before adoption of the hook: a message the rules refuse, already on main.
        seed.commit("Start\n", {".agents/protocol.yaml": CONFIG})
        seed.commit(GOOD, {"a.txt": "a\n"})
        self.bare = tmp / "server.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(seed.path), str(self.bare)], check=True)
        self.clone = Repo(tmp / "clone")
        self.clone.git("remote", "add", "origin", str(self.bare))
        self.clone.git("fetch", "-q", "origin")
        self.clone.git("checkout", "-q", "-b", "main", "origin/main")

    def push(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "push", "origin", *args],
            cwd=self.clone.path,
            capture_output=True,
            text=True,
            check=False,
        )

    def tip(self, ref: str = "main") -> str:
        out = subprocess.run(
            ["git", "--git-dir", str(self.bare), "rev-parse", "--verify", "-q", ref],
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip()


@pytest.fixture
def server(tmp_path: Path, make_repo) -> Server:  # type: ignore[no-untyped-def]
    made = Server(tmp_path, make_repo)
    installed = Repo(made.bare, init=False).tools("hooks", "install", "--server")
    assert installed.exit_code == 0, installed.stderr
    assert installed.stdout == "wrote  hooks/pre-receive\n"
    script = (made.bare / "hooks" / "pre-receive").read_text()
    assert "hooks run pre-receive" in script and hooks.OURS in script
    return made


def test_a_good_push_is_accepted_and_a_bad_one_refused(server: Server) -> None:
    server.clone.commit(GOOD, {"b.txt": "b\n"})
    accepted = server.push("main")
    assert accepted.returncode == 0, accepted.stderr
    assert "remote: tools: 1 branch judged, green" in accepted.stderr
    assert server.tip() == server.clone.head()
    server.clone.commit(BAD, {"c.txt": "c\n"})
    refused = server.push("main")
    assert refused.returncode != 0
    assert "pre-receive hook declined" in refused.stderr
    assert "remote: error[marker-missing]" in refused.stderr
    assert "remote: tools: refs/heads/main refused: " in refused.stderr
    assert "in 1 commit" in refused.stderr  # only the pushed commit: the history is not judged
    assert server.tip() == server.clone.head("HEAD~1")


def test_a_push_that_relaxes_the_protocol_is_judged_by_the_branchs_own(server: Server) -> None:
    # The first commit switches the trailer rules off, well-formed; the second breaks them.
    server.clone.commit(GOOD, {".agents/protocol.yaml": RELAXED})
    server.clone.commit(BAD, {"d.txt": "d\n"})
    refused = server.push("main")
    assert refused.returncode != 0
    assert "remote: tools: refs/heads/main refused: " in refused.stderr
    assert "marker-missing" in refused.stderr
    # Alone, the relaxing commit is a well-formed change: accepted; from then on it rules.
    server.clone.git("reset", "-q", "--hard", "HEAD~1")
    assert server.push("main").returncode == 0
    server.clone.commit(BAD, {"d.txt": "d\n"})
    assert server.push("main").returncode == 0


def test_a_new_branch_is_judged_from_its_merge_base_with_head(server: Server) -> None:
    # main holds a commit the rules refuse ("Start"): a new branch is judged on its own
    # commits only, so it passes; a bad commit of its own is refused.
    server.clone.git("checkout", "-q", "-b", "feature")
    server.clone.commit(GOOD, {"f.txt": "f\n"})
    accepted = server.push("feature")
    assert accepted.returncode == 0, accepted.stderr
    server.clone.git("checkout", "-q", "-b", "topic")
    server.clone.commit(BAD, {"g.txt": "g\n"})
    refused = server.push("topic")
    assert refused.returncode != 0
    assert "remote: tools: refs/heads/topic refused: " in refused.stderr
    assert "in 2 commits" in refused.stderr  # feature's commit is not on HEAD: both judged
    assert server.tip("topic") == ""


def test_deletions_and_tags_pass_unjudged(server: Server) -> None:
    server.clone.git("checkout", "-q", "-b", "old")
    server.clone.commit(GOOD, {"o.txt": "o\n"})
    assert server.push("old").returncode == 0
    deleted = server.push("--delete", "old")
    assert deleted.returncode == 0, deleted.stderr
    assert server.tip("old") == ""
    server.clone.git("tag", "v1", "HEAD")
    tagged = server.push("v1")
    assert tagged.returncode == 0 and "no branch to judge" in tagged.stderr


def test_one_bad_ref_refuses_the_whole_push_naming_only_it(server: Server) -> None:
    server.clone.commit(GOOD, {"b.txt": "b\n"})
    server.clone.git("checkout", "-q", "-b", "side")
    server.clone.commit(BAD, {"s.txt": "s\n"})
    refused = server.push("main", "side")
    assert refused.returncode != 0
    lines = [line for line in refused.stderr.splitlines() if " refused: " in line]
    assert lines[0].startswith("remote: tools: refs/heads/side refused: ")
    assert lines[-1].startswith("remote: tools: push refused: 1 ref of 2 failed")
    assert server.tip() != server.clone.head("main")  # all or nothing, as git's pre-receive


def test_the_update_hook_refuses_one_ref(server: Server) -> None:
    update = server.bare / "hooks" / "update"
    update.write_text(hooks.script("update", hooks.tools_command()))
    update.chmod(0o755)
    (server.bare / "hooks" / "pre-receive").unlink()
    server.clone.commit(GOOD, {"b.txt": "b\n"})
    server.clone.git("checkout", "-q", "-b", "side")
    server.clone.commit(BAD, {"s.txt": "s\n"})
    pushed = server.push("main", "side")
    assert pushed.returncode != 0  # git exits 1 when any ref was refused
    assert "remote: tools: refs/heads/side refused: " in pushed.stderr
    assert server.tip() == server.clone.head("main")  # update refuses only its own ref
    assert server.tip("side") == ""


def test_bad_use_is_one_error_line(tmp_path: Path, make_repo) -> None:  # type: ignore[no-untyped-def]
    work = make_repo("work")
    installed = work.tools("hooks", "install", "--server")
    assert installed.exit_code == 2 and "bare repository" in installed.stderr
    bare = tmp_path / "b.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    server = Repo(bare, init=False)
    garbled = server.tools("hooks", "run", "pre-receive", input=b"not three words here\n")
    assert garbled.exit_code == 2 and "pre-receive input line 1" in garbled.stderr
    wrong = server.tools("hooks", "run", "update", "refs/heads/main")
    assert wrong.exit_code == 2 and "REF OLD NEW" in wrong.stderr
    # An empty repository's first push: nothing rules it yet.
    zero = hooks.ZERO_SHA
    first = server.tools("hooks", "run", "pre-receive", input=f"{zero} {zero} refs/heads/x\n")
    assert first.exit_code == 0 and "no branch to judge" in first.stdout


def test_a_pre_receive_that_is_not_ours_is_kept_or_chained(tmp_path: Path, make_repo) -> None:  # type: ignore[no-untyped-def]
    made = Server(tmp_path, make_repo)
    theirs = made.bare / "hooks" / "pre-receive"
    ran = tmp_path / "theirs-ran"
    theirs.write_text(f"#!/bin/sh\ncat > {ran}\n")
    theirs.chmod(0o755)
    bare = Repo(made.bare, init=False)
    kept = bare.tools("hooks", "install", "--server")
    assert kept.exit_code == 1 and kept.stdout.startswith("kept (not ours")
    moved = bare.tools("hooks", "install", "--server", "--force")
    assert moved.exit_code == 0 and "moved yours to pre-receive.local" in moved.stdout
    assert (made.bare / "hooks" / "pre-receive.local").read_text().startswith("#!/bin/sh\ncat")
    made.clone.commit(BAD, {"c.txt": "c\n"})
    refused = made.push("main")
    assert refused.returncode != 0 and "refs/heads/main refused" in refused.stderr
    # Theirs ran first, with git's input.
    assert ran.read_text().endswith(" refs/heads/main\n")
    again = bare.tools("hooks", "install", "--server")
    assert again.exit_code == 0 and again.stdout == "unchanged  hooks/pre-receive\n"
