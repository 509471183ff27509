"""``--format sarif``: real commands' logs validate against the official SARIF 2.1.0 schema and
carry the report whole (every finding a result, every skip a notification, every rule of the
gates in the report a descriptor); the exit code does not depend on the format."""

from __future__ import annotations

import copy
import hashlib
import importlib
import json

import jsonschema
import pytest

from tests.conftest import SARIF_SCHEMA, Repo, Run, run_cli, validate_sarif
from tools import gates
from tools.report import GateResult, Report, Site, declared, render
from tools.report.model import mark_absent
from tools.report.sarif import FINGERPRINT_KEY, PATHLESS_ANCHOR, SRCROOT, artifact_uri

HUNK = "<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n"
GOOD = (
    "Add a thing\n\nBody.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
IDX = ".agents/issue-index.md"
INDEX_HEAD = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def both(repo: Repo, *args: str) -> tuple[Run, dict, Run, dict]:
    """The same command in json and in sarif: the report and its log, checked against each
    other; the exit code is the same in both formats."""
    as_json = repo.tools("--format", "json", *args)
    as_sarif = repo.tools(*args, "--format", "sarif")
    assert as_json.exit_code == as_sarif.exit_code, (as_json.stdout, as_sarif.stdout)
    report, log = as_json.json(), as_sarif.sarif()
    assert_log_carries(log, report, exit_code=as_sarif.exit_code)
    return as_json, report, as_sarif, log


def assert_log_carries(log: dict, report: dict, *, exit_code: int) -> None:
    """What the schema cannot say: the log is the report, finding for finding."""
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "tools"
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids))
    registry = declared()
    by_id = {r["id"]: r for r in rules}
    for gate in report["gates"]:
        for rule in registry.get(gate["gate"], {}).values():
            descriptor = by_id[f"{gate['gate']}/{rule.id}"]
            assert descriptor["shortDescription"]["text"] == rule.summary
            assert descriptor["defaultConfiguration"]["level"] == LEVEL[rule.severity]
    findings = [(g["gate"], f) for g in report["gates"] for f in g["findings"]]
    results = run["results"]
    assert len(results) == len(findings)
    for (gate, f), res in zip(findings, results, strict=True):
        assert res["ruleId"] == f"{gate}/{f['rule']}"
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] == LEVEL[f["severity"]]
        assert res["message"]["text"].startswith(f["message"])
        assert res["properties"]["commit"] == f["commit"]
        if f["commit"]:
            assert f["commit"] in res["message"]["text"]
        # tools' own identity, and the line hash code scanning tracks (on a line only).
        assert set(res["partialFingerprints"]) - {"primaryLocationLineHash"} == {FINGERPRINT_KEY}
        absent = res["properties"].get("absentPaths", [])
        if absent:  # about a path the judged tree lacks: never placed on it
            assert f["path"] in absent
            assert all(
                loc["physicalLocation"]["artifactLocation"]["uri"] == PATHLESS_ANCHOR
                for loc in res["locations"]
            )
            continue
        (location,) = res["locations"]
        physical = location["physicalLocation"]
        if f["path"] is not None:
            assert physical["artifactLocation"] == artifact_uri(f["path"])
            if f["line"] is not None:
                assert physical["region"] == {"startLine": f["line"]}
            else:
                assert "region" not in physical
        else:  # anchored for code scanning, file-level
            assert physical == {"artifactLocation": {"uri": PATHLESS_ANCHOR, "uriBaseId": SRCROOT}}
            if f["commit"]:
                (logical,) = location["logicalLocations"]
                assert logical["fullyQualifiedName"] == f["commit"]
                assert logical["kind"] == "commit"
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is True
    assert invocation["exitCode"] == exit_code
    notes = invocation.get("toolExecutionNotifications", [])
    skipped = [g for g in report["gates"] if g["status"] == "skip"]
    assert [n["properties"]["gate"] for n in notes] == [g["gate"] for g in skipped]
    for note, gate in zip(notes, skipped, strict=True):
        assert gate["reason"] in note["message"]["text"]
        ref = note["descriptor"]
        assert driver["notifications"][ref["index"]]["id"] == ref["id"]
    props = invocation["properties"]
    assert props["status"] == report["status"]
    assert [(g["gate"], g["status"], g["reason"]) for g in props["gates"]] == [
        (g["gate"], g["status"], g["reason"]) for g in report["gates"]
    ]


@pytest.fixture
def branch_with_trouble(repo: Repo) -> Repo:
    """main holds a protocol-complete commit; ``topic`` adds a conflict hunk in a commit whose
    message breaks trailers and style."""
    repo.commit(GOOD, {"README.md": "hello\n"})
    repo.branch("topic")
    repo.commit("Bad subject.\n", {"a.txt": HUNK})
    return repo


def test_failing_preflight_log_carries_every_finding(branch_with_trouble: Repo) -> None:
    # A gate disabled in config is a skip: it must show in the log too.
    branch_with_trouble.write(".agents/protocol.yaml", "style: {enabled: false}\n")
    _, report, run, log = both(branch_with_trouble, "preflight", "--base", "main")
    assert run.exit_code == 1
    statuses = {g["gate"]: g["status"] for g in report["gates"]}
    assert statuses["conflicts"] == statuses["trailers"] == "fail"
    assert statuses["style"] == "skip"
    results = log["runs"][0]["results"]
    with_path = [r for r in results if r["properties"]["gate"] == "conflicts"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in with_path] == [
        1,
        3,
        5,
    ]
    commit = branch_with_trouble.head()
    pathless = [r for r in results if r["properties"]["gate"] in ("trailers", "style")]
    assert pathless and all(r["properties"]["commit"] == commit for r in pathless)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [(n["level"], n["properties"]["gate"]) for n in notes] == [("warning", "style")]
    # every gate module the report names declared its rules into the driver
    assert {r["properties"]["gate"] for r in log["runs"][0]["tool"]["driver"]["rules"]} >= {
        "conflicts",
        "trailers",
        "style",
        "now",
    }


def test_clean_pass_is_an_empty_successful_log(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "fine\n"})
    _, report, run, log = both(repo, "preflight", "--gate", "conflicts")
    assert run.exit_code == 0 and report["status"] == "pass"
    (sarif_run,) = log["runs"]
    assert sarif_run["results"] == []
    assert "toolExecutionNotifications" not in sarif_run["invocations"][0]
    assert [r["id"] for r in sarif_run["tool"]["driver"]["rules"]] == [
        f"conflicts/{rule}" for rule in declared()["conflicts"]
    ]


def test_a_skip_is_a_notification_never_a_silent_pass(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "a\n"})  # config base origin/main does not resolve
    _, report, run, log = both(repo, "trailers", "check")
    assert run.exit_code == 0 and report["status"] == "skip"
    invocation = log["runs"][0]["invocations"][0]
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning" and "origin/main" in note["message"]["text"]
    assert invocation["executionSuccessful"] is True and invocation["exitCode"] == 0
    strict = repo.tools("trailers", "check", "--fail-on-skip", "--format", "sarif")
    assert strict.exit_code == 1
    invocation = strict.sarif()["runs"][0]["invocations"][0]
    assert invocation["exitCode"] == 1
    assert invocation["toolExecutionNotifications"][0]["level"] == "error"


def test_one_gate_with_findings_with_and_without_a_path(repo: Repo) -> None:
    """The index gate on a branch with no commits of its own: ``range-empty`` names no file
    and no commit; a row removed in the working tree names the file and line."""
    rows = INDEX_HEAD + "| #1 | R1 | One | bug |\n| #2 | R2 | Two | bug |\n"
    repo.commit(GOOD, {IDX: rows, PATHLESS_ANCHOR: "base: main\n"})
    repo.branch("topic")
    repo.write(IDX, INDEX_HEAD + "| #1 | R1 | One | bug |\n")
    _, report, run, log = both(repo, "index", "check", "--base", "main")
    assert run.exit_code == 1
    rules = [f["rule"] for f in report["gates"][0]["findings"]]
    assert "range-empty" in rules and "row-removed" in rules
    by_rule = {r["properties"]["rule"]: r for r in log["runs"][0]["results"]}
    empty = by_rule["range-empty"]["locations"][0]
    assert empty["physicalLocation"]["artifactLocation"]["uri"] == PATHLESS_ANCHOR
    assert "logicalLocations" not in empty  # no commit to name
    assert by_rule["range-empty"]["level"] == "note"
    removed = by_rule["row-removed"]["locations"][0]["physicalLocation"]
    assert removed["artifactLocation"]["uri"] == IDX


def test_format_sarif_before_and_after_the_subcommand(branch_with_trouble: Repo) -> None:
    before = branch_with_trouble.tools("--format", "sarif", "style", "check", "--base", "main")
    after = branch_with_trouble.tools("style", "check", "--base", "main", "--format", "SARIF")
    assert before.exit_code == after.exit_code == 1
    assert before.sarif() == after.sarif()


def test_message_file_findings_point_at_the_file(repo: Repo, tmp_path) -> None:
    """A message file outside the repository is named by a file URI (no %SRCROOT%); one
    inside it (git's .git/COMMIT_EDITMSG in a commit-msg hook) repo-relative."""
    repo.commit(GOOD)
    outside = tmp_path / "MSG"
    outside.write_text("Bad subject.\n")
    _, report, _, log = both(repo, "style", "check", "--message-file", str(outside))
    assert report["gates"][0]["findings"]
    for res in log["runs"][0]["results"]:
        assert res["properties"]["commit"] is None
        location = res["locations"][0]
        assert "logicalLocations" not in location
        assert location["physicalLocation"]["artifactLocation"] == {"uri": outside.as_uri()}
    (repo.path / ".git" / "COMMIT_EDITMSG").write_text("Bad subject.\n")
    hook = run_cli(
        ["style", "check", "--message-file", ".git/COMMIT_EDITMSG", "--format", "sarif"],
        cwd=repo.path,
    )
    assert hook.exit_code == 1
    for res in hook.sarif()["runs"][0]["results"]:
        assert res["locations"][0]["physicalLocation"]["artifactLocation"] == {
            "uri": ".git/COMMIT_EDITMSG",
            "uriBaseId": SRCROOT,
        }


def test_uris_are_percent_encoded_repo_relative_references(repo: Repo) -> None:
    repo.write("dir with space/ü%#.txt", HUNK)
    # a file name with a byte that is not UTF-8
    (repo.path / "bad\udcff.txt").write_bytes(HUNK.encode())
    repo.commit(GOOD)
    _, _, _, log = both(repo, "conflicts", "check")
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    }
    assert uris == {"dir%20with%20space/%C3%BC%25%23.txt", "bad%FF.txt"}


def test_absolute_paths_become_file_uris() -> None:
    assert artifact_uri("/tmp/ev idence.json") == {"uri": "file:///tmp/ev%20idence.json"}
    assert artifact_uri("a/b.md") == {"uri": "a/b.md", "uriBaseId": SRCROOT}


def test_fingerprints_survive_lines_moving_and_tell_twins_apart(repo: Repo) -> None:
    twin = "<<<<<<< HEAD\n<<<<<<< HEAD\n"
    repo.commit(GOOD, {"a.txt": twin})
    first = repo.tools("conflicts", "check", "--format", "sarif").sarif()
    repo.commit(GOOD, {"a.txt": "pad\npad\n" + twin})
    moved = repo.tools("conflicts", "check", "--format", "sarif").sarif()

    def prints(log: dict) -> list[str]:
        return [r["partialFingerprints"][FINGERPRINT_KEY] for r in log["runs"][0]["results"]]

    assert len(prints(first)) == 2 and len(set(prints(first))) == 2
    assert prints(first)[0].endswith(":1") and prints(first)[1].endswith(":2")
    assert prints(first) == prints(moved)
    lines = [
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in moved["runs"][0]["results"]
    ]
    assert lines == [3, 4]


def test_text_that_is_not_utf8_reaches_the_log_as_valid_unicode() -> None:
    """Bytes that are not UTF-8 (kept as surrogate escapes) in a message or a reason become
    U+FFFD in the log, and a path keeps them exactly, percent-encoded: a SARIF consumer never
    meets a lone surrogate."""
    from tools.report import GateResult, Report
    from tools.report.sarif import render_sarif

    gate = GateResult("conflicts")
    gate.add("conflict-marker", "marker in \udcff\x1b[2J", path="a\udcff.txt", line=2)
    skipped = GateResult("now").skip("cannot read \udcfe")
    text = render_sarif(Report([gate, skipped]))
    text.encode("utf-8")  # raises on a lone surrogate
    log = json.loads(text)
    validate_sarif(log)
    (res,) = log["runs"][0]["results"]
    assert res["message"]["text"] == "marker in \ufffd\x1b[2J"
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a%FF.txt"
    note = log["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    assert note["message"]["text"] == "now skipped: cannot read \ufffd"


def test_every_gate_module_renders_valid_rule_descriptors() -> None:
    """Every declared rule of every gate (the summaries of future gates included) makes a
    descriptor the schema accepts."""
    from tools.report import GateResult, Report
    from tools.report.sarif import to_sarif

    for target in gates.all_modules().values():
        try:
            importlib.import_module(target)
        except ImportError:  # a numerics gate without torch
            continue
    report = Report([GateResult(name) for name in declared()])
    log = to_sarif(report)
    validate_sarif(log)
    count = sum(len(rules) for rules in declared().values())
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == count


def test_the_validator_rejects_what_sarif_forbids(branch_with_trouble: Repo) -> None:
    log = branch_with_trouble.tools("preflight", "--base", "main", "--format", "sarif").sarif()
    for corrupt in (
        lambda lg: lg["runs"][0]["results"][0].update(level="info"),
        lambda lg: lg.update(version="2.0.0"),
        lambda lg: lg["runs"][0]["results"][0]["locations"][0]["physicalLocation"].update(
            region={"startLine": 0}
        ),
        lambda lg: lg["runs"][0]["invocations"][0].pop("executionSuccessful"),
    ):
        broken = copy.deepcopy(log)
        corrupt(broken)
        with pytest.raises(jsonschema.ValidationError):
            validate_sarif(broken)


def test_the_vendored_schema_is_the_oasis_file() -> None:
    digest = hashlib.sha256(SARIF_SCHEMA.read_bytes()).hexdigest()
    assert digest == "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


# -- a result is never placed on a path the judged tree lacks (SPEC §9.3) ---------------------


def _about_the_repository(tree: Repo) -> Report:
    """A report as a run on ``tree`` makes it: findings on a folder and a file the tree
    lacks, one on a file it has (a ratchet-like finding with sites, one of them gone), and one
    on a commit; which paths are absent read from the tree's files, as the gates judged it."""
    from tools.gates import ledger_gate, ratchet, spec, trailers

    specs = GateResult(spec.NAME)
    specs.add("spec-absent", "specs/ does not exist in the index: nothing to judge", path="specs")
    ledger = GateResult(ledger_gate.NAME)
    ledger.add("ledger-absent", "no ledger", path=".agents/ledger.jsonl")
    counted = GateResult(ratchet.NAME)
    counted.add(
        "ratchet-regression",
        "2 new sites",
        sites=(Site("src/a.c", 3), Site("src/gone.c", 9)),
    )
    messages = GateResult(trailers.NAME)
    messages.add("marker-missing", "no marker", commit="c" * 40)
    report = Report([specs, ledger, counted, messages])
    return mark_absent(report, lambda path: (tree.path / path).exists())


def test_a_result_about_a_path_the_tree_lacks_is_anchored_at_the_protocol(repo: Repo) -> None:
    repo.write("src/a.c", "int a;\n")
    repo.write(PATHLESS_ANCHOR, "base: main\n")
    log = json.loads(render(_about_the_repository(repo), "sarif"))
    validate_sarif(log)
    results = {r["properties"]["rule"]: r for r in log["runs"][0]["results"]}
    anchor = {"artifactLocation": {"uri": PATHLESS_ANCHOR, "uriBaseId": SRCROOT}}
    for rule, path in (("spec-absent", "specs"), ("ledger-absent", ".agents/ledger.jsonl")):
        (location,) = results[rule]["locations"]
        assert location == {"physicalLocation": anchor}, rule
        assert results[rule]["properties"]["absentPaths"] == [path]
    # The site the tree has keeps its place; the one it lacks is named, never placed.
    regression = results["ratchet-regression"]
    assert [
        loc["physicalLocation"]["artifactLocation"]["uri"] for loc in regression["locations"]
    ] == ["src/a.c"]
    assert regression["properties"]["absentPaths"] == ["src/gone.c"]
    (location,) = results["marker-missing"]["locations"]
    assert location["physicalLocation"] == anchor
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "c" * 40


def test_without_the_protocol_in_the_tree_such_a_result_has_no_location(repo: Repo) -> None:
    """SARIF 2.1.0 §3.27.12 allows a result with no location; GitHub code scanning refuses an
    upload holding one, which is why CI runs with --require-protocol (docs/output-formats.md)."""
    repo.write("src/a.c", "int a;\n")
    log = json.loads(render(_about_the_repository(repo), "sarif"))
    validate_sarif(log)
    results = {r["properties"]["rule"]: r for r in log["runs"][0]["results"]}
    for rule in ("spec-absent", "ledger-absent", "marker-missing"):
        assert results[rule]["locations"] == [], rule
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
        for loc in r["locations"]
    }
    assert uris == {"src/a.c"}  # every path placed is in the tree
    assert "(commit " + "c" * 40 + ")" in results["marker-missing"]["message"]["text"]


def test_a_report_nobody_checked_places_every_path_as_before(repo: Repo) -> None:
    report = _about_the_repository(repo)
    report.absent = None
    results = json.loads(render(report, "sarif"))["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results] == [
        "specs",
        ".agents/ledger.jsonl",
        "src/a.c",
        PATHLESS_ANCHOR,
    ]
    assert all("absentPaths" not in r["properties"] for r in results)


def test_preflight_places_no_result_on_a_path_the_tree_lacks(repo: Repo) -> None:
    repo.commit(GOOD, {"a.txt": "a\n", PATHLESS_ANCHOR: "base: main\n"})
    _, report, _, log = both(repo, "preflight", "--gate", "spec", "--gate", "ledger")
    paths = {f["path"] for g in report["gates"] for f in g["findings"]}
    assert {"specs", ".agents/ledger.jsonl"} <= paths
    for res in log["runs"][0]["results"]:
        for loc in res["locations"]:
            assert (repo.path / loc["physicalLocation"]["artifactLocation"]["uri"]).exists()
