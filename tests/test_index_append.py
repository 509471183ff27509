"""Appending to the issue index and to the ledger as plain function calls: the row's place, the
refusals (exit 1) and the input errors (exit 2) the commands print."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools import index_append, index_table, ledger
from tools.errors import Refused, UsageError

IDX = ".agents/issue-index.md"


def test_a_row_goes_after_the_last_row_above_trailing_blank_lines() -> None:
    text = "# I\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n| #1 | — | t | k |\n\n\n"
    out, at = index_append.append_row(text, "| #2 | — | u | k |")
    assert at == 6
    assert out.endswith("| #1 | — | t | k |\n| #2 | — | u | k |\n\n\n")


def test_a_row_follows_the_files_line_ending_and_ends_the_file_with_one() -> None:
    out, at = index_append.append_row("a\r\nb\r\n", "row")
    assert (out, at) == ("a\r\nb\r\nrow\r\n", 3)
    assert index_append.append_row("a\nb", "row") == ("a\nb\nrow\n", 3)
    assert index_append.append_row("", "row") == ("row\n", 1)


def test_append_creates_the_index_and_refuses_a_second_row_of_an_issue(tmp_path: Path) -> None:
    full = tmp_path / ".agents" / "issue-index.md"
    line = index_table.render_row(1, "—", "t", "k")
    done = index_append.append(full, tmp_path, IDX, 1, line)
    table = index_table.parse(full.read_text())
    assert done == index_append.Appended(table.rows[0].line, line)
    assert [r.key for r in table.rows] == [1]
    before = full.read_bytes()
    with pytest.raises(Refused) as refused:
        index_append.append(full, tmp_path, IDX, 1, index_table.render_row(1, "R", "u", "k"))
    assert str(refused.value) == f"issue #1 is already in {IDX} (line {done.line_no})"
    assert full.read_bytes() == before


def test_append_refuses_a_directory_a_headerless_file_and_a_failed_write(tmp_path: Path) -> None:
    line = index_table.render_row(1, "—", "t", "k")
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(UsageError, match="is a directory, expected the index file"):
        index_append.append(tmp_path / "dir.md", tmp_path, "dir.md", 1, line)
    (tmp_path / "prose.md").write_text("# just prose\n")
    with pytest.raises(UsageError, match="no `| Issue | Row | Title | Kind |` table header"):
        index_append.append(tmp_path / "prose.md", tmp_path, "prose.md", 1, line)
    (tmp_path / "file").write_text("")  # the index's folder is a file: the write fails
    with pytest.raises(UsageError) as failed:
        index_append.append(tmp_path / "file" / "idx.md", tmp_path, "file/idx.md", 1, line)
    assert failed.value.where == "file/idx.md" and failed.value.message.startswith("cannot write")


def test_the_command_says_the_refusal_in_one_line(make_repo: Callable[..., Repo]) -> None:
    repo = make_repo()
    args = ("index", "append", "--issue", "4", "--row", "—", "--title", "t", "--kind", "k")
    assert repo.tools(*args).exit_code == 0
    run = repo.tools(*args)
    assert (run.exit_code, run.stdout) == (1, "")
    assert run.stderr == f"refused: issue #4 is already in {IDX} (line 5)\n"


def test_a_ledger_append_that_cannot_write_names_the_ledger(tmp_path: Path) -> None:
    record = ledger.make_record("note", {"x": 1})
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError) as failed:
        ledger.append_to_ledger(tmp_path, tmp_path / "file" / "l.jsonl", "file/l.jsonl", [record])
    assert failed.value.where == "file/l.jsonl"
    assert failed.value.message.startswith("cannot append: ")


def test_a_ledger_append_returns_what_it_wrote_and_its_notices(tmp_path: Path) -> None:
    full = tmp_path / "l.jsonl"
    full.write_bytes(b'{"torn')
    record = ledger.make_record("note", {"x": 1})
    written = ledger.append_to_ledger(tmp_path, full, "l.jsonl", [record, record])
    assert list(written) == [record] and len(written.notices) == 1
    assert "moved a torn final line" in written.notices[0]
    again = ledger.append_to_ledger(tmp_path, full, "l.jsonl", [record])
    assert (list(again), again.notices) == ([], [])
