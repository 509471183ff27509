"""Edges that no other fast test reaches: the trailer block finder, the index table, the
merges gate's conflict hunks and the in-place restore.

Each test pins one behaviour a mutant of tools/trailer_block.py, tools/index_table.py,
tools/gates/merges.py or tools/mutate/inplace.py changed without a test noticing
(bench/bench_mutmut.py; the survivors left are listed in bench/mutmut-survivors.md). Plain
calls or a tiny real repository, each well under a second; where git has an answer (``git
interpret-trailers --parse``), the message is checked against real git too.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.test_trailers_parser import git_parse as git_parse_bytes
from tools import index_table as IT
from tools.gates import merges
from tools.git import Commit, Git, MergeTree, encode
from tools.mutate import inplace
from tools.mutate.apply import FileState
from tools.report import GateResult
from tools.trailer_block import SCISSORS, find_block, git_parse_output, git_trailers


def git_parse(text: str) -> str:
    """What real git prints for ``text``, as text (the one call: test_trailers_parser's)."""
    return git_parse_bytes(text).decode("utf-8", "surrogateescape")


def pairs(text: str) -> list[tuple[str, str]]:
    return [(t.key, t.value) for t in git_trailers(text)]


# -- trailer_block: git reads the message as a C string ------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # A NUL ends the message: the block after it (and after a second NUL) is not read.
        ("Subject\n\nA: 1\0\n\nB: 2\0\n", [("A", "1")]),
        ("Subject\n\nA: 1\n\0\nB: 2\n", [("A", "1")]),
        # A NUL as the very first character: nothing is left.
        ("\0Subject\n\nA: 1\n", []),
    ],
    ids=["two-nuls", "one-nul", "nul-first"],
)
def test_nothing_after_a_nul_is_read(message: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)


# -- trailer_block: the scissors line --------------------------------------------------------


def test_the_first_of_two_scissors_lines_cuts_the_message() -> None:
    message = f"Subject\n\nA: 1\n{SCISSORS}\nB: 2\n{SCISSORS}"
    assert pairs(message) == [("A", "1")]
    assert git_parse_output(message) == git_parse(message)


def test_a_scissors_line_right_after_a_leading_newline_cuts_everything() -> None:
    message = f"\n{SCISSORS}Subject\n\nA: 1\n"
    assert pairs(message) == []
    assert git_parse_output(message) == git_parse(message)
    # Without the scissors line the same text has a block (the title is the empty line).
    assert pairs("\nSubject\n\nA: 1\n") == [("A", "1")]


# -- trailer_block: what is ignored at the end of the message -------------------------------


@pytest.mark.parametrize(
    ("message", "expected", "end"),
    [
        # An old-style Conflicts: block at the end is not the trailer block (its "Conflicts:"
        # line alone would be a trailer), whether or not paths follow it, whatever the
        # second line of the message is.
        ("Subject\n\nA: 1\n\nConflicts:\n", [("A", "1")], 3),
        ("Subject\nwrapped\n\nA: 1\n\nConflicts:\n\tf.c\n", [("A", "1")], 4),
        # The same after a message that starts with a blank line (an empty title).
        ("\nA: 1\n\nConflicts:\n\tf.c\n", [("A", "1")], 2),
        # A tab-indented line is a path only inside a Conflicts: block: at the end of the
        # message it continues the trailer above it.
        ("Subject\n\nA: 1\n\tmore\n", [("A", "1 more")], 4),
        # Below a comment it is no path either: the paragraph is no trailer block (whether a
        # line above already ended a trailing run or not).
        ("\nA: 1\n# note\n\tx\n", [], None),
        ("Subject\n\nA: 1\n# note\n\tx\n", [], None),
        # Trailing comment lines are outside the block; its last line is the trailer's.
        ("Subject\nwrapped\n\nA: 1\n# note\n", [("A", "1")], 4),
    ],
    ids=[
        "conflicts",
        "conflicts-paths",
        "conflicts-empty-title",
        "tab-end",
        "tab-comment",
        "tab-comment-after-reset",
        "comment",
    ],
)
def test_the_ignored_tail_of_a_message(
    message: str, expected: list[tuple[str, str]], end: int | None
) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)
    assert find_block(message, squash=False).end == end


# -- trailer_block: comment lines inside the block, git's whitespace in values --------------


def test_a_comment_line_first_in_the_block_counts_for_nothing() -> None:
    message = "Subject\n\n# note\nA: 1\n"
    assert pairs(message) == [("A", "1")]
    assert git_parse_output(message) == git_parse(message)
    assert (find_block(message).start, find_block(message).end) == (3, 4)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # \v, \f and non-ASCII spaces are no whitespace to git: values keep them, at either
        # end, folded or not.
        ("Subject\n\nA: v\x0b\nB: \u00a0w\u00a0\n", [("A", "v\x0b"), ("B", "\u00a0w\u00a0")]),
        ("Subject\n\nA: a\n b\x0b\nB: c\n  d\x0c\n", [("A", "a b\x0b"), ("B", "c d\x0c")]),
    ],
    ids=["plain", "folded"],
)
def test_values_are_trimmed_of_gits_whitespace_only(
    message: str, expected: list[tuple[str, str]]
) -> None:
    assert pairs(message) == expected
    assert git_parse_output(message) == git_parse(message)


# -- trailer_block: a recognised block needs a quarter of trailers; continuations don't count


@pytest.mark.parametrize("indent", [" ", "\t", "\r"], ids=["space", "tab", "cr"])
def test_continuation_lines_do_not_count_as_trailers(indent: str) -> None:
    cont = "".join(f"{indent}c{i}\n" for i in range(3))
    # One sign-off (its three continuation lines count for nothing) and four other lines:
    # 1 * 3 < 4, so this is no trailer block...
    short = f"Subject\n\nSigned-off-by: A <a@x>\n{cont}x1\nx2\nx3\nx4\n"
    assert pairs(short) == []
    assert git_parse_output(short) == git_parse(short)
    # ...and with three other lines it is (1 * 3 >= 3).
    enough = f"Subject\n\nSigned-off-by: A <a@x>\n{cont}x1\nx2\nx3\n"
    assert git_parse_output(enough) == git_parse(enough)
    assert [t.key for t in git_trailers(enough)] == ["Signed-off-by"]


# -- index_table: a table without a header, huge issue numbers, a body past one chunk -------


def test_an_index_without_a_header_has_no_rows() -> None:
    t = IT.parse("# Issue index\n\n| #1 | R1 | T | k |\n")
    assert t.header_line is None and t.malformed[0][0] == 3
    assert (t.row_count, t.keys(), t.unique, t.duplicates()) == (0, set(), True, [])
    assert t.rows == [] and t.entries() == []


def test_an_issue_number_past_two_to_the_63_on_a_line_read_alone() -> None:
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    # The first row is read in bulk; the huge number is in a row the bulk reader refuses
    # (a non-ASCII first character of its title), read alone while the keys are still
    # machine integers; the row after it is read line by line too.
    rows = "".join(
        f"{row}\n"
        for row in (
            "| #1 | R1 | T | k |",
            "| #99999999999999999999 | R | Éclair | k |",
            "| #2 | R2 | é | k |",
        )
    )
    t = IT.parse(head + rows)
    assert list(t.row_keys) == [1, 99999999999999999999, 2]
    assert list(t.row_lines) == [3, 4, 5] and t.malformed == []
    assert t.duplicates() == [] and t.row_at(1).title == "Éclair"


def test_a_body_longer_than_one_chunk_is_read_to_its_end() -> None:
    head = "# I\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    n = (IT._CHUNK // 30) + 5_000  # rows of about 30 bytes: past one chunk of the reader
    body = "".join(f"| #{i} | R{i} | Title | bug |\n" for i in range(1, n + 1))
    assert len(encode(body)) > IT._CHUNK
    t = IT.parse(head + body + "| #0 | R | Tïtle | k |\n")
    assert t.row_count == n + 1 and t.malformed == []
    assert t.row_keys[0] == 1 and t.row_keys[n - 1] == n and t.row_keys[n] == 0
    assert t.row_lines[n] == n + 5
    assert t.body_end == len(t.raw)


def test_the_body_ends_after_the_newline_of_a_row_with_a_long_blank_tail() -> None:
    # The blanks after the last row reach past the body-end finder's 64 KiB window: the
    # body still ends where that line does, its newline included.
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    for tail in ("\n", "\n\n", ""):
        t = IT.parse(head + "| #1 | R1 | T | k |" + " " * 70_000 + tail)
        assert t.body_end == len(head) + 19 + 70_000 + (1 if tail else 0), repr(tail)
        assert list(t.row_keys) == [1] and t.malformed == [] and t.clean


# -- gates/merges: conflict markers, the runs outside the hunks, the files moved aside -------

OURS, THEIRS = "a" * 40, "b" * 40


def _marker(char: str, label: str, tail: str = "\n") -> bytes:
    return f"{char * 7} {label}{tail}".encode()


def test_a_marker_line_is_only_stripped_of_its_line_ending() -> None:
    assert merges._is_marker(_marker("<", OURS, "\r\n"), b"<", OURS.encode())
    # Trailing blanks after the label are content, not git's marker.
    for tail in (" \n", "\t\n", " \r\n"):
        assert not merges._is_marker(_marker("<", OURS, tail), b"<", OURS.encode()), tail


def test_every_run_between_hunks_is_looked_for_after_an_empty_one() -> None:
    hunk = [_marker("<", OURS), _marker(">", THEIRS)]
    # Two hunks that touch (an empty run between them), then a run "m" before a third hunk.
    lines = [*hunk, *hunk, b"m\n", *hunk, b"z\n"]
    regions = [(1, 2), (3, 4), (6, 7)]
    assert merges.outside_kept(lines, regions, b"R\nm\nR\nz\n")
    assert not merges.outside_kept(lines, regions, b"R\nz\n")  # the run "m" is dropped


def test_a_run_between_hunks_is_looked_for_after_the_head_only() -> None:
    hunk = [_marker("<", OURS), _marker(">", THEIRS)]
    lines = [b"m\n", *hunk, b"m\n", *hunk, b"t\n"]
    regions = [(2, 3), (5, 6)]
    assert merges.outside_kept(lines, regions, b"m\nQ\nm\nt\n")
    # The second "m" is gone: the head's "m" above it must not stand in for it.
    assert not merges.outside_kept(lines, regions, b"m\nQ\nt\n")


def test_a_file_moved_out_of_a_folders_way_is_named_by_its_stem() -> None:
    commit = Commit("c" * 40, [OURS, THEIRS], b"Merge\n", 0, [])
    m = merges._Merge(commit, "d" * 40, MergeTree("e" * 40, []))
    conflicted = [f"d~{THEIRS}", f"e~{OURS}", "f", f"g~{'f' * 40}"]
    assert merges._side_names(m, conflicted) == ("d~", "e~")


def test_a_resolution_is_counted_as_a_parents_version_or_absent_in_both(repo: Repo) -> None:
    nine = "".join(f"line {i}\n" for i in range(1, 10))
    repo.commit("Base\n\nBody.\n", {"c.txt": nine, "d.txt": nine})
    repo.branch("side")
    theirs = repo.commit("Side\n\nBody.\n", {"c.txt": nine.replace("line 5", "side 5")})
    repo.git("rm", "-q", "d.txt")
    theirs = repo.commit("Side drops d\n\nBody.\n")
    repo.checkout("main")
    changed = {"c.txt": nine.replace("line 5", "main 5"), "d.txt": nine.replace("line 2", "x")}
    ours = repo.commit("Main\n\nBody.\n", changed)
    repo.git("merge", "--no-ff", "--no-commit", "side", check=False)
    repo.git("checkout", "--theirs", "c.txt")
    repo.git("rm", "-q", "d.txt")
    sha = repo.commit("Merge\n\nBody.\n")
    git = Git(repo.path)
    auto = git.merge_tree(ours, theirs)
    assert auto is not None and auto.conflicted == ["c.txt", "d.txt"]
    tree = repo.git("rev-parse", f"{sha}^{{tree}}").strip()
    result = GateResult("merges")
    merges._judge(
        result, git, merges._Merge(Commit(sha, [ours, theirs], b"", 0, []), tree, auto), None
    )
    assert [(f.rule, f.path, f.message.partition("resolved it: ")[2]) for f in result.findings] == [
        (
            "merge-resolved",
            "c.txt",
            f"+1/-1 against {ours[:12]} (first parent), "
            f"+0/-0 (that parent's version) against {theirs[:12]}",
        ),
        (
            "merge-resolved",
            "d.txt",
            f"+0/-9 against {ours[:12]} (first parent), absent in both against {theirs[:12]}",
        ),
    ]


# -- mutate/inplace: the places of a restore, a symlink with the original's bytes, the steps --

ORIGINAL = b"int scale(int x) { return 2 * x; }\n"
MUTANT = b"int scale(int x) { return 3 * x; }\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_places_of_a_path_that_is_not_utf8_hash_its_bytes(tmp_path: Path) -> None:
    path = os.fsdecode(b"\xff.c")  # a name git reports as bytes, held with surrogates
    places = inplace._places(tmp_path / "folder", tmp_path / "tree" / path, path)
    assert places[0].stage.name == _sha(b"\xff.c")[:32] + ".stage"


def test_a_symlink_holding_the_originals_bytes_is_replaced_not_chmodded(tmp_path: Path) -> None:
    root, folder = tmp_path / "tree", tmp_path / "folder"
    root.mkdir()
    folder.mkdir()
    os.symlink("t.c", root / "a.c")  # the arm made a link whose target reads as the original
    original = FileState(b"t.c", 0o644)
    got = inplace.restore_file(root, "a.c", original, [], folder=folder)
    assert got.outcome == "unchanged"
    assert not (root / "a.c").is_symlink() and (root / "a.c").read_bytes() == b"t.c"


def test_a_removed_file_whose_name_vanishes_once_placed_is_a_conflict(tmp_path: Path) -> None:
    root, folder = tmp_path / "tree", tmp_path / "folder"
    root.mkdir()
    folder.mkdir()

    def at(step: str) -> None:
        if step == "placed":
            os.unlink(root / "a.c")

    got = inplace.restore_file(
        root, "a.c", FileState(ORIGINAL, 0o644), [None], folder=folder, between=at
    )
    assert (got.outcome, got.now) == ("conflict", FileState(None))


def test_the_undo_of_a_late_write_reports_its_steps(tmp_path: Path) -> None:
    root, folder = tmp_path / "tree", tmp_path / "folder"
    root.mkdir()
    folder.mkdir()
    (root / "a.c").write_bytes(MUTANT)
    os.chmod(root / "a.c", 0o644)
    steps: list[str] = []
    with open(root / "a.c", "ab") as held:  # an editor that keeps the file open

        def at(step: str) -> None:
            steps.append(step)
            if step == "placed":  # it writes through its descriptor, into the aside
                held.write(b"// more\n")
                held.flush()

        got = inplace.restore_file(
            root, "a.c", FileState(ORIGINAL, 0o644), [_sha(MUTANT)], folder=folder, between=at
        )
    assert got.outcome == "conflict"
    assert (root / "a.c").read_bytes() == MUTANT + b"// more\n"
    assert steps == [
        "checked",
        "staged",
        "aside",
        "verified",
        "placed",
        "undo-aside",
        "undo-verified",
        "undo-placed",
        "undo-rechecked",
    ]


def test_preloaded_keys_sit_on_lines_counted_from_one_by_default() -> None:
    """A repeat of a preloaded key names where the first one stands: the preloaded keys are
    on lines 1, 2, 3… unless told where they start (the ledger gate relies on the default)."""
    from tools.appendonly import AppendOnly, Entry

    seen = AppendOnly()
    seen.preload_content_keys(["a", "b", "c"])
    assert seen.feed(Entry("c", "c", 9)) == Entry("c", "c", 3)
    later = AppendOnly()
    later.preload_content_keys(["a", "b"], first_line=5)
    assert later.feed(Entry("b", "b", 9)) == Entry("b", "b", 6)
