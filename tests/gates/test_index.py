"""index gate: every rule fires on a real repository, and its clean twin stays quiet."""

from __future__ import annotations

from tests.conftest import Repo

IDX = ".agents/issue-index.md"
HEAD = "# Issue index\n\nOne row per issue, appended at the tail.\n\n"
TABLE = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def row(n: int, title: str | None = None, kind: str = "bug", rid: str | None = None) -> str:
    return f"| #{n} | {rid or f'R{n}'} | {title or f'Title {n}'} | {kind} |\n"


def index(*rows: str, head: str = HEAD) -> str:
    return head + TABLE + "".join(rows)


def start(repo: Repo, *numbers: int) -> str:
    """A main branch holding an index of ``numbers``, and a feature branch checked out."""
    base = repo.commit("Base\n\nBody.\n", {IDX: index(*(row(n) for n in numbers))})
    repo.branch("feature")
    return base


def check(repo: Repo, *extra: str):
    return repo.tools("--format", "json", "index", "check", "--base", "main", *extra)


def findings(run) -> list[dict]:
    return run.json()["gates"][0]["findings"]


def rules(run) -> list[str]:
    return [f["rule"] for f in findings(run)]


def test_appends_at_the_tail_pass_quietly(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    repo.commit("Add 4\n\nBody.\n", {IDX: index(row(1), row(2), row(3), row(4))})
    repo.commit("Add 5\n\nBody.\n", {IDX: index(row(1), row(2), row(3), row(4), row(5))})
    run = check(repo)
    assert run.exit_code == 0, run.stdout
    assert rules(run) == []
    gate = run.json()["gates"][0]
    assert gate["status"] == "pass" and gate["stats"] == {"rows": 5, "commits": 2}


def test_row_removed(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    repo.commit("Drop 2\n\nBody.\n", {IDX: index(row(1), row(3))})
    run = check(repo)
    assert run.exit_code == 1
    assert rules(run) == ["row-removed"]
    assert "#2" in findings(run)[0]["message"] and "line 8" in findings(run)[0]["message"]


def test_row_edited_names_the_line(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    repo.commit("Edit 2\n\nBody.\n", {IDX: index(row(1), row(2, "Renamed"), row(3))})
    run = check(repo)
    assert rules(run) == ["row-edited"]
    assert findings(run)[0]["line"] == 8
    assert run.exit_code == 1


def test_alignment_whitespace_is_not_an_edit(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.commit("Align\n\nBody.\n", {IDX: index(row(1), "|  #2  |  R2 |  Title 2 | bug  |\n")})
    assert rules(check(repo)) == []


def test_row_moved_is_an_edit(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    repo.commit("Swap\n\nBody.\n", {IDX: index(row(1), row(3), row(2))})
    run = check(repo)
    assert rules(run) == ["row-edited"]
    assert "moved" in findings(run)[0]["message"]


def test_row_inserted_names_the_commit(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    bad = repo.commit("Insert 9\n\nBody.\n", {IDX: index(row(1), row(9), row(2), row(3))})
    repo.commit("Add 10\n\nBody.\n", {IDX: index(row(1), row(9), row(2), row(3), row(10))})
    run = check(repo)
    assert run.exit_code == 1
    assert rules(run) == ["row-inserted"]
    f = findings(run)[0]
    assert f["commit"] == bad and f["line"] == 8 and "#9" in f["message"]


def test_row_inserted_quiet_for_a_new_file_and_for_tail_appends(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    repo.branch("feature")
    repo.commit("Index\n\nBody.\n", {IDX: index(row(1), row(2))})
    repo.commit("Add 3\n\nBody.\n", {IDX: index(row(1), row(2), row(3))})
    run = check(repo)
    assert run.exit_code == 0 and rules(run) == []


def test_merge_lost_row(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.branch("side")
    repo.commit("Add 5\n\nBody.\n", {IDX: index(row(1), row(2), row(5))})
    repo.checkout("feature")
    repo.commit("Add 4\n\nBody.\n", {IDX: index(row(1), row(2), row(4))})
    # "-s ours" keeps our file as is: the side's row 5 is lost by the merge.
    repo.git("merge", "-q", "-s", "ours", "--no-edit", "side")
    merge = repo.head()
    run = check(repo)
    assert run.exit_code == 1
    assert rules(run) == ["merge-lost-row"]
    f = findings(run)[0]
    assert f["commit"] == merge and "#5" in f["message"] and "lacks" in f["message"]


def test_merge_that_changes_a_parent_row(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.branch("side")
    repo.commit("Add 5\n\nBody.\n", {IDX: index(row(1), row(2), row(5))})
    repo.checkout("feature")
    repo.commit("Add 4\n\nBody.\n", {IDX: index(row(1), row(2), row(4))})
    repo.git("merge", "-q", "-s", "ours", "--no-commit", "side")
    repo.commit("Merge side\n\nBody.\n", {IDX: index(row(1), row(2), row(4), row(5, "Changed"))})
    run = check(repo)
    assert rules(run) == ["merge-lost-row"]
    assert "changed row #5" in findings(run)[0]["message"]


def test_union_merge_interleaving_is_quiet(repo: Repo) -> None:
    repo.commit("Attrs\n\nBody.\n", {".gitattributes": f"{IDX} merge=union\n"})
    start(repo, 1, 2)
    repo.branch("side")
    repo.commit("Add 5\n\nBody.\n", {IDX: index(row(1), row(2), row(5))})
    repo.checkout("feature")
    repo.commit("Add 4\n\nBody.\n", {IDX: index(row(1), row(2), row(4))})
    repo.git("merge", "-q", "--no-edit", "side")
    text = repo.read(IDX).decode()
    assert row(4) in text and row(5) in text and "<<<<<<<" not in text
    run = check(repo)
    assert run.exit_code == 0, run.stdout
    assert rules(run) == []
    assert run.json()["gates"][0]["stats"]["commits"] == 3


def test_row_duplicate(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.commit("Again\n\nBody.\n", {IDX: index(row(1), row(2), row(2, "Other"))})
    run = check(repo)
    assert rules(run) == ["row-duplicate"]
    assert findings(run)[0]["line"] == 9 and "first at line 8" in findings(run)[0]["message"]


def test_row_malformed_with_line_numbers_and_escaped_pipes_are_fine(repo: Repo) -> None:
    start(repo, 1)
    good = row(2, r"Pipes \| inside \\\| titles")  # an escaped backslash, then a pipe
    repo.commit("Rows\n\nBody.\n", {IDX: index(row(1), good, "| #3 | R3 | no kind |\n")})
    run = check(repo)
    assert rules(run) == ["row-malformed"]
    f = findings(run)[0]
    assert f["line"] == 9 and "3 cells" in f["message"]


def test_row_malformed_cases(repo: Repo) -> None:
    start(repo, 1)
    bad = [
        "| 3 | R3 | t | k |\n",  # no #
        "| #4 | r4 | t | k |\n",  # row id must start upper-case or digit
        "| #5 | R5 |  | k |\n",  # empty title
        "#6 R6 t k\n",  # no cell boundary at all
        "| #7 | R7 | t \\| k |\n",  # the pipe is escaped: three cells
    ]
    repo.commit("Rows\n\nBody.\n", {IDX: index(row(1), *bad, "\n", row(8))})
    run = check(repo)
    lines = [(f["rule"], f["line"]) for f in findings(run)]
    assert lines == [("row-malformed", n) for n in (8, 9, 10, 11, 12, 13)]
    assert "blank line" in findings(run)[-1]["message"]


def test_row_quiet_with_link_form_and_dash_row(repo: Repo) -> None:
    start(repo, 1)
    link = "| [#2](https://example.com/issues/2) | — | Linked | chore |\n"
    repo.commit("Link\n\nBody.\n", {IDX: index(row(1), link) + "\n\n"})
    run = check(repo)
    assert rules(run) == [] and run.exit_code == 0


def test_no_header_is_malformed(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    repo.branch("feature")
    repo.commit("Index\n\nBody.\n", {IDX: "# Issues\n\n| #1 | R1 | t | k |\n"})
    run = check(repo)
    assert rules(run) == ["row-malformed"]
    assert findings(run)[0]["line"] == 3 and "header" in findings(run)[0]["message"]


def test_union_duplicate(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.checkout("main")
    repo.commit("Main adds 3\n\nBody.\n", {IDX: index(row(1), row(2), row(3, "Main's"))})
    repo.checkout("feature")
    repo.commit("Feature adds 3\n\nBody.\n", {IDX: index(row(1), row(2), row(3, "Ours"))})
    run = check(repo)
    assert rules(run) == ["union-duplicate"]
    f = findings(run)[0]
    assert f["line"] == 9 and "main" in f["message"] and "different row" in f["message"]


def test_union_duplicate_quiet_for_different_issues(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.checkout("main")
    repo.commit("Main adds 4\n\nBody.\n", {IDX: index(row(1), row(2), row(4))})
    repo.checkout("feature")
    repo.commit("Feature adds 3\n\nBody.\n", {IDX: index(row(1), row(2), row(3))})
    run = check(repo)
    assert rules(run) == [] and run.exit_code == 0


def test_header_changed(repo: Repo) -> None:
    start(repo, 1)
    repo.commit("Preamble\n\nBody.\n", {IDX: index(row(1), head="# Issue index\n\nEdited.\n\n")})
    run = check(repo)
    assert rules(run) == ["header-changed"]
    assert findings(run)[0]["line"] == 3


def test_index_absent_passes_with_info(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    repo.branch("feature")
    repo.commit("More\n\nBody.\n", {"README": "y\n"})
    run = check(repo)
    assert run.exit_code == 0
    assert [(f["rule"], f["severity"]) for f in findings(run)] == [("index-absent", "info")]


def test_index_absent_quiet_when_the_index_exists(repo: Repo) -> None:
    start(repo, 1)
    assert "index-absent" not in rules(check(repo))


def test_index_deleted_since_base_is_judged_emptied(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.git("rm", "-q", IDX)
    repo.commit("Drop the index\n\nBody.\n")
    run = check(repo)
    assert run.exit_code == 1
    assert sorted(set(rules(run))) == ["header-changed", "row-removed"]
    assert rules(run).count("row-removed") == 2


def test_base_that_does_not_resolve_is_a_skip(repo: Repo) -> None:
    start(repo, 1)
    run = repo.tools("--format", "json", "index", "check")  # config base: origin/main
    gate = run.json()["gates"][0]
    assert run.exit_code == 0 and gate["status"] == "skip"
    assert "origin/main" in gate["reason"]
    assert repo.tools("index", "check", "--fail-on-skip").exit_code == 1


def test_base_free_checks_still_fail_without_a_base(repo: Repo) -> None:
    start(repo, 1)
    repo.commit("Dup\n\nBody.\n", {IDX: index(row(1), row(1, "Again"), "| bad |\n")})
    run = repo.tools("--format", "json", "index", "check")
    gate = run.json()["gates"][0]
    assert run.exit_code == 1 and gate["status"] == "fail"
    assert sorted(rules(run)) == ["row-duplicate", "row-malformed"]


def test_explicit_base_that_does_not_resolve_is_exit_2(repo: Repo) -> None:
    start(repo, 1)
    run = repo.tools("index", "check", "--base", "no-such-branch")
    assert run.exit_code == 2 and run.stderr.startswith("error: ")


def test_staged_change_is_judged_against_head(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.write(IDX, index(row(9), row(1), row(2)))
    repo.git("add", IDX)
    run = repo.tools("--format", "json", "index", "check", "--staged")
    assert rules(run) == ["row-inserted"]
    assert findings(run)[0]["commit"] is None and findings(run)[0]["line"] == 7
    repo.write(IDX, index(row(1)))
    repo.git("add", IDX)
    assert rules(repo.tools("--format", "json", "index", "check", "--staged")) == ["row-removed"]
    repo.write(IDX, index(row(1), row(2), row(3)))
    repo.git("add", IDX)
    run = repo.tools("--format", "json", "index", "check", "--staged")
    assert run.exit_code == 0 and rules(run) == []


def test_uncommitted_change_is_judged_too(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.commit("Add 3\n\nBody.\n", {IDX: index(row(1), row(2), row(3))})
    repo.write(IDX, index(row(1), row(7), row(2), row(3)))
    run = check(repo)
    assert rules(run) == ["row-inserted"]
    assert "uncommitted" in findings(run)[0]["message"]
    # --head judges the committed state only.
    assert rules(check(repo, "--head", "HEAD")) == []


def test_preflight_runs_the_index_gate(repo: Repo) -> None:
    start(repo, 1)
    repo.commit("Dup\n\nBody.\n", {IDX: index(row(1), row(1))})
    run = repo.tools("preflight", "--gate", "index", "--base", "main")
    assert run.exit_code == 1
    assert "FAIL index" in run.stdout and "row-duplicate" in run.stdout


def test_github_format_annotates_the_line(repo: Repo) -> None:
    start(repo, 1)
    repo.commit("Dup\n\nBody.\n", {IDX: index(row(1), row(1))})
    run = repo.tools("--format", "github", "index", "check", "--base", "main")
    assert f"::error file={IDX},line=8,title=index/row-duplicate::" in run.stdout


def test_crlf_index_is_parsed(repo: Repo) -> None:
    text = index(row(1), row(2)).replace("\n", "\r\n")
    repo.commit("Base\n\nBody.\n", {IDX: text})
    repo.branch("feature")
    repo.commit("Add\n\nBody.\n", {IDX: text + row(3).replace("\n", "\r\n")})
    run = check(repo)
    assert run.exit_code == 0 and rules(run) == []


# -- tools index append ------------------------------------------------------------------------
def test_append_writes_an_escaped_row_and_keeps_the_newline(repo: Repo) -> None:
    start(repo, 1)
    run = repo.tools(
        "index", "append", "--issue", "2", "--row", "R2", "--title", "a | b", "--kind", "bug"
    )
    assert run.exit_code == 0, run.stderr
    text = repo.read(IDX).decode()
    assert text.endswith("| #2 | R2 | a \\| b | bug |\n")
    repo.commit("Append\n\nBody.\n")
    assert rules(check(repo)) == []


def test_append_refuses_a_duplicate_with_exit_1(repo: Repo) -> None:
    start(repo, 1)
    before = repo.read(IDX)
    run = repo.tools(
        "index", "append", "--issue", "1", "--row", "R9", "--title", "t", "--kind", "k"
    )
    assert run.exit_code == 1 and "already" in run.stderr
    assert repo.read(IDX) == before


def test_append_creates_the_index_and_mends_a_missing_final_newline(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    run = repo.tools("index", "append", "--issue", "1", "--row", "—", "--title", "t", "--kind", "k")
    assert run.exit_code == 0, run.stderr
    repo.write(IDX, repo.read(IDX).rstrip(b"\n"))
    run = repo.tools(
        "index", "append", "--issue", "2", "--row", "R2", "--title", "u", "--kind", "k"
    )
    assert run.exit_code == 0
    text = repo.read(IDX).decode()
    assert text.endswith("| #1 | — | t | k |\n| #2 | R2 | u | k |\n")


def test_append_goes_above_trailing_blank_lines(repo: Repo) -> None:
    repo.commit("Base\n\nBody.\n", {IDX: index(row(1)) + "\n\n"})
    repo.tools("index", "append", "--issue", "2", "--row", "R2", "--title", "t", "--kind", "k")
    assert repo.read(IDX).decode() == index(row(1), "| #2 | R2 | t | k |\n") + "\n\n"


def test_append_bad_arguments_are_exit_2(repo: Repo) -> None:
    start(repo, 1)
    before = repo.read(IDX)
    for args in (
        ["--issue", "2", "--row", "bad id", "--title", "t", "--kind", "k"],
        ["--issue", "0", "--row", "R2", "--title", "t", "--kind", "k"],
        ["--issue", "2", "--row", "R2", "--title", "two\nlines", "--kind", "k"],
        ["--issue", "2", "--row", "R2", "--title", "  ", "--kind", "k"],
    ):
        run = repo.tools("index", "append", *args)
        assert run.exit_code == 2, args
        assert run.stderr.startswith("error: ") and "Traceback" not in run.stderr
    assert repo.read(IDX) == before


def test_append_to_an_index_without_header_is_exit_2(repo: Repo) -> None:
    repo.commit("Base\n\nBody.\n", {IDX: "# just prose\n"})
    run = repo.tools(
        "index", "append", "--issue", "1", "--row", "R1", "--title", "t", "--kind", "k"
    )
    assert run.exit_code == 2 and IDX in run.stderr
    assert repo.read(IDX) == b"# just prose\n"


def test_append_round_trips_tricky_titles(repo: Repo) -> None:
    from tools import index_table

    start(repo, 1)
    titles = ["a|b", "a\\|b", "C:\\dir\\", "x \\\\| y", "|", "ends with \\"]
    for n, title in enumerate(titles, 2):
        run = repo.tools(
            "index", "append", "--issue", str(n), "--row", "—", "--title", title, "--kind", "k|x"
        )
        assert run.exit_code == 0, run.stderr
    table = index_table.parse(repo.read(IDX).decode())
    assert table.malformed == []
    assert [r.title_text for r in table.rows[1:]] == titles
    assert {index_table.unescape_cell(r.kind) for r in table.rows[1:]} == {"k|x"}
    repo.commit("Append\n\nBody.\n")
    assert rules(check(repo)) == []


APPENDER = """
import sys, time
from pathlib import Path
from tools.cli.main import app
repo, go, first = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
while not go.exists():
    time.sleep(0.001)
for n in range(first, first + 10):
    args = ["--repo", repo, "index", "append", "--issue", str(n), "--row", "—",
            "--title", f"t{n}", "--kind", "k"]
    try:
        app(args, prog_name="tools")
    except SystemExit as exc:
        assert exc.code in (0, None), exc.code
"""


def test_concurrent_appends_lose_no_row(repo: Repo, tmp_path) -> None:
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from tools import index_table

    start(repo, 1)
    go = tmp_path / "go"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(repo.path), str(go), str(100 + 10 * w)],
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for w in range(4)
    ]
    time.sleep(0.5)
    go.touch()
    assert [p.wait(timeout=120) for p in procs] == [0] * 4
    table = index_table.parse(repo.read(IDX).decode())
    assert table.malformed == []
    assert sorted(r.key for r in table.rows) == [1, *range(100, 140)]
