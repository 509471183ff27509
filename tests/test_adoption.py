"""``tools init --adopt`` on a few hundred commits of realistic agent history (SPEC §9.2): the
conventions detected with their evidence, today's tree green, the debt printed per rule, the
next violation of each kind red, and a fixed debt item that keeps its entry ``baseline-stale``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.adoption_history import MARKER, PLAIN, build
from tests.conftest import Repo

ADOPTION_MESSAGE = f"""Adopt the protocol gates

Today's findings are recorded as debt; the next violation is refused.

{MARKER}
Following-Agents-Protocol: true
AI-Assisted: true
Assisted-by: {PLAIN}
"""


def _message(subject: str, *, marker: bool = True, assisted: str = PLAIN) -> str:
    if not marker:
        return f"{subject}\n\nBody.\n\nFollowing-Agents-Protocol: true\nAI-Assisted: true\n"
    return (
        f"{subject}\n\nBody.\n\n{MARKER}\nFollowing-Agents-Protocol: true\nAI-Assisted: true\n"
        f"Assisted-by: {assisted}\n"
    )


@pytest.fixture
def history(tmp_path: Path) -> Repo:
    return Repo(build(tmp_path / "engine", 300), init=False)


@pytest.fixture
def adopted(history: Repo) -> Repo:
    """The history adopted and the adoption committed on main (through the installed hooks)."""
    run = history.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    history.git("add", "-A")
    history.git("commit", "-q", "-F", "-", input=ADOPTION_MESSAGE.encode())
    return history


def _gate(report: dict, name: str) -> dict:
    return next(g for g in report["gates"] if g["gate"] == name)


def test_adopt_detects_the_conventions_with_their_evidence(history: Repo) -> None:
    assert int(history.git("rev-list", "--count", "HEAD")) > 300
    run = history.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    out = run.stdout
    # One in five commits of the fixture keeps the marker a paragraph of its own.
    assert "160 of 200 commits glue the marker to their trailers → marker_placement: line" in out
    assert f"carry the line {MARKER} → marker: {MARKER}" in out
    assert "assisted_by_format: that shape" in out
    assert "Claude Code:claude-opus-4-8 [ClaudeCode]" in out
    cfg = yaml.safe_load(history.read(".agents/protocol.yaml"))
    trailers = cfg["trailers"]
    assert trailers["marker"] == MARKER
    assert trailers["marker_placement"] == "line"
    assert trailers["required"] == {
        "AI-Assisted": ["true", "false"],
        "Following-Agents-Protocol": ["true"],
    }
    assert cfg["base"] == "main"
    baseline = json.loads(history.read(".agents/baselines/device-leakage.json"))
    assert baseline["buckets"]["is_cuda"] > 0 and baseline["buckets"]["kcuda"] > 0
    assert "debt: 8 finding(s) recorded as debt (anchor-missing 1, link-broken 7)" in out


def test_after_adoption_preflight_is_green_and_prints_the_debt(history: Repo) -> None:
    assert history.tools("preflight").exit_code == 1  # the history's own findings, before
    assert history.tools("init", "--adopt").exit_code == 0
    run = history.tools("preflight")
    assert run.exit_code == 0, run.stdout
    assert "All gates green." in run.stdout
    assert "ok   baseline (debt: 8 — anchor-missing 1, link-broken 7)" in run.stdout
    assert "debt: '#installing'" in run.stdout
    report = history.tools("preflight", "--format", "json").json()
    links = _gate(report, "links")
    assert links["status"] == "pass"
    assert {f["baseline_state"] for f in links["findings"]} == {"unchanged"}
    assert {f["severity"] for f in links["findings"]} == {"warning"}
    for gate in report["gates"]:
        assert gate["status"] == "pass", gate


def test_adoption_commits_through_the_hooks_and_stays_green(adopted: Repo) -> None:
    run = adopted.tools("preflight", "--require-commits")
    # The branch is main itself: nothing of its own to judge, which --require-commits refuses.
    assert run.exit_code == 1
    run = adopted.tools("preflight")
    assert run.exit_code == 0, run.stdout
    assert "protocol-changed" not in run.stdout


@pytest.mark.parametrize(
    ("kind", "gate", "rule"),
    [
        ("marker", "trailers", "marker-missing"),
        ("assisted-by", "trailers", "assisted-by-format"),
        ("ratchet", "ratchet", "ratchet-regression"),
        ("link", "links", "link-broken"),
        ("anchor", "links", "anchor-missing"),
        ("conflict", "conflicts", "conflict-marker"),
    ],
)
def test_a_new_violation_of_each_kind_fails(adopted: Repo, kind: str, gate: str, rule: str) -> None:
    adopted.branch(f"agent/{kind}")
    files: dict[str, str] = {}
    message = _message("Extend the engine's notes")
    if kind == "marker":
        message = _message("Extend the engine's notes", marker=False)
    elif kind == "assisted-by":
        message = _message("Extend the engine's notes", assisted="someone helped")
    elif kind == "ratchet":
        engine = adopted.read("src/core/engine_1.cc").decode()
        files["src/core/engine_1.cc"] = (
            engine + "bool gpu(const Tensor& t) { return t.is_cuda(); }\n"
        )
    elif kind == "link":
        files["docs/new.md"] = "# New\n\nSee [the plan](plan-that-is-not-there.md).\n"
    elif kind == "anchor":
        files["docs/new.md"] = "# New\n\nSee [running](guide.md#runing).\n"
    elif kind == "conflict":
        files["docs/new.md"] = "# New\n\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> side\n"
    if not files:
        files["docs/new.md"] = "# New\n\nSee [the guide](guide.md#running).\n"
    adopted.commit(message, files)
    run = adopted.tools("preflight", "--format", "json")
    assert run.exit_code == 1, run.stdout
    report = run.json()
    failing = _gate(report, gate)
    assert failing["status"] == "fail"
    fired = [
        f
        for f in failing["findings"]
        if f["rule"] == rule and f.get("baseline_state") != "unchanged"
    ]
    assert fired and all(f["severity"] == "error" for f in fired), failing
    failed = {g["gate"] for g in report["gates"] if g["status"] == "fail"}
    assert failed == {gate}
    # The recorded debt is still debt, beside the new finding.
    debt = [f for f in _gate(report, "links")["findings"] if f.get("baseline_state") == "unchanged"]
    assert len(debt) == 8


def test_fixing_a_debt_item_without_removing_its_entry_is_stale(adopted: Repo) -> None:
    guide = adopted.read("docs/guide.md").decode()
    adopted.write("docs/guide.md", guide.replace("(#installing)", "(#install)"))
    run = adopted.tools("preflight")
    assert run.exit_code == 1
    assert "FAIL baseline" in run.stdout
    assert "error[baseline-stale] .agents/baselines/findings.json:" in run.stdout
    assert "links/anchor-missing in docs/guide.md no longer fires" in run.stdout
    wrote = adopted.tools("baseline", "write")
    assert wrote.exit_code == 0
    assert "removed links/anchor-missing docs/guide.md" in wrote.stdout
    assert "7 entries (0 added, 1 removed)" in wrote.stdout
    run = adopted.tools("preflight")
    assert run.exit_code == 0, run.stdout
    assert "ok   baseline (debt: 7 — link-broken 7)" in run.stdout


def test_debt_keeps_its_identity_when_lines_move(adopted: Repo) -> None:
    guide = adopted.read("docs/guide.md").decode()
    adopted.write(
        "docs/guide.md",
        "<!-- moved -->\n\n\n" + guide.replace("## Running", "## Running\n\nMore.\n"),
    )
    run = adopted.tools("preflight", "--format", "json")
    assert run.exit_code == 0, run.stdout
    links = _gate(run.json(), "links")
    assert [f["line"] for f in links["findings"] if f["path"] == "docs/guide.md"] == [
        8,
        15,
    ]  # 5 and 9 before
    assert {f["baseline_state"] for f in links["findings"]} == {"unchanged"}


def test_adopt_is_idempotent_and_never_overwrites_without_force(history: Repo) -> None:
    assert history.tools("init", "--adopt").exit_code == 0
    before = {
        p: history.read(p) for p in (".agents/protocol.yaml", ".agents/baselines/findings.json")
    }
    again = history.tools("init", "--adopt")
    assert again.exit_code == 0, again.stdout
    written = again.stdout.split("detected:")[0].splitlines()
    verbs = [line.split()[0] for line in written]
    assert verbs and set(verbs) <= {"unchanged", "exists"}, again.stdout
    assert {p: history.read(p) for p in before} == before
    # A new finding changes what adoption would record: kept without --force (exit 1).
    history.write("docs/extra.md", "# Extra\n\n[gone](gone.md)\n")
    kept = history.tools("init", "--adopt")
    assert kept.exit_code == 1
    assert "kept (differs; --force to overwrite)  .agents/baselines/findings.json" in kept.stdout
    assert (
        history.read(".agents/baselines/findings.json") == before[".agents/baselines/findings.json"]
    )
    forced = history.tools("init", "--adopt", "--force")
    assert forced.exit_code == 0
    assert "link-broken 8" in forced.stdout


def test_adopt_needs_history(make_repo) -> None:  # type: ignore[no-untyped-def]
    empty = make_repo("empty")
    run = empty.tools("init", "--adopt")
    assert run.exit_code == 2
    assert "no commits yet" in run.stderr
    assert not (empty.path / ".agents").exists()


def test_detection_without_marker_and_with_paragraph_markers(make_repo) -> None:  # type: ignore[no-untyped-def]
    plain = make_repo("plain")
    for i in range(12):
        plain.commit(f"Change {i}\n\nBody.\n", {f"f{i}.txt": "x\n"})
    run = plain.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "→ marker: null" in run.stdout
    assert yaml.safe_load(plain.read(".agents/protocol.yaml"))["trailers"]["marker"] is None
    assert plain.tools("preflight").exit_code == 0

    para = make_repo("para")
    for i in range(12):
        para.commit(
            f"Change {i}\n\nBody.\n\n{MARKER}\n\nFollowing-Agents-Protocol: true\n"
            f"AI-Assisted: true\nAssisted-by: {PLAIN}\n",
            {f"f{i}.txt": "x\n"},
        )
    run = para.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (
        "0 of 12 commits glue the marker to their trailers → marker_placement: paragraph"
        in run.stdout
    )
    assert "are ID:MODEL [TOOL] → assisted_by_format: null" in run.stdout
    trailers = yaml.safe_load(para.read(".agents/protocol.yaml"))["trailers"]
    assert trailers["marker_placement"] == "paragraph"
    assert "assisted_by_format" not in trailers
    # The next commit that glues its marker is refused by the config adoption wrote.
    para.commit(_message("Glue the marker"), {"g.txt": "y\n"})
    run = para.tools("preflight", "--base", "HEAD~1")
    assert run.exit_code == 1
    assert "marker-missing" in run.stdout


def test_a_green_hook_counts_the_debt_on_its_one_line(adopted: Repo) -> None:
    adopted.write("docs/more.md", "# More\n\nSee [the guide](guide.md#install).\n")
    adopted.git("add", "-A")
    # A real `git commit` through the installed hooks; git passes their output through.
    proc = subprocess.run(
        ["git", "commit", "-q", "-F", "-"],
        cwd=adopted.path,
        input=_message("Add notes that point at the install section").encode(),
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    shown = (proc.stdout + proc.stderr).decode()
    assert "8 findings of recorded debt (tools baseline show)" in shown
    assert "debt: '#installing'" not in shown


def test_pushes_to_a_bare_remote_pass_and_refuse_a_new_ratchet_site(
    adopted: Repo, tmp_path: Path
) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    adopted.git("remote", "add", "origin", str(remote))
    pushed = subprocess.run(
        ["git", "push", "-q", "origin", "main"], cwd=adopted.path, capture_output=True
    )
    assert pushed.returncode == 0, pushed.stderr
    # pre-push judges the pushed commits' trees with the range gates (links are pre-commit's
    # and CI's, docs/hooks.md): a new ratchet site, committed past the hooks, is refused.
    adopted.branch("agent/gpu")
    engine = adopted.read("src/core/engine_2.cc").decode()
    site = "bool gpu(const Tensor& t) { return t.is_cuda(); }\n"
    adopted.commit(_message("Check the device"), {"src/core/engine_2.cc": engine + site})
    refused = subprocess.run(
        ["git", "push", "-q", "origin", "agent/gpu"], cwd=adopted.path, capture_output=True
    )
    assert refused.returncode != 0
    shown = (refused.stdout + refused.stderr).decode()
    assert "error[ratchet-regression]" in shown and "src/core/engine_2.cc" in shown
