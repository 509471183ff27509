"""Every read of a judged tree's file is bounded (SPEC §10): a regular file inside the
repository, within ``limits.max_file_bytes`` (``max_line_bytes`` per line for the streamed
ones). Plain calls pin the boundaries; the real CLI, run as a separate process under a memory
limit, shows the committed links of a pull request refused at once."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import file_reads
from tools.bounded import MAX_NODES, check_json, count_nodes, json_nodes
from tools.errors import UsageError

# -- plain calls --------------------------------------------------------------------------------


def test_a_regular_file_is_read_whole_up_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert file_reads.read_optional(path, "f", limit=10) == b"x" * 10
    with pytest.raises(UsageError, match="larger than limits.max_file_bytes"):
        file_reads.read_optional(path, "f", limit=9)
    assert file_reads.read_optional(tmp_path / "absent", "absent") is None
    assert file_reads.read_optional(path / "below-a-file", "x") is None
    with pytest.raises(UsageError, match="no such file"):
        file_reads.read_file(tmp_path / "absent", "absent")


def test_a_fifo_a_device_and_a_folder_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a blocking open would hang here
    with pytest.raises(UsageError, match="is a FIFO"):
        file_reads.read_optional(fifo, "fifo")
    with pytest.raises(UsageError, match="is a device"):
        file_reads.read_optional(Path("/dev/zero"), "zero")
    with pytest.raises(UsageError, match="is a directory"):
        file_reads.read_optional(tmp_path, "dir")
    with pytest.raises(UsageError, match="is a FIFO"):
        file_reads.open_stream(fifo, "fifo")


def test_links_are_followed_inside_the_repository_only(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "real.md").write_text("inside\n")
    (root / "sub" / "in.md").symlink_to("../real.md")
    assert file_reads.read_optional(root / "sub" / "in.md", "sub/in.md", root=root) == b"inside\n"
    secret = tmp_path / "secret"
    secret.write_text("gho_SECRET\n")
    (root / "out.md").symlink_to(secret)
    (root / "zero").symlink_to("/dev/zero")
    (root / "linked").symlink_to(tmp_path)  # a folder on the way
    for rel in ("out.md", "zero", "linked/secret", "sub/../out.md"):
        with pytest.raises(UsageError, match="leaves the repository") as info:
            file_reads.read_optional(root / rel, rel, root=root)
        assert "gho_SECRET" not in info.value.render()
    assert file_reads.outside(root / "linked" / "absent", root)
    assert not file_reads.outside(root / "absent", root)


def test_a_streamed_line_past_the_limit_is_refused_before_it_is_held() -> None:
    data = b"short\n" + b"y" * 5000 + b"\nlast"
    got = list(file_reads.lines(io.BytesIO(data), "s", limit=5000))
    assert got == [b"short\n", b"y" * 5000 + b"\n", b"last"]
    with pytest.raises(UsageError, match="line 2 is longer than limits.max_line_bytes"):
        list(file_reads.lines(io.BytesIO(data), "s", limit=4999))
    # Longer than the piece a line is read in: still whole, still bounded.
    long = b"z" * (3 * (1 << 20) + 5)
    assert list(file_reads.lines(io.BytesIO(long + b"\n"), "s", limit=len(long) + 1)) == [
        long + b"\n"
    ]
    with pytest.raises(UsageError, match="line 1"):
        list(file_reads.lines(io.BytesIO(long), "s", limit=len(long) - 1))


def _nodes(value: object) -> int:
    if isinstance(value, list):
        return 1 + sum(_nodes(v) for v in value)
    if isinstance(value, dict):
        return 1 + sum(1 + _nodes(v) for v in value.values())
    return 1


@pytest.mark.parametrize(
    "doc",
    [
        "1",
        "[]",
        "{}",
        "[[1],[]]",
        '["a"]',
        '{"a,b:": "[{", "c": [{}, [""]]}',
        '[1, [2, {"x": []}], "\\"]"]',
        '{"k": "a\\\\", "l": [ ]}',
    ],
)
def test_json_nodes_counts_what_the_parser_would_build(doc: str) -> None:
    want = _nodes(json.loads(doc))
    assert count_nodes(doc.encode(), 10**9) == want
    assert json_nodes(doc) >= want  # the quick bound is an upper bound


def test_json_nodes_is_exact_across_the_pieces_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from tools import bounded

    rng = random.Random(7)

    def value(depth: int = 0) -> object:
        r = rng.random()
        if depth > 4 or r < 0.3:
            return rng.choice([1, 'a\\"b,[{:', "x\\\\", None, [], {}, "é", "", 2.5, True])
        if r < 0.65:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f'k{i},"{i}:': value(depth + 1) for i in range(rng.randint(0, 4))}

    for piece in (1, 2, 3, 7, 64):
        monkeypatch.setattr(bounded, "_PIECE", piece)
        for _ in range(300):
            v = value()
            doc = json.dumps(v, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))
            assert count_nodes(doc.encode(), 10**9) == _nodes(v), doc


def test_a_million_entry_document_is_refused_unparsed() -> None:
    entry = {"gate": "links", "rule": "r", "path": "p", "fingerprint": "f", "message": "m, n: o"}
    doc = json.dumps({"findings": [entry] * 1_000_000})
    with pytest.raises(UsageError, match=f"more than {MAX_NODES:,} nodes"):
        check_json(doc, "f.json")
    small = json.dumps({"findings": [entry] * 1000})
    check_json(small, "f.json")


# -- the real CLI, as CI runs it ------------------------------------------------------------------
CONFIG = "base: main\npreflight:\n  gates: [index, now, links]\n"
NOW = "# Now\n\n## Live claims\n\n- none\n\n## Current gate\n\n- ok\n\n## Next actions\n\n- none\n"


def _limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own under a 2 GiB address-space limit: an unbounded read
    ends in exit 3 (MemoryError) or a kill, never in a hung test."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "tools", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
        check=False,
    )


@pytest.mark.parametrize(
    ("path", "command"),
    [
        (".agents/baselines/findings.json", ["preflight"]),
        (".agents/NOW.md", ["now", "check"]),
        (".agents/issue-index.md", ["index", "check"]),
        (".agents/protocol.yaml", ["preflight"]),
        (".agents/ledger.jsonl", ["ledger", "verify"]),
    ],
)
def test_a_committed_link_to_dev_zero_is_exit_2_naming_it(
    repo: Repo, path: str, command: list[str]
) -> None:
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": CONFIG, ".agents/NOW.md": NOW, "README.md": "# R\n"},
    )
    full = repo.path / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.unlink(missing_ok=True)
    full.symlink_to("/dev/zero")
    repo.commit("Link it\n\nBody.\n")
    # Run from the repository's parent, so that `-m tools` is this package.
    proc = _limited(["--repo", str(repo.path), *command], cwd=repo.path.parent)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-500:])
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: ") and path in line
    assert "leaves the repository" in line


def test_a_file_past_limits_max_file_bytes_is_exit_2_naming_it(repo: Repo) -> None:
    config = CONFIG + "limits:\n  max_file_bytes: 64\n"
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": config, ".agents/NOW.md": NOW + "- " + "x" * 100 + "\n"},
    )
    run = repo.tools("now", "check")
    assert run.exit_code == 2
    assert run.stderr == (
        "error: .agents/NOW.md: is larger than limits.max_file_bytes (64 bytes): not read\n"
    )


@pytest.mark.parametrize(
    ("entries", "said"), [(20_000, "nodes"), (1_000_000, "larger than limits.max_file_bytes")]
)
def test_a_findings_baseline_past_the_bounds_is_exit_2(repo: Repo, entries: int, said: str) -> None:
    # 20,000 entries are 220,000 nodes in 1.6 MB; a million (73 MB) pass the size bound first.
    entry = {"gate": "links", "rule": "r", "path": "p", "fingerprint": "f", "message": "m"}
    doc = {"schema": "tools.findings-baseline/1", "findings": [entry] * entries}
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": CONFIG, ".agents/NOW.md": NOW, "README.md": "# R\n"},
    )
    repo.write(".agents/baselines/findings.json", json.dumps(doc))
    run = repo.tools("baseline", "show")
    assert run.exit_code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: .agents/baselines/findings.json") and said in line


def test_the_head_config_as_a_link_is_reported_and_never_quoted(repo: Repo, tmp_path: Path) -> None:
    # Under --config-from base the head's config is only compared; a link is said to be one,
    # and what it points at (a file of the CI machine) is neither read nor quoted.
    secret = tmp_path / "hosts.yaml"
    secret.write_text("now:\n  path: gho_SECRET_TOKEN_abcdef\n")
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": CONFIG, ".agents/NOW.md": NOW, "README.md": "# R\n"},
    )
    repo.branch("pr")
    (repo.path / ".agents/protocol.yaml").unlink()
    (repo.path / ".agents/protocol.yaml").symlink_to(secret)
    repo.commit("Link the config\n\nBody.\n")
    for fmt in ("github", "json", "text"):
        run = repo.tools("--format", fmt, "--config-from", "base", "preflight", "--base", "main")
        assert "gho_SECRET" not in run.stdout + run.stderr, fmt
        assert run.exit_code in (0, 1), run.stderr
        assert "symbolic link" in run.stdout
    run = repo.tools("--format", "json", "--config-from", "base", "preflight", "--base", "main")
    protocol = {g["gate"]: g for g in run.json()["gates"]}["protocol"]
    (finding,) = protocol["findings"]
    assert finding["rule"] == "protocol-changed" and "symbolic link" in finding["message"]
    # The same, judged from git (--head): the link's blob is its target's name, not a config.
    run = repo.tools(
        "--format", "json", "--config-from", "base", "preflight", "--base", "main", "--head", "pr"
    )
    protocol = {g["gate"]: g for g in run.json()["gates"]}["protocol"]
    assert "symbolic link" in protocol["findings"][0]["message"]


def test_a_ledger_line_past_limits_max_line_bytes_is_exit_2(repo: Repo) -> None:
    from tools.ledger import canonical_json, make_record

    config = CONFIG + "limits:\n  max_line_bytes: 200\n"
    record = make_record("attribution", {"text": "x" * 300}, created="2026-01-01T00:00:01Z")
    line = canonical_json(record).decode()
    repo.commit(
        "Start\n\nBody.\n", {".agents/protocol.yaml": config, ".agents/ledger.jsonl": line + "\n"}
    )
    for args in (["ledger", "verify"], ["ledger", "show"], ["preflight", "--gate", "ledger"]):
        run = repo.tools(*args)
        assert run.exit_code == 2, (args, run.stdout)
        (said,) = run.stderr.splitlines()
        assert "limits.max_line_bytes (200 bytes)" in said and "ledger.jsonl" in said, said
