"""`--config-from base` and the `protocol` pseudo-gate (SPEC §10): a pull request cannot
relax the gates that judge it, and what it changes in the config or a baseline is reported."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo, run_cli
from tools.ledger import canonical_json, make_record

CFG = ".agents/protocol.yaml"
IDX = ".agents/issue-index.md"
LED = ".agents/ledger.jsonl"
BASELINE = ".agents/baselines/device-leakage.json"
HEADER = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
ROWS = "| #1 | F1 | One | foundation |\n| #2 | — | Two | bug |\n"
CONFIG = "base: main\npreflight:\n  gates: [index, ledger, ratchet]\n"
LEAKY = "int f() { return at::kCUDA; }\n"


def ledger_text(*numbers: int) -> bytes:
    records = [
        make_record("attribution", {"n": n}, created=f"2026-01-01T00:00:{n:02d}Z") for n in numbers
    ]
    return b"".join(canonical_json(r) + b"\n" for r in records)


def baseline(kcuda: int) -> str:
    buckets = {"kcuda": kcuda, "is_cuda": 0, "cuda_include": 0, "vt_macro": 0}
    return json.dumps({"ratchet": "device-leakage", "buckets": buckets}, indent=2) + "\n"


def start(repo: Repo) -> str:
    """main: a config, an index, a ledger and a tight ratchet baseline; ``pr`` checked out."""
    repo.commit(
        "Start\n\nBody.\n",
        {
            CFG: CONFIG,
            IDX: HEADER + ROWS,
            LED: ledger_text(1, 2),
            "src/a.cc": LEAKY,
            BASELINE: baseline(1),
        },
    )
    repo.branch("pr")
    return repo.head()


def preflight(repo: Repo, *args: str):
    return repo.tools("--format", "json", "preflight", "--base", "main", *args)


def gate_rules(run) -> dict[str, list[str]]:
    return {
        g["gate"]: sorted(f["rule"] for f in g["findings"] if f["rule"] != "range-empty")
        for g in run.json()["gates"]
    }


def test_moving_the_ledger_and_index_paths_is_judged_by_the_base_config(repo: Repo) -> None:
    start(repo)
    # The pull request drops a row and a record, and points the config at edited copies.
    repo.commit(
        "Move the files\n\nBody.\n",
        {
            ".agents/other-index.md": HEADER + "| #2 | — | Two | bug |\n",
            ".agents/other-ledger.jsonl": ledger_text(2),
            CFG: CONFIG + "index: {path: .agents/other-index.md}\n"
            "ledger: {path: .agents/other-ledger.jsonl}\n",
        },
    )
    head_run = preflight(repo)
    assert gate_rules(head_run)["index"] == [] and gate_rules(head_run)["ledger"] == []
    assert head_run.json()["gates"][-1]["gate"] == "protocol"
    assert head_run.exit_code == 0  # judged by its own config, the change passes: the hole
    repo.write(IDX, HEADER + "| #2 | — | Two | bug |\n")
    repo.write(LED, ledger_text(2))
    repo.commit("Edit the old files too\n\nBody.\n")
    run = preflight(repo, "--config-from", "base")
    assert run.exit_code == 1
    got = gate_rules(run)
    assert got["index"] == ["row-removed"]
    assert got["ledger"] == ["ledger-record-removed"]
    assert got["protocol"] == ["protocol-changed", "protocol-changed"]
    messages = [f["message"] for f in run.json()["gates"][-1]["findings"]]
    assert any(m.startswith('index.path: ".agents/issue-index.md" → ') for m in messages)
    assert any(m.startswith("ledger.path: ") for m in messages)


def test_narrowing_preflight_gates_is_refused_under_base(repo: Repo) -> None:
    start(repo)
    repo.commit(
        "Narrow\n\nBody.\n",
        {IDX: HEADER + "| #2 | — | Two | bug |\n", CFG: "base: main\npreflight:\n  gates: [now]\n"},
    )
    assert "index" not in gate_rules(preflight(repo))
    run = preflight(repo, "--config-from", "base")
    assert run.exit_code == 1
    got = gate_rules(run)
    assert got["index"] == ["row-removed"]
    assert got["protocol"] == ["protocol-changed"]
    message = run.json()["gates"][-1]["findings"][0]["message"]
    assert message.startswith('preflight.gates: ["index", "ledger", "ratchet"] → ["now"]')


def test_empty_ratchets_are_refused_under_base(repo: Repo) -> None:
    start(repo)
    repo.commit(
        "Drop the ratchets\n\nBody.\n",
        {"src/b.cc": LEAKY, CFG: CONFIG + "ratchets: {}\n"},
    )
    head_run = preflight(repo)
    assert head_run.exit_code == 0 and gate_rules(head_run)["ratchet"] == ["ratchet-absent"]
    run = preflight(repo, "--config-from", "base")
    assert run.exit_code == 1
    assert gate_rules(run)["ratchet"] == ["ratchet-regression"]


def test_raising_its_own_baseline_is_refused(repo: Repo) -> None:
    start(repo)
    repo.commit("Add a site\n\nBody.\n", {"src/b.cc": LEAKY, BASELINE: baseline(2)})
    head_run = preflight(repo, "--gate", "ratchet")
    # Judged by its own baseline the ratchet passes; the protocol gate still refuses it.
    assert gate_rules(head_run)["ratchet"] == []
    assert gate_rules(head_run)["protocol"] == ["baseline-raised"]
    assert head_run.exit_code == 1
    run = preflight(repo, "--gate", "ratchet", "--config-from", "base")
    assert run.exit_code == 1
    got = gate_rules(run)
    assert got["ratchet"] == ["ratchet-regression"] and got["protocol"] == ["baseline-raised"]
    raised = run.json()["gates"][-1]["findings"][0]
    assert raised["path"] == BASELINE and "from 1 to 2" in raised["message"]
    # The single-gate command judges the same way, and so does the environment variable.
    ratchet = repo.tools("--config-from", "base", "ratchet", "check", "--base", "main")
    assert ratchet.exit_code == 1 and "ratchet-regression" in ratchet.stdout


def test_a_lowered_baseline_and_an_unchanged_config_are_quiet(repo: Repo) -> None:
    start(repo)
    repo.commit("Fix the site\n\nBody.\n", {"src/a.cc": "int f();\n", BASELINE: baseline(0)})
    run = preflight(repo, "--config-from", "base")
    assert run.exit_code == 0, run.stdout
    assert "protocol" not in gate_rules(run)
    assert gate_rules(run)["ratchet"] == []


def test_environment_selects_the_base_config(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    start(repo)
    repo.commit("Narrow\n\nBody.\n", {IDX: HEADER + ROWS[:30] + "\n", CFG: "base: main\n"})
    monkeypatch.setenv("TOOLS_CONFIG_FROM", "base")
    run = repo.tools("--format", "json", "index", "check", "--base", "main")
    assert run.exit_code == 1 and "row-removed" in run.stdout
    monkeypatch.setenv("TOOLS_CONFIG_FROM", "neither")
    bad = repo.tools("index", "check", "--base", "main")
    assert bad.exit_code == 2 and "--config-from 'neither'" in bad.stderr


def test_base_needs_a_named_base_and_refuses_config(repo: Repo) -> None:
    start(repo)
    no_base = repo.tools("--config-from", "base", "preflight")
    assert no_base.exit_code == 2 and "needs --base" in no_base.stderr
    both = repo.tools("preflight", "--config-from", "base", "--base", "main", "--config", CFG)
    assert both.exit_code == 2 and "--config cannot be combined" in both.stderr


def test_staged_under_base_reads_heads_config(repo: Repo) -> None:
    start(repo)
    repo.write(IDX, HEADER + "| #2 | — | Two | bug |\n")
    repo.write(CFG, "base: main\nindex: {path: .agents/elsewhere.md}\n")
    repo.git("add", "-A")
    staged = repo.tools("--format", "json", "index", "check", "--staged")
    assert staged.exit_code == 0
    run = repo.tools("--format", "json", "index", "check", "--staged", "--config-from", "base")
    assert run.exit_code == 1 and "row-removed" in run.stdout


def test_an_unloadable_head_config_is_reported_under_base(repo: Repo) -> None:
    start(repo)
    repo.commit("Break\n\nBody.\n", {CFG: "base: main\nunknown_key: 1\n"})
    assert preflight(repo).exit_code == 2  # judged by itself, the config does not load
    run = preflight(repo, "--config-from", "base")
    assert gate_rules(run)["protocol"] == ["protocol-changed"]
    assert "no longer loads" in run.json()["gates"][-1]["findings"][0]["message"]


def _validator_loaded(repo: Repo, *args: str) -> tuple[int, bool]:
    """Exit code of the real CLI in a fresh process, and whether it imported jsonschema."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tools", "--repo", str(repo.path), *args],
        capture_output=True,
        text=True,
    )
    return proc.returncode, "jsonschema" in proc.stderr


def test_an_unchanged_config_once_validated_skips_the_validator_in_a_range(repo: Repo) -> None:
    start(repo)
    repo.commit("Touch\n\nBody.\n", {"src/b.txt": "x\n"})
    # The first run validates the config and remembers it; the range's base and head hold
    # the same bytes, so the protocol pseudo-gate needs no validator either.
    assert _validator_loaded(repo, "style", "check", "--base", "main") == (0, True)
    assert _validator_loaded(repo, "style", "check", "--base", "main") == (0, False)


def test_a_changed_config_in_the_range_is_validated_and_not_remembered(repo: Repo) -> None:
    start(repo)
    repo.commit("Loosen\n\nBody.\n", {CFG: CONFIG + "now:\n  max_lines: 400\n"})
    assert _validator_loaded(repo, "config", "validate")[0] == 0
    from tools import config_cache

    folder = repo.path / ".git/tools/cache/config"
    cache = folder / config_cache.key((CONFIG + "now:\n  max_lines: 400\n").encode())
    before = cache.read_bytes(), cache.stat().st_ino, cache.stat().st_mtime_ns
    code, loaded = _validator_loaded(repo, "style", "check", "--base", "main")
    assert (code, loaded) == (0, True)  # the base's config differs: it is validated
    # ... and not kept; the head's entry stays as it was.
    assert not (folder / config_cache.key(CONFIG.encode())).exists()
    assert (cache.read_bytes(), cache.stat().st_ino, cache.stat().st_mtime_ns) == before
    assert _validator_loaded(repo, "config", "validate") == (0, False)


# -- a base without a protocol: the range introduces it (SPEC §9.3) ----------------------------


def adoption_pull_request(make_repo: Callable[..., Repo], tmp_path: Path) -> tuple[Repo, str]:
    """A repository without a protocol whose `adopt` branch runs `tools init --adopt` (a
    broken link recorded as debt) in a commit of the repository's own kind, checked out as
    GitHub's workflow sees the pull request: a full clone, HEAD at the synthetic merge of the
    branch into main. Returns (clone, branch tip)."""
    origin = make_repo("origin")
    origin.commit("Start the docs\n\nBody.\n", {"docs/a.md": "# A\n\n[x](gone.md)\n"})
    origin.commit("Add f\n\nBecause.\n", {"f.txt": "f\n"})
    origin.branch("adopt")
    adopted = origin.tools("init", "--adopt")
    assert adopted.exit_code == 0, adopted.stdout + adopted.stderr
    tip = origin.commit("Adopt the gates\n\nThe protocol and today's debt.\n")
    origin.checkout("main")
    base = origin.commit("Main moves\n\nBody.\n", {"g.txt": "g\n"})
    clone = origin.clone(tmp_path / "checkout")
    clone.git("checkout", "-q", "--detach", "origin/main")
    clone.git("merge", "-q", "--no-ff", "--no-verify", "-m", f"Merge {tip} into {base}", tip)
    return clone, tip


def documented_ci_commands() -> list[list[str]]:
    """The `tools` commands of the adopters' workflow in docs/ci.md, as its steps run them."""
    import yaml

    from tests.test_integrations import docs_yaml, steps_of, tools_commands

    found = []
    for block in docs_yaml():
        data = yaml.safe_load(block)
        steps = data if isinstance(data, list) else steps_of(data) if "jobs" in data else []
        for step, command in tools_commands(steps):
            env = {f"${k}": v for k, v in step.get("env", {}).items()}
            found.append([_github(word, env) for word in command])
    assert len(found) >= 2  # the gate step and its SARIF twin
    return found


def _github(word: str, env: dict[str, str]) -> str:
    for var, expr in env.items():
        word = word.replace(var, expr)
    return word


def test_the_adoption_pull_request_passes_the_documented_ci(
    make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    clone, tip = adoption_pull_request(make_repo, tmp_path)
    github = {"${{ github.base_ref }}": "main", "${{ github.event.pull_request.head.sha }}": tip}
    for command in documented_ci_commands():
        args = [_github(word, github) for word in command]
        assert "--config-from" in args and "--require-protocol" in args
        run = run_cli(args, cwd=clone.path)
        assert run.exit_code == 0, (args, run.stdout, run.stderr)
        assert "::error" not in run.stdout
    # What the reviewer reads: the protocol and the debt it introduces, as warnings.
    run = run_cli(
        ["preflight", "--config-from", "base", "--base", "origin/main", "--head", tip,
         "--format", "json"],
        cwd=clone.path,
    )  # fmt: skip
    assert run.exit_code == 0, run.stdout
    protocol = next(g for g in run.json()["gates"] if g["gate"] == "protocol")
    found = [(f["rule"], f["severity"]) for f in protocol["findings"]]
    assert found == [("protocol-introduced", "warning"), ("baseline-introduced", "warning")]
    introduced, debt = (f["message"] for f in protocol["findings"])
    assert introduced.startswith(f"the range introduces {CFG} (the merge base has none): it sets ")
    # The keys it sets to other than their defaults (those set to a default are not news).
    assert "trailers.marker" in introduced and "base" in introduced
    assert "with 1 entry (links/link-broken 1)" in debt
    links = next(g for g in run.json()["gates"] if g["gate"] == "links")
    assert [(f["severity"], f["baseline_state"]) for f in links["findings"]] == [
        ("warning", "unchanged")
    ]


def test_a_base_without_a_protocol_judges_by_the_heads(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {IDX: HEADER + ROWS})
    repo.branch("pr")
    repo.commit("Adopt\n\nBody.\n", {CFG: "base: main\npreflight:\n  gates: [index]\n"})
    run = preflight(repo, "--config-from", "base")
    assert run.exit_code == 0, run.stdout
    # Only the head's gate ran (the defaults would run every gate), and the range adopts it.
    assert [g["gate"] for g in run.json()["gates"]] == ["index", "protocol"]
    assert gate_rules(run)["protocol"] == ["protocol-introduced"]
    message = run.json()["gates"][-1]["findings"][0]["message"]
    assert message.endswith("it sets base, preflight.gates; it judges this range and what follows")
    # With a base that has a protocol, the base's still judges (SPEC §10).
    repo.checkout("main")
    repo.commit("Adopt on main\n\nBody.\n", {CFG: CONFIG})
    repo.checkout("pr")
    repo.git("merge", "-q", "--no-edit", "-X", "theirs", "main")
    repo.commit("Narrow\n\nBody.\n", {CFG: "base: main\npreflight:\n  gates: [now]\n"})
    narrowed = preflight(repo, "--config-from", "base")
    assert "index" in gate_rules(narrowed) and "protocol-introduced" not in narrowed.stdout
