"""Config: schema validation errors are one `error:` line and exit 2; defaults and merging."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import Repo, run_cli
from tools import config as config_mod
from tools import schema as schema_mod
from tools import yaml_files


def _error(run) -> str:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in run.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("text", "key", "expect"),
    [
        ("bogus: 1\n", "bogus", "unknown key"),
        ("now:\n  max_line: 3\n", "now.max_line", "unknown key"),
        ("now:\n  max_lines: many\n", "now.max_lines", "integer"),
        ("style:\n  subject_pattern: '([a-z'\n", "style.subject_pattern", "regular expression"),
        ("index:\n  path: ../outside.md\n", "index.path", "inside the repository"),
        ("ledger:\n  path: /etc/ledger.jsonl\n", "ledger.path", "inside the repository"),
        ("links:\n  paths: ['../**/*.md']\n", "links.paths[0]", "inside the repository"),
        ("trailers:\n  merges: sometimes\n", "trailers.merges", "'check', 'skip'"),
        ("preflight:\n  gates: [conflicts, nope]\n", "preflight.gates[1]", "conflicts"),
        (
            "docs:\n  rules:\n    - {name: r, when_changed: ['a'], require_changed: ['b'],"
            " when_added_line: '(('}\n",
            "docs.rules[0].when_added_line",
            "regular expression",
        ),
        (
            "ratchets:\n  r:\n    kind: pattern\n    buckets: {b: 'x'}\n"
            "    allow_marker: 'ALLOW'\n",
            "ratchets.r.allow_marker",
            "(?P<tag>",
        ),
        ("- just\n- a list\n", "(top level)", "a mapping"),
        ("now: {max_lines: 1}\nnow: {max_lines: 2}\n", "protocol.yaml:2", "duplicate key"),
        ("now: [unclosed\n", "protocol.yaml", "invalid YAML"),
    ],
)
def test_bad_config_is_exit_2_naming_file_key_and_expectation(
    repo: Repo, text: str, key: str, expect: str
) -> None:
    repo.write(".agents/protocol.yaml", text)
    line = _error(repo.tools("now", "check"))
    assert ".agents/protocol.yaml" in line
    assert key in line
    assert expect in line


def test_config_validate_reports_the_same_error_and_ok(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: -1\n")
    line = _error(repo.tools("config", "validate"))
    assert "now.max_lines" in line
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: 5\n")
    run = repo.tools("config", "validate")
    assert run.exit_code == 0
    assert ".agents/protocol.yaml is valid" in run.stdout


def test_config_validate_named_file(repo: Repo, tmp_path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("style:\n  subject_max: 0\n")
    line = _error(run_cli(["config", "validate", str(bad)]))
    assert "style.subject_max" in line and str(bad) in line
    assert _error(run_cli(["config", "validate", str(tmp_path / "absent.yaml")]))


def test_explicit_config_that_does_not_exist_is_exit_2(repo: Repo) -> None:
    line = _error(repo.tools("--config", "nope.yaml", "now", "check"))
    assert "nope.yaml" in line


def test_not_a_git_repository_is_exit_2(tmp_path) -> None:
    line = _error(run_cli(["--repo", str(tmp_path), "conflicts", "check"]))
    assert "not a git repository" in line
    line = _error(run_cli(["conflicts", "check"], cwd=tmp_path))
    assert "not a git repository" in line


def test_no_config_means_defaults(repo: Repo) -> None:
    run = repo.tools("--format", "json", "config", "show")
    assert run.exit_code == 0
    shown = json.loads(run.stdout)
    assert shown == config_mod.defaults()
    assert shown["base"] == "origin/main"
    assert shown["trailers"]["required"]["AI-Assisted"] == ["true", "false"]


def test_merge_is_key_by_key_but_lists_required_and_ratchets_replace(repo: Repo) -> None:
    repo.write(
        ".agents/protocol.yaml",
        "now:\n  max_lines: 5\n"
        "trailers:\n  required: {Signed-off-by: [x]}\n"
        "preflight:\n  gates: [now]\n"
        "ratchets:\n  md:\n    kind: markdown\n    path: README.md\n",
    )
    shown = json.loads(repo.tools("--format", "json", "config", "show").stdout)
    assert shown["now"]["max_lines"] == 5
    assert shown["now"]["max_entry"] == 400  # sibling default kept
    assert shown["trailers"]["required"] == {"Signed-off-by": ["x"]}
    assert shown["trailers"]["marker"] == "FOLLOWING_AGENTS_PROTOCOL"
    assert shown["preflight"]["gates"] == ["now"]
    assert list(shown["ratchets"]) == ["md"]


def test_defaults_validate_against_the_schema() -> None:
    config_mod.validate(config_mod.defaults(), "defaults")


def test_schema_command_prints_the_shipped_schema() -> None:
    run = run_cli(["config", "schema"])
    assert run.exit_code == 0
    assert json.loads(run.stdout) == config_mod.schema()


def test_show_text_is_yaml(repo: Repo) -> None:
    run = repo.tools("config", "show")
    assert run.exit_code == 0
    assert "defaults only" in run.stdout
    assert "max_lines: 100" in run.stdout


@pytest.mark.parametrize("path", ["a/../../b", "..", "/abs", "C:/x", "a\\b", ""])
def test_paths_that_escape_are_refused(path: str) -> None:
    assert not config_mod.is_repo_relative(path)


@pytest.mark.parametrize("path", ["a", "a/b/../c", ".agents/x.md", "./a"])
def test_paths_inside_are_accepted(path: str) -> None:
    assert config_mod.is_repo_relative(path)


def test_load_yaml_refuses_a_duplicate_key() -> None:
    import yaml

    with pytest.raises(yaml.YAMLError, match="duplicate key 'a'"):
        yaml_files.load_yaml("a: 1\nb: 2\na: 3\n")
    assert yaml_files.load_yaml("a: 1\nb: {a: 2}\n") == {"a": 1, "b": {"a": 2}}


def test_validate_against_names_file_key_path_and_expectation() -> None:
    from tools.errors import UsageError

    case = {"name": 3, "batch": 1, "vocab": 1, "seed": 0, "p": 0.5}
    with pytest.raises(UsageError) as info:
        schema_mod.validate_against({"cases": [case]}, "topp-plan.schema.json", "p.yaml")
    assert info.value.where == "p.yaml: cases[0].name" and info.value.expected == "string"


def test_exact_integers_refuse_a_float_the_default_accepts() -> None:
    from tools.errors import UsageError

    evidence = {"schema": "tools.grid-tie/1", "top_n": 2.0, "max_divergent": 0, "prompts": []}
    schema_mod.validate_against(evidence, "grid-tie.schema.json", "e.json")
    with pytest.raises(UsageError, match=r"e\.json: top_n: wrong type \(float\)"):
        schema_mod.validate_against(evidence, "grid-tie.schema.json", "e.json", exact_integers=True)


def _fresh(repo: Repo, *args: str) -> tuple[int, set[str]]:
    """Exit code of the real CLI in a fresh process, and which of PyYAML and jsonschema it
    imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tools", "--repo", str(repo.path), *args],
        capture_output=True,
        text=True,
    )
    names = {line.rpartition("|")[2].strip() for line in proc.stderr.splitlines()}
    return proc.returncode, names & {"yaml", "jsonschema"}


def _entry(repo: Repo, raw: bytes | None):
    """The cache entry of the effective config of ``raw`` (None: no file)."""
    from tools import config_cache

    return repo.path / ".git/tools/cache/config" / config_cache.key(raw)


def test_an_unchanged_config_is_read_from_the_cache_without_yaml(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: 4\n")
    repo.write(
        ".agents/NOW.md",
        "# NOW\n<!-- now-updated: 2026-01-01 -->\n## Live claims\n## Current gate\n"
        "## Next actions\n",
    )
    code, loaded = _fresh(repo, "now", "check")
    assert loaded == {"yaml", "jsonschema"} and code == 1  # 5 lines > 4: the config holds
    # The second run reads the merged config the first one kept: the same verdict.
    assert _fresh(repo, "now", "check") == (1, set())
    entry = _entry(repo, b"now:\n  max_lines: 4\n")
    # A broken entry for the right bytes is no entry: the file is read and judged again.
    entry.write_bytes(entry.read_bytes()[:-3])
    assert _fresh(repo, "now", "check") == (1, {"yaml", "jsonschema"})
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: 5\n")
    assert _fresh(repo, "now", "check") == (0, {"yaml", "jsonschema"})
    assert _fresh(repo, "now", "check") == (0, set())


def test_the_defaults_alone_are_kept_too(repo: Repo) -> None:
    assert _fresh(repo, "config", "show")[1] == {"yaml"}  # the text format prints YAML
    assert _fresh(repo, "now", "check", "--format", "json")[1] == set()
    shown = repo.tools("config", "show", "--format", "json")
    assert json.loads(shown.stdout) == config_mod.defaults()


def test_a_range_from_a_base_without_config_reads_no_yaml_once_kept(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "x\n"})
    repo.branch("topic")
    repo.commit("Adopt\n\nBody.\n", {".agents/protocol.yaml": "base: main\n"})
    # The protocol pseudo-gate reads the base's config (none: the defaults) and the head's.
    code, loaded = _fresh(repo, "style", "check")
    assert code == 0 and "yaml" in loaded
    assert _fresh(repo, "style", "check") == (0, set())
    assert _entry(repo, None).is_file()


def test_validation_cache_never_hides_a_change(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: 5\n")
    assert repo.tools("config", "validate").exit_code == 0
    cache = _entry(repo, b"now:\n  max_lines: 5\n")
    assert cache.exists()  # kept in .git, never in the working tree
    assert repo.git("status", "--porcelain", "--untracked-files=all").strip() == (
        "?? .agents/protocol.yaml"
    )
    repo.write(".agents/protocol.yaml", "now:\n  max_lines: 0\n")
    line = _error(repo.tools("now", "check"))
    assert "now.max_lines" in line
    # A forged cache entry for the bad file is not a fingerprint of it: still judged.
    cache.write_text("0" * 64)
    assert repo.tools("now", "check").exit_code == 2
