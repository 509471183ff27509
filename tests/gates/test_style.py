"""The style gate (SPEC §4.3) on real repositories, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo
from tests.gates.test_trailers import GOOD, MARKER, TRAILERS, check, message, raw_commit, work_repo

LONG = "Add the widget that frobnicates every gadget in the whole wide workshops"
assert len(LONG) == 72  # exactly subject_max: allowed; one more is over

CASES = {
    # rule: (config, bad message, clean twin, line of the finding)
    "subject-period": ({}, message(subject="Add the widget."), GOOD, 1),
    "body-missing": ({}, message(body=""), GOOD, 1),
    "subject-length": ({}, message(subject=LONG + "s"), message(subject=LONG), 1),
    "subject-pattern": (
        {"subject_pattern": r"^(feat|fix|docs)(\([a-z-]+\))?: "},
        message(subject="Add the widget"),
        message(subject="feat(widget): add the widget"),
        1,
    ),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_the_bad_commit(repo: Repo, rule: str) -> None:
    config, bad, _, line = CASES[rule]
    work_repo(repo, {"style": config})
    sha = raw_commit(repo, bad)
    code, gate = check(repo, "style")
    severity = "warning" if rule == "subject-length" else "error"
    assert code == (0 if severity == "warning" else 1)
    assert [(f["rule"], f["severity"], f["commit"], f["line"]) for f in gate["findings"]] == [
        (rule, severity, sha, line)
    ]


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_is_quiet_on_the_clean_twin(repo: Repo, rule: str) -> None:
    config, _, good, _ = CASES[rule]
    work_repo(repo, {"style": config})
    raw_commit(repo, good)
    code, gate = check(repo, "style")
    assert (code, gate["status"], gate["findings"]) == (0, "pass", [])


def test_subject_length_can_be_an_error(repo: Repo) -> None:
    work_repo(repo, {"style": {"subject_length": "error", "subject_max": 10}})
    raw_commit(repo, message(subject="Add widgets"))
    code, gate = check(repo, "style")
    assert code == 1
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("subject-length", "error")]
    assert "11 characters" in gate["findings"][0]["message"]


@pytest.mark.parametrize(
    ("level", "code", "found"),
    [
        ("off", 0, []),
        ("warning", 0, [("subject-length", "warning")]),
        ("info", 0, [("subject-length", "info")]),
    ],
)
def test_rules_override_style_subject_length(
    repo: Repo, level: str, code: int, found: list[tuple[str, str]]
) -> None:
    # style.subject_length is the rule's default; `rules:` is the one authority (SPEC §3.3).
    config = {
        "style": {"subject_length": "error", "subject_max": 10},
        "rules": {"subject-length": level},
    }
    work_repo(repo, config)
    raw_commit(repo, message(subject="Add widgets"))
    got, gate = check(repo, "style")
    assert (got, [(f["rule"], f["severity"]) for f in gate["findings"]]) == (code, found)
    if level == "off":
        assert gate["stats"]["suppressed"] == {"subject-length": 1}


def test_subject_is_the_whole_first_paragraph(repo: Repo) -> None:
    # git joins a wrapped first paragraph into one subject; so does the gate
    work_repo(repo)
    raw_commit(repo, message(subject="Add the widget\nand the gadget."))
    code, gate = check(repo, "style")
    assert [f["rule"] for f in gate["findings"]] == ["subject-period"]
    assert "'Add the widget and the gadget.'" in gate["findings"][0]["message"]


@pytest.mark.parametrize(
    "msg, fires",
    [
        # nothing between the subject and the marker
        (message(body=""), True),
        # nothing between the subject and the trailers (no marker configured there)
        ("Add it\n\n" + TRAILERS, True),
        # nothing at all after the subject
        ("Add it\n", True),
        ("Add it\n\n\n  \n", True),
        # a body of one word is a body
        (message(body="Why.\n"), False),
        # a body but no marker and no trailers: still a body
        ("Add it\n\nBecause.\n", False),
        # a CRLF message with a body
        (GOOD.replace("\n", "\r\n"), False),
    ],
)
def test_body_missing_shapes(repo: Repo, msg: str, fires: bool) -> None:
    work_repo(repo)
    raw_commit(repo, msg)
    code, gate = check(repo, "style")
    assert [f["rule"] for f in gate["findings"]] == (["body-missing"] if fires else [])


def test_require_body_false_turns_the_rule_off(repo: Repo) -> None:
    work_repo(repo, {"style": {"require_body": False}})
    raw_commit(repo, message(body=""))
    code, gate = check(repo, "style")
    assert (code, gate["findings"]) == (0, [])


def test_empty_message_has_no_body(repo: Repo) -> None:
    work_repo(repo)
    sha = raw_commit(repo, "")
    code, gate = check(repo, "style")
    assert code == 1
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("body-missing", sha)]


def test_range_names_exactly_the_bad_commit(repo: Repo) -> None:
    work_repo(repo)
    shas = [raw_commit(repo, GOOD if i != 2 else message(subject="Add it.")) for i in range(5)]
    code, gate = check(repo, "style")
    assert code == 1
    assert gate["stats"]["commits"] == 5
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("subject-period", shas[2])]


def test_merges_are_skipped_by_parent_count_never_by_subject(repo: Repo) -> None:
    work_repo(repo)
    first = raw_commit(repo, GOOD)
    side = raw_commit(repo, message(subject="Add the side"), parents=[repo.head("main")])
    raw_commit(repo, "Merge branch 'side'.\n", parents=[first, side])  # a real merge: skipped
    # a single-parent commit that only looks like a merge is judged
    fake = raw_commit(repo, message(subject="Merge branch 'side'.", body=""))
    code, gate = check(repo, "style")
    assert code == 1
    assert gate["stats"]["merges_skipped"] == 1
    assert {(f["rule"], f["commit"]) for f in gate["findings"]} == {
        ("subject-period", fake),
        ("body-missing", fake),
    }


def test_a_fixup_commit_is_left_out_of_both_gates_and_counted(repo: Repo) -> None:
    # `fixup! Add it.` breaks no style rule only because it is not judged: its period would.
    work_repo(repo)
    raw_commit(repo, GOOD)
    fixup = raw_commit(repo, "fixup! Add it.\n")
    raw_commit(repo, GOOD)
    code, gate = check(repo, "style")
    assert (code, gate["findings"], gate["stats"]["fixups"], gate["stats"]["commits"]) == (
        0, [], 1, 3
    )  # fmt: skip
    code, gate = check(repo, "trailers")
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("fixup-pending", fixup)]
    assert (code, gate["stats"]["fixups"]) == (0, 1)


def test_exceptions_name_style_rules_too(repo: Repo) -> None:
    work_repo(repo)
    sha = raw_commit(repo, message(subject="Add it."))
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {
                "trailers": {
                    "exceptions": [
                        {
                            "commit": sha[:7],
                            "rule": "subject-period",
                            "reason": "written before the rule",
                        },
                    ]
                }
            }
        ),
    )
    code, gate = check(repo, "style")
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("subject-period", "warning")]
    assert gate["findings"][0]["message"].startswith("debt: written before the rule: ")


def test_cutover_does_not_apply_to_style(repo: Repo) -> None:
    work_repo(repo)
    old = raw_commit(repo, message(subject="Add it."))
    cut = raw_commit(repo, GOOD)
    repo.write(".agents/protocol.yaml", yaml.safe_dump({"trailers": {"cutover": cut}}))
    code, gate = check(repo, "style")
    assert code == 1 and {f["commit"] for f in gate["findings"]} == {old}


def test_message_file_mode(repo: Repo, tmp_path: Path) -> None:
    repo.commit("Start.\n")  # HEAD's own style is not judged in message-file mode
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text("# comment\n\nAdd it.\n\n# Please enter\n" + MARKER + "\n\n" + TRAILERS)
    run = repo.tools("--format", "json", "style", "check", "--message-file", str(path))
    assert run.exit_code == 1
    findings = run.json()["gates"][0]["findings"]
    assert [(f["rule"], f["path"], f["line"], f["commit"]) for f in findings] == [
        ("subject-period", str(path), 3, None),
        ("body-missing", str(path), 3, None),
    ]
    path.write_text(GOOD)
    run = repo.tools("style", "check", "--message-file", str(path))
    assert run.exit_code == 0 and run.stdout.startswith("ok   style")


def test_style_json_report_validates(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, message(subject="Add it.").encode() + b"\xff\n")
    run = repo.tools("--format", "json", "style", "check", "--base", "main")
    assert run.exit_code == 1
    assert run.json()["status"] == "fail"
    gh = repo.tools("--format", "github", "style", "check", "--base", "main")
    assert gh.exit_code == 1 and gh.stdout.startswith("::error ")
