"""The docs gate (SPEC §4.4) on real repositories, through the real CLI."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Repo, run_cli
from tools.gates import docs as docs_gate
from tools.git import parse_added_lines

RULE = {
    "name": "cli-docs",
    "when_changed": ["src/cli/**"],
    "require_changed": ["README.md", "docs/**"],
}

MATRIX = """# Kernels

| Kernel | State | Spec |
|---|---|---|
| attn | `planned` | [spec](../specs/attn.md) |
| gemm | `planned` | [spec](/specs/gemm.md) |
| norm | `planned` | — |
"""

SPEC_NOW = "# attn\n\n## Owed\n- #1\n\n## Now\nThe kernel matches upstream.\n"
SPEC_NUMBERED = "# attn\n\n## 5. Owed\n- #1\n\n## 6. Now\n\n| arm | exit |\n|---|---|\n"
SPEC_EMPTY_NOW = "# attn\n\n## Owed\n- #1\n\n## Now\n\n### Runs\n\n## Later\nText.\n"
SPEC_NO_NOW = "# attn\n\n## Owed\n- #1\n"

SPEC_NOW_CFG = {
    "matrix": "docs/matrix.md",
    "spec_link": r"\]\((?P<spec>[^)\s]+)\)",
    "states": ["planned", "wip", "done"],
}


def setup(repo: Repo, docs: dict[str, Any], files: dict[str, str] | None = None) -> Repo:
    """A base commit on main with the config (and ``files``), and branch ``work`` from it."""
    config = {"base": "main", "docs": docs}
    base = {".agents/protocol.yaml": yaml.safe_dump(config), "README.md": "hello\n"}
    repo.commit("Start\n\nBase.\n", {**base, **(files or {})})
    repo.branch("work")
    return repo


def check(repo: Repo, *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "docs", "check", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def found(gate: dict) -> list[tuple[str, str | None]]:
    return [(f["rule"], f["commit"]) for f in gate["findings"]]


def errors(gate: dict) -> list[dict]:
    return [f for f in gate["findings"] if f["severity"] == "error"]


# -- checkpoint-missed -------------------------------------------------------------------------
def test_checkpoint_missed_names_the_rule_the_commit_and_the_paths(repo: Repo) -> None:
    setup(repo, {"rules": [{**RULE, "message": "document the command"}]})
    sha = repo.commit("Add a command\n\nBody.\n", {"src/cli/run.py": "x\n", "src/cli/b.py": "y\n"})
    code, gate = check(repo)
    assert code == 1
    assert found(gate) == [("checkpoint-missed", sha)]
    finding = gate["findings"][0]
    assert finding["path"] == "src/cli/b.py"
    for part in ("'cli-docs'", "src/cli/b.py", "src/cli/run.py", "README.md", "document the"):
        assert part in finding["message"]
    text = repo.tools("docs", "check")
    assert text.exit_code == 1 and sha[:12] in text.stdout


def test_checkpoint_is_quiet_when_the_docs_change_in_the_same_commit(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]})
    repo.commit("Add a command\n\nBody.\n", {"src/cli/run.py": "x\n", "docs/run.md": "Run.\n"})
    repo.commit("Edit elsewhere\n\nBody.\n", {"src/core.py": "x\n"})
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"], gate["stats"]["commits"]) == (0, "pass", [], 2)


def test_a_later_commit_cannot_discharge_an_earlier_checkpoint(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]})
    first = repo.commit("Add a command\n\nBody.\n", {"src/cli/run.py": "x\n"})
    repo.commit("Document it\n\nBody.\n", {"README.md": "hello\nrun\n"})
    code, gate = check(repo)
    assert code == 1
    assert found(gate) == [("checkpoint-missed", first)]


def test_a_pure_rename_triggers_nothing_unless_renames_is_true(repo: Repo) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": body})
    repo.git("mv", "src/cli/run.py", "src/cli/go.py")
    sha = repo.commit("Rename the command module\n\nBody.\n")
    assert check(repo)[1]["findings"] == []
    # The same history with renames: true: the rename is a change of the CLI.
    cfg = {"base": "main", "docs": {"rules": [{**RULE, "renames": True}]}}
    repo.write(".agents/protocol.yaml", yaml.safe_dump(cfg))
    code, gate = check(repo)
    assert code == 1 and found(gate) == [("checkpoint-missed", sha)]
    assert gate["findings"][0]["path"] == "src/cli/go.py"


def test_a_rename_with_edits_triggers(repo: Repo) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": body})
    repo.git("mv", "src/cli/run.py", "src/cli/go.py")
    sha = repo.commit("Rename and edit\n\nBody.\n", {"src/cli/go.py": body + "more\n"})
    assert found(check(repo)[1]) == [("checkpoint-missed", sha)]


def test_moving_a_file_out_of_the_watched_folder_triggers(repo: Repo) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": body})
    repo.git("mv", "src/cli/run.py", "src/run.py")
    sha = repo.commit("Move out\n\nBody.\n", {"src/run.py": body + "more\n"})
    assert found(check(repo)[1]) == [("checkpoint-missed", sha)]


def test_a_pure_rename_of_the_docs_does_not_discharge_unless_renames_is_true(repo: Repo) -> None:
    body = "".join(f"doc {i}\n" for i in range(20))
    setup(repo, {"rules": [RULE]}, {"docs/a.md": body})
    repo.git("mv", "docs/a.md", "docs/b.md")
    sha = repo.commit("Add a command\n\nBody.\n", {"src/cli/run.py": "x\n"})
    assert found(check(repo)[1]) == [("checkpoint-missed", sha)]


def test_deleting_a_watched_file_triggers(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": "x\n"})
    repo.git("rm", "-q", "src/cli/run.py")
    sha = repo.commit("Drop a command\n\nBody.\n")
    assert found(check(repo)[1]) == [("checkpoint-missed", sha)]


ADDED_RULE = {**RULE, "when_added_line": r"@app\.command\("}


def test_when_added_line_fires_only_on_a_matching_added_line(repo: Repo) -> None:
    setup(repo, {"rules": [ADDED_RULE]}, {"src/cli/run.py": "@app.command()\ndef a(): ...\n"})
    # A change that adds no matching line, one that deletes the matching line, one that adds
    # a matching line outside the watched folder: all quiet.
    repo.commit("Edit a body\n\nBody.\n", {"src/cli/run.py": "@app.command()\ndef b(): ...\n"})
    repo.commit("Drop it\n\nBody.\n", {"src/cli/run.py": "def b(): ...\n"})
    repo.commit("Elsewhere\n\nBody.\n", {"src/lib.py": "@app.command()\n"})
    sha = repo.commit(
        "Add a command\n\nBody.\n",
        {"src/cli/run.py": "def b(): ...\n@app.command()\n", "src/cli/other.py": "x = 1\n"},
    )
    code, gate = check(repo)
    assert code == 1
    assert found(gate) == [("checkpoint-missed", sha)]
    # Only the path that added the matching line is named.
    assert gate["findings"][0]["path"] == "src/cli/run.py"
    assert "src/cli/other.py" not in gate["findings"][0]["message"]
    assert gate["stats"]["diffs_read"] == 3  # the commits under src/cli/, not "Elsewhere"


def test_when_added_line_reads_crlf_and_non_utf8_lines(repo: Repo) -> None:
    rule = {**RULE, "when_added_line": r"^@app\.command\(\)$"}
    setup(repo, {"rules": [rule]})
    sha = repo.commit(
        "Add a command\n\nBody.\n",
        {"src/cli/run.py": b"# caf\xe9\r\n@app.command()\r\ndef a(): ...\r\n"},
    )
    assert found(check(repo)[1]) == [("checkpoint-missed", sha)]


def test_when_added_line_is_not_fooled_by_lines_that_look_like_patch_headers(repo: Repo) -> None:
    # Added lines "++ b/src/cli/x.py" and "--- a/y" print as "+++ b/…" and "+--- a/…"; a sha
    # on its own line looks like diff-tree's commit line. None may end the hunk early.
    rule = {**RULE, "when_added_line": "LAST"}
    setup(repo, {"rules": [rule]})
    sha40 = "0123456789abcdef0123456789abcdef01234567"
    content = f"++ b/src/cli/x.py\n--- a/y\n{sha40}\ndiff --git a/q b/q\n@@ -1 +1 @@\nLAST\n"
    sha = repo.commit("Add\n\nBody.\n", {"src/cli/run.py": content, "src/cli/x.py": "x\n"})
    code, gate = check(repo)
    assert found(gate) == [("checkpoint-missed", sha)]
    assert gate["findings"][0]["path"] == "src/cli/run.py"


def test_merges_are_excluded(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": "a\n"})
    repo.commit("Main side\n\nBody.\n", {"src/other.py": "x\n"})
    repo.branch("side")
    repo.commit("Side, documented\n\nBody.\n", {"src/cli/side.py": "s\n", "docs/s.md": "S.\n"})
    repo.checkout("work")
    # An evil merge: it also edits the CLI itself without docs. Merges are not judged.
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side")
    repo.write("src/cli/run.py", "a\nmerged\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Merge side\n\nBody.")
    code, gate = check(repo)
    assert (code, gate["findings"], gate["stats"]["merges_skipped"]) == (0, [], 1)
    code, gate = check(repo, "--commit", "HEAD")
    assert (code, gate["findings"], gate["stats"]["merges_skipped"]) == (0, [], 1)


def test_a_root_commit_is_judged_against_the_empty_tree(repo: Repo) -> None:
    config = {"docs": {"rules": [RULE]}}
    root = repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": yaml.safe_dump(config), "src/cli/run.py": "x\n"},
    )
    repo.git("config", "log.showRoot", "false")  # must not hide the root's files
    code, gate = check(repo, "--commit", root)
    assert code == 1 and found(gate) == [("checkpoint-missed", root)]


def test_a_documented_root_commit_is_quiet(make_repo) -> None:
    repo = make_repo()
    config = {"docs": {"rules": [ADDED_RULE]}}
    root = repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": yaml.safe_dump(config),
            "src/cli/run.py": "@app.command()\n",
            "README.md": "Run.\n",
        },
    )
    assert check(repo, "--commit", root)[1]["findings"] == []
    repo.git("rm", "-q", "README.md")
    # A root commit adding a matching line without docs fires, through the diff pass too.
    other = make_repo()
    root2 = other.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": yaml.safe_dump(config), "src/cli/run.py": "@app.command()\n"},
    )
    assert found(check(other, "--commit", root2)[1]) == [("checkpoint-missed", root2)]


def test_staged_reads_the_index_not_the_working_tree(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]})
    repo.write("src/cli/run.py", "x\n")
    repo.git("add", "src/cli/run.py")
    repo.write("README.md", "hello\ndocumented, but not staged\n")
    code, gate = check(repo, "--staged")
    assert code == 1 and found(gate) == [("checkpoint-missed", None)]
    assert "staged change" in gate["findings"][0]["message"]
    # Staged docs pass; an unstaged edit that reverts them changes nothing.
    repo.git("add", "README.md")
    repo.write("README.md", "hello\n")
    assert check(repo, "--staged")[1]["findings"] == []


def test_staged_when_added_line(repo: Repo) -> None:
    setup(repo, {"rules": [ADDED_RULE]}, {"src/cli/run.py": "def a(): ...\n"})
    repo.write("src/cli/run.py", "def a(): ...\n@app.command()\n")
    code, gate = check(repo, "--staged")
    assert code == 0 and gate["findings"] == []  # not staged yet
    repo.git("add", "-A")
    code, gate = check(repo, "--staged")
    assert code == 1 and found(gate) == [("checkpoint-missed", None)]


def test_staged_while_a_merge_is_in_progress_is_not_judged(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]}, {"src/cli/run.py": "a\n"})
    repo.branch("side")
    repo.commit("Side\n\nBody.\n", {"src/cli/run.py": "a\nb\n", "docs/x.md": "X.\n"})
    repo.checkout("work")
    repo.commit("Work\n\nBody.\n", {"src/o.py": "o\n"})
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side")
    code, gate = check(repo, "--staged")
    assert (code, gate["findings"], gate["stats"]["merges_skipped"]) == (0, [], 1)


# -- spec_now ----------------------------------------------------------------------------------
def spec_repo(repo: Repo, spec: str = SPEC_NOW) -> Repo:
    return setup(
        repo,
        {"spec_now": [SPEC_NOW_CFG]},
        {"docs/matrix.md": MATRIX, "specs/attn.md": spec, "specs/gemm.md": spec},
    )


def move(row: str, state: str, text: str = MATRIX) -> str:
    return "\n".join(
        line.replace("`planned`", f"`{state}`") if line.startswith(f"| {row} ") else line
        for line in text.split("\n")
    )


def test_a_state_move_without_its_spec_fires(repo: Repo) -> None:
    spec_repo(repo)
    sha = repo.commit("Attn is done\n\nBody.\n", {"docs/matrix.md": move("attn", "done")})
    code, gate = check(repo)
    assert code == 1 and found(gate) == [("spec-now-missing", sha)]
    finding = gate["findings"][0]
    assert (finding["path"], finding["line"]) == ("docs/matrix.md", 5)
    assert "`planned` -> `done`" in finding["message"]
    assert "specs/attn.md did not change" in finding["message"]


def test_a_state_move_with_its_spec_and_a_filled_now_is_quiet(repo: Repo) -> None:
    spec_repo(repo)
    repo.commit(
        "Attn is done\n\nBody.\n",
        {"docs/matrix.md": move("attn", "done"), "specs/attn.md": SPEC_NOW + "More.\n"},
    )
    # The root-relative link (/specs/gemm.md) resolves from the repository root.
    repo.commit(
        "Gemm is done\n\nBody.\n",
        {
            "docs/matrix.md": move("gemm", "done", move("attn", "done")),
            "specs/gemm.md": SPEC_NUMBERED,
        },
    )
    code, gate = check(repo)
    assert (code, gate["findings"]) == (0, [])


@pytest.mark.parametrize(
    ("spec", "why"),
    [(SPEC_EMPTY_NOW, "an empty Now section"), (SPEC_NO_NOW, "has no Now section")],
)
def test_a_move_whose_spec_has_no_filled_now_fires(repo: Repo, spec: str, why: str) -> None:
    spec_repo(repo)
    sha = repo.commit(
        "Attn is done\n\nBody.\n", {"docs/matrix.md": move("attn", "done"), "specs/attn.md": spec}
    )
    code, gate = check(repo)
    assert code == 1 and found(gate) == [("spec-now-missing", sha)]
    assert why in gate["findings"][0]["message"]


def test_a_later_commit_cannot_discharge_a_move(repo: Repo) -> None:
    spec_repo(repo)
    first = repo.commit("Attn is done\n\nBody.\n", {"docs/matrix.md": move("attn", "done")})
    repo.commit("Evidence\n\nBody.\n", {"specs/attn.md": SPEC_NOW + "Later.\n"})
    assert found(check(repo)[1]) == [("spec-now-missing", first)]


def test_a_row_that_appears_with_a_state_is_a_move(repo: Repo) -> None:
    spec_repo(repo)
    new_row = "| rope | `wip` | [spec](../specs/rope.md) |\n"
    sha = repo.commit("Add rope\n\nBody.\n", {"docs/matrix.md": MATRIX + new_row})
    code, gate = check(repo)
    assert found(gate) == [("spec-now-missing", sha)]
    assert "(new row) -> `wip`" in gate["findings"][0]["message"]
    assert "specs/rope.md does not exist" in gate["findings"][0]["message"]
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit(
        "Add rope\n\nBody.\n",
        {"docs/matrix.md": MATRIX + new_row, "specs/rope.md": SPEC_NOW},
    )
    assert check(repo)[1]["findings"] == []


def test_a_row_that_appears_without_a_state_and_edits_off_the_state_are_quiet(
    repo: Repo,
) -> None:
    spec_repo(repo)
    text = MATRIX + "| rope | — | [spec](../specs/rope.md) |\n"
    text = text.replace("| attn | `planned` | [spec]", "| attn | `planned` | [the spec]")
    text = text.replace("[spec](/specs/gemm.md)", "[the spec](/specs/gemm.md)")
    repo.commit("Edit rows\n\nBody.\n", {"docs/matrix.md": text})
    assert check(repo)[1]["findings"] == []


def test_a_moving_row_without_a_link_is_a_warning(repo: Repo) -> None:
    spec_repo(repo)
    sha = repo.commit("Norm is done\n\nBody.\n", {"docs/matrix.md": move("norm", "done")})
    code, gate = check(repo)
    assert code == 0 and found(gate) == [("spec-link-missing", sha)]
    finding = gate["findings"][0]
    assert finding["severity"] == "warning" and "links no spec" in finding["message"]
    assert "row 'norm' moved `planned` -> `done`" in finding["message"]
    assert finding["line"] == 7


def test_spec_now_in_a_fenced_block_is_not_a_row(repo: Repo) -> None:
    spec_repo(repo)
    fenced = MATRIX + "\n```\n| attn | `done` | [spec](../specs/attn.md) |\n```\n"
    repo.commit("Example\n\nBody.\n", {"docs/matrix.md": fenced})
    assert check(repo)[1]["findings"] == []


def test_spec_now_staged_reads_the_index(repo: Repo) -> None:
    spec_repo(repo)
    repo.write("docs/matrix.md", move("attn", "done"))
    repo.git("add", "docs/matrix.md")
    repo.write("specs/attn.md", SPEC_NOW + "Unstaged evidence.\n")
    code, gate = check(repo, "--staged")
    assert found(gate) == [("spec-now-missing", None)]
    assert "in the staged change" in gate["findings"][0]["message"]
    repo.git("add", "specs/attn.md")
    repo.write("specs/attn.md", SPEC_EMPTY_NOW)  # unstaged: changes nothing
    assert check(repo, "--staged")[1]["findings"] == []


def test_a_matrix_that_exists_nowhere_is_docs_absent(repo: Repo) -> None:
    setup(repo, {"spec_now": [{**SPEC_NOW_CFG, "matrix": "docs/typo.md"}]})
    repo.commit("Work\n\nBody.\n", {"src/a.py": "a\n"})
    code, gate = check(repo)
    assert code == 0 and gate["status"] == "pass"
    assert [(f["rule"], f["severity"], f["path"]) for f in gate["findings"]] == [
        ("docs-absent", "info", "docs/typo.md")
    ]
    assert "docs.spec_now[0].matrix" in gate["findings"][0]["message"]


def test_a_matrix_that_exists_is_not_absent(repo: Repo) -> None:
    spec_repo(repo)
    repo.commit("Work\n\nBody.\n", {"src/a.py": "a\n"})
    assert check(repo)[1]["findings"] == []


def test_nothing_configured_is_docs_absent(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"src/cli/run.py": "x\n"})
    code, gate = check(repo, "--commit", "HEAD")
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("docs-absent", "info")]


# -- range, bad input --------------------------------------------------------------------------
def test_range_empty(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]})
    code, gate = check(repo)
    assert code == 0 and [f["rule"] for f in gate["findings"]] == ["range-empty"]
    run = repo.tools("--format", "json", "docs", "check", "--require-commits")
    assert run.exit_code == 1
    repo.commit("Work\n\nBody.\n", {"src/a.py": "a\n"})
    assert check(repo)[1]["findings"] == []


def test_a_base_that_does_not_resolve_is_a_skip(repo: Repo) -> None:
    repo.commit(
        "Start\n\nBody.\n", {".agents/protocol.yaml": yaml.safe_dump({"docs": {"rules": [RULE]}})}
    )
    code, gate = check(repo)
    assert (code, gate["status"]) == (0, "skip")
    assert "origin/main" in gate["reason"]


@pytest.mark.parametrize(
    ("docs", "key"),
    [
        ({"rules": [{**RULE, "when_added_line": "(unclosed"}]}, "docs.rules[0].when_added_line"),
        ({"spec_now": [{**SPEC_NOW_CFG, "spec_link": r"\((?P<x>.*)\)"}]}, "spec_link"),
        ({"rules": [{**RULE, "when_changed": ["../out/**"]}]}, "docs.rules[0].when_changed"),
        ({"rules": [{"name": "x", "when_changed": ["a"]}]}, "docs.rules[0]"),
    ],
)
def test_bad_config_is_exit_2(repo: Repo, docs: dict, key: str) -> None:
    setup(repo, docs)
    run = repo.tools("docs", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    assert ".agents/protocol.yaml" in run.stderr and key in run.stderr


def test_a_bad_ref_is_exit_2(repo: Repo) -> None:
    setup(repo, {"rules": [RULE]})
    run = repo.tools("docs", "check", "--commit", "nope")
    assert run.exit_code == 2
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr


# -- hostile input -----------------------------------------------------------------------------
MIB = 1 << 20


def _quick(fn, *args: Any) -> Any:
    start = time.perf_counter()
    out = fn(*args)
    assert time.perf_counter() - start < 5, "a 1 MiB input must be judged in linear time"
    return out


@pytest.mark.parametrize(
    "line",
    [
        "|" + "\\|" * (MIB // 2),
        "| " + "`" * MIB,
        "| a |" + " `done` `x" * (MIB // 10),
        "| " + "``` `` `" * (MIB // 8),
        "| " + "\\`" * (MIB // 2),
        "|" + "-" * MIB,
    ],
)
def test_matrix_rows_are_linear_on_a_1_mib_line(line: str) -> None:
    states = frozenset({"done", "x"})
    rows = _quick(docs_gate.matrix_rows, line + "\n", states)
    assert len(rows) <= 1


def test_now_section_check_is_linear_on_a_1_mib_file() -> None:
    text = "## Now\n" + "#" * MIB + "\n\n" + "=" * MIB + "\n"
    assert _quick(docs_gate.now_is_filled, text) is True
    # The same lines without the blank: a setext heading that ends the Now section.
    assert _quick(docs_gate.now_is_filled, text.replace("\n\n", "\n")) is False


def test_patch_parser_is_linear_on_1_mib_lines() -> None:
    header = b"0123456789abcdef0123456789abcdef01234567\n+++ b/a\n@@ -0,0 +1,2 @@\n"
    raw = header + b"+" + b"+" * MIB + b"\n+" + b"@@ -1 +1 @@" * (MIB // 11) + b"\n"
    found = _quick(lambda: parse_added_lines(raw, commits=True))
    lines = found["0123456789abcdef0123456789abcdef01234567"]["a"]
    assert len(lines) == 2 and len(lines[0]) == MIB


def test_a_1_mib_added_line_through_the_cli(repo: Repo) -> None:
    rule = {**RULE, "when_added_line": r"^x+$"}
    setup(repo, {"rules": [rule]})
    sha = repo.commit("Add\n\nBody.\n", {"src/cli/run.py": "x" * MIB + "\n"})
    start = time.perf_counter()
    code, gate = check(repo)
    assert time.perf_counter() - start < 10
    assert found(gate) == [("checkpoint-missed", sha)]


# -- more matrix shapes ------------------------------------------------------------------------
def test_repeated_keys_match_in_order_and_a_lost_state_is_a_move(repo: Repo) -> None:
    spec_repo(repo)
    twice = MATRIX + "| attn | `wip` | [spec](../specs/attn.md) |\n"
    repo.commit(
        "Second attn row\n\nBody.\n",
        {"docs/matrix.md": twice, "specs/attn.md": SPEC_NOW + "Wip.\n"},
    )
    # The second attn row loses its state: a move of that row (line 8), not of the first.
    lost = twice.replace("| attn | `wip` |", "| attn | — |")
    sha = repo.commit("Drop a state\n\nBody.\n", {"docs/matrix.md": lost})
    code, gate = check(repo)
    assert [(f["rule"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("spec-now-missing", sha, 8)
    ]
    assert "`wip` -> (none)" in gate["findings"][0]["message"]


def test_renaming_a_rows_key_makes_it_a_new_row(repo: Repo) -> None:
    spec_repo(repo)
    renamed = MATRIX.replace("| attn |", "| attention |")
    sha = repo.commit("Rename a row\n\nBody.\n", {"docs/matrix.md": renamed})
    assert found(check(repo)[1]) == [("spec-now-missing", sha)]


# -- this repository ---------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


def test_this_repository_is_green_on_its_own_history() -> None:
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"],
        capture_output=True,
        text=True,
    )
    shallow = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("needs this repository's whole history (a full clone)")
    for root in proc.stdout.split():
        run = run_cli(["--repo", str(ROOT), "--format", "json", "docs", "check", "--base", root])
        gate = run.json()["gates"][0]
        assert (run.exit_code, errors(gate)) == (0, []), gate
        assert gate["stats"]["rules"] >= 1  # the repository's own cli-surface rule
