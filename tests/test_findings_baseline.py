"""The findings baseline (SPEC §3.3): debt matched by fingerprint, repeats counted, entries only
ever removed unless ``--add``, ``baseline-stale``, ``baseline-raised`` between base and head,
``--config-from base``, SARIF ``baselineState``, and bad files refused."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import Repo

CONFIG = "base: main\npreflight:\n  gates: [links, now]\nlinks:\n  paths: ['**/*.md']\n"
NOW = (
    "# NOW\n<!-- now-updated: 2026-01-01 -->\n\n## Live claims\n- none\n\n"
    "## Current gate\n- none\n\n## Next actions\n- none\n"
)
PATH = ".agents/baselines/findings.json"


@pytest.fixture
def debt_repo(repo: Repo) -> Repo:
    """Two identical broken links on two lines, one broken anchor, committed on main."""
    repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": CONFIG,
            ".agents/NOW.md": NOW,
            "docs/a.md": "# A\n\n[x](gone.md)\n\n[x](gone.md)\n\n[y](#nope)\n",
        },
    )
    return repo


def _links(run_json: dict) -> list[dict]:
    return next(g for g in run_json["gates"] if g["gate"] == "links")["findings"]


def test_write_creates_a_missing_baseline_and_records_the_findings(debt_repo: Repo) -> None:
    assert debt_repo.tools("preflight").exit_code == 1
    # No baseline yet: there is nothing to shrink from, so today's findings are recorded
    # (SPEC §3.3), with or without --add.
    run = debt_repo.tools("baseline", "write", "--format", "json")
    assert run.exit_code == 0
    out = json.loads(run.stdout)
    assert out["entries"] == 3 and out["written"] is True and len(out["added"]) == 3
    created = debt_repo.read(PATH)
    (debt_repo.path / PATH).unlink()
    run = debt_repo.tools("baseline", "write", "--add", "--format", "json")
    assert run.exit_code == 0 and json.loads(run.stdout)["entries"] == 3
    assert debt_repo.read(PATH) == created
    data = json.loads(debt_repo.read(PATH))
    assert data["schema"] == "tools.findings-baseline/1"
    # Identical findings on identical lines are told apart by their repeat count.
    assert len({e["fingerprint"] for e in data["findings"]}) == 3
    run = debt_repo.tools("preflight")
    assert run.exit_code == 0, run.stdout
    shown = debt_repo.tools("baseline", "show")
    assert shown.exit_code == 0
    assert (
        "3 entries in .agents/baselines/findings.json; per rule: anchor-missing 1, link-broken 2"
        in shown.stdout
    )


def test_one_more_repeat_is_new_and_a_fixed_one_is_stale(debt_repo: Repo) -> None:
    assert debt_repo.tools("baseline", "write", "--add").exit_code == 0
    text = debt_repo.read("docs/a.md").decode()
    debt_repo.write("docs/a.md", text + "\n[x](gone.md)\n")
    report = debt_repo.tools("preflight", "--format", "json").json()
    states = sorted((f["baseline_state"], f["severity"]) for f in _links(report))
    assert states == [
        ("new", "error"),
        ("unchanged", "warning"),
        ("unchanged", "warning"),
        ("unchanged", "warning"),
    ]
    assert report["status"] == "fail"
    # Two of the three copies fixed: one entry matches nothing any more.
    debt_repo.write("docs/a.md", "# A\n\n[x](gone.md)\n\n[y](#nope)\n")
    run = debt_repo.tools("preflight")
    assert run.exit_code == 1
    assert run.stdout.count("error[baseline-stale]") == 1
    # `write` removes it, and adds nothing without --add.
    debt_repo.write("docs/a.md", "# A\n\n[x](gone.md)\n\n[y](#nope)\n\n[z](also-gone.md)\n")
    run = debt_repo.tools("baseline", "write")
    assert "2 entries (0 added, 1 removed)" in run.stdout
    run = debt_repo.tools("preflight", "--format", "json")
    assert run.exit_code == 1
    new = [f for f in _links(run.json()) if f["baseline_state"] == "new"]
    assert [f["message"] for f in new] == ["'also-gone.md': docs/also-gone.md does not exist"]


def test_sarif_marks_baseline_state(debt_repo: Repo) -> None:
    debt_repo.tools("baseline", "write", "--add")
    debt_repo.write("docs/b.md", "# B\n\n[w](nowhere.md)\n")
    log = debt_repo.tools("preflight", "--format", "sarif").sarif()
    results = [r for r in log["runs"][0]["results"] if r["ruleId"].startswith("links/")]
    states = sorted(r["baselineState"] for r in results)
    assert states == ["new", "unchanged", "unchanged", "unchanged"]
    debt = [r for r in results if r["baselineState"] == "unchanged"]
    assert all(r["level"] == "warning" and r["message"]["text"].startswith("debt: ") for r in debt)


def test_no_baseline_leaves_findings_untouched(debt_repo: Repo) -> None:
    report = debt_repo.tools("preflight", "--format", "json").json()
    assert all("baseline_state" not in f for f in _links(report))
    assert "baseline" not in {g["gate"] for g in report["gates"]}


def test_a_rule_turned_off_leaves_its_entries_quiet(debt_repo: Repo) -> None:
    debt_repo.tools("baseline", "write", "--add")
    debt_repo.write(".agents/protocol.yaml", CONFIG + "rules:\n  anchor-missing: off\n")
    run = debt_repo.tools("preflight")
    assert run.exit_code == 0, run.stdout
    assert "baseline-stale" not in run.stdout


def test_a_range_that_grows_the_baseline_is_raised(debt_repo: Repo) -> None:
    debt_repo.tools("baseline", "write", "--add")
    debt_repo.commit("Record the debt\n\nBody.\n")
    debt_repo.branch("agent")
    debt_repo.write("docs/b.md", "# B\n\n[w](nowhere.md)\n")
    debt_repo.tools("baseline", "write", "--add")
    debt_repo.commit("Hide a new finding\n\nBody.\n")
    run = debt_repo.tools("preflight", "--base", "main")
    assert run.exit_code == 1
    assert "error[baseline-raised] .agents/baselines/findings.json:" in run.stdout
    assert "gains 1 entry (links/link-broken)" in run.stdout
    # Under --config-from base the merge base's baseline judges: the finding is no debt.
    report = debt_repo.tools(
        "preflight", "--base", "main", "--config-from", "base", "--format", "json"
    ).json()
    hidden = [f for f in _links(report) if "nowhere.md" in f["message"]]
    assert [(f["severity"], f["baseline_state"]) for f in hidden] == [("error", "new")]
    # Removing an entry is no raise.
    debt_repo.checkout("main")
    debt_repo.branch("shrink")
    debt_repo.write("docs/a.md", "# A\n\n[x](gone.md)\n\n[x](gone.md)\n\n[y](#a)\n")
    debt_repo.tools("baseline", "write")
    debt_repo.commit("Fix the anchor\n\nBody.\n")
    run = debt_repo.tools("preflight", "--base", "main")
    assert run.exit_code == 0, run.stdout


def test_a_range_that_creates_the_baseline_introduces_it(debt_repo: Repo) -> None:
    debt_repo.branch("adopt")
    assert debt_repo.tools("baseline", "write").exit_code == 0
    debt_repo.commit("Record the debt\n\nBody.\n")
    run = debt_repo.tools("preflight", "--base", "main", "--format", "json")
    assert run.exit_code == 0, run.stdout
    protocol = next(g for g in run.json()["gates"] if g["gate"] == "protocol")
    assert [(f["rule"], f["severity"], f["path"]) for f in protocol["findings"]] == [
        ("baseline-introduced", "warning", PATH)
    ]
    assert (
        "with 3 entries (links/anchor-missing 1, links/link-broken 2)"
        in (protocol["findings"][0]["message"])
    )
    # The base has a protocol: under --config-from base its (absent) baseline judges, and a
    # pull request cannot record its own findings as debt.
    strict = debt_repo.tools("preflight", "--base", "main", "--config-from", "base")
    assert strict.exit_code == 1 and "baseline-introduced" in strict.stdout


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{", "not JSON"),
        (
            b'{"schema": "tools.findings-baseline/1", "findings": [{"gate": "links"}]}',
            "findings[0]",
        ),
        (b'{"schema": "other", "findings": []}', "schema"),
        (b"[" * 200000, "nesting deeper than"),
    ],
    ids=["not-json", "bad-entry", "schema", "deep"],
)
def test_a_bad_baseline_is_one_error_line(debt_repo: Repo, content: bytes, said: str) -> None:
    debt_repo.write(PATH, content)
    for args in (["preflight"], ["baseline", "show"], ["baseline", "write"]):
        run = debt_repo.tools(*args)
        assert run.exit_code == 2, args
        assert PATH in run.stderr and said in run.stderr


def test_write_refuses_a_linked_baseline_and_a_gate_it_does_not_cover(
    debt_repo: Repo, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "outside.json"
    outside.write_text('{"schema": "tools.findings-baseline/1", "findings": []}\n')
    (debt_repo.path / ".agents/baselines").mkdir(parents=True)
    os.symlink(outside, debt_repo.path / PATH)
    run = debt_repo.tools("baseline", "write", "--add")
    assert run.exit_code == 2 and "symbolic link" in run.stderr
    assert outside.read_text().endswith("[]}\n")
    # Nor is it read through the link: preflight and show name it too.
    for args in (["preflight"], ["baseline", "show"]):
        run = debt_repo.tools(*args)
        assert run.exit_code == 2 and "symbolic link" in run.stderr, args
    os.unlink(debt_repo.path / PATH)
    run = debt_repo.tools("baseline", "write", "--gate", "conflicts")
    assert run.exit_code == 2 and "--gate 'conflicts'" in run.stderr


def test_write_with_gate_keeps_the_other_gates_entries(debt_repo: Repo) -> None:
    debt_repo.write(".agents/NOW.md", "no stamp\n")
    debt_repo.tools("baseline", "write", "--add")
    before = {e["rule"] for e in json.loads(debt_repo.read(PATH))["findings"]}
    assert "now-stamp" in before
    debt_repo.write("docs/a.md", "# A\n")
    run = debt_repo.tools("baseline", "write", "--gate", "links")
    assert "3 removed" in run.stdout
    after = {e["rule"] for e in json.loads(debt_repo.read(PATH))["findings"]}
    assert "now-stamp" in after and "link-broken" not in after


def test_ratchet_check_reads_the_baseline_of_the_tree_it_counts(repo: Repo) -> None:
    repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": "base: main\npreflight:\n  gates: [ratchet]\n",
            "src/a.cc": "auto d = at::kCUDA;  // DSR-ALLOW(#99)\n",
            # The marker's tag names no issue, so it exempts nothing: the site is counted.
            ".agents/baselines/device-leakage.json": '{"ratchet": "device-leakage", "buckets": '
            '{"kcuda": 1, "is_cuda": 0, "cuda_include": 0, "vt_macro": 0}}\n',
        },
    )
    assert repo.tools("ratchet", "check").exit_code == 1  # allow-tag-unknown: no issue #99
    assert repo.tools("baseline", "write", "--add").exit_code == 0
    repo.commit("Record the debt\n\nBody.\n")
    run = repo.tools("ratchet", "check", "--rev", "HEAD", "--format", "json")
    assert run.exit_code == 0, run.stdout
    found = next(g for g in run.json()["gates"] if g["gate"] == "ratchet")["findings"]
    assert [
        (f["rule"], f["baseline_state"]) for f in found if f["rule"] == "allow-tag-unknown"
    ] == [("allow-tag-unknown", "unchanged")]
    # The working tree's copy is gone; the counted commit's tree still holds it.
    (repo.path / PATH).unlink()
    assert repo.tools("ratchet", "check", "--rev", "HEAD").exit_code == 0
    assert repo.tools("ratchet", "check").exit_code == 1


def test_a_multi_line_fingerprint_covers_every_line_of_its_construct() -> None:
    from tools import findings_baseline as fb
    from tools.report import Finding

    table = b"<!-- open -->\n| arm | rc |\n| control | 1 |\n<!-- close -->\nafter\n"

    def fingerprint(content: bytes, *, end_line: int | None) -> str:
        finding = Finding("spec-evidence-unbacked", "error", "m", path="s.md", line=1)
        finding.end_line = end_line
        ((_, fp),) = fb.fingerprints("spec", [finding], lambda _p: content)
        return fp

    flipped = table.replace(b"| control | 1 |", b"| control | 0 |")
    moved = b"new line above\n" + table  # the construct moved: same identity
    # One line: the cell inside is not seen. The whole construct: it is.
    assert fingerprint(table, end_line=None) == fingerprint(flipped, end_line=None)
    assert fingerprint(table, end_line=4) != fingerprint(flipped, end_line=4)
    # Whitespace inside a line is normalised, as for one line; the line below is outside.
    spaced = table.replace(b"| arm | rc |", b"|  arm  |   rc |").replace(b"after", b"other")
    assert fingerprint(table, end_line=4) == fingerprint(spaced, end_line=4)
    # A construct of one line fingerprints as before (existing baselines keep matching).
    assert fingerprint(table, end_line=1) == fingerprint(table, end_line=None)
    finding = Finding("spec-evidence-unbacked", "error", "m", path="s.md", line=2)
    finding.end_line = 5
    ((_, at_two),) = fb.fingerprints("spec", [finding], lambda _p: moved)
    assert at_two == fingerprint(table, end_line=4)
