"""The index gate's fast paths decide exactly what their fall-backs decide.

A large index is read by RE2 instead of ``re`` (both bytes patterns accept the same lines), its
keys are checked for repeats while they rise and by a set after, and a blob proved by its hash
to be a prefix of the file judged now is never read from git. Each fast path is forced on
here (its size thresholds set to nothing) and compared with its fall-back on generated tables
and on real repositories judged by the real CLI.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tests.test_index_compact import _same_as_reference, tables
from tools import index_table
from tools.gates import index as index_gate
from tools.git import Git

IDX = ".agents/issue-index.md"
FRAME = "# Issue index\n\nOne row per issue.\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def row(n: int, title: str | None = None) -> str:
    return f"| #{n} | R{n} | {title or f'Title {n}'} | bug |\n"


def rows(a: int, b: int) -> str:
    return "".join(row(n) for n in range(a, b + 1))


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every fast path on, whatever the file's size."""
    monkeypatch.setattr(index_table, "_RE2_FROM", 0)
    monkeypatch.setattr(index_gate, "_AHEAD_FROM", 0)
    yield


# -- the RE2 pattern reads the lines the re pattern reads ----------------------------------------
LINE_PARTS = [
    " ", "\t", "|", "\\", "#", "1", "0", "[", "]", "(", ")", "a", "A", "R", "—", "\r", "-",
    ".", "_", "{", "}", "~", "\x7f", "\xa0", "é", "\x0b", "!", "| #7 | R7 | T | K |",
]  # fmt: skip
ROW_SHAPES = [
    "| #1 | R1 | T | K |",
    "|[#2](a) | — |\\| x| y \\\\| |",
    "| #12 | — | \\\\\\| | k |  \r",
    " |#3|A|\\|\\|",
]


def _edited(shape: str, edits: list[tuple[int, int, str]]) -> bytes:
    """``shape`` with each edit applied: at a position, cut some characters, put a part."""
    for at, cut, part in edits:
        at %= len(shape) + 1
        shape = shape[:at] + part + shape[at + cut :]
    return shape.encode()


LINE_BYTES = st.lists(st.sampled_from(LINE_PARTS), max_size=16).map(lambda p: "".join(p).encode())
RAW_BYTES = st.binary(max_size=24).map(lambda b: b.replace(b"\n", b""))
NEAR_ROWS = st.builds(
    _edited,
    st.sampled_from(ROW_SHAPES),
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 1), st.sampled_from(LINE_PARTS)),
        max_size=3,
    ),
)


@settings(max_examples=4000, deadline=None)
@given(st.one_of(LINE_BYTES, RAW_BYTES, NEAR_ROWS))
def test_re2_accepts_the_rows_re_accepts(line: bytes) -> None:
    plain, bulk = index_table._re2_rows()
    text = line + b"\n| tail\n"
    by_re = re.compile(index_table._B_ROW).fullmatch(line + b"\n") is not None
    assert (bulk.match(text, 0, len(text)).end() == len(line) + 1) == by_re
    by_plain = plain.match(text, 0, len(text)).end() == len(line) + 1
    assert by_plain == (by_re and line.startswith(b"| #"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_the_re2_reader_reads_what_the_line_reader_reads(text: str) -> None:
    old = index_table._RE2_FROM
    index_table._RE2_FROM = 0
    try:
        table = _same_as_reference(text)
    finally:
        index_table._RE2_FROM = old
    keys = list(table.row_keys)
    assert table.unique == (len(set(keys)) == len(keys))


@pytest.mark.parametrize(
    "keys",
    [
        list(range(1, 5000)),
        [*range(1, 3000), 2999, *range(3000, 5000)],
        [*range(3000, 5000), *range(1, 3000)],
        [*range(3000, 5000), *range(1, 3000), 4000],
        [5, 5],
        [2**70, 1, 2, 2**70],
        [1, 2**70, 3],
    ],
)
def test_repeats_are_found_rising_or_not_across_chunks(
    keys: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_table, "_CHUNK", 256)  # many chunks: the rising test meets sets
    for bulk_from in (0, 1 << 40):
        monkeypatch.setattr(index_table, "_RE2_FROM", bulk_from)
        table = index_table.parse("".join([FRAME, *(row(k) for k in keys)]))
        assert list(table.row_keys) == keys
        assert table.unique == (len(set(keys)) == len(keys))
        first = len(FRAME.splitlines()) + 1
        assert list(table.row_lines) == list(range(first, first + len(keys)))


def test_row_lines_skip_the_lines_that_are_not_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    text = FRAME + rows(1, 3) + "not a row\n" + rows(4, 5) + "\n" + row(6)
    for bulk_from in (0, 1 << 40):
        monkeypatch.setattr(index_table, "_RE2_FROM", bulk_from)
        table = index_table.parse(text)
        assert list(table.row_lines) == [7, 8, 9, 11, 12, 14]
        assert [line for line, _ in table.malformed] == [10, 13]


# -- the gate on real repositories: fast paths forced on, and off --------------------------------
N = 40
BASE = FRAME + rows(1, N)


def _start(repo: Repo, base: str | bytes = BASE) -> None:
    repo.commit("Base\n\nBody.\n", {IDX: base, ".gitattributes": f"{IDX} merge=union\n"})
    repo.branch("feature")


def _both_sides(repo: Repo, ours: str, theirs: str) -> None:
    _start(repo)
    repo.commit("Ours\n\nBody.\n", {IDX: ours})
    repo.checkout("main")
    repo.commit("Theirs\n\nBody.\n", {IDX: theirs})
    repo.checkout("feature")


def _merge(repo: Repo, result: str | None) -> None:
    _both_sides(repo, BASE + row(N + 1), BASE + row(N + 2))
    repo.git("merge", "-q", "--no-edit", "--no-commit", "main", check=False)
    if result is not None:
        repo.write(IDX, result)
    repo.commit("Merge main\n\nBody.\n")


def _commit(text: str | bytes | None, base: str | bytes = BASE, wt: str | None = None):
    def build(repo: Repo) -> None:
        _start(repo, base)
        if text is None:
            repo.git("rm", "-q", IDX)
            repo.commit("Drop\n\nBody.\n")
        else:
            repo.commit("Change\n\nBody.\n", {IDX: text})
        if wt is not None:
            repo.write(IDX, wt)

    return build


CRLF = BASE.replace("\n", "\r\n")
FALLING = FRAME + rows(20, N) + rows(1, 19)
LATIN = BASE.encode().replace(b"Title 2 ", b"T\xff\xfe 2 ")
SCENARIOS = {
    "append": (_commit(BASE + row(N + 1)), []),
    "append in the working tree": (_commit(BASE, wt=BASE + row(N + 1)), []),
    "edited": (_commit(BASE.replace(row(9), row(9, "New"))), ["row-edited"]),
    "removed": (_commit(BASE.replace(row(9), "")), ["row-removed"]),
    "reordered": (_commit(BASE.replace(row(9) + row(10), row(10) + row(9))), ["row-edited"]),
    "inserted": (_commit(BASE.replace(row(9), row(N + 5) + row(9))), ["row-inserted"]),
    "duplicate appended": (_commit(BASE + row(9, "Again")), ["row-duplicate"]),
    "duplicate in the base": (
        _commit(BASE + row(3) + row(N + 1), base=BASE + row(3)),
        ["row-duplicate"],
    ),
    "keys that do not rise": (_commit(FALLING + row(N + 1), base=FALLING), []),
    "keys that do not rise, one twice": (
        _commit(FALLING + row(7), base=FALLING),
        ["row-duplicate"],
    ),
    "linked keys": (_commit(BASE + f"| [#{N + 1}](https://x.example/1) | — | L | k |\n"), []),
    "crlf": (_commit(CRLF + row(N + 1).replace("\n", "\r\n"), base=CRLF), []),
    "not utf-8": (_commit(LATIN + b"| #99 | R | t\xe9 | k |\n", base=LATIN), []),
    "blank line splits the table": (_commit(BASE + "\n" + row(N + 1)), ["row-malformed"]),
    "trailing blank lines": (_commit(BASE + "\n \n", base=BASE + "\n"), []),
    "rows after trailing blanks": (
        _commit(BASE + "\n" + row(N + 1), base=BASE + "\n"),
        ["row-malformed"],
    ),
    "last line continued": (
        _commit(BASE[:-1] + " more |\n", base=BASE[:-1]),
        ["row-malformed", "row-removed"],
    ),
    "base absent": (lambda repo: (_start(repo, ""), repo.commit("Add\n\nB.\n", {IDX: BASE})), []),
    "deleted": (_commit(None), ["header-changed"] + ["row-removed"] * N),
    "uncommitted edit": (
        _commit(BASE + row(N + 1), wt=BASE.replace(row(1), row(1, "x")) + row(N + 1)),
        ["row-edited"],
    ),
    "union merge": (lambda repo: _merge(repo, None), []),
    "merge lost a row": (
        lambda repo: _merge(repo, BASE.replace(row(5), "") + row(N + 1) + row(N + 2)),
        ["row-removed", "merge-lost-row", "merge-lost-row"],
    ),
    "added on both sides": (
        lambda repo: _both_sides(repo, BASE + row(N + 1), BASE + row(N + 1, "Other")),
        ["union-duplicate"],
    ),
}


def _judge(repo: Repo, *extra: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "index", "check", "--base", "main", *extra)
    return run.exit_code, run.json()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fast_paths_judge_as_their_fall_backs(
    name: str, make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, expected = SCENARIOS[name]
    repo = make_repo()
    build(repo)
    found = {}
    for on in (True, False):
        monkeypatch.setattr(index_table, "_RE2_FROM", 0 if on else 1 << 40)
        monkeypatch.setattr(index_gate, "_AHEAD_FROM", 0 if on else 1 << 40)
        found[on] = [_judge(repo), _judge(repo, "--head", "feature")]
    assert found[True] == found[False]
    code, report = found[True][0]
    assert sorted(f["rule"] for f in report["gates"][0]["findings"]) == sorted(expected)
    assert code == (1 if expected else 0)


def test_a_pure_append_reads_no_blob_from_git(
    make_repo, monkeypatch: pytest.MonkeyPatch, fast: None
) -> None:
    """The merge base and the head are proved prefixes of the file judged now by their hashes:
    their contents never travel through git (which counts for a 42 MB index)."""
    read: list[str] = []
    real = Git.object

    def counted(self: Git, sha: str) -> bytes:
        read.append(sha)
        return real(self, sha)

    monkeypatch.setattr(Git, "object", counted)
    repo = make_repo()
    _start(repo)
    repo.commit("One\n\nBody.\n", {IDX: BASE + row(N + 1)})
    repo.commit("Two\n\nBody.\n", {IDX: BASE + row(N + 1) + row(N + 2)})
    assert _judge(repo)[0] == 0
    assert read == []
    repo.write(IDX, BASE.replace(row(1), row(1, "x")) + row(N + 1) + row(N + 2))
    code, report = _judge(repo)
    assert code == 1 and read  # not a prefix: the base is read and compared row by row
    assert [f["rule"] for f in report["gates"][0]["findings"]] == ["row-edited"]
