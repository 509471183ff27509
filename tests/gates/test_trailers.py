"""The trailers gate (SPEC §4.2) on real repositories, through the real CLI."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tools.gates import trailers as trailers_gate

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = (
    "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: claude:opus-4 [claude-code]\n"
)


def message(
    subject: str = "Add the widget",
    body: str = "Explain why the widget is needed.\n",
    marker: str | None = MARKER,
    trailers: str = TRAILERS,
) -> str:
    parts = [subject + "\n"]
    if body:
        parts.append(body)
    if marker is not None:
        parts.append(marker + "\n")
    if trailers:
        parts.append(trailers)
    return "\n".join(parts)


GOOD = message()


def raw_commit(repo: Repo, msg: str | bytes, parents: list[str] | None = None) -> str:
    """Commit ``msg`` byte for byte (empty allowed) on HEAD's tree; move the branch there."""
    data = msg.encode("utf-8", "surrogateescape") if isinstance(msg, str) else msg
    parents = [repo.head()] if parents is None else parents
    args = ["commit-tree", "HEAD^{tree}"]
    for p in parents:
        args += ["-p", p]
    sha = repo.git(*args, input=data).strip()
    repo.git("update-ref", "HEAD", sha)
    return sha


def work_repo(repo: Repo, config: dict | None = None) -> Repo:
    """A base commit on main (plus config), and branch ``work`` checked out from it."""
    if config is not None:
        repo.write(".agents/protocol.yaml", yaml.safe_dump(config))
    repo.commit("Start\n\nBase.\n", {"README.md": "hello\n"})
    repo.branch("work")
    return repo


def check(repo: Repo, gate: str = "trailers", *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", gate, "check", "--base", "main", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def rules(gate: dict) -> list[str]:
    return [f["rule"] for f in gate["findings"]]


# -- every rule fires, and is quiet on its clean twin --------------------------------------

CASES = {
    # rule: (bad message, its clean twin, 1-based line of the finding or None)
    "empty-message": ("", GOOD, None),
    "marker-missing": (message(marker=None), GOOD, None),
    "marker-duplicate": (message(body=f"Why.\n\n{MARKER}\n"), GOOD, 7),
    "marker-last": (
        "Add the widget\n\nWhy.\n\n" + TRAILERS + "\n" + MARKER + "\n",
        GOOD,
        9,
    ),
    "framing": (
        message(body="Why.\n---\nMore.\n"),
        message(body="Why.\n--\n----- a rule of dashes is fine\n"),
        4,
    ),
    "trailer-missing": (
        message(trailers="Following-Agents-Protocol: true\n"),
        message(trailers="Following-Agents-Protocol: true\nAI-Assisted: false\n"),
        7,
    ),
    "trailer-duplicate": (
        message(trailers="Following-Agents-Protocol: true\n" + TRAILERS),
        message(trailers="following-agents-protocol: true\nai-assisted: false\n"),
        8,
    ),
    "trailer-value": (
        message(trailers="Following-Agents-Protocol: True\nAI-Assisted: false\n"),
        message(trailers="Following-Agents-Protocol: true\nAI-Assisted: false\n"),
        7,
    ),
    "assisted-by-missing": (
        message(trailers="Following-Agents-Protocol: true\nAI-Assisted: true\n"),
        GOOD,
        8,
    ),
    "assisted-by-forbidden": (
        message(trailers=TRAILERS.replace("AI-Assisted: true", "AI-Assisted: false")),
        message(trailers="Following-Agents-Protocol: true\nAI-Assisted: false\n"),
        9,
    ),
    "assisted-by-format": (
        message(trailers=TRAILERS.replace("claude:opus-4 [claude-code]", "claude opus-4")),
        message(trailers=TRAILERS.replace("[claude-code]", "[claude-code] [ripgrep]")),
        9,
    ),
    "ai-authorship": (
        message(trailers=TRAILERS + "Signed-off-by: Claude Bot <helper@example.com>\n"),
        message(trailers=TRAILERS + "Signed-off-by: Jane Doe <jane@example.com>\n"),
        10,
    ),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fires_on_the_bad_commit(repo: Repo, rule: str) -> None:
    bad, _, line = CASES[rule]
    work_repo(repo)
    sha = raw_commit(repo, bad)
    code, gate = check(repo)
    assert code == 1
    assert gate["status"] == "fail"
    hits = [f for f in gate["findings"] if f["rule"] == rule]
    assert hits, gate["findings"]
    assert all(f["commit"] == sha and f["severity"] == "error" for f in hits)
    assert hits[0]["line"] == line
    assert gate["stats"]["commits"] == 1


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_is_quiet_on_the_clean_twin(repo: Repo, rule: str) -> None:
    _, good, _ = CASES[rule]
    work_repo(repo)
    raw_commit(repo, good)
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"]) == (0, "pass", [])


def test_placeholder_fires_only_with_filled(repo: Repo) -> None:
    work_repo(repo)
    sha = raw_commit(
        repo,
        message(trailers=TRAILERS.replace("claude:opus-4 [claude-code]", "AGENT:MODEL [TOOL]")),
    )
    code, gate = check(repo)  # the template is well-formed: without --filled it passes
    assert (code, gate["findings"]) == (0, [])
    code, gate = check(repo, "trailers", "--filled")
    assert code == 1
    assert [(f["rule"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("placeholder", sha, 9)
    ]


def test_placeholder_is_quiet_on_a_filled_message(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, GOOD)
    code, gate = check(repo, "trailers", "--filled")
    assert (code, gate["findings"]) == (0, [])


def test_range_empty_is_an_info_pass_and_fails_with_require_commits(repo: Repo) -> None:
    work_repo(repo)
    code, gate = check(repo)
    assert code == 0 and gate["status"] == "pass"
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("range-empty", "info")]
    assert gate["stats"]["commits"] == 0
    code, gate = check(repo, "trailers", "--require-commits")
    assert code == 1 and rules(gate) == ["range-empty"]


def test_range_empty_is_quiet_once_the_branch_has_a_commit(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, GOOD)
    code, gate = check(repo, "trailers", "--require-commits")
    assert (code, gate["findings"]) == (0, [])


# -- ai-authorship precisions --------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, fires",
    [
        ("Co-authored-by: GPT Helper <x@example.com>", True),
        ("Co-authored-by: Jane <jane@example.com>", False),
        # whole words only: "aiden" is not "ai", "botany" is not "bot"
        ("Signed-off-by: Aiden Botany <aiden@example.com>", False),
        ("Signed-off-by: Aiden <ai-team@example.com>", True),
        # the Assisted-by ID, model or a tool, case-insensitively, anywhere in the value
        ("Signed-off-by: Opus-4 Runner <runner@example.com>", True),
        ("Co-authored-by: Ops <ops+CLAUDE-CODE@example.com>", True),
        # GitHub's noreply co-author lines are exempt; a sign-off never is
        ("Co-authored-by: Claude <81847+claude@users.noreply.github.com>", False),
        ("Signed-off-by: Claude <81847+claude@users.noreply.github.com>", True),
    ],
)
def test_ai_authorship_precisions(repo: Repo, extra: str, fires: bool) -> None:
    work_repo(repo)
    raw_commit(repo, message(trailers=TRAILERS + extra + "\n"))
    code, gate = check(repo)
    assert rules(gate) == (["ai-authorship"] if fires else [])
    assert code == (1 if fires else 0)


def test_ai_identities_come_from_config(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"ai_identities": ["robo-helper"]}})
    unassisted = "Following-Agents-Protocol: true\nAI-Assisted: false\n"
    # "claude" is no longer an identity (the config list replaces the default whole)
    raw_commit(repo, message(trailers=unassisted + "Signed-off-by: Claude <c@example.com>\n"))
    raw_commit(repo, message(trailers=unassisted + "Signed-off-by: Roboto Helper <r@x.org>\n"))
    assert rules(check(repo)[1]) == []
    # a multi-word identity matches the same words in sequence, whatever splits them
    bad = raw_commit(repo, message(trailers=unassisted + "Signed-off-by: Robo Helper <r@x.org>\n"))
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("ai-authorship", bad)]


# -- tricky messages -----------------------------------------------------------------------


def test_blank_line_and_url_after_the_trailers(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, GOOD + "\nhttps://example.com/issue/1\n")
    code, gate = check(repo)
    assert code == 1
    missing = [f for f in gate["findings"] if f["rule"] == "trailer-missing"]
    assert len(missing) == 2
    assert "line 7 has one" in missing[0]["message"]


def test_assisted_by_with_a_space_is_not_a_trailer(repo: Repo) -> None:
    work_repo(repo)
    spaced = TRAILERS.replace("Assisted-by:", "Assisted by:")
    raw_commit(repo, message(trailers=spaced + "Signed-off-by: Jane <jane@example.com>\n"))
    code, gate = check(repo)
    assert code == 1
    assert rules(gate) == ["assisted-by-missing"]


def test_crlf_message_passes(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, GOOD.replace("\n", "\r\n"))
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])
    raw_commit(repo, message(trailers="Following-Agents-Protocol: true\n").replace("\n", "\r\n"))
    assert rules(check(repo)[1]) == ["trailer-missing"]


def test_non_utf8_bytes_survive(repo: Repo) -> None:
    work_repo(repo)
    msg = message(body="Caf\udce9 \udcff bytes.\n").encode("utf-8", "surrogateescape")
    raw_commit(repo, msg)
    assert check(repo) == (0, {**check(repo)[1], "findings": []})
    raw_commit(repo, msg.replace(b"AI-Assisted: true", b"AI-Assisted: tr\xffue"))
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["line"]) for f in gate["findings"]] == [("trailer-value", 8)]
    text = repo.tools("trailers", "check", "--base", "main")
    assert text.exit_code == 1 and "error[trailer-value]" in text.stdout


def test_one_megabyte_message(repo: Repo) -> None:
    work_repo(repo)
    body = "".join(f"Line {i} of a very long explanation.\n" for i in range(30_000))
    assert len(body) > 1_000_000
    raw_commit(repo, message(body=body))
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])
    raw_commit(repo, message(body=body, marker=None))
    assert rules(check(repo)[1]) == ["marker-missing"]


def test_patch_divider_hides_the_trailers_below_it(repo: Repo) -> None:
    work_repo(repo)
    sha = raw_commit(repo, message(trailers="---\n" + TRAILERS))
    code, gate = check(repo)
    assert code == 1
    assert ("framing", 7) in [(f["rule"], f["line"]) for f in gate["findings"]]
    assert {f["commit"] for f in gate["findings"]} == {sha}


def test_github_squash_shape_is_one_block(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(
        repo,
        GOOD + "---------\n\nCo-authored-by: Jane <1+jane@users.noreply.github.com>\n",
    )
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])


# -- ranges --------------------------------------------------------------------------------


def test_range_names_exactly_the_bad_commit(repo: Repo) -> None:
    work_repo(repo)
    shas = [raw_commit(repo, GOOD if i != 2 else message(marker=None)) for i in range(5)]
    code, gate = check(repo)
    assert code == 1
    assert gate["stats"]["commits"] == 5
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("marker-missing", shas[2])]


def test_branch_behind_its_base_is_judged_on_its_own_commits(repo: Repo) -> None:
    work_repo(repo)
    mine = raw_commit(repo, GOOD)
    repo.checkout("main")
    raw_commit(repo, "base moved on without trailers\n")
    repo.checkout("work")
    code, gate = check(repo)
    assert (code, gate["findings"], gate["stats"]["commits"]) == (0, [], 1)
    assert repo.head() == mine


def test_commit_mode_judges_one_commit(repo: Repo) -> None:
    work_repo(repo)
    bad = raw_commit(repo, message(marker=None))
    raw_commit(repo, GOOD)
    run = repo.tools("--format", "json", "trailers", "check", "--commit", bad[:10])
    assert run.exit_code == 1
    gate = run.json()["gates"][0]
    assert gate["stats"]["commits"] == 1
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("marker-missing", bad)]
    run = repo.tools("--format", "json", "trailers", "check", "--commit", "HEAD")
    assert (run.exit_code, run.json()["gates"][0]["findings"]) == (0, [])


def test_unresolvable_refs_are_usage_errors(repo: Repo) -> None:
    work_repo(repo)
    for args in (["--commit", "nope"], ["--base", "nope"]):
        run = repo.tools("trailers", "check", *args)
        assert run.exit_code == 2 and run.stderr.startswith("error: ")


def test_default_base_that_does_not_resolve_is_a_skip(repo: Repo) -> None:
    work_repo(repo)
    raw_commit(repo, GOOD)
    run = repo.tools("--format", "json", "trailers", "check")
    gate = run.json()["gates"][0]
    assert run.exit_code == 0 and gate["status"] == "skip" and "origin/main" in gate["reason"]
    assert repo.tools("trailers", "check", "--fail-on-skip").exit_code == 1


# -- merges --------------------------------------------------------------------------------


def _merge_repo(repo: Repo, config: dict | None = None) -> tuple[str, str]:
    work_repo(repo, config)
    first = raw_commit(repo, GOOD)
    side = raw_commit(repo, message(subject="Add the side widget"), parents=[repo.head("main")])
    merge = raw_commit(repo, "Merge branch 'side'\n", parents=[first, side])
    return merge, side


def test_merges_are_judged_by_default(repo: Repo) -> None:
    merge, _ = _merge_repo(repo)
    code, gate = check(repo)
    assert code == 1
    assert {f["commit"] for f in gate["findings"]} == {merge}
    assert gate["stats"]["commits"] == 3


def test_merges_skip_leaves_merge_commits_out(repo: Repo) -> None:
    _merge_repo(repo, {"trailers": {"merges": "skip"}})
    code, gate = check(repo)
    assert (code, gate["findings"], gate["stats"]["merges_skipped"]) == (0, [], 1)


# -- cutover and exceptions ----------------------------------------------------------------


def test_cutover_grandfathers_older_commits(repo: Repo, tmp_path: Path) -> None:
    work_repo(repo)
    old_ok = raw_commit(repo, message(trailers="Old-Style: yes\n"))
    old_bad = raw_commit(repo, message(marker=None, trailers=""))
    cut = raw_commit(repo, message(trailers="Old-Style: yes\n"))
    after = raw_commit(repo, message(trailers="Following-Agents-Protocol: true\n"))
    config = tmp_path / "protocol.yaml"
    config.write_text(yaml.safe_dump({"trailers": {"cutover": cut[:12]}}))
    run = repo.tools(
        "--config", str(config), "--format", "json", "trailers", "check", "--base", "main"
    )
    gate = run.json()["gates"][0]
    assert run.exit_code == 1
    found = {(f["commit"], f["rule"]) for f in gate["findings"]}
    assert found == {
        (old_bad, "marker-missing"),
        (cut, "trailer-missing"),
        (cut, "trailer-missing"),
        (after, "trailer-missing"),
    }
    assert old_ok not in {f["commit"] for f in gate["findings"]}
    assert gate["stats"]["before_cutover"] == 2


def test_cutover_on_a_side_branch_judges_only_its_descendants(repo: Repo) -> None:
    work_repo(repo)
    base = repo.head()
    cut = raw_commit(repo, GOOD)
    child = raw_commit(repo, message(marker=None, trailers=""))
    side = raw_commit(repo, message(trailers=""), parents=[base])  # not below the cutover
    merge = raw_commit(repo, message(trailers=""), parents=[child, side])
    repo.write(".agents/protocol.yaml", yaml.safe_dump({"trailers": {"cutover": cut}}))
    code, gate = check(repo)
    assert code == 1
    by_commit = {}
    for f in gate["findings"]:
        by_commit.setdefault(f["commit"], set()).add(f["rule"])
    assert by_commit[child] == {"marker-missing", "trailer-missing"}
    assert side not in by_commit  # it has its marker; the rest is not asked of it
    assert by_commit[merge] == {"trailer-missing", "marker-last"}
    assert gate["stats"]["before_cutover"] == 1


def test_cutover_that_does_not_resolve_is_a_usage_error(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"cutover": "no-such-ref"}})
    raw_commit(repo, GOOD)
    run = repo.tools("trailers", "check", "--base", "main")
    assert run.exit_code == 2
    assert "trailers.cutover" in run.stderr and run.stderr.startswith("error: ")
    assert run.stderr.count("\n") == 1


def test_exceptions_turn_findings_into_debt_warnings_on_every_run(repo: Repo) -> None:
    work_repo(repo)
    bad = raw_commit(repo, message(marker=None))
    other = raw_commit(repo, message(marker=None))
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {
                "trailers": {
                    "exceptions": [
                        {
                            "commit": bad[:8],
                            "rule": "marker-missing",
                            "reason": "imported from the old tracker",
                        },
                    ]
                }
            }
        ),
    )
    for _ in range(2):  # printed on every run, not once
        code, gate = check(repo)
        assert code == 1  # the other commit still fails
        by = {f["commit"]: f for f in gate["findings"]}
        assert by[bad]["rule"] == "marker-missing"
        assert by[bad]["severity"] == "warning"
        assert by[bad]["message"].startswith("debt: imported from the old tracker: ")
        assert by[other]["severity"] == "error"
    text = repo.tools("trailers", "check", "--base", "main")
    assert "warning[marker-missing]" in text.stdout and "debt: imported" in text.stdout


def test_exception_for_every_bad_commit_passes(repo: Repo) -> None:
    work_repo(repo)
    bad = raw_commit(repo, message(marker=None))
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {
                "trailers": {
                    "exceptions": [
                        {"commit": bad, "rule": "marker-missing", "reason": "legacy"},
                    ]
                }
            }
        ),
    )
    code, gate = check(repo)
    assert code == 0 and gate["status"] == "pass"
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("marker-missing", "warning")]


@pytest.mark.parametrize(
    "entry, key",
    [
        ({"commit": "abcd", "rule": "no-such-rule", "reason": "x"}, "exceptions[0].rule"),
        ({"commit": "zz", "rule": "marker-missing", "reason": "x"}, "exceptions[0].commit"),
    ],
)
def test_bad_exceptions_are_usage_errors(repo: Repo, entry: dict, key: str) -> None:
    work_repo(repo, {"trailers": {"exceptions": [entry]}})
    raw_commit(repo, GOOD)
    run = repo.tools("trailers", "check", "--base", "main")
    assert run.exit_code == 2 and f"trailers.{key}" in run.stderr


def test_an_unknown_exception_rule_is_refused_by_every_command(repo: Repo) -> None:
    """The rule id is checked with the rest of the config, so a gate that never reads the
    exceptions refuses the config too (one error line, exit 2), and a known id passes."""
    entry = {"commit": "abcd", "rule": "no-such-rule", "reason": "x"}
    work_repo(repo, {"trailers": {"exceptions": [entry]}})
    run = repo.tools("conflicts", "check")
    assert run.exit_code == 2, run.stderr
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1
    assert "trailers.exceptions[0].rule" in run.stderr and "Traceback" not in run.stderr
    known = {"trailers": {"exceptions": [{**entry, "rule": "subject-period"}]}}
    repo.write(".agents/protocol.yaml", yaml.safe_dump(known))
    assert repo.tools("conflicts", "check").exit_code == 0


def _commit_object(tree: str, parent: str, msg: str) -> bytes:
    who = "Test Author <author@example.com> 1767225600 +0000"
    return f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n\n{msg}".encode()


def test_ambiguous_exception_prefix_is_a_usage_error(repo: Repo) -> None:
    work_repo(repo)
    tree, parent = repo.head("HEAD^{tree}"), repo.head()
    # Two sibling commits whose shas share 4 hex digits: searched offline, then written.
    seen: dict[str, bytes] = {}
    for i in range(100_000):
        body = _commit_object(tree, parent, f"{GOOD}Nonce: {i}\n")
        sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
        if sha[:4] in seen:
            break
        seen[sha[:4]] = body
    pair = [seen[sha[:4]], body]
    made = [repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=b).strip() for b in pair]
    assert made[0][:4] == made[1][:4] == sha[:4] and made[1] == sha
    raw_commit(repo, GOOD, parents=made)
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {
                "trailers": {
                    "exceptions": [
                        {"commit": sha[:4], "rule": "trailer-missing", "reason": "x"},
                    ]
                }
            }
        ),
    )
    run = repo.tools("trailers", "check", "--base", "main")
    assert run.exit_code == 2 and "ambiguous" in run.stderr


# -- config ------------------------------------------------------------------------------


def test_disabled_is_a_skip_never_a_silent_pass(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"enabled": False}, "style": {"enabled": False}})
    raw_commit(repo, "")
    for gate_name in ("trailers", "style"):
        code, gate = check(repo, gate_name)
        assert (code, gate["status"], gate["reason"]) == (0, "skip", "disabled in config")
        run = repo.tools(gate_name, "check", "--base", "main", "--fail-on-skip")
        assert run.exit_code == 1


def test_required_and_marker_come_from_config(repo: Repo) -> None:
    work_repo(
        repo,
        {
            "trailers": {
                "marker": None,
                "required": {"Reviewed-by": ["me", "you"]},
                "assisted_by": False,
            }
        },
    )
    raw_commit(repo, "Add it\n\nWhy.\n\nReviewed-by: me\nAssisted-by: bad\n")
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])
    raw_commit(repo, "Add it\n\nWhy.\n\nReviewed-by: them\n")
    assert rules(check(repo)[1]) == ["trailer-value"]


# -- the message file (commit-msg hook) ------------------------------------------------------


def _msg_check(
    repo: Repo, path: str, *extra: str, input: bytes | None = None, gate: str = "trailers"
) -> tuple[int, dict]:
    run = repo.tools("--format", "json", gate, "check", "--message-file", path, *extra, input=input)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def test_message_file_is_judged_alone_with_git_cleanup(repo: Repo, tmp_path: Path) -> None:
    repo.commit("Start without trailers\n")  # HEAD's own message is not judged
    text = (
        "# Please enter the commit message for your changes.\n"
        "Add the widget\n\nWhy.\n\n"
        f"{MARKER}\n\n"
        "Following-Agents-Protocol: true\n"
        "# a comment inside the block\n"
        "AI-Assisted: true\n"
        "Assisted-by: claude:opus-4 [claude-code]\n"
        "#\n"
        "# ------------------------ >8 ------------------------\n"
        "---\nSigned-off-by: Claude <claude@example.com>\n"
    )
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(text)
    code, gate = _msg_check(repo, str(path))
    assert (code, gate["findings"], gate["stats"]) == (0, [], {"messages": 1, "cleanup": "strip"})
    # A finding names the file and the line in the file as written (comments counted).
    path.write_text(text.replace("AI-Assisted: true", "AI-Assisted: yes"))
    code, gate = _msg_check(repo, str(path))
    assert code == 1
    assert [(f["rule"], f["commit"], f["path"], f["line"]) for f in gate["findings"]] == [
        ("trailer-value", None, str(path), 10)
    ]


def test_message_from_stdin(repo: Repo) -> None:
    repo.commit("Start\n")
    code, gate = _msg_check(repo, "-", input=message(marker=None).encode())
    assert code == 1
    assert [(f["rule"], f["path"]) for f in gate["findings"]] == [("marker-missing", "-")]
    code, gate = _msg_check(repo, "-", input=GOOD.encode())
    assert (code, gate["findings"]) == (0, [])


def test_empty_message_file(repo: Repo, tmp_path: Path) -> None:
    repo.commit("Start\n")
    path = tmp_path / "msg"
    # The editor's template untouched: git strips its comments and stores nothing.
    path.write_text("\n# Please enter the commit message for your changes.\n#\n")
    assert rules(_msg_check(repo, str(path))[1]) == ["empty-message"]
    # The same comment lines given with -F are kept by git: not empty.
    path.write_text("# only comments\n\n")
    assert "empty-message" not in rules(_msg_check(repo, str(path))[1])
    # ...unless commit.cleanup is strip.
    repo.git("config", "commit.cleanup", "strip")
    assert rules(_msg_check(repo, str(path))[1]) == ["empty-message"]


def test_crlf_message_file_is_cleaned(repo: Repo, tmp_path: Path) -> None:
    repo.commit("Start\n")
    path = tmp_path / "msg"
    path.write_bytes(GOOD.replace("\n", "\r\n").encode())
    code, gate = _msg_check(repo, str(path))
    assert (code, gate["findings"]) == (0, [])


def test_message_file_is_strict_even_before_a_cutover(repo: Repo, tmp_path: Path) -> None:
    work_repo(repo)
    cut = raw_commit(repo, GOOD)
    repo.git("update-ref", "refs/heads/later", cut)
    repo.git("reset", "-q", "--hard", "main")  # HEAD is not below the cutover
    repo.write(".agents/protocol.yaml", yaml.safe_dump({"trailers": {"cutover": "later"}}))
    path = tmp_path / "msg"
    path.write_text(message(trailers="Following-Agents-Protocol: true\n"))
    assert rules(_msg_check(repo, str(path))[1]) == ["trailer-missing"]


@pytest.mark.parametrize("target", ["missing", "dir"])
def test_unreadable_message_file_is_a_usage_error(repo: Repo, tmp_path: Path, target: str) -> None:
    repo.commit("Start\n")
    path = tmp_path / target
    if target == "dir":
        path.mkdir()
    for gate in ("trailers", "style"):
        run = repo.tools(gate, "check", "--message-file", str(path))
        assert run.exit_code == 2
        assert run.stderr.startswith("error: ") and str(path) in run.stderr
        assert run.stderr.count("\n") == 1


def test_message_file_cannot_be_combined_with_a_range(repo: Repo, tmp_path: Path) -> None:
    repo.commit("Start\n")
    path = tmp_path / "msg"
    path.write_text(GOOD)
    for extra in (["--base", "main"], ["--commit", "HEAD"]):
        run = repo.tools("trailers", "check", "--message-file", str(path), *extra)
        assert run.exit_code == 2 and "--message-file" in run.stderr


def test_preflight_judges_the_range_and_the_message(repo: Repo, tmp_path: Path) -> None:
    work_repo(repo)
    bad = raw_commit(repo, message(marker=None))
    path = tmp_path / "msg"
    path.write_text(message(subject="Add it."))
    run = repo.tools(
        "--format",
        "json",
        "preflight",
        "--gate",
        "trailers",
        "--gate",
        "style",
        "--base",
        "main",
        "--message-file",
        str(path),
    )
    assert run.exit_code == 1
    trailers, style = run.json()["gates"]
    assert [(f["rule"], f["commit"], f["path"]) for f in trailers["findings"]] == [
        ("marker-missing", bad, None)
    ]
    assert [(f["rule"], f["commit"], f["path"]) for f in style["findings"]] == [
        ("subject-period", None, str(path))
    ]
    # The same message from stdin is read once and judged by both gates.
    run = repo.tools(
        "--format",
        "json",
        "preflight",
        "--gate",
        "trailers",
        "--gate",
        "style",
        "--base",
        "main",
        "--message-file",
        "-",
        input=message(subject="Add it.", marker=None),
    )
    trailers, style = run.json()["gates"]
    assert [(f["rule"], f["path"]) for f in trailers["findings"]] == [
        ("marker-missing", None),
        ("marker-missing", "-"),
    ]
    # (a second read of stdin would see nothing: body-missing, not subject-period)
    assert [(f["rule"], f["path"]) for f in style["findings"]] == [("subject-period", "-")]


# -- the commit-msg hook, end to end -------------------------------------------------------


@pytest.mark.skipif(shutil.which("tools") is None, reason="the tools console script is needed")
def test_commit_msg_hook_refuses_a_bad_message_and_lets_a_good_one_land(repo: Repo) -> None:
    # Preflight in the pre-commit hook runs only the conflicts gate here.
    repo.write(".agents/protocol.yaml", yaml.safe_dump({"preflight": {"gates": ["conflicts"]}}))
    repo.commit("Start\n\nBase.\n", {"a.txt": "a\n"})
    run = repo.tools("hooks", "install")
    assert run.exit_code == 0, run.stderr
    env = dict(os.environ)
    env.pop("GIT_DIR", None)

    def commit(msg: str) -> subprocess.CompletedProcess:
        repo.write("a.txt", msg)
        repo.git("add", "a.txt")
        return subprocess.run(
            ["git", "commit", "-q", "-F", "-"],
            cwd=repo.path,
            input=msg.encode(),
            capture_output=True,
            env=env,
        )

    before = repo.head()
    refused = commit(message(marker=None))
    assert refused.returncode != 0
    assert b"marker-missing" in refused.stdout + refused.stderr
    assert repo.head() == before
    refused = commit(message(subject="Add it."))  # trailers pass, style refuses
    assert refused.returncode != 0 and b"subject-period" in refused.stdout + refused.stderr
    assert repo.head() == before
    landed = commit(GOOD)
    assert landed.returncode == 0, landed.stdout + landed.stderr
    assert repo.head() != before
    assert repo.git("log", "-1", "--format=%B") == GOOD + "\n"


def test_range_without_paths_is_opt_in(repo: Repo) -> None:
    # The message gates' own commands skip rename detection; the shared default keeps paths.
    from tools.context import Context
    from tools.options import Options

    work_repo(repo)
    repo.commit(GOOD, {"src/a.c": "int a;\n"})
    default = Context(Options(repo=repo.path, base="main")).range.commits
    bare = Context(Options(repo=repo.path, base="main", range_paths=False)).range.commits
    assert [c.changes[0].path for c in default] == ["src/a.c"]
    assert [(c.sha, c.message, c.changes) for c in bare] == [(default[0].sha, GOOD.encode(), [])]


# -- marker_placement: line and assisted_by_format (SPEC §4.2, added 2026-12) ----------------

GLUED = f"Add the widget\n\nWhy.\n\n{MARKER}\n{TRAILERS}"


def test_a_glued_marker_is_accepted_with_placement_line(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"marker_placement": "line"}})
    raw_commit(repo, GLUED)
    code, gate = check(repo)
    assert code == 0 and rules(gate) == [], gate
    # The same message under the default placement is no marker paragraph.
    repo.write(".agents/protocol.yaml", "{}\n")
    code, gate = check(repo)
    assert code == 1 and "marker-missing" in rules(gate)


def test_placement_line_still_reads_the_trailers_below_the_marker(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"marker_placement": "line"}})
    bad = GLUED.replace("Following-Agents-Protocol: true", "Following-Agents-Protocol: yes")
    raw_commit(repo, bad)
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["line"]) for f in gate["findings"]] == [("trailer-value", 6)]


@pytest.mark.parametrize(
    ("msg", "rule", "line"),
    [
        (f"{MARKER}\n\nWhy.\n\n{TRAILERS}", "marker-missing", None),  # the subject is no marker
        ("Add it\n\nWhy.\n\n" + TRAILERS, "marker-missing", None),
        (f"Add it\n\n{MARKER}\n\nWhy.\n\n{MARKER}\n{TRAILERS}", "marker-duplicate", 7),
        (f"Add it\n\nWhy.\n\n{TRAILERS}{MARKER}\n", "marker-last", 8),
    ],
)
def test_placement_line_rules_fire(repo: Repo, msg: str, rule: str, line: int | None) -> None:
    work_repo(repo, {"trailers": {"marker_placement": "line"}})
    raw_commit(repo, msg)
    code, gate = check(repo)
    assert code == 1 and rule in rules(gate), gate
    assert next(f["line"] for f in gate["findings"] if f["rule"] == rule) == line


def test_assisted_by_format_replaces_the_id_model_tool_check(repo: Repo) -> None:
    spaced = TRAILERS.replace(
        "claude:opus-4 [claude-code]", "Claude Code:claude-opus-4-8 [ClaudeCode]"
    )
    work_repo(repo)
    raw_commit(repo, message(trailers=spaced))
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["assisted-by-format"]
    pattern = r"[A-Za-z][A-Za-z0-9 ._-]*:\S+( \[[^\]]+\])+"
    repo.write(
        ".agents/protocol.yaml", yaml.safe_dump({"trailers": {"assisted_by_format": pattern}})
    )
    code, gate = check(repo)
    assert code == 0 and rules(gate) == [], gate
    raw_commit(repo, message(trailers=spaced.replace(" [ClaudeCode]", "")))
    code, gate = check(repo)
    assert code == 1 and rules(gate) == ["assisted-by-format"]
    assert "assisted_by_format" in gate["findings"][0]["message"]


def test_a_bad_assisted_by_format_regex_is_exit_2(repo: Repo) -> None:
    work_repo(repo, {"trailers": {"assisted_by_format": "([unclosed"}})
    run = repo.tools("trailers", "check", "--base", "main")
    assert run.exit_code == 2 and "assisted_by_format" in run.stderr


def _assisted_by_walk(value: str) -> bool:
    """The ``ID:MODEL [TOOL]…`` grammar walked a character at a time: the reference the
    gate's regex is held to."""
    ident, sep, rest = value.partition(":")
    first = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    if not sep or not ident or ident[0] not in first or not set(ident) <= first | set("_.-"):
        return False
    i, n = 0, len(rest)
    while i < n and not rest[i].isspace() and rest[i] not in "[]":
        i += 1
    if i == 0 or i == n or not rest[i].isspace():
        return False
    tools = 0
    while i < n:
        while i < n and rest[i].isspace():
            i += 1
        if i == n:
            break
        close = rest.find("]", i + 1)
        if rest[i] != "[" or close < 0:
            return False
        inner = rest[i + 1 : close]
        if "[" in inner or inner.isspace() or not inner:
            return False
        tools += 1
        i = close + 1
    return tools > 0


_ASSISTED_PIECES = st.sampled_from(
    ["claude", "c.l_a-1", ":", "opus-4", " ", "\t", "\u00a0", "\u2003", "\x1c", "[", "]",
     "[claude-code]", "[ x ]", "[ ]", "[]", "é", "\n", "_", "-", "a:b"]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(_ASSISTED_PIECES, max_size=10).map("".join))
@example("claude:opus-4 [claude-code]")
@example("claude:opus-4 [claude-code] [git]")
@example("claude:opus-4\u00a0[claude-code]")
@example("claude:opus-4 [ ]")
@example("claude:opus-4 [claude-code] \t")
def test_the_assisted_by_grammar_reads_as_the_walk(value: str) -> None:
    assert trailers_gate.assisted_by_ok(value) == _assisted_by_walk(value)


# -- ai-authorship in linear time (SPEC §10: 12,000 Assisted-by x 12,000 Co-authored-by) ------
_WORDS = st.lists(st.sampled_from(["a", "b", "c", "ab"]), max_size=8)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_WORDS, max_size=6), _WORDS)
@example([["a", "b"], ["b"]], ["a", "a", "b"])
@example([["a", "a", "b"], ["a", "b"]], ["a", "a", "a", "b"])
@example([[], ["c"]], ["c"])
def test_phrases_find_what_contains_words_finds(phrases: list[list[str]], found: list[str]) -> None:
    """The automaton over words answers as the phrase-by-phrase scan it replaced: the first
    phrase (in the order given) that occurs in ``found`` as consecutive whole words."""
    expected = next(
        (k for k, phrase in enumerate(phrases) if trailers_gate.contains_words(found, phrase)),
        None,
    )
    assert trailers_gate.Phrases(phrases).first(found) == expected


def _crowded_message(n: int, credited: str) -> str:
    names = "".join(f"Assisted-by: i{i}:m{i} [t{i}]\n" for i in range(n))
    people = "".join(f"Co-authored-by: P {i} <p{i}@x.org>\n" for i in range(n))
    return message(
        trailers="Following-Agents-Protocol: true\nAI-Assisted: true\n"
        + names
        + people
        + f"Co-authored-by: {credited}\n"
    )


def test_ai_authorship_of_a_crowded_mib_message_through_the_cli(repo: Repo) -> None:
    """12,000 Assisted-by names against 12,000 Co-authored-by lines, about 1 MiB: the rule
    reads each line once (it compared every author with every name: minutes). A process of
    its own, stopped after a generous 60 s."""
    work_repo(repo)
    text = _crowded_message(12_000, "M11999 Bot <m@example.com>")
    assert len(text.encode()) <= 1 << 20
    raw_commit(repo, text)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools",
            "--repo",
            str(repo.path),
            "trailers",
            "check",
            "--base",
            "main",
        ],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert run.returncode == 1, run.stderr
    assert "ai-authorship" in run.stdout and "the AI identity 'bot'" in run.stdout


def test_ai_authorship_names_the_first_part_as_before(repo: Repo) -> None:
    """Without an identity, the finding names the first part (in sorted order) that the
    author's words contain."""
    work_repo(repo)
    raw_commit(repo, _crowded_message(50, "M7 T7 <x@example.com>"))
    code, gate = check(repo)
    assert code == 1
    (finding,) = gate["findings"]
    assert finding["rule"] == "ai-authorship" and "'m7' of an `Assisted-by`" in finding["message"]


def test_many_missing_keys_each_point_at_their_stray_line(repo: Repo) -> None:
    """Every required key missing from the block, each written in an earlier paragraph: each
    finding points at its own line, read in one pass over the message."""
    keys = {f"Key-{i}": ["v"] for i in range(300)}
    work_repo(repo, {"trailers": {"required": keys}})
    strays = "".join(f"Key-{i}: v\n\n" for i in range(300))
    raw_commit(repo, f"Add it\n\nWhy.\n\n{strays}{MARKER}\n\nAI-Assisted: false\n")
    code, gate = check(repo)
    assert code == 1
    missing = {f["message"] for f in gate["findings"] if f["rule"] == "trailer-missing"}
    assert len(missing) == 300
    for i in range(300):
        hint = f"no `Key-{i}:` trailer in the trailer block (line {5 + 2 * i} has one, but"
        assert any(m.startswith(hint) for m in missing), hint
