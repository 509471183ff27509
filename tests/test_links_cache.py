"""The links gate's cache of what it reads in each file (SPEC §12), on real repositories
through the real CLI.

The one property that matters: a report is the same with the cache and without it, cold or
warm, after any change to the files, and whatever the cache folder holds. Which entries a run
wrote is read from the folder itself (its segments and their lines).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import tools
from tests.conftest import Repo, Run
from tools import links_cache

HEADER = b"tools-verdicts/1\n"
GUIDE = """# Guide

## 6. Now
Text.

## Usage
<a name="custom-spot"></a>
"""
PAGE = """# Page

- [guide](guide.md), [now](guide.md#6-now), [spot](guide.md#custom-spot)
- [cased](guide.md#USAGE), [missing](guide.md#gone), [near](guide.md#Usage!)
- [lines](../src/tool.py#L2-L3), [past](../src/tool.py#L40), [one](../README.md#L1)
- [broken](nope.md), [up](../../out.md), [folder](../src), [self](#page), [no](#nothing)
- [skipped](skip/hidden.md#inside), [hidden](skip/hidden.md#absent)
- [web](https://example.com/x.md) and `[code](nope.md)`

[ref]: guide.md#usage
"""
FILES: dict[str, str | bytes] = {
    "README.md": "# Readme\n\n[page](docs/page.md) [crlf](docs/crlf.md#second)\n",
    "docs/guide.md": GUIDE,
    "docs/page.md": PAGE,
    "docs/crlf.md": b"# First\r\n\r\n## Second\r\n[back](page.md#page)\r\n[bad](page.md#L99)",
    "docs/skip/hidden.md": "# Inside\n\n[ignored](nope.md)\n",
    "src/tool.py": "".join(f"line {i}\n" for i in range(1, 11)),
}


def make(repo: Repo, **links: object) -> Repo:
    config = {"links": {"exclude": ["docs/skip/**"], **links}}
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": yaml.safe_dump(config), **FILES})
    repo.write("docs/new.md", "# New\n\n[page](page.md#page) [gone](page.md#gone)\n")
    return repo


def check(repo: Repo, *args: str) -> Run:
    run = repo.tools("--format", "json", "links", "check", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run


def truth(repo: Repo, *args: str) -> Run:
    return check(repo, "--no-cache", *args)


def same(a: Run, b: Run) -> bool:
    return (a.exit_code, a.stdout, a.stderr) == (b.exit_code, b.stdout, b.stderr)


def folder(repo: Repo) -> Path:
    return repo.path / ".git/tools/cache/links"


def segments(repo: Repo) -> list[Path]:
    return sorted(folder(repo).glob("seg-*"))


def entries(segment: Path) -> list[bytes]:
    data = segment.read_bytes()
    assert data.startswith(HEADER)
    return [line for line in data[len(HEADER) :].split(b"\n") if line]


def test_warm_equals_cold_and_computes_nothing(repo: Repo) -> None:
    make(repo)
    want = truth(repo)
    assert want.exit_code == 1 and not folder(repo).exists()
    rules = {f["rule"] for f in want.json()["gates"][0]["findings"]}
    assert rules == {"link-broken", "anchor-missing", "line-anchor-out-of-range"}
    assert same(check(repo), want)  # cold
    assert len(segments(repo)) == 1
    for _ in range(2):
        assert same(check(repo), want)  # warm: every file's extraction reused
        assert len(segments(repo)) == 1
    text = repo.tools("links", "check", "--max-findings", "0")
    assert same(text, repo.tools("--no-cache", "links", "check", "--max-findings", "0"))
    # The index names the same blobs: a staged run reads none of them again.
    repo.git("add", "-A")
    assert same(check(repo, "--staged"), truth(repo, "--staged"))
    assert len(segments(repo)) == 1


def _imports(repo: Repo) -> str:
    """What a run of the console script imports (``-X importtime`` on stderr)."""
    proc = subprocess.run(
        [sys.executable, "-P", "-X", "importtime", "-m", "tools", "links", "check"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    return proc.stderr


def test_a_warm_run_loads_no_parser(repo: Repo) -> None:
    make(repo)
    assert "pyromark" in _imports(repo)  # cold: every file parsed
    assert "pyromark" not in _imports(repo)  # warm: nothing parsed, a missing anchor named


def test_an_edited_file_is_read_again(repo: Repo) -> None:
    make(repo)
    before = check(repo)
    check(repo)
    page = repo.path / "docs/page.md"
    st = page.stat()
    # The same size, its times put back: its bytes still decide.
    repo.write("docs/page.md", PAGE.replace("[guide](guide.md)", "[guide](guidx.md)"))
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = check(repo)
    assert same(after, truth(repo)) and not same(after, before)
    # A heading gone from a target: the links to it are judged against the new file.
    repo.write("docs/guide.md", GUIDE.replace("## 6. Now", "## 7. Later"))
    assert same(check(repo), truth(repo))
    assert "#6-now" in check(repo).stdout
    # A line anchor's target grows.
    repo.write("src/tool.py", "x\n" * 50)
    assert same(check(repo), truth(repo))
    assert "line-anchor-out-of-range" not in check(repo).stdout.split("tool.py#L40")[-1][:200]


def test_a_settled_file_is_known_by_its_stat_until_it_changes(repo: Repo, tmp_path: Path) -> None:
    make(repo)
    time.sleep(links_cache.SETTLED_NS / 1e9 + 0.2)  # the files' last change settles
    want = truth(repo)
    assert same(check(repo), want)
    stats = [line for seg in segments(repo) for line in entries(seg) if line.endswith(b'"')]
    assert len(stats) >= 6  # the judged files and the line anchor's target, by their stat
    assert same(check(repo), want)
    assert len(segments(repo)) == 1
    # The same size and the same times: the change of the file's ctime gives it away.
    page = repo.path / "docs/page.md"
    st = page.stat()
    repo.write("docs/page.md", PAGE.replace("[guide](guide.md)", "[guide](guidx.md)"))
    os.utime(page, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert same(check(repo), truth(repo)) and not same(truth(repo), want)
    # A folder on the way turned into a link that leaves the repository: refused as the
    # read refuses it, never answered from the stat it had.
    shutil.move(repo.path / "docs", tmp_path / "docs")
    (repo.path / "docs").symlink_to(tmp_path / "docs")
    cold = repo.tools("--no-cache", "links", "check")
    assert cold.exit_code == 2 and "leaves the repository" in cold.stderr
    assert same(repo.tools("links", "check"), cold)


def _forged(segment: Path, payload: bytes, *, sign: bool) -> bytes:
    out = []
    for line in entries(segment):
        key, check_sum = line[:64], line[65:129]
        if sign:
            check_sum = hashlib.sha256(key + b" " + payload).hexdigest().encode()
        out.append(key + b" " + check_sum + b" " + payload)
    return HEADER + b"".join(line + b"\n" for line in out)


def test_a_corrupt_entry_is_recomputed_never_trusted(repo: Repo) -> None:
    make(repo)
    want = truth(repo)
    check(repo)
    (segment,) = segments(repo)
    data = segment.read_bytes()
    damaged = [
        # Every file without links, the checksums left as they were.
        _forged(segment, b"[1,[],[]]", sign=False),
        # Signed, but no extraction: a line 0, a count below 0, a wrong shape or type.
        _forged(segment, b'[3,[[0,"nope.md"]],[]]', sign=True),
        _forged(segment, b"[-1,[],[]]", sign=True),
        _forged(segment, b'[1,[[1,"a",2]],[]]', sign=True),
        _forged(segment, b"[1,[],[2]]", sign=True),
        _forged(segment, b'{"lines":1}', sign=True),
        _forged(segment, b'"not-a-blob"', sign=True),
        _forged(segment, b"[[", sign=True),
        # Cut short, bytes flipped, another format.
        data[: len(data) // 2],
        data.replace(b",", b";"),
        b"tools-verdicts/0\n" + data[len(HEADER) :],
    ]
    for bad in damaged:
        for old in segments(repo):
            old.unlink()
        segment.write_bytes(bad)
        assert same(check(repo), want)
        assert len(segments(repo)) == 2  # recomputed, in a newer segment that wins
        assert same(check(repo), want)
        assert len(segments(repo)) == 2


def test_the_working_tree_cannot_plant_an_entry(repo: Repo, tmp_path: Path) -> None:
    make(repo)
    want = truth(repo)
    check(repo)
    (segment,) = segments(repo)
    # A forgery that would work from the git directory: every file without a link.
    forged = _forged(segment, b"[1,[],[]]", sign=True)
    segment.write_bytes(forged)
    assert check(repo).exit_code == 0  # read from .git/tools/cache: trusted there
    shutil.rmtree(folder(repo))
    planted = ["tools/cache/links", ".git-tools/cache/links", "cache/links", ".agents/tools"]
    for where in planted:
        repo.write(f"{where}/{segment.name}", forged)
    repo.git("add", "-f", *planted)
    repo.git("commit", "-q", "--no-verify", "-m", "Plant\n\nBody.\n")
    assert same(check(repo), truth(repo))
    assert truth(repo).stdout == want.stdout
    # A linked worktree shares the one folder in the common git directory.
    repo.git("worktree", "add", "-q", str(tmp_path / "linked"), "HEAD")
    linked = Repo(tmp_path / "linked", init=False)
    count = len(segments(repo))
    assert same(check(linked), truth(linked))
    assert not list((repo.path / ".git/worktrees").rglob("cache"))
    assert len(segments(repo)) == count  # its files are the same blobs: nothing computed


def test_no_cache_writes_nothing(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    make(repo)
    assert repo.tools("--no-cache", "links", "check").exit_code == 1
    assert repo.tools("links", "check", "--no-cache").exit_code == 1
    assert repo.tools("links", "check", "--staged", "--no-cache").exit_code == 1
    monkeypatch.setenv("TOOLS_NO_CACHE", "1")
    assert repo.tools("links", "check").exit_code == 1
    tools_dir = repo.path / ".git/tools"
    assert not (tools_dir / "cache").exists() and not (tools_dir / "tmp").exists()
    monkeypatch.setenv("TOOLS_NO_CACHE", "0")
    assert repo.tools("links", "check").exit_code == 1
    assert len(segments(repo)) == 1


def test_what_a_key_names_invalidates(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    make(repo)
    check(repo)
    (first,) = segments(repo)
    # The config chooses the files, not what is read in one: each choice judged as without
    # the cache, from the same entries.
    for links in ({"paths": ["docs/**"]}, {"exclude": []}, {"paths": ["README.md"]}):
        config = {"links": links}
        repo.write(".agents/protocol.yaml", yaml.safe_dump(config))
        assert same(check(repo), truth(repo))
    repo.git("checkout", "-q", "--", ".agents/protocol.yaml")
    # What of the config the extraction reads, and the tool's version, are in every key:
    # another of either computes every entry again.
    for name, value in (("CONFIG_READ", {"links.read": 1}), ("__version__", "0.0.0-other")):
        target = links_cache if name == "CONFIG_READ" else tools
        monkeypatch.setattr(target, name, value)
        count = len(segments(repo))
        assert same(check(repo), truth(repo))
        assert len(segments(repo)) == count + 1
        assert len(entries(segments(repo)[-1])) == len(entries(first))
        monkeypatch.undo()


def test_a_file_too_deep_to_parse_fails_the_same_cold_and_warm(repo: Repo) -> None:
    make(repo)
    repo.write("docs/deep.md", "> " * 300 + "x\n")
    cold = repo.tools("--no-cache", "links", "check")
    assert cold.exit_code == 2 and "docs/deep.md" in cold.stderr
    assert same(repo.tools("links", "check"), cold)
    assert same(repo.tools("links", "check"), cold)  # its failure is never kept


def test_the_folder_stays_within_its_bound(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    make(repo)
    bound = 4000
    monkeypatch.setenv("TOOLS_CACHE_MAX_BYTES", str(bound))
    for n in range(12):  # every run adds the entries of an edited page
        repo.write("docs/page.md", PAGE + f"\n[more](nope{n}.md)\n" * (n + 1))
        assert same(check(repo), truth(repo))
        size = sum(p.stat().st_size for p in segments(repo))
        assert size <= bound, size
    # Compaction kept what the last run used: the next run computes nothing.
    count = len(segments(repo))
    assert count < 12  # compacted on the way
    assert same(check(repo), truth(repo))
    assert len(segments(repo)) == count
