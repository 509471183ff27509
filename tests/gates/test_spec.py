"""spec gate and ``tools spec render``: every rule fires and stays quiet, on real repositories."""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tests.test_evidence import (
    ATTRIBUTION_TABLE,
    CONTRACT_RUN_TABLE,
    PLAN,
    arm,
    attribution,
    reverted_arm,
    run_record,
)
from tools import ledger, markdown
from tools.gates.spec import citations

ROOT = Path(__file__).resolve().parents[2]
INDEX = """\
# Issue index

| Issue | Row | Title | Kind |
|---|---|---|---|
| #2 | F1 | Foundation | foundation |
| #3 | C1 | Commit gates | gate |
"""
SPEC = """\
# Thing

## 2. Owed

- #2 — the thing ([#3](https://example.com/3)).

## 6. Now

Where it stands.
"""
LEDGER = ".agents/ledger.jsonl"


def _ledger_text(*records: dict[str, Any]) -> str:
    return "".join(ledger.canonical_json(r).decode() + "\n" for r in records)


def _findings(run) -> list[dict[str, Any]]:
    return run.json()["gates"][0]["findings"]


def _rules(run) -> list[str]:
    return [f["rule"] for f in _findings(run)]


def _check(repo: Repo, *extra: str):
    return repo.tools("--format", "json", "spec", "check", *extra)


def _setup(repo: Repo, spec: str = SPEC, records: tuple[dict[str, Any], ...] = ()) -> None:
    files = {".agents/issue-index.md": INDEX, "specs/thing.md": spec}
    if records:
        files[LEDGER] = _ledger_text(*records)
    repo.commit("Add a spec\n\nBody.\n", files)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- sections -----------------------------------------------------------------------------------
def test_a_spec_with_owed_and_now_passes(repo: Repo) -> None:
    _setup(repo)
    run = _check(repo)
    assert run.exit_code == 0, run.stdout
    assert _rules(run) == []
    assert run.json()["gates"][0]["stats"] == {"specs": 1, "citations": 2, "blocks": 0}


def test_section_missing_fires_for_owed_and_now(repo: Repo) -> None:
    _setup(repo, "# Thing\n\n## Later\n")
    run = _check(repo)
    assert run.exit_code == 1
    assert _rules(run) == ["spec-section-missing", "spec-section-missing"]
    messages = [f["message"] for f in _findings(run)]
    assert "`Owed`" in messages[0] and "`Now`" in messages[1]
    assert _findings(run)[0]["path"] == "specs/thing.md"


def test_sections_numbered_setext_and_nested_specs_count(repo: Repo) -> None:
    _setup(repo, "Thing\n=====\n\nOwed\n----\n\n### 6. Now\n")
    repo.commit("More\n\nBody.\n", {"specs/deep/er.markdown": "## 1.2 Owed\n## 3 Now\n"})
    run = _check(repo)
    assert _rules(run) == [], run.stdout
    assert run.json()["gates"][0]["stats"]["specs"] == 2


def test_headings_inside_code_do_not_count(repo: Repo) -> None:
    _setup(repo, "# T\n\n## Owed\n\n```\n## Now\n```\n")
    assert _rules(_check(repo)) == ["spec-section-missing"]


def test_only_markdown_under_the_specs_dir_is_a_spec(repo: Repo) -> None:
    _setup(repo)
    repo.commit("More\n\nBody.\n", {"specs/plan.yaml": "arms: []\n", "docs/x.md": "# no\n"})
    assert _rules(_check(repo)) == []


def test_an_untracked_spec_is_judged_and_an_ignored_one_is_not(repo: Repo) -> None:
    _setup(repo)
    repo.write("specs/new.md", "# New\n")
    assert _rules(_check(repo)) == ["spec-section-missing", "spec-section-missing"]
    repo.write(".gitignore", "specs/new.md\n")
    assert _rules(_check(repo)) == []


# -- absent -------------------------------------------------------------------------------------
def test_absent_folder_is_an_info_pass(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "hi\n"})
    run = _check(repo)
    assert run.exit_code == 0
    (finding,) = _findings(run)
    assert (finding["rule"], finding["severity"]) == ("spec-absent", "info")
    assert "does not exist" in finding["message"]
    assert run.json()["gates"][0]["status"] == "pass"


def test_absent_is_quiet_when_specs_exist_and_follows_the_config(repo: Repo) -> None:
    _setup(repo)
    assert "spec-absent" not in _rules(_check(repo))
    repo.commit("Move\n\nBody.\n", {".agents/protocol.yaml": "specs: {dir: design}\n"})
    run = _check(repo)
    assert _rules(run) == ["spec-absent"]
    assert _findings(run)[0]["path"] == "design"
    repo.commit("Design\n\nBody.\n", {"design/a.md": "# A\n"})
    assert _rules(_check(repo)) == ["spec-section-missing", "spec-section-missing"]


def test_a_folder_without_markdown_is_absent_too(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"specs/plan.yaml": "x: 1\n"})
    run = _check(repo)
    assert _rules(run) == ["spec-absent"]
    assert "holds no markdown" in _findings(run)[0]["message"]


# -- Owed citations -----------------------------------------------------------------------------
def test_owed_unknown_fires_with_its_line(repo: Repo) -> None:
    _setup(repo, SPEC.replace("- #2 —", "- #2 and #7 —"))
    run = _check(repo)
    assert run.exit_code == 1
    (finding,) = _findings(run)
    assert finding["rule"] == "spec-owed-unknown"
    assert finding["line"] == 5
    assert (
        "#7" in finding["message"] and "not a row of .agents/issue-index.md" in finding["message"]
    )
    repo.write("specs/thing.md", SPEC.replace("- #2 —", "- #7, #7 and #2 —") + "\n- #7\n")
    (finding,) = _findings(_check(repo))  # one finding per unknown issue and spec
    assert "(2 citations, the first here)" in finding["message"]


def test_citations_in_code_spans_fences_and_outside_owed_are_not_judged(repo: Repo) -> None:
    spec = """\
# T

## Owed

- #2, and `#41` in a code span, ``a `#42` b`` too.
- see [the section](#6-now), &#35;43, o/r#44, x#45, #46abc.

```text
#47 in a fence
```

## 6. Now

- #48 cited outside Owed is not judged.
"""
    _setup(repo, spec)
    run = _check(repo)
    assert _rules(run) == [], run.stdout
    assert run.json()["gates"][0]["stats"]["citations"] == 1


def test_no_index_makes_every_citation_unknown(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"specs/thing.md": SPEC})
    run = _check(repo)
    assert _rules(run) == ["spec-owed-unknown", "spec-owed-unknown"]
    assert "no issue index" in _findings(run)[0]["message"]


def test_citations_parser() -> None:
    assert citations("#1, (#22) [#3](u) #4.") == [(1, 1), (22, 6), (3, 12), (4, 19)]
    prose = markdown.parse("`#1` #2abc #3-now #3-#4 a#5 ##6 \\#7 <!-- #8 -->").prose()[0]
    assert citations(prose) == [(3, 19), (4, 22)]


# -- evidence -----------------------------------------------------------------------------------
def _evidence_repo(repo: Repo) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A committed spec whose Now holds the rendered block of a run, ledger included."""
    control, b = arm("control"), reverted_arm()
    run = run_record([control, b])
    _setup(repo, records=(control, b, run))
    out = repo.tools("spec", "render", "specs/thing.md", "--id", run["id"])
    assert out.exit_code == 0, out.stderr
    repo.commit("Render\n\nBody.\n")
    return run, [control, b]


def test_a_rendered_block_is_backed(repo: Repo) -> None:
    run, _ = _evidence_repo(repo)
    text = repo.read("specs/thing.md").decode()
    assert f"<!-- tools:evidence id={run['id']} plan={PLAN} -->\n{CONTRACT_RUN_TABLE}" in text
    result = _check(repo)
    assert _rules(result) == [], result.stdout
    assert result.json()["gates"][0]["stats"]["blocks"] == 1


def test_a_table_edited_by_hand_is_unbacked(repo: Repo) -> None:
    _evidence_repo(repo)
    path = repo.path / "specs/thing.md"
    text = path.read_text()
    path.write_text(text.replace("| 0 | 1 | RED | yes |", "| 0 | 0 | GREEN | yes |"))
    run = _check(repo)
    assert run.exit_code == 1
    (finding,) = _findings(run)
    assert finding["rule"] == "spec-evidence-unbacked"
    assert "differs" in finding["message"] and "GREEN" in finding["message"]
    row = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("| B |"))
    marker = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("<!-- tools:"))
    assert finding["line"] == marker
    assert f"line {row} differs" in finding["message"]


def test_a_marker_naming_a_record_not_in_the_ledger_is_unbacked(repo: Repo) -> None:
    run, _ = _evidence_repo(repo)
    path = repo.path / "specs/thing.md"
    path.write_text(path.read_text().replace(run["id"], "e" * 64))
    (finding,) = _findings(_check(repo))
    assert finding["rule"] == "spec-evidence-unbacked"
    assert f"record {'e' * 12}… (plan {PLAN!r}) is not in the ledger" in finding["message"]


def test_a_missing_arm_record_is_unbacked(repo: Repo) -> None:
    run, (control, b) = _evidence_repo(repo)
    repo.write(LEDGER, _ledger_text(control, run))
    (finding,) = _findings(_check(repo))
    assert finding["rule"] == "spec-evidence-unbacked"
    assert f"arm record {b['id'][:12]}… is not in the ledger" in finding["message"]


def test_an_arm_filed_under_another_plan_is_found_by_a_second_pass(repo: Repo) -> None:
    control = arm("control", plan="elsewhere.yaml")
    run = run_record([control])
    _setup(repo, records=(run, control))
    assert repo.tools("spec", "render", "specs/thing.md", "--id", run["id"]).exit_code == 0
    assert _rules(_check(repo)) == []


def test_a_tampered_record_and_a_plan_mismatch_are_unbacked(repo: Repo) -> None:
    run, arms = _evidence_repo(repo)
    tampered = dict(run, base="f" * 40)
    repo.write(LEDGER, _ledger_text(*arms, tampered))
    (finding,) = _findings(_check(repo))
    assert "does not verify" in finding["message"]
    repo.write(LEDGER, _ledger_text(*arms, run))
    path = repo.path / "specs/thing.md"
    path.write_text(path.read_text().replace(f"plan={PLAN}", "plan=other.yaml"))
    (finding,) = _findings(_check(repo))
    assert finding["rule"] == "spec-evidence-unbacked"
    assert "the marker says plan 'other.yaml'" in finding["message"]


def test_a_marker_of_a_kind_without_table_is_unbacked(repo: Repo) -> None:
    golden = ledger.make_record("golden-capture", {"plan": "p"}, created="2026-01-01T00:00:00Z")
    spec = SPEC + f"\n<!-- tools:evidence id={golden['id']} plan=p -->\n<!-- /tools:evidence -->\n"
    _setup(repo, spec, records=(golden,))
    (finding,) = _findings(_check(repo))
    assert finding["rule"] == "spec-evidence-unbacked"
    assert "no evidence table for kind golden-capture" in finding["message"]


def test_malformed_markers_and_blocks_outside_now(repo: Repo) -> None:
    record = attribution()
    rid, plan = record["id"], record["plan"]
    block = (
        f"<!-- tools:evidence id={rid} plan={plan} -->\n"
        f"{ATTRIBUTION_TABLE}<!-- /tools:evidence -->\n"
    )
    outside = SPEC.replace("## 6. Now", block + "\n## 6. Now")
    _setup(repo, outside, records=(record,))
    run = _check(repo)
    assert _rules(run) == ["spec-evidence-malformed"]
    assert "outside the `Now` section" in _findings(run)[0]["message"]
    repo.write("specs/thing.md", SPEC + "\n" + block + "\n" + block)
    run = _check(repo)
    assert _rules(run) == ["spec-evidence-malformed"]
    assert "a second block" in _findings(run)[0]["message"]
    repo.write("specs/thing.md", SPEC + "\n" + block.replace("<!-- /tools:evidence -->\n", ""))
    run = _check(repo)
    assert _rules(run) == ["spec-evidence-malformed"]
    assert _findings(run)[0]["line"] == 11
    repo.write("specs/thing.md", SPEC + "\n" + block)
    assert _rules(_check(repo)) == []


def test_markers_in_a_fence_are_not_blocks_and_the_ledger_is_not_read(repo: Repo) -> None:
    spec = SPEC + f"\n```\n<!-- tools:evidence id={'a' * 64} plan=x -->\n```\n"
    _setup(repo, spec)
    repo.write(LEDGER, "garbage that is not a ledger\n")
    run = _check(repo)
    assert _rules(run) == []
    assert run.json()["gates"][0]["stats"]["blocks"] == 0


# -- --staged -----------------------------------------------------------------------------------
def test_staged_reads_specs_index_and_ledger_from_the_index(repo: Repo) -> None:
    run, arms = _evidence_repo(repo)
    spec = repo.path / "specs/thing.md"
    good = spec.read_text()
    # The working tree breaks everything; the index still holds the good state.
    spec.write_text(good.replace("| 0 | 1 | RED |", "| 0 | 0 | GREEN |").replace("#2", "#9"))
    repo.write(LEDGER, "")
    repo.write(".agents/issue-index.md", "")
    assert sorted(set(_rules(_check(repo)))) == ["spec-evidence-unbacked", "spec-owed-unknown"]
    assert _rules(_check(repo, "--staged")) == []
    # Stage the bad spec only: the staged spec is judged against the staged index and ledger.
    repo.git("add", "specs/thing.md")
    assert sorted(set(_rules(_check(repo, "--staged")))) == [
        "spec-evidence-unbacked",
        "spec-owed-unknown",
    ]
    repo.write("specs/thing.md", good)
    assert sorted(set(_rules(_check(repo, "--staged")))) == [
        "spec-evidence-unbacked",
        "spec-owed-unknown",
    ]
    repo.git("add", "specs/thing.md")
    assert _rules(_check(repo, "--staged")) == []
    # A spec that exists only in the working tree is not staged, so not judged.
    repo.write("specs/draft.md", "# no sections\n")
    assert _rules(_check(repo, "--staged")) == []
    repo.git("add", LEDGER)  # the emptied ledger, staged: now the block is unbacked
    assert _rules(_check(repo, "--staged")) == ["spec-evidence-unbacked"]
    assert arms and run


def test_staged_absent_folder(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "x\n"})
    repo.write("specs/a.md", "# A\n")
    assert _rules(_check(repo, "--staged")) == ["spec-absent"]


def test_preflight_runs_the_spec_gate(repo: Repo) -> None:
    _setup(repo, "# T\n")
    run = repo.tools("preflight", "--gate", "spec")
    assert run.exit_code == 1
    assert "FAIL spec" in run.stdout and "spec-section-missing" in run.stdout


# -- tools spec render --------------------------------------------------------------------------
def test_render_twice_changes_no_byte(repo: Repo) -> None:
    control, b = arm("control"), reverted_arm()
    run = run_record([control, b])
    _setup(repo, records=(control, b, run))
    spec = repo.path / "specs/thing.md"
    first = repo.tools("spec", "render", "specs/thing.md", "--id", run["id"][:10])
    assert first.exit_code == 0, first.stderr
    assert "rendered mutation-run" in first.stdout
    rendered = spec.read_bytes()
    stamp = spec.stat().st_mtime_ns
    time.sleep(0.01)
    second = repo.tools("spec", "render", "specs/thing.md", "--id", run["id"])
    assert second.exit_code == 0
    assert "unchanged" in second.stdout
    assert spec.read_bytes() == rendered
    assert spec.stat().st_mtime_ns == stamp  # not even rewritten


def test_render_replaces_a_plans_block_and_keeps_the_others(repo: Repo) -> None:
    control, b = arm("control"), reverted_arm()
    first = run_record([control, b])
    other = attribution()
    b2 = reverted_arm(run_rc=0, run_rcs=[0], verdict="GREEN")
    second = run_record([control, b2])
    _setup(repo, records=(control, b, first, other, b2, second))
    for rid in (first["id"], other["id"], second["id"]):
        out = repo.tools("spec", "render", "specs/thing.md", "--id", rid)
        assert out.exit_code == 0, out.stderr
    text = repo.read("specs/thing.md").decode()
    assert first["id"] not in text
    assert text.count("<!-- tools:evidence ") == 2
    assert text.index(second["id"]) < text.index(other["id"])
    assert ATTRIBUTION_TABLE in text
    assert _rules(_check(repo)) == []


def test_render_from_a_subdirectory_and_with_an_absolute_path(repo: Repo, cli) -> None:
    record = attribution()
    _setup(repo, records=(record,))
    out = cli(["spec", "render", "thing.md", "--id", record["id"]], cwd=repo.path / "specs")
    assert out.exit_code == 0, out.stderr
    again = repo.tools("spec", "render", str(repo.path / "specs/thing.md"), "--id", record["id"])
    assert "unchanged" in again.stdout


def _usage(run, *needles: str) -> None:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.startswith("error:")
    assert "internal error" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    for needle in needles:
        assert needle in run.stderr, run.stderr


def test_render_refusals_are_exit_2(repo: Repo, tmp_path: Path) -> None:
    record = attribution()
    golden = ledger.make_record("golden-capture", {"plan": "p"}, created="2026-01-01T00:00:00Z")
    _setup(repo, records=(record, golden))
    repo.write("specs/no-now.md", "# X\n\n## Owed\n")
    before = _sha(repo.path / "specs/thing.md")
    _usage(repo.tools("spec", "render", "specs/thing.md", "--id", "f" * 64), "no record")
    _usage(repo.tools("spec", "render", "specs/thing.md", "--id", "xyz"), "not a record id")
    _usage(
        repo.tools("spec", "render", "specs/no-now.md", "--id", record["id"]),
        "specs/no-now.md",
        "no `Now` section",
    )
    outside = tmp_path / "outside.md"
    outside.write_text(SPEC)
    _usage(repo.tools("spec", "render", str(outside), "--id", record["id"]), "outside")
    _usage(repo.tools("spec", "render", "../outside.md", "--id", record["id"]), "outside")
    _usage(repo.tools("spec", "render", "specs/none.md", "--id", record["id"]), "no such file")
    _usage(repo.tools("spec", "render", ".git/config", "--id", record["id"]), "not a spec file")
    _usage(
        repo.tools("spec", "render", "specs/thing.md", "--id", golden["id"]),
        "no evidence table for kind golden-capture",
    )
    assert _sha(repo.path / "specs/thing.md") == before
    assert outside.read_text() == SPEC


def test_render_refuses_an_arm_missing_and_a_tampered_record(repo: Repo) -> None:
    control = arm("control")
    run = run_record([control])
    tampered = dict(attribution(), verdict="ATTRIBUTED!")
    _setup(repo, records=(run, tampered))
    _usage(repo.tools("spec", "render", "specs/thing.md", "--id", run["id"]), "not in the ledger")
    _usage(
        repo.tools("spec", "render", "specs/thing.md", "--id", tampered["id"]), "does not verify"
    )


def test_render_refuses_an_ambiguous_prefix(repo: Repo) -> None:
    records = [attribution(reason=str(i)) for i in range(40)]
    _setup(repo, records=tuple(records))
    by_first = {}
    for r in records:
        by_first.setdefault(r["id"][0], []).append(r)
    prefix = next(k for k, v in by_first.items() if len(v) > 1)
    _usage(repo.tools("spec", "render", "specs/thing.md", "--id", prefix), "matches")


def test_render_notes_a_record_that_names_another_spec(repo: Repo) -> None:
    record = attribution(spec="specs/other.md")
    _setup(repo, records=(record,))
    out = repo.tools("spec", "render", "specs/thing.md", "--id", record["id"])
    assert out.exit_code == 0
    assert "names spec specs/other.md" in out.stderr


# -- this repository and hostile input ----------------------------------------------------------
def test_this_repositorys_specs_pass(make_repo) -> None:
    copy = make_repo("self")
    for rel in ("specs", ".agents/issue-index.md", ".agents/ledger.jsonl"):
        src = ROOT / rel
        if src.is_dir():
            shutil.copytree(src, copy.path / rel)
        else:
            (copy.path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, copy.path / rel)
    copy.commit("Copy\n\nBody.\n")
    run = _check(copy)
    assert run.exit_code == 0, run.stdout
    assert _rules(run) == []
    assert run.json()["gates"][0]["stats"]["specs"] >= 2


@pytest.mark.parametrize(
    "line",
    ["#1" * 520_000, "`#1" * 350_000, "&#1 " * 260_000, "#" * 1_048_576, "#1-" * 350_000],
    ids=range(5),
)
def test_one_mib_adversarial_spec_lines(repo: Repo, line: str) -> None:
    _setup(repo, f"# T\n\n## Owed\n\n{line}\n\n## Now\n\n{line}\n")
    start = time.monotonic()
    run = _check(repo)
    assert run.exit_code in (0, 1)
    assert time.monotonic() - start < 5


# -- evidence is never debt (SPEC §10, second pass) -------------------------------------------
def _marker_only_fingerprint(path: str, marker_line: str) -> str:
    """The fingerprint a findings baseline gave an evidence finding before evidence rules were
    protected: the opening marker's line alone (what an adversary records as debt)."""
    key = "\0".join(("spec", "spec-evidence-unbacked", path, " ".join(marker_line.split())))
    return hashlib.sha256(f"{key}\0{0}".encode()).hexdigest()[:32]


def test_recorded_debt_does_not_cover_a_flipped_evidence_table(repo: Repo) -> None:
    # The base records an unbacked evidence table as debt (a hand edit of the B row). A pull
    # request then flips the control arm GREEN -> RED inside the same table: under the
    # merge base's baseline the evidence finding is still an error, never debt.
    import json

    _evidence_repo(repo)
    path = repo.path / "specs/thing.md"
    text = path.read_text()
    edited = text.replace("| 0 | 1 | RED | yes |", "| 0 | 0 | GREEN | yes |")
    assert edited != text
    marker = next(ln for ln in edited.splitlines() if ln.startswith("<!-- tools:evidence"))
    entry = {
        "gate": "spec",
        "rule": "spec-evidence-unbacked",
        "path": "specs/thing.md",
        "fingerprint": _marker_only_fingerprint("specs/thing.md", marker),
        "message": "recorded",
    }
    baseline = {"schema": "tools.findings-baseline/1", "findings": [entry]}
    repo.commit(
        "Record the table as debt\n\nBody.\n",
        {"specs/thing.md": edited, ".agents/baselines/findings.json": json.dumps(baseline)},
    )
    repo.branch("pr")
    control = next(ln for ln in edited.splitlines() if ln.startswith("| control |"))
    flipped = edited.replace(control, control.replace("GREEN", "RED"))
    assert flipped != edited
    repo.commit("Flip the control arm\n\nBody.\n", {"specs/thing.md": flipped})
    run = repo.tools(
        "--format", "json", "--config-from", "base", "preflight", "--gate", "spec", "--base", "main"
    )
    assert run.exit_code == 1, run.stdout
    gates = {g["gate"]: g for g in run.json()["gates"]}
    (finding,) = gates["spec"]["findings"]
    assert finding["rule"] == "spec-evidence-unbacked"
    assert finding["severity"] == "error" and not finding["message"].startswith("debt:")
    # The entry covers nothing: it is stale, and says why.
    (stale,) = gates["baseline"]["findings"]
    assert stale["rule"] == "baseline-stale" and "protected" in stale["message"]


def test_baseline_write_never_records_evidence_findings(repo: Repo) -> None:
    _evidence_repo(repo)
    path = repo.path / "specs/thing.md"
    path.write_text(path.read_text().replace("| 0 | 1 | RED | yes |", "| 0 | 0 | GREEN | yes |"))
    out = repo.tools("baseline", "write", "--add")
    assert out.exit_code == 0, out.stderr
    written = repo.path / ".agents/baselines/findings.json"
    assert not written.exists() or "spec-evidence" not in written.read_text()
    run = _check(repo)
    assert run.exit_code == 1 and _rules(run) == ["spec-evidence-unbacked"]


@pytest.mark.parametrize("rule", ["spec-evidence-unbacked", "spec-evidence-malformed"])
def test_evidence_rules_cannot_be_turned_down(repo: Repo, rule: str) -> None:
    _setup(repo)
    repo.write(".agents/protocol.yaml", f"rules:\n  {rule}: warning\n")
    run = _check(repo)
    assert run.exit_code == 2
    assert rule in run.stderr and run.stderr.startswith("error:")


def test_an_evidence_finding_spans_its_table(repo: Repo) -> None:
    _evidence_repo(repo)
    path = repo.path / "specs/thing.md"
    text = path.read_text().replace("| 0 | 1 | RED | yes |", "| 0 | 0 | GREEN | yes |")
    path.write_text(text)
    (finding,) = _findings(_check(repo))
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines, 1) if ln.startswith("<!-- tools:evidence"))
    end = next(i for i, ln in enumerate(lines, 1) if ln.startswith("<!-- /tools:evidence"))
    assert (finding["line"], finding["end_line"]) == (start, end)
    sarif = repo.tools("--format", "sarif", "spec", "check").sarif()
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": start, "endLine": end}
