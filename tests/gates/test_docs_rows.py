"""Matrix rows, precisely (SPEC §4.4): tables, key and state columns, what a move is, the
`spec-link-missing` warning and `when_row_moves`, on real repositories through the CLI."""

from __future__ import annotations

import pytest

from tests.conftest import Repo
from tests.gates.test_docs import SPEC_NOW, check, found, setup

STATES = ["OPEN", "CLAIMED", "GATING", "DONE"]
LINK = r"\]\((?P<spec>[^)\s]+)\)"
ENTRY = {"matrix": "docs/roadmap.md", "spec_link": LINK, "states": STATES}

# Two tables whose first cells are the same: `0`, `1`, `2a`.
ROADMAP = """# Roadmap

## Phase A

| # | Item | State | Spec |
|---|---|---|---|
| 0 | setup | `DONE` | [s](../specs/a0.md) |
| 1 | parse | `OPEN` | [s](../specs/a1.md) |
| 2a | emit | `OPEN` | [s](../specs/a2.md) |

## Phase B

| # | Item | State | Spec |
|---|---|---|---|
| 0 | plan | `OPEN` | [s](../specs/b0.md) |
| 1 | build | `DONE` | [s](../specs/b1.md) |
| 2a | ship | `OPEN` | [s](../specs/b2.md) |
"""
SPECS = {f"specs/{n}.md": SPEC_NOW for n in ("a0", "a1", "a2", "b0", "b1", "b2")}


def start(repo: Repo, docs: dict, text: str = ROADMAP) -> Repo:
    return setup(repo, docs, {"docs/roadmap.md": text, **SPECS})


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def rules_lines(gate: dict) -> list[tuple[str, int | None]]:
    return [(f["rule"], f["line"]) for f in gate["findings"]]


# -- tables ------------------------------------------------------------------------------------
def test_rows_of_two_tables_with_the_same_first_cells_never_pair(repo: Repo) -> None:
    start(repo, {"spec_now": [ENTRY]})
    # Row `0` leaves table A: paired by first cell across the file, B's `0` (OPEN) would
    # pair with A's old `0` (DONE) and "move"; within its own table it did not change.
    gone = edit(ROADMAP, "| 0 | setup | `DONE` | [s](../specs/a0.md) |\n", "")
    repo.commit("Drop setup\n\nBody.\n", {"docs/roadmap.md": gone})
    assert check(repo)[1]["findings"] == []
    repo.git("reset", "-q", "--hard", "HEAD~1")
    # One real move, in the second table: only that row (line 15) is named.
    sha = repo.commit(
        "Claim b0\n\nBody.\n",
        {"docs/roadmap.md": edit(ROADMAP, "| 0 | plan | `OPEN`", "| 0 | plan | `CLAIMED`")},
    )
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("spec-now-missing", sha, 15)
    ]
    message = gate["findings"][0]["message"]
    assert "row '0' of the table at line 13" in message and "`OPEN` -> `CLAIMED`" in message


def test_tables_with_the_same_header_are_told_apart_by_their_ordinal(repo: Repo) -> None:
    start(repo, {"spec_now": [ENTRY]})
    # Moving rows between the tables is an appearance in one (a move from none) and a
    # disappearance in the other (no move: no row of the new text).
    moved = edit(ROADMAP, "| 2a | emit | `OPEN` | [s](../specs/a2.md) |\n", "")
    moved = moved.rstrip("\n") + "\n| 3 | emit | `OPEN` | [s](../specs/a2.md) |\n"
    sha = repo.commit("Move emit\n\nBody.\n", {"docs/roadmap.md": moved})
    gate = check(repo)[1]
    assert [(f["rule"], f["commit"]) for f in gate["findings"]] == [("spec-now-missing", sha)]
    assert "(new row) -> `OPEN`" in gate["findings"][0]["message"]
    assert "(#2 of that header)" in gate["findings"][0]["message"]


def test_a_table_split_by_a_blank_line_is_two_tables(repo: Repo) -> None:
    text = "| k | s |\n|---|---|\n| a | `OPEN` [x](../specs/a0.md) |\n"
    start(repo, {"spec_now": [{**ENTRY, "matrix": "docs/roadmap.md"}]}, text)
    # The line after a blank line is no row of the table: adding it moves nothing.
    split = text + "\n| b | `DONE` [x](../specs/a1.md) |\n"
    repo.commit("Add b\n\nBody.\n", {"docs/roadmap.md": split})
    assert check(repo)[1]["findings"] == []
    # A second table with the same header: its rows pair only with that table's rows.
    second = split + "\n| k | s |\n|---|---|\n| a | `DONE` [x](../specs/a2.md) |\n"
    sha = repo.commit("Second table\n\nBody.\n", {"docs/roadmap.md": second})
    gate = check(repo)[1]
    assert rules_lines(gate) == [("spec-now-missing", 9)]
    assert gate["findings"][0]["commit"] == sha
    assert "(new row) -> `DONE`" in gate["findings"][0]["message"]


def test_a_row_without_a_trailing_pipe_is_read(repo: Repo) -> None:
    text = "| k | s | spec\n|---|---|---\n| a | `OPEN` | [x](../specs/a0.md)\n"
    start(repo, {"spec_now": [ENTRY]}, text)
    sha = repo.commit("A\n\nBody.\n", {"docs/roadmap.md": edit(text, "`OPEN`", "`DONE`")})
    gate = check(repo)[1]
    assert [(f["rule"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("spec-now-missing", sha, 3)
    ]


def test_a_crlf_matrix_reads_the_same(repo: Repo) -> None:
    crlf = ROADMAP.replace("\n", "\r\n")
    start(repo, {"spec_now": [ENTRY]}, crlf)
    repo.commit("Prose\n\nBody.\n", {"docs/roadmap.md": edit(crlf, "parse", "parse it")})
    assert check(repo)[1]["findings"] == []
    repo.commit(
        "Claim\n\nBody.\n",
        {"docs/roadmap.md": edit(crlf, "parse | `OPEN`", "parse it | `CLAIMED`")},
    )
    assert [f["rule"] for f in check(repo)[1]["findings"]] == ["spec-now-missing"]


# -- states ------------------------------------------------------------------------------------
def test_evidence_prose_citing_states_is_no_move(repo: Repo) -> None:
    text = "| k | state | notes |\n|---|---|---|\n| a | `GATING` | was `GATING` then `GATING` |\n"
    start(repo, {"spec_now": [ENTRY]}, text)
    # GATING GATING GATING -> GATING GATING: the row's state (the last token) is unchanged.
    prose = edit(text, "was `GATING` then `GATING`", "still `GATING`")
    repo.commit("Prose\n\nBody.\n", {"docs/roadmap.md": prose})
    assert check(repo)[1]["findings"] == []
    # Citing another state before the last token is no move either.
    repo.commit(
        "Cite\n\nBody.\n",
        {"docs/roadmap.md": edit(prose, "still `GATING`", "from `OPEN`, now `GATING`")},
    )
    assert check(repo)[1]["findings"] == []


def test_without_a_state_column_the_last_state_token_is_the_state(repo: Repo) -> None:
    text = "| k | notes |\n|---|---|\n| a | was `OPEN` then `CLAIMED` [x](../specs/a0.md) |\n"
    start(repo, {"spec_now": [ENTRY]}, text)
    sha = repo.commit(
        "Gate\n\nBody.\n", {"docs/roadmap.md": edit(text, "then `CLAIMED`", "then `GATING`")}
    )
    gate = check(repo)[1]
    assert found(gate) == [("spec-now-missing", sha)]
    assert "`CLAIMED` -> `GATING`" in gate["findings"][0]["message"]


STATEFUL = (
    "| k | notes | state | spec |\n|---|---|---|---|\n"
    "| a | cites `DONE` | `OPEN` | [x](../specs/a0.md) |\n"
)


@pytest.mark.parametrize("column", ["state", "State", 3])
def test_the_state_column_by_name_or_index(repo: Repo, column: str | int) -> None:
    start(repo, {"spec_now": [{**ENTRY, "state_column": column}]}, STATEFUL)
    # The notes cite DONE after OPEN → CLAIMED in the state cell: the cell decides.
    noted = edit(STATEFUL, "cites `DONE`", "cites `GATING` and `DONE`")
    repo.commit("Notes\n\nBody.\n", {"docs/roadmap.md": noted})
    assert check(repo)[1]["findings"] == []
    sha = repo.commit(
        "Claim\n\nBody.\n", {"docs/roadmap.md": edit(noted, "| `OPEN` |", "| `CLAIMED` |")}
    )
    gate = check(repo)[1]
    assert found(gate) == [("spec-now-missing", sha)]
    assert "`OPEN` -> `CLAIMED`" in gate["findings"][0]["message"]


def test_a_state_cell_may_hold_the_bare_token(repo: Repo) -> None:
    text = "| k | state | spec |\n|---|---|---|\n| a | OPEN | [x](../specs/a0.md) |\n"
    start(repo, {"spec_now": [{**ENTRY, "state_column": "state"}]}, text)
    sha = repo.commit("Claim\n\nBody.\n", {"docs/roadmap.md": edit(text, "| OPEN |", "| DONE |")})
    assert found(check(repo)[1]) == [("spec-now-missing", sha)]


def test_a_table_without_the_named_state_column_has_no_states(repo: Repo) -> None:
    text = "| k | notes |\n|---|---|\n| a | `OPEN` |\n"
    start(repo, {"spec_now": [{**ENTRY, "state_column": "state"}]}, text)
    repo.commit("X\n\nBody.\n", {"docs/roadmap.md": edit(text, "`OPEN`", "`DONE`")})
    assert check(repo)[1]["findings"] == []


def test_the_key_column(repo: Repo) -> None:
    text = (
        "| # | id | state | spec |\n|---|---|---|---|\n"
        "| 1 | parse | `OPEN` | [x](../specs/a0.md) |\n"
        "| 2 | emit | `OPEN` | [x](../specs/a1.md) |\n"
    )
    start(repo, {"spec_now": [{**ENTRY, "key_column": 2}]}, text)
    # Renumbering the rows changes no key (column 2): no row appears, nothing moves.
    renumbered = text.replace("| 1 | parse", "| 7 | parse").replace("| 2 | emit", "| 8 | emit")
    repo.commit("Renumber\n\nBody.\n", {"docs/roadmap.md": renumbered})
    assert check(repo)[1]["findings"] == []
    # Swapping two rows' order does not pair them by position either.
    swapped = (
        "| # | id | state | spec |\n|---|---|---|---|\n"
        "| 8 | emit | `OPEN` | [x](../specs/a1.md) |\n"
        "| 7 | parse | `OPEN` | [x](../specs/a0.md) |\n"
    )
    repo.commit("Swap\n\nBody.\n", {"docs/roadmap.md": swapped})
    assert check(repo)[1]["findings"] == []


def test_a_lost_state_is_a_move_and_an_appearing_stateless_row_is_not(repo: Repo) -> None:
    start(repo, {"spec_now": [ENTRY]})
    text = edit(ROADMAP, "| 1 | parse | `OPEN` |", "| 1 | parse | — |")
    text += "| 9 | later | — | [s](../specs/b2.md) |\n"
    sha = repo.commit("Drop\n\nBody.\n", {"docs/roadmap.md": text})
    gate = check(repo)[1]
    assert [(f["rule"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("spec-now-missing", sha, 8)
    ]
    assert "`OPEN` -> (none)" in gate["findings"][0]["message"]


# -- spec-link-missing -------------------------------------------------------------------------
def test_a_move_on_a_row_without_a_spec_link_is_a_warning(repo: Repo) -> None:
    text = ROADMAP.replace("| [s](../specs/a1.md) |", "| — |")
    start(repo, {"spec_now": [ENTRY]}, text)
    sha = repo.commit(
        "Claim\n\nBody.\n", {"docs/roadmap.md": edit(text, "parse | `OPEN`", "parse | `CLAIMED`")}
    )
    code, gate = check(repo)
    assert code == 0
    assert [(f["rule"], f["severity"], f["commit"], f["line"]) for f in gate["findings"]] == [
        ("spec-link-missing", "warning", sha, 8)
    ]
    # The same edit with the row's spec link kept is judged by spec-now-missing instead.
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit(
        "Claim\n\nBody.\n",
        {"docs/roadmap.md": edit(ROADMAP, "parse | `OPEN`", "parse | `CLAIMED`")},
    )
    assert [f["rule"] for f in check(repo)[1]["findings"]] == ["spec-now-missing"]


def test_an_edit_of_a_row_without_a_link_that_moves_nothing_is_quiet(repo: Repo) -> None:
    text = ROADMAP.replace("| [s](../specs/a1.md) |", "| — |")
    start(repo, {"spec_now": [ENTRY]}, text)
    repo.commit("Prose\n\nBody.\n", {"docs/roadmap.md": edit(text, "parse |", "parsing |")})
    assert check(repo)[1]["findings"] == []


# -- when_row_moves ----------------------------------------------------------------------------
STATUS_RULE = {
    "name": "status",
    "when_row_moves": {"matrix": "docs/roadmap.md", "to": ["CLAIMED", "GATING"]},
    "require_changed": ["docs/STATUS.md"],
}


def test_a_row_moving_into_a_claim_state_needs_the_status_page(repo: Repo) -> None:
    start(repo, {"rules": [STATUS_RULE], "spec_now": [ENTRY]})
    claim = edit(ROADMAP, "| 2a | ship | `OPEN`", "| 2a | ship | `CLAIMED`")
    sha = repo.commit("Claim\n\nBody.\n", {"docs/roadmap.md": claim, "specs/b2.md": SPEC_NOW + "x"})
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["commit"], f["path"], f["line"]) for f in gate["findings"]] == [
        ("checkpoint-missed", sha, "docs/roadmap.md", 17)
    ]
    message = gate["findings"][0]["message"]
    for part in ("'status'", "row '2a' of the table at line 13", "`OPEN` -> `CLAIMED`"):
        assert part in message
    assert "docs/STATUS.md" in message


def test_when_row_moves_is_quiet_with_the_status_page_or_another_state(repo: Repo) -> None:
    start(repo, {"rules": [STATUS_RULE], "spec_now": [ENTRY]})
    claim = edit(ROADMAP, "| 2a | ship | `OPEN`", "| 2a | ship | `CLAIMED`")
    repo.commit(
        "Claim\n\nBody.\n",
        {"docs/roadmap.md": claim, "specs/b2.md": SPEC_NOW + "x", "docs/STATUS.md": "b2\n"},
    )
    # Into DONE (not a trigger state), and prose citing CLAIMED: no checkpoint.
    done = edit(claim, "| 0 | plan | `OPEN`", "| 0 | plan | `DONE`")
    done = edit(done, "| 1 | build |", "| 1 | build, see `CLAIMED` |")
    repo.commit("Done\n\nBody.\n", {"docs/roadmap.md": done, "specs/b0.md": SPEC_NOW + "y"})
    assert check(repo)[1]["findings"] == []


def test_when_row_moves_with_when_changed_either_triggers(repo: Repo) -> None:
    rule = {**STATUS_RULE, "when_changed": ["src/**"]}
    start(repo, {"rules": [rule]})
    first = repo.commit("Code\n\nBody.\n", {"src/a.py": "x\n"})
    claim = edit(ROADMAP, "| 1 | parse | `OPEN`", "| 1 | parse | `GATING`")
    second = repo.commit("Gate\n\nBody.\n", {"docs/roadmap.md": claim})
    gate = check(repo)[1]
    assert found(gate) == [("checkpoint-missed", first), ("checkpoint-missed", second)]
    assert "row '1' of the table at line 5" in gate["findings"][1]["message"]


def test_when_row_moves_reads_states_of_the_state_column(repo: Repo) -> None:
    rule = {
        **STATUS_RULE,
        "when_row_moves": {**STATUS_RULE["when_row_moves"], "state_column": "state"},
    }
    start(repo, {"rules": [rule]}, STATEFUL)
    # Notes citing CLAIMED after the state cell: no move into CLAIMED.
    repo.commit(
        "Notes\n\nBody.\n",
        {"docs/roadmap.md": STATEFUL.replace("| `OPEN` | [x]", "| `OPEN` `CLAIMED`? no | [x]")},
    )
    gate = check(repo)[1]
    assert [f["rule"] for f in gate["findings"]] == ["checkpoint-missed"]  # the cell's last
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit(
        "Notes\n\nBody.\n",
        {"docs/roadmap.md": STATEFUL.replace("cites `DONE`", "cites `CLAIMED`")},
    )
    assert check(repo)[1]["findings"] == []


def test_when_row_moves_staged_and_renamed_matrix(repo: Repo) -> None:
    start(repo, {"rules": [STATUS_RULE]})
    claim = edit(ROADMAP, "| 1 | parse | `OPEN`", "| 1 | parse | `CLAIMED`")
    repo.write("docs/roadmap.md", claim)
    repo.git("add", "docs/roadmap.md")
    code, gate = check(repo, "--staged")
    assert found(gate) == [("checkpoint-missed", None)]
    assert "in the staged change" in gate["findings"][0]["message"]
    repo.write("docs/STATUS.md", "x\n")
    repo.git("add", "docs/STATUS.md")
    assert check(repo, "--staged")[1]["findings"] == []
    repo.git("reset", "-q", "--hard")
    # The matrix arrives by a rename with a move: judged against the file it came from.
    repo.git("mv", "docs/roadmap.md", "docs/old.md")
    repo.commit("Park\n\nBody.\n")
    repo.git("mv", "docs/old.md", "docs/roadmap.md")
    repo.write("docs/roadmap.md", claim)
    sha = repo.commit("Back\n\nBody.\n")
    gate = check(repo)[1]
    assert found(gate) == [("checkpoint-missed", sha)]
    # Without `states` (and no spec_now on the matrix) only the `to` states are known.
    assert "row '1' of the table at line 5" in gate["findings"][0]["message"]
    assert "moved (none) -> `CLAIMED`" in gate["findings"][0]["message"]


def test_when_row_moves_states_names_the_state_it_left(repo: Repo) -> None:
    rule = {
        **STATUS_RULE,
        "when_row_moves": {**STATUS_RULE["when_row_moves"], "states": STATES},
    }
    start(repo, {"rules": [rule]})
    claim = edit(ROADMAP, "| 1 | parse | `OPEN`", "| 1 | parse | `CLAIMED`")
    sha = repo.commit("Claim\n\nBody.\n", {"docs/roadmap.md": claim})
    gate = check(repo)[1]
    assert found(gate) == [("checkpoint-missed", sha)]
    assert "moved `OPEN` -> `CLAIMED`" in gate["findings"][0]["message"]


def test_when_row_moves_ignores_merges(repo: Repo) -> None:
    start(repo, {"rules": [STATUS_RULE]})
    repo.branch("side")
    claim = edit(ROADMAP, "| 1 | parse | `OPEN`", "| 1 | parse | `CLAIMED`")
    repo.commit("Claim\n\nBody.\n", {"docs/roadmap.md": claim, "docs/STATUS.md": "x\n"})
    repo.checkout("work")
    repo.commit("Other\n\nBody.\n", {"src/a.py": "a\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "Merge side\n\nBody.", "side")
    code, gate = check(repo)
    assert (code, gate["findings"], gate["stats"]["merges_skipped"]) == (0, [], 1)


@pytest.mark.parametrize(
    ("rule", "key"),
    [
        ({"name": "x", "require_changed": ["a"]}, "docs.rules[0]"),
        ({**STATUS_RULE, "when_row_moves": {"matrix": "docs/roadmap.md"}}, "when_row_moves"),
        (
            {**STATUS_RULE, "when_row_moves": {**STATUS_RULE["when_row_moves"], "key_column": 0}},
            "key_column",
        ),
        (
            {
                **STATUS_RULE,
                "when_row_moves": {**STATUS_RULE["when_row_moves"], "matrix": "../x.md"},
            },
            "matrix",
        ),
    ],
)
def test_a_bad_row_trigger_is_exit_2(repo: Repo, rule: dict, key: str) -> None:
    setup(repo, {"rules": [rule]})
    run = repo.tools("docs", "check")
    assert run.exit_code == 2
    assert ".agents/protocol.yaml" in run.stderr and key in run.stderr


def test_a_bad_state_column_is_exit_2(repo: Repo) -> None:
    setup(repo, {"spec_now": [{**ENTRY, "state_column": 0}]})
    run = repo.tools("docs", "check")
    assert run.exit_code == 2 and "state_column" in run.stderr
