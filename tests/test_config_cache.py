"""The validated-config cache (tools/config_cache.py) through the real CLI and real git: a warm
run says and exits what a cold one does, never trusts an entry it cannot verify or one from
the judged tree, writes nothing when the cache is off, and lets the commit-msg hook run
without the CLI framework, the YAML parser or the schema validator (SPEC §12)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import config_cache

_SECONDS = re.compile(r"\(\d+\.\d s\)")
CONFIG = "trailers: {marker: null, required: {}, assisted_by: false}\n"
GOOD = "Add the parser\n\nBody.\n"
NO_BODY = "Add the parser\n"


def _hook(repo: Repo, *pre: str, env: dict[str, str] | None = None) -> tuple[int, str, set[str]]:
    """The commit-msg hook as an installed one runs it, in a fresh process: (exit code, what
    it printed with the seconds masked, the modules it imported)."""
    proc = subprocess.run(
        [sys.executable, "-P", "-X", "importtime", "-m", "tools", *pre]
        + ["hooks", "run", "commit-msg", "MSG"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    kept, names = [], set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:"):
            names.add(line.rsplit("|", 1)[-1].strip())
        else:
            kept.append(line)
    said = _SECONDS.sub("(T)", proc.stdout + "\n".join(kept))
    return proc.returncode, said, names


def _adopted(repo: Repo, config: str = CONFIG, message: str = GOOD) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "x\n"})
    repo.write(".agents/protocol.yaml", config)
    repo.git("add", ".agents")
    repo.write("MSG", message)


def _folder(repo: Repo) -> Path:
    return repo.path / ".git" / "tools" / "cache" / "config"


def _entry(repo: Repo, config: str) -> Path:
    return _folder(repo) / config_cache.key(config.encode())


def test_a_warm_run_says_what_a_cold_one_does_without_yaml_or_the_schema(repo: Repo) -> None:
    _adopted(repo, message=NO_BODY)
    cold = _hook(repo)
    assert cold[0] == 1 and "error[body-missing] MSG:1" in cold[1]
    assert {"yaml", "jsonschema"} <= cold[2]
    assert _entry(repo, CONFIG).is_file()
    warm = _hook(repo)
    assert warm[:2] == cold[:2]
    # The hook's command line never loads the CLI framework; warm, no YAML and no schema.
    assert not warm[2] & {"typer", "click", "yaml", "jsonschema", "dataclasses"}


def test_an_edited_config_is_read_again(repo: Repo) -> None:
    _adopted(repo, message=NO_BODY)
    assert _hook(repo)[0] == 1
    assert _hook(repo)[0] == 1  # warm
    edited = CONFIG + "style: {require_body: false}\n"
    repo.write(".agents/protocol.yaml", edited)
    repo.git("add", ".agents")
    code, said, names = _hook(repo)
    assert code == 0 and "gates green" in said and "yaml" in names
    assert _entry(repo, edited).is_file()
    assert _hook(repo)[0] == 0


def test_a_corrupt_entry_is_recomputed(repo: Repo) -> None:
    _adopted(repo, message=NO_BODY)
    cold = _hook(repo)
    entry = _entry(repo, CONFIG)
    good = entry.read_bytes()
    # The payload changed under its checksum (here: a verdict that would pass the message).
    entry.write_bytes(good.replace(b'"require_body":true', b'"require_body":false'))
    assert entry.read_bytes() != good
    code, said, names = _hook(repo)
    assert (code, said) == cold[:2] and "yaml" in names
    assert entry.read_bytes() == good  # written again, whole
    for broken in (b"", good[:40], b"tools-config/1\n" + b"0" * 64 + b"\n{}"):
        entry.write_bytes(broken)
        assert _hook(repo)[:2] == cold[:2]
    assert config_cache.get(_folder(repo), entry.name) is not None


def test_an_entry_in_the_judged_tree_is_never_read(repo: Repo) -> None:
    _adopted(repo, message=NO_BODY)
    name = config_cache.key(CONFIG.encode())
    forged = {"style": {"require_body": False}}
    # Well-formed entries, checksums and all, wherever a judged tree could carry one.
    for place in (".git-tools", "tools", ".agents/tools"):
        config_cache.put(repo.path / place / "cache" / "config", name, forged)
        assert config_cache.get(repo.path / place / "cache" / "config", name) == forged
    code, said, _ = _hook(repo)
    assert code == 1 and "body-missing" in said


def test_no_cache_writes_nothing(repo: Repo) -> None:
    _adopted(repo, message=NO_BODY)
    assert _hook(repo, env={"TOOLS_NO_CACHE": "1"})[0] == 1
    assert _hook(repo, "--no-cache", env={"TOOLS_NO_CACHE": ""})[0] == 1
    assert repo.tools("--no-cache", "style", "check").exit_code == 0
    assert repo.tools("--no-cache", "config", "validate").exit_code == 0
    assert repo.tools("config", "show", "--no-cache").exit_code == 0
    assert not _folder(repo).exists()
    code, _, names = _hook(repo, env={"TOOLS_NO_CACHE": "1"})
    assert code == 1 and "yaml" in names  # read and validated every time


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (CONFIG + "style: {subject_max: many}\n", "style.subject_max"),
        (CONFIG + "bogus: 1\n", "bogus"),
        ("trailers: [\n", ".agents/protocol.yaml:"),
    ],
)
def test_an_invalid_config_is_reported_alike_cold_and_warm(
    repo: Repo, bad: str, where: str
) -> None:
    _adopted(repo)
    assert _hook(repo)[0] == 0  # the valid config is kept
    repo.write(".agents/protocol.yaml", bad)
    repo.git("add", ".agents")
    first = _hook(repo)
    assert first[0] == 2 and first[1].startswith("error: ") and where in first[1]
    assert ".agents/protocol.yaml" in first[1] and len(first[1].splitlines()) == 1
    assert not _entry(repo, bad).exists()  # never kept
    assert _hook(repo)[:2] == first[:2]
    assert _hook(repo, env={"TOOLS_NO_CACHE": "1"})[:2] == first[:2]


def test_the_defaults_and_a_linked_worktree_share_the_one_cache(repo: Repo, tmp_path: Path) -> None:
    _adopted(repo)
    repo.commit("Adopt\n\nBody.\n")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    (linked / "MSG").write_text(GOOD)
    before = set(_folder(repo).iterdir()) if _folder(repo).exists() else set()
    assert _hook(Repo(linked, init=False))[0] == 0
    after = set(_folder(repo).iterdir())
    assert _entry(repo, CONFIG) in after - before
    assert _folder(repo) / config_cache.key(None) in after
    assert not (linked / ".git").is_dir()


def test_entries_are_bounded(tmp_path: Path) -> None:
    cache = tmp_path / "config"
    for n in range(config_cache.MAX_ENTRIES + 5):
        config_cache.put(cache, config_cache.key(str(n).encode()), {"n": n})
    kept = sorted(cache.iterdir())
    assert len(kept) == config_cache.MAX_ENTRIES
    assert all(config_cache.get(cache, path.name) is not None for path in kept)
    # A value JSON would not give back as it was is not kept.
    config_cache.put(cache, "x" * 64, {"when": {1: "one"}})
    assert not (cache / ("x" * 64)).exists()


def test_the_discovery_answers_the_staged_probe_as_the_batch_does(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.git import Git

    path = ".agents/protocol.yaml"
    repo.commit("Start\n\nBody.\n", {"README.md": "x\n"})
    assert Git(repo.path, staged_probe=path).staged_id(path) is None
    repo.write(path, CONFIG)
    repo.git("add", path)
    staged = repo.git("rev-parse", f":{path}").strip()
    assert Git(repo.path, staged_probe=path).staged_id(path) == staged
    assert Git(repo.path).staged_id(path) == staged  # asked of the batch
    # The index git commits from (`commit -a`'s own) is the one asked.
    other = repo.path / ".git" / "other-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(other)}
    subprocess.run(["git", "read-tree", "--empty"], cwd=repo.path, env=env, check=True)
    monkeypatch.setenv("GIT_INDEX_FILE", str(other))
    assert Git(repo.path, staged_probe=path).staged_id(path) is None
    assert Git(repo.path).staged_id(path) is None
