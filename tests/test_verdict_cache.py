"""The verdict cache of the message gates (SPEC §12), on real repositories through the real CLI.

The one property that matters: a report is the same with the cache, without it, cold or warm,
after any change to what a verdict depends on, and whatever the cache folder holds. Which
entries a run wrote is read from the folder itself (its segments and their lines).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo, Run

ROOT = Path(__file__).resolve().parents[1]
MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = (
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]\n"
)
GATES = ("trailers", "style")
HEADER = b"tools-verdicts/1\n"


def good(n: int, *, distinct: bool = False) -> bytes:
    trailers = TRAILERS.replace("opus-4", f"opus-4-{n}") if distinct else TRAILERS
    return (
        f"Port kernel {n} from upstream\n\nBrings kernel {n} over with its tests.\n\n"
        f"{MARKER}\n\n{trailers}"
    ).encode()


# Ways a message goes wrong (or merely differs), one per commit in turn: every rule of both
# gates, and messages that are not UTF-8 or end their lines in CRLF.
SPOIL = [
    lambda m: m.replace(f"{MARKER}\n\n".encode(), b""),
    lambda m: m.replace(b"AI-Assisted: true\n", b""),
    lambda m: m.replace(b"[claude-code]", b""),
    lambda m: m + b"Signed-off-by: Claude <claude@example.com>\n",
    lambda m: m + b"\nhttps://example.com/pull/1\n",
    lambda m: m.replace(b"Brings", b"---\nBrings"),
    lambda m: m.replace(b" from upstream\n", b" from upstream.\n", 1),
    lambda m: m.split(b"\n", 1)[0] + f"\n\n{MARKER}\n\n{TRAILERS}".encode(),
    lambda m: b"Port a kernel whose subject runs on well past the seventy-two characters" + m,
    lambda m: m.replace(b"AI-Assisted: true", b"AI-Assisted: True"),
    lambda m: m.replace(b"Brings", b"Bring\xe9s \xff"),
    lambda m: m.replace(b"\n", b"\r\n"),
    lambda m: b"fixup! " + m,
    lambda m: m + b"Co-authored-by: Bot <1+bot@users.noreply.github.com>\n",
    lambda m: m.replace(b"claude:opus-4", b"AGENT:MODEL [TOOL] x"),
    lambda m: b"",
]


def history(count: int) -> Iterator[tuple[str, bytes, str | None, str]]:
    """(branch, message, merged mark or None, author email) per commit, oldest first: a main
    line where every third commit is spoiled one way or another, with a two-commit side branch
    merged in every 40 commits (merge messages with and without the marker)."""
    for n in range(1, count + 1):
        msg = good(n, distinct=n % 2 == 0)
        if n % 3 == 0:
            msg = SPOIL[(n // 3) % len(SPOIL)](msg)
        author = "legacy@example.com" if n % 6 == 0 else "dev@example.com"
        if n % 40 == 0:
            yield "side", good(n + 100_000), None, author
            yield "side", SPOIL[6](good(n + 200_000)), None, author
            merge = f"Merge side {n}\n".encode() if n % 80 == 0 else good(n)
            yield "main", merge, "side", author
        else:
            yield "main", msg, None, author


def build(path: Path, count: int) -> Repo:
    """A repository of ``count`` main-line commits (and their side branches) over a root
    commit that ``base`` names, built by ``git fast-import``."""
    repo = Repo(path)
    out: list[bytes] = []
    w = out.append
    w(b"commit refs/heads/main\nmark :1\n")
    w(b"author Dev <dev@example.com> 1700000000 +0000\n")
    w(b"committer Dev <dev@example.com> 1700000000 +0000\n")
    root = b"Root\n\nThe base of it.\n"
    w(f"data {len(root)}\n".encode() + root + b"\n")
    mark, tips = 1, {"main": 1, "side": 1}
    for branch, msg, merged, author in history(count):
        mark += 1
        when = 1_700_000_000 + mark
        w(f"commit refs/heads/{branch}\nmark :{mark}\n".encode())
        w(f"author Dev <{author}> {when} +0000\n".encode())
        w(f"committer Dev <dev@example.com> {when} +0000\n".encode())
        w(f"data {len(msg)}\n".encode() + msg + b"\n")
        start = tips["main"] if branch == "side" and tips["side"] < tips["main"] else tips[branch]
        w(f"from :{start}\n".encode())
        if merged is not None:
            w(f"merge :{tips[merged]}\n".encode())
        content = f"{mark}\n".encode()
        w(f"M 100644 inline k/{mark % 7}.cu\ndata {len(content)}\n".encode() + content + b"\n")
        tips[branch] = mark
        if merged is not None:
            tips[merged] = mark  # the side branch starts again from the merge
    w(b"done\n")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=path,
        input=b"".join(out),
        check=True,
        capture_output=True,
    )
    repo.git("checkout", "-q", "-f", "main")
    repo.git("branch", "base", ":/^Root")
    return repo


def configure(repo: Repo, config: dict) -> None:
    (repo.path / ".agents").mkdir(exist_ok=True)
    (repo.path / ".agents/protocol.yaml").write_text(yaml.safe_dump({"base": "base", **config}))


def cache_dir(repo: Repo, gate: str) -> Path:
    return repo.path / ".git/tools/cache" / gate


def segments(repo: Repo, gate: str) -> list[Path]:
    folder = cache_dir(repo, gate)
    return sorted(folder.glob("seg-*")) if folder.is_dir() else []


def entries(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.startswith(HEADER)
    return [line for line in data[len(HEADER) :].split(b"\n") if line]


def check(repo: Repo, gate: str, *args: str) -> Run:
    """One run of ``gate``, the range memo of earlier runs removed first: these tests hold
    each commit's verdict, which a kept range would answer for whole (tests/test_range_memo.py
    holds the memo)."""
    for memo in (repo.path / ".git/tools/cache").glob("range-*"):
        shutil.rmtree(memo)
    return repo.tools("--format", "json", gate, "check", *args)


def same_as_without(repo: Repo, gate: str, *args: str) -> Run:
    """Run ``gate`` with the cache and without it: the same exit code and the same bytes."""
    cached = check(repo, gate, *args)
    plain = check(repo, gate, "--no-cache", *args)
    assert (cached.exit_code, cached.stdout) == (plain.exit_code, plain.stdout)
    assert cached.exit_code in (0, 1), cached.stderr
    return cached


# A config that uses what is applied outside the cached verdicts: the cutover, exceptions by
# commit and by author, a rule's severity, merges and fixups judged.
RICH = {
    "trailers": {
        "merges": "check",
        "fixups": "check",
        "exceptions": [
            {"author": "legacy@example.com", "rule": "marker-missing", "reason": "before us"},
        ],
    },
    "rules": {"subject-length": "error", "trailer-value": "warning"},
}


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history of some 300 commits, built once; each test copies it."""
    return build(tmp_path_factory.mktemp("big") / "repo", 280).path


def copy_of(src: Path, dest: Path) -> Repo:
    shutil.copytree(src, dest, symlinks=True)
    return Repo(dest, init=False)


def test_a_few_hundred_commits_judge_the_same_with_and_without_the_cache(
    big: Path, tmp_path: Path
) -> None:
    repo = copy_of(big, tmp_path / "repo")
    cut = repo.git("rev-list", "--first-parent", "main").split()[150]
    # A commit after the cutover whose AI-Assisted trailer is missing.
    exception = repo.git("rev-list", "main", "--grep", "^Port kernel 243 from").strip()
    config = json.loads(json.dumps(RICH))
    config["trailers"]["cutover"] = cut
    config["trailers"]["exceptions"].append(
        {"commit": exception[:10], "rule": "trailer-missing", "reason": "known"}
    )
    configure(repo, config)
    count = int(repo.git("rev-list", "--count", "base..main"))
    assert count > 280
    for gate in GATES:
        plain = check(repo, gate, "--no-cache")
        assert not cache_dir(repo, gate).exists()  # --no-cache wrote nothing
        cold = check(repo, gate)
        assert (cold.exit_code, cold.stdout) == (plain.exit_code, plain.stdout)
        assert cold.exit_code == 1
        report = cold.json()["gates"][0]
        assert report["stats"]["commits"] == count
        rules = {f["rule"] for f in report["findings"]}
        assert len(rules) >= (3 if gate == "style" else 8), rules
        written = segments(repo, gate)
        assert len(written) == 1 and len(entries(written[0])) > 250
        warm = check(repo, gate)
        assert (warm.exit_code, warm.stdout) == (plain.exit_code, plain.stdout)
        assert segments(repo, gate) == written  # every verdict came from the cache
        for fmt in ("text", "github", "sarif"):
            a = repo.tools("--format", fmt, gate, "check")
            b = repo.tools("--format", fmt, gate, "check", "--no-cache")
            assert (a.exit_code, a.stdout) == (b.exit_code, b.stdout)
    # Debt is applied to cached verdicts too.
    trailers = check(repo, "trailers").json()["gates"][0]["findings"]
    assert any(f["message"].startswith("debt: before us") for f in trailers)
    assert any(f["message"].startswith("debt: known") for f in trailers)


def test_one_more_commit_costs_one_verdict(big: Path, tmp_path: Path) -> None:
    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    for gate in GATES:
        check(repo, gate)
    repo.commit(good(9999))
    for gate in GATES:
        before = segments(repo, gate)
        same_as_without(repo, gate)
        new = [p for p in segments(repo, gate) if p not in before]
        assert len(new) == 1 and len(entries(new[0])) == 1
    # --commit, --staged and a message file judge through the same cache, or beside it.
    for gate in GATES:
        same_as_without(repo, gate, "--commit", "HEAD~3")
    message = tmp_path / "MSG"
    message.write_bytes(good(1).replace(b" from", b". from"))
    for gate in GATES:
        same_as_without(repo, gate, "--message-file", str(message))


def test_a_corrupt_entry_is_recomputed_never_trusted(big: Path, tmp_path: Path) -> None:
    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    for gate in GATES:
        truth = check(repo, gate, "--no-cache")
        check(repo, gate)
        (segment,) = segments(repo, gate)
        lines = entries(segment)

        def forged(payload: bytes, *, sign: bool, lines: list[bytes] = lines) -> bytes:
            out = []
            for line in lines:
                key, check_sum = line[:64], line[65:129]
                if sign:
                    check_sum = hashlib.sha256(key + b" " + payload).hexdigest().encode()
                out.append(key + b" " + check_sum + b" " + payload)
            return HEADER + b"".join(line + b"\n" for line in out)

        damaged = [
            # Every verdict said clean, the checksums left as they were.
            forged(b"[]", sign=False),
            # Signed, but naming a rule the gate does not declare, or not a verdict at all.
            forged(b'[["no-such-rule","x",1]]', sign=True),
            forged(b'{"rule":"x"}', sign=True),
            forged(b'[["subject-period","x",0]]', sign=True),
            forged(b"[[", sign=True),
            # Cut short, bytes flipped, another format.
            segment.read_bytes()[: len(segment.read_bytes()) // 2],
            segment.read_bytes().replace(b" ", b"!"),
            b"tools-verdicts/0\n" + segment.read_bytes()[len(HEADER) :],
        ]
        for data in damaged:
            for old in segments(repo, gate):
                old.unlink()
            segment.write_bytes(data)
            run = check(repo, gate)
            assert (run.exit_code, run.stdout) == (truth.exit_code, truth.stdout)
            # The recomputed verdicts were written again, in a newer segment that wins.
            assert len(segments(repo, gate)) == 2
            again = check(repo, gate)
            assert (again.exit_code, again.stdout) == (truth.exit_code, truth.stdout)
            assert len(segments(repo, gate)) == 2


def test_a_config_change_invalidates_what_it_touches(big: Path, tmp_path: Path) -> None:
    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    for gate in GATES:
        check(repo, gate)
    changes = [
        {"style": {"subject_max": 30}},
        {"style": {"require_body": False}},
        {"style": {"subject_pattern": "^Port "}},
        {"trailers": {"required": {"Following-Agents-Protocol": ["true"]}}},
        # The same keys in another order: findings come in that order.
        {
            "trailers": {
                "required": {
                    "AI-Assisted": ["true", "false"],
                    "Following-Agents-Protocol": ["true"],
                }
            }
        },
        {"trailers": {"marker": "PROTOCOL_MARKER"}},
        {"trailers": {"ai_identities": ["claude"]}},
        {"trailers": {"assisted_by_format": "[a-z]+:.*"}},
        {"trailers": {"marker_placement": "line"}},
    ]
    for change in changes:
        counts = {gate: len(segments(repo, gate)) for gate in GATES}
        configure(repo, change)
        runs = {gate: same_as_without(repo, gate) for gate in GATES}
        # The gate whose judging reads the changed key computed its verdicts again.
        section = next(iter(change))
        touched = ["style"] if section == "style" else ["trailers"]
        if change == {"trailers": {"marker": "PROTOCOL_MARKER"}}:
            touched = ["trailers", "style"]  # style stops the body at the marker
        for gate in GATES:
            grew = 1 if gate in touched else 0
            assert len(segments(repo, gate)) == counts[gate] + grew, (change, gate)
        assert runs["trailers"].stdout  # judged, not an error
    # What is applied after a verdict (severities, exceptions, the cutover) reuses it.
    configure(repo, {})
    for gate in GATES:
        check(repo, gate)
    counts = {gate: len(segments(repo, gate)) for gate in GATES}
    configure(repo, {**RICH, "style": {"subject_length": "error"}})
    for gate in GATES:
        same_as_without(repo, gate)
        assert len(segments(repo, gate)) == counts[gate]
    # --filled is part of the trailers key.
    same_as_without(repo, "trailers", "--filled")
    assert len(segments(repo, "trailers")) == counts["trailers"] + 1


def _tools_at(version: str, tmp_path: Path) -> list[str]:
    """The real CLI from a copy of this checkout's package whose version is ``version``."""
    code = tmp_path / f"code-{version}"
    shutil.copytree(ROOT / "tools", code / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    init = code / "tools/__init__.py"
    text = init.read_text()
    assert '__version__ = "' in text
    start = text.index('__version__ = "') + len('__version__ = "')
    init.write_text(text[:start] + version + text[text.index('"', start) :])
    return ["env", f"PYTHONPATH={code}", sys.executable, "-P", "-m", "tools"]


def test_a_tool_version_change_invalidates(tmp_path: Path) -> None:
    repo = build(tmp_path / "repo", 30)
    configure(repo, {})
    old, new = _tools_at("0.0.1", tmp_path), _tools_at("0.0.2", tmp_path)

    def run(tools: list[str], *args: str) -> tuple[int, list[dict]]:
        proc = subprocess.run(
            [*tools, "--format", "json", "style", "check", *args],
            cwd=repo.path,
            capture_output=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert proc.returncode in (0, 1), proc.stderr
        return proc.returncode, json.loads(proc.stdout)["gates"]

    truth = run(old, "--no-cache")
    assert run(old) == truth
    assert len(segments(repo, "style")) == 1
    assert run(old) == truth
    assert len(segments(repo, "style")) == 1  # the same version: every verdict reused
    assert run(new) == truth
    assert len(segments(repo, "style")) == 2  # another version: every verdict computed again
    assert len(entries(segments(repo, "style")[1])) == len(entries(segments(repo, "style")[0]))


def test_the_judged_tree_cannot_plant_an_entry(big: Path, tmp_path: Path) -> None:
    scratch = copy_of(big, tmp_path / "scratch")
    configure(scratch, {})
    truth = check(scratch, "style", "--no-cache")
    assert truth.exit_code == 1
    check(scratch, "style")
    (segment,) = segments(scratch, "style")
    # A forgery that would work from the git directory: every verdict clean, well signed.
    lines = []
    for line in entries(segment):
        key = line[:64]
        lines.append(key + b" " + hashlib.sha256(key + b" []").hexdigest().encode() + b" []")
    forged = HEADER + b"".join(line + b"\n" for line in lines)
    segment.write_bytes(forged)
    assert check(scratch, "style").exit_code == 0  # read from .git/tools/cache: trusted there

    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    planted = [
        "tools/cache/style",
        ".git-tools/cache/style",
        "cache/style",
        ".agents/tools/cache/style",
        "tools/tools/cache/style",
    ]
    for folder in planted:
        repo.write(f"{folder}/{segment.name}", forged)
    repo.git("add", "-f", *planted)
    repo.git("commit", "-q", "--no-verify", "-m", good(5000).decode())
    run = same_as_without(repo, "style", "--head", "HEAD~1")
    assert run.exit_code == 1
    assert run.json()["gates"][0]["findings"] == truth.json()["gates"][0]["findings"]
    # A linked worktree shares the repository's one cache folder, in its common git
    # directory; the tree of neither is read.
    repo.git("worktree", "add", "-q", str(tmp_path / "linked"), "HEAD")
    linked = Repo(tmp_path / "linked", init=False)
    configure(linked, {})
    count = len(segments(repo, "style"))
    run = check(linked, "style", "--head", "HEAD~1")
    assert run.json()["gates"][0]["findings"] == truth.json()["gates"][0]["findings"]
    assert not list((repo.path / ".git/worktrees").rglob("cache"))
    assert len(segments(repo, "style")) == count  # the linked worktree reused the verdicts
    same_as_without(linked, "style", "--head", "HEAD~1")


def test_no_cache_writes_nothing(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    tools_dir = repo.path / ".git/tools"
    before = sorted(tools_dir.rglob("*")) if tools_dir.exists() else []
    for gate in GATES:
        assert repo.tools("--no-cache", gate, "check").exit_code == 1
        assert repo.tools(gate, "check", "--no-cache").exit_code == 1
    monkeypatch.setenv("TOOLS_NO_CACHE", "1")
    for gate in GATES:
        assert repo.tools(gate, "check").exit_code == 1
    after = sorted(tools_dir.rglob("*")) if tools_dir.exists() else []
    assert not [p for p in after if p not in before and "config-" not in p.name], after
    assert not (tools_dir / "cache").exists() and not (tools_dir / "tmp").exists()
    monkeypatch.setenv("TOOLS_NO_CACHE", "0")
    for gate in GATES:
        assert repo.tools(gate, "check").exit_code == 1
        assert len(segments(repo, gate)) == 1


def test_the_folder_stays_within_its_bound(
    big: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = copy_of(big, tmp_path / "repo")
    configure(repo, {})
    bound = 8000
    monkeypatch.setenv("TOOLS_CACHE_MAX_BYTES", str(bound))

    def size(gate: str) -> int:
        return sum(p.stat().st_size for p in segments(repo, gate))

    for gate in GATES:
        same_as_without(repo, gate)
        assert 0 < size(gate) <= bound
    # A branch of new commits: its verdicts are kept, the oldest are evicted.
    repo.branch("topic", "base")
    for n in range(12):
        repo.commit(good(70_000 + n) if n % 2 else good(n)[:20] + b".\n\nBody.\n")
    for gate in GATES:
        same_as_without(repo, gate)
        assert size(gate) <= bound
        count = len(segments(repo, gate))
        same_as_without(repo, gate)
        assert len(segments(repo, gate)) == count  # the newest verdicts were the ones kept
    # Many small runs: the segments are compacted, never more than the bound allows.
    monkeypatch.delenv("TOOLS_CACHE_MAX_BYTES")
    for n in range(20):
        repo.commit(good(80_000 + n))
        for gate in GATES:
            check(repo, gate)
            assert len(segments(repo, gate)) <= 16
    for gate in GATES:
        same_as_without(repo, gate)


def test_every_cache_key_reads_the_package_s_files_one_way(tmp_path: Path) -> None:
    """The one digest of code and data that every cache key of the package names."""
    from tools import config_cache, links_cache, range_memo, verdict_cache

    assert verdict_cache.module_file("tools.gates.trailers") == "gates/trailers.py"
    assert verdict_cache.module_file("tools.git") == "git/__init__.py"
    assert verdict_cache.module_file("tools") == "__init__.py"
    names = ("tools.gates.style", "tools.commit_messages")
    files = ("gates/style.py", "commit_messages.py")
    assert verdict_cache.code_digest(names) == verdict_cache.source_digest(files)
    # What it hashes is the files' bytes: the digest of the files as they are, computed here.
    h = hashlib.sha256()
    for name in files:
        h.update(name.encode() + b"\0" + (ROOT / "tools" / name).read_bytes() + b"\0")
    assert verdict_cache.source_digest(files) == h.hexdigest()
    # Every module a key names exists (a name that read no file would hash its name alone).
    for module in range_memo.MODULES:
        assert (ROOT / "tools" / verdict_cache.module_file(module)).is_file(), module
    for name in (*config_cache._SOURCES, *links_cache.SOURCES):
        assert (ROOT / "tools" / name).is_file(), name
