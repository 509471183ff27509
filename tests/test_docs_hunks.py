"""Matrix rows read from a commit's patch (tools.gates.docs_rows.spliced) give the docs gate
the report whole parses give, on real repositories through the real CLI: each history below
is judged twice, reading rows from hunks and parsing every version whole, and both reports
must agree byte for byte; each test also says which commits were read from their patch and
which fell back to a whole parse."""

from __future__ import annotations

import pytest

from tests.conftest import Repo
from tests.gates.test_docs import SPEC_NOW, setup
from tools.gates import docs as docs_gate
from tools.git import Git

MATRIX = "docs/m.md"
STATES = ["OPEN", "CLAIMED", "DONE"]
LINK = r"\]\((?P<spec>[^)\s]+)\)"
ENTRY = {"matrix": MATRIX, "spec_link": LINK, "states": STATES, "state_column": "State"}
RULE = {
    "name": "status",
    "when_row_moves": {"matrix": MATRIX, "to": ["DONE"], "state_column": "State"},
    "require_changed": ["docs/STATUS.md"],
}
DOCS = {"spec_now": [ENTRY], "rules": [RULE]}
HEAD = "| # | Item | State | Spec |\n|---|---|---|---|\n"
SPECS = {f"specs/{n}.md": SPEC_NOW for n in "abcdefghij"}


def row(key: str, state: str, spec: str = "a") -> str:
    return f"| {key} | item {key} | `{state}` | [s](../specs/{spec}.md) |\n"


def table(*rows: tuple[str, str]) -> str:
    return HEAD + "".join(row(k, s) for k, s in rows)


FIVE = table(("a", "OPEN"), ("b", "OPEN"), ("c", "OPEN"), ("d", "OPEN"), ("e", "DONE"))


def start(repo: Repo, text: str | bytes, docs: dict | None = None) -> Repo:
    return setup(repo, docs or DOCS, {MATRIX: text, **SPECS})


def judged(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[list[dict], list[bool]]:
    """The docs gate's findings on ``work`` and, for each commit whose matrix version could be
    made from its patch, in order, whether it was; asserts that parsing every version whole
    gives the same report, in JSON and in text."""
    made: list[bool] = []
    real = docs_gate.spliced

    def spy(old, hunks):  # type: ignore[no-untyped-def]
        version = real(old, hunks)
        made.append(version is not None)
        return version

    runs = {}
    for how, splice in (("hunks", spy), ("whole", lambda old, hunks: None)):
        with monkeypatch.context() as m:
            m.setattr(docs_gate, "spliced", splice)
            runs[how] = [
                repo.tools("--format", fmt, "docs", "check", "--max-findings", "0", *args)
                for fmt in ("json", "text")
            ]
    for fast, whole in zip(runs["hunks"], runs["whole"], strict=True):
        assert fast.exit_code in (0, 1), fast.stderr
        assert (fast.exit_code, fast.stdout, fast.stderr) == (
            whole.exit_code,
            whole.stdout,
            whole.stderr,
        )
    # Both formats read the same commits: the first run's half is the JSON run's.
    assert made[: len(made) // 2] == made[len(made) // 2 :]
    return runs["hunks"][0].json()["gates"][0]["findings"], made[: len(made) // 2]


def lines(findings: list[dict]) -> list[tuple[str, int | None]]:
    return [(f["rule"], f["line"]) for f in findings]


def test_a_row_moved_within_its_table_is_no_move(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE)
    # b goes below d (a hunk removes it, another adds it back), c moves into DONE.
    text = table(("a", "OPEN"), ("c", "DONE"), ("d", "OPEN"), ("b", "OPEN"), ("e", "DONE"))
    sha = repo.commit("Reorder\n\nBody.\n", {MATRIX: text})
    findings, made = judged(repo, monkeypatch)
    assert made == [True]
    assert [(f["rule"], f["commit"], f["line"]) for f in findings] == [
        ("checkpoint-missed", sha, 4),
        ("spec-now-missing", sha, 4),
    ]
    assert "row 'c' moved `OPEN` -> `DONE`" in findings[1]["message"]


def test_rows_of_two_tables_move_in_one_commit(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    two = f"# M\n\n## A\n\n{FIVE}\n## B\n\n{FIVE}"
    start(repo, two)
    moved = two.replace(row("b", "OPEN"), row("b", "CLAIMED"))  # in both tables
    repo.commit("Claim b twice\n\nBody.\n", {MATRIX: moved})
    findings, made = judged(repo, monkeypatch)
    assert made == [True]
    assert lines(findings) == [("spec-now-missing", 8), ("spec-now-missing", 18)]
    assert "(#2 of that header)" in findings[1]["message"]


def test_a_change_far_below_the_header_is_read_from_its_hunk(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [f"k{n}" for n in range(30)]
    text = "# M\n\n" + table(*((k, "OPEN") for k in keys)) + "\nNotes.\n"
    start(repo, text)
    # -U0 hunks carry no context: the header is 25 lines above the hunk.
    repo.commit("Claim\n\nBody.\n", {MATRIX: text.replace(row("k25", "OPEN"), row("k25", "DONE"))})
    repo.commit(
        "Add\n\nBody.\n",
        {MATRIX: text.replace(row("k29", "OPEN"), row("k29", "OPEN") + row("k30", "CLAIMED"))},
    )
    findings, made = judged(repo, monkeypatch)
    assert made == [True, True]
    # The second commit starts again from the first text: k25 goes back to OPEN.
    assert lines(findings) == [
        ("checkpoint-missed", 30),
        ("spec-now-missing", 30),
        ("spec-now-missing", 30),
        ("spec-now-missing", 35),
    ]
    assert "row 'k25' moved `DONE` -> `OPEN`" in findings[2]["message"]
    assert "(new row) -> `CLAIMED`" in findings[3]["message"]


def test_a_table_split_by_a_blank_line_is_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE)
    split = FIVE.replace(row("c", "OPEN"), row("c", "OPEN") + "\n")
    repo.commit("Split\n\nBody.\n", {MATRIX: split})
    # Below the blank line d and e are no rows; then d comes back in a table of its own.
    again = split.replace(row("d", "OPEN"), HEAD + row("d", "DONE"))
    sha = repo.commit("Second table\n\nBody.\n", {MATRIX: again})
    findings, made = judged(repo, monkeypatch)
    assert made == [False, False]
    assert [(f["rule"], f["commit"]) for f in findings] == [
        ("checkpoint-missed", sha),
        ("spec-now-missing", sha),
        ("spec-now-missing", sha),
    ]


def test_a_crlf_matrix_is_read_from_its_hunks(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    crlf = ("# M\n\n" + FIVE + "\nNotes.\n").replace("\n", "\r\n")
    start(repo, crlf)
    moved = crlf.replace("| b | item b | `OPEN`", "| b | item b | `DONE`")
    moved = moved.replace("Notes.", "Notes, more of them.")
    repo.commit("Done b\n\nBody.\n", {MATRIX: moved})
    findings, made = judged(repo, monkeypatch)
    assert made == [True]
    assert lines(findings) == [("checkpoint-missed", 6), ("spec-now-missing", 6)]
    assert "\\r" not in findings[1]["message"]


def test_a_renamed_matrix_is_read_against_its_old_name(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(repo, DOCS, {"docs/old.md": FIVE, **SPECS})
    repo.git("mv", "docs/old.md", MATRIX)
    sha = repo.commit(
        "Rename\n\nBody.\n", {MATRIX: FIVE.replace(row("a", "OPEN"), row("a", "CLAIMED"))}
    )
    assert repo.git("log", "-1", "-M", "--name-status", "--format=").startswith("R")
    findings, made = judged(repo, monkeypatch)
    assert made == [True]
    assert [(f["rule"], f["commit"], f["line"]) for f in findings] == [("spec-now-missing", sha, 3)]


def test_commits_after_a_merge_are_read_against_the_merge(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE)
    repo.commit("Claim a\n\nBody.\n", {MATRIX: FIVE.replace(row("a", "OPEN"), row("a", "CLAIMED"))})
    repo.branch("side", "main")
    repo.commit("Claim d\n\nBody.\n", {MATRIX: FIVE.replace(row("d", "OPEN"), row("d", "CLAIMED"))})
    repo.checkout("work")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge side", "side")
    merged = repo.read(MATRIX).decode()
    assert "| a | item a | `CLAIMED`" in merged and "| d | item d | `CLAIMED`" in merged
    sha = repo.commit("Done d\n\nBody.\n", {MATRIX: merged.replace("d | `CLAIMED`", "d | `DONE`")})
    findings, made = judged(repo, monkeypatch)
    # The merge is not judged; the commit after it is read against the merge's version.
    assert made == [True, True, True]
    done = [f for f in findings if f["commit"] == sha]
    assert lines(done) == [("checkpoint-missed", 6), ("spec-now-missing", 6)]
    assert "row 'd' moved `CLAIMED` -> `DONE`" in done[1]["message"]


def test_a_rewrite_of_the_whole_file_is_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE)
    other = "| # | What | State | Spec |\n|:-|:-|:-|:-|\n" + row("a", "DONE") + row("z", "OPEN")
    repo.commit("Rewrite\n\nBody.\n", {MATRIX: other})
    findings, made = judged(repo, monkeypatch)
    assert made == [False]
    assert lines(findings) == [
        ("checkpoint-missed", 3),
        ("spec-now-missing", 3),
        ("spec-now-missing", 4),
    ]


def test_rows_holding_bytes_that_are_not_utf8(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = FIVE.encode().replace(b"item b", b"item \xff\xfe b")
    start(repo, raw)
    moved = raw.replace(b"\xfe b | `OPEN`", b"\xfe b | `DONE`")
    moved += b"| f | \xc3 | `CLAIMED` | [s](../specs/b.md) |\n"
    repo.commit("Bytes\n\nBody.\n", {MATRIX: moved})
    findings, made = judged(repo, monkeypatch)
    assert made == [True]
    assert lines(findings) == [
        ("checkpoint-missed", 4),
        ("spec-now-missing", 4),
        ("spec-now-missing", 8),
    ]


def test_rows_added_at_a_file_end_without_a_newline(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE.rstrip("\n"))
    repo.commit("Add f\n\nBody.\n", {MATRIX: FIVE + row("f", "CLAIMED").rstrip("\n")})
    repo.commit("Add g\n\nBody.\n", {MATRIX: FIVE + row("f", "CLAIMED") + row("g", "OPEN")})
    findings, made = judged(repo, monkeypatch)
    assert made == [True, True]
    assert lines(findings) == [("spec-now-missing", 8), ("spec-now-missing", 9)]


def test_prose_away_from_tables_is_read_from_its_hunks(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = f"# M\n\nIntro.\n\n{FIVE}\n- 1 row `DONE`.\n\nEnd.\n"
    start(repo, text)
    prose = text.replace("Intro.", "Intro,\nlonger.\n\nMore.").replace("1 row", "one row")
    repo.commit("Prose\n\nBody.\n", {MATRIX: prose.replace("End.\n", "")})
    moved = prose.replace(row("c", "OPEN"), row("c", "DONE"))
    sha = repo.commit("Done c\n\nBody.\n", {MATRIX: moved})
    findings, made = judged(repo, monkeypatch)
    assert made == [True, True]
    assert [(f["rule"], f["commit"], f["line"]) for f in findings] == [
        ("checkpoint-missed", sha, 12),
        ("spec-now-missing", sha, 12),
    ]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Intro.", "```text\nIntro."),  # a fence that swallows the table below
        ("Intro.", "<!--\nIntro."),  # an HTML comment that does too
        ("Intro.", "Intro | a |\n|---|"),  # a table of its own
        ("Intro.\n", "Intro.\n"),  # the blank line before the header goes
        ("Notes.", "Notes.\n| x | y |"),  # text that could join a table
    ],
    ids=["fence", "comment", "new-table", "blank-line-gone", "pipe"],
)
def test_prose_a_table_could_see_is_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    text = f"# M\n\nIntro.\n\n{FIVE}\nNotes.\n"
    start(repo, text)
    changed = (
        text.replace(before + "\n", after) if before.endswith("\n") else text.replace(before, after)
    )
    repo.commit("Prose\n\nBody.\n", {MATRIX: changed.replace(row("b", "OPEN"), row("b", "DONE"))})
    _, made = judged(repo, monkeypatch)
    assert made == [False]


def test_rows_that_do_not_read_back_one_a_line_are_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    start(repo, FIVE)
    # A heading inside the body ends the table: c, d and e are no rows after it.
    repo.commit("Heading\n\nBody.\n", {MATRIX: FIVE.replace(row("c", "OPEN"), "## Later\n")})
    findings, made = judged(repo, monkeypatch)
    assert made == [False]
    assert findings == []


def test_a_table_inside_a_quote_is_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    quoted = "".join(f"> {line}\n" for line in FIVE.splitlines())
    start(repo, quoted)
    repo.commit("Done b\n\nBody.\n", {MATRIX: quoted.replace("b | `OPEN`", "b | `DONE`")})
    findings, made = judged(repo, monkeypatch)
    assert made == [False]
    assert lines(findings) == [("checkpoint-missed", 4), ("spec-now-missing", 4)]


def test_a_state_a_reference_definition_makes_is_parsed_whole(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The state cell `[DONE]` reads as DONE only while `[DONE]` is defined somewhere.
    text = FIVE.replace("`DONE`", "[DONE]") + "\n[DONE]: https://example.com\n"
    start(repo, text)
    repo.commit(
        "Undefine\n\nBody.\n", {MATRIX: text.replace("[DONE]: https://example.com\n", "Gone.\n")}
    )
    repo.commit("Redefine\n\nBody.\n", {MATRIX: text})
    added = text.replace(
        row("a", "OPEN"), row("a", "OPEN") + "| f | f | [DONE] | [s](../specs/f.md) |\n"
    )
    repo.commit("Add f\n\nBody.\n", {MATRIX: added})
    findings, made = judged(repo, monkeypatch)
    assert made == [False, False, False]
    assert [f["rule"] for f in findings] == ["checkpoint-missed"] * 2 + ["spec-now-missing"] * 3
    assert "row 'e' moved `DONE` -> (none)" in findings[2]["message"]
    assert "row 'f' moved (new row) -> `DONE`" in findings[4]["message"]


def test_commit_patches_name_both_sides_of_a_rename(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"docs/old.md": FIVE})
    repo.git("mv", "docs/old.md", MATRIX)
    sha = repo.commit("Rename\n\nBody.\n", {MATRIX: FIVE.replace("`OPEN`", "`DONE`", 1)})
    patches = Git(repo.path).commit_patches([sha], [MATRIX, "docs/old.md"])
    assert [(p.commit, p.old_path, p.new_path) for p in patches] == [(sha, "docs/old.md", MATRIX)]
    old, new = repo.head("HEAD~1:docs/old.md"), repo.head(f"HEAD:{MATRIX}")
    assert patches[0].ids == (old, new)
    hunk = patches[0].patch.hunks[0]
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (3, 1, 3, 1)


def test_prose_that_ends_a_list_item_reaching_past_a_blank_line(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under the list item the indented text and the pipe lines after it are one paragraph;
    # once the item is gone they are a paragraph and a table that interrupts it.
    text = f"- item\n\n  text\n{table(('a', 'DONE'))}\n{table(('b', 'OPEN'))}"
    start(repo, text)
    sha = repo.commit("No list\n\nBody.\n", {MATRIX: text.replace("- item", "Item.")})
    findings, made = judged(repo, monkeypatch)
    assert made == [False]
    assert [(f["rule"], f["commit"], f["line"]) for f in findings] == [
        ("checkpoint-missed", sha, 6),
        ("spec-now-missing", sha, 6),
        ("spec-now-missing", sha, 10),  # b's table is now the second of its header
    ]
    assert "(new row) -> `DONE`" in findings[1]["message"]
    assert "(#2 of that header)" in findings[2]["message"]
