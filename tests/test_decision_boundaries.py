"""The boundaries of the decisions that gates reach, pinned as plain function calls.

Each test sits on one edge of one decision (a count limit, the last line of a file, a side
that alone changed a row, an insertion right at a conflict's edge) and is fast enough to run
against every mutant of its module. Where git is involved the repository is real.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable

import pytest

from tests.conftest import Repo
from tools import appendonly, findings_baseline, index_table
from tools.context import Context
from tools.errors import UsageError
from tools.finding_identity import finding_identity
from tools.gates import merges, ratchet
from tools.git import Commit, Git, Hunk
from tools.options import Options
from tools.ratchets.engine import Count, Ratchet
from tools.report import Finding, GateResult
from tools.trailer_block import Paragraph, Trailer, find_block, is_blank, paragraphs

# -- trailer_block: the block of few trailers is grouped at once, a longer one on demand ---


def _message(n: int) -> str:
    return "Subject\n\nBody.\n\n" + "".join(f"Key-{i}: value {i}\n" for i in range(n))


@pytest.mark.parametrize("n", [1, 15, 16, 17, 40])
def test_every_key_of_a_block_is_found_whatever_its_size(n: int) -> None:
    block = find_block(_message(n))
    assert len(block.trailers) == n
    for i in range(n):
        assert block.get(f"KEY-{i}") == [Trailer(f"Key-{i}", f"value {i}", 5 + i)]
    assert block.get("Absent") == []
    assert block.start == 5 and block.end == 4 + n


def test_a_repeated_key_is_found_every_time_in_a_long_block() -> None:
    text = "Subject\n\nBody.\n\n" + "".join(f"K: {i}\n" for i in range(17)) + "Other: x\n"
    block = find_block(text)
    assert [t.value for t in block.get("k")] == [str(i) for i in range(17)]
    assert block.get("other") == [Trailer("Other", "x", 22)]


# -- appendonly: the base's last line, without a final newline, must stay whole ------------


def test_an_edit_of_a_last_row_without_a_final_newline_is_no_append() -> None:
    base = b"| #1 | R1 | One | bug |\n| #2 | R2 | Two | bug |"
    assert not appendonly.is_prefix(base, base + b" edited |\n| #3 | R3 | Three | bug |\n")
    assert not appendonly.is_prefix(base, base + b"\n")  # even a newline continues it
    assert appendonly.is_prefix(base, base)  # nothing follows: untouched
    assert appendonly.is_prefix(base + b"\n", base + b"\n| #3 | R3 | Three | bug |\n")
    assert appendonly.is_prefix(b"", b"| #1 | R1 | One | bug |\n")
    assert not appendonly.is_prefix(base + b"\n", base)  # shorter now: something removed


def test_the_matcher_fed_in_chunks_decides_as_in_one_piece() -> None:
    base = b"row 1\nrow 2"
    matcher = appendonly.PrefixMatcher(base)
    for chunk in (b"row", b" 1\nrow 2", b"2\n"):
        matcher.feed(chunk)
    assert not matcher.matched
    matcher = appendonly.PrefixMatcher(base + b"\n")
    for chunk in (b"row 1\n", b"row 2\n", b"row 3\n"):
        matcher.feed(chunk)
    assert matcher.matched


def _blob_oid(data: bytes, algo: str = "sha1") -> str:
    return hashlib.new(algo, b"blob %d\0" % len(data) + data).hexdigest()


def _reader(now: bytes) -> Callable[[int, int], bytes]:
    return lambda a, b: now[a:b]


@pytest.mark.parametrize("algo", ["sha1", "sha256"])
def test_a_blob_is_a_prefix_only_when_its_last_line_stays_whole(algo: str) -> None:
    base = b"| #1 | R1 | One | bug |"
    oid = _blob_oid(base, algo)
    edited = base + b" more |\n"
    assert not appendonly.blob_starts(oid, len(base), _reader(edited), len(edited))
    assert appendonly.blob_starts(oid, len(base), _reader(base), len(base))
    whole = base + b"\n"
    now = whole + b"| #2 | R2 | Two | bug |\n"
    assert appendonly.blob_starts(_blob_oid(whole, algo), len(whole), _reader(now), len(now))
    other = b"| #9 | R9 | Nine | bug |\n"  # same length, other bytes
    assert not appendonly.blob_starts(_blob_oid(other, algo), len(whole), _reader(now), len(now))
    assert not appendonly.blob_starts(oid, len(base) + 50, _reader(base), len(base))
    assert not appendonly.blob_starts(oid[:20], len(base), _reader(base), len(base))


def test_the_empty_blob_starts_anything() -> None:
    now = b"| #1 | R1 | One | bug |"
    assert appendonly.blob_starts(_blob_oid(b""), 0, _reader(now), len(now))


def test_line_alignment_is_decided_by_the_base_last_line() -> None:
    assert appendonly.line_aligned(10, 20, True)
    assert not appendonly.line_aligned(10, 20, False)
    assert appendonly.line_aligned(10, 10, False)
    assert appendonly.line_aligned(0, 20, False)


# -- index_table.merge3: a row only one side changed takes that side's change ---------------

HEAD = "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def _row(n: int, title: str | None = None) -> str:
    return f"| #{n} | R{n} | {title or f'Title {n}'} | bug |\n"


def _index(*rows: str) -> str:
    return HEAD + "".join(rows)


def test_the_merge_driver_keeps_the_other_sides_edit_of_a_base_row() -> None:
    base = _index(_row(1), _row(2))
    theirs = _index(_row(1, "Edited"), _row(2))
    assert index_table.merge3(base, base, theirs) == (theirs, [])
    assert index_table.merge3(base, theirs, base) == (theirs, [])


def test_the_merge_driver_keeps_the_other_sides_removal_of_a_base_row() -> None:
    base = _index(_row(1), _row(2))
    theirs = _index(_row(1))
    assert index_table.merge3(base, base, theirs) == (theirs, [])
    assert index_table.merge3(base, theirs, base) == (theirs, [])


def test_the_merge_driver_takes_one_edit_made_on_both_sides_once() -> None:
    base = _index(_row(1), _row(2))
    both = _index(_row(1, "Same"), _row(2))
    assert index_table.merge3(base, both, both) == (both, [])


def test_the_merge_driver_flags_a_row_edited_differently_on_both_sides() -> None:
    base = _index(_row(1), _row(2))
    text, conflicts = index_table.merge3(
        base, _index(_row(1, "Mine"), _row(2)), _index(_row(1, "Yours"), _row(2))
    )
    assert conflicts == ["issue #1 was changed differently on both sides"]
    assert "Mine" in text and "Yours" in text


# -- ratchet: the base tree's count bounds a bucket below its baseline ----------------------


def _judge(count: int, baseline: int, guard: int | None) -> tuple[list, list[str]]:
    spec = Ratchet("todo", "pattern", ".agents/ratchets/todo.json", "cfg: ratchets.todo", ["t"])
    res = Count(spec)
    res.counts["t"] = count
    result = GateResult("ratchet")
    guards = None if guard is None else {"t": guard}
    regressed = ratchet._judge_counts(result, res, {"t": baseline}, guards, {})
    return [r[1:] for r in regressed], [f.rule for f in result.findings]


def test_the_guard_bounds_a_count_below_the_baseline() -> None:
    # The baseline allows 5, the base tree counted 3: 4 is a rise against the base.
    assert _judge(4, 5, 3) == ([("t", 4, 3)], [])
    assert _judge(3, 5, 3) == ([], ["ratchet-stale"])
    assert _judge(6, 5, 9) == ([("t", 6, 5)], [])  # the baseline still bounds
    assert _judge(6, 5, None) == ([("t", 6, 5)], [])


# -- findings baseline: what a fingerprint reads of the line ---------------------------------


def _fingerprint(content: bytes, line: int, rule: str = "r") -> str:
    finding = Finding(rule, "error", "m", path="a.md", line=line)
    [(_, fp)] = findings_baseline.fingerprints("docs", [finding], lambda _path: content)
    return fp


def test_a_fingerprint_reads_the_line_whitespace_normalised() -> None:
    assert findings_baseline.line_text([b"  x  =\t1 \r"], 1) == "x = 1"
    assert _fingerprint(b"x = 1\n", 1) == _fingerprint(b"top\n\t x   =  1  \n", 2)
    assert _fingerprint(b"x = 1\n", 1) != _fingerprint(b"x = 2\n", 1)


def test_a_fingerprint_reads_a_last_line_without_a_newline() -> None:
    assert findings_baseline.line_text([b"keep", b"last"], 2) == "last"
    assert findings_baseline.line_text([b"keep", b"last"], 3) == ""
    assert findings_baseline.line_text([b"keep", b"last"], 0) == ""
    assert _fingerprint(b"keep\nlast", 2) != _fingerprint(b"keep\nother", 2)
    assert _fingerprint(b"keep\nlast", 2) == _fingerprint(b"new\nkeep\nlast", 3)


def test_a_span_fingerprint_reads_every_line_of_it() -> None:
    lines = [b"a", b" b ", b"c"]
    assert findings_baseline.span_text(lines, 1, 3) == "a\nb\nc"
    assert findings_baseline.span_text(lines, 2, 2) == "b"
    assert findings_baseline.span_text(lines, 2, None) == "b"


def test_one_identity_for_the_baseline_and_sarif() -> None:
    seen: dict[str, int] = {}
    first = finding_identity(seen, "docs", "r", "a.md", "x = 1")
    again = finding_identity(seen, "docs", "r", "a.md", "x = 1")
    assert (first.repeat, again.repeat) == (0, 1)
    assert first.fingerprint != again.fingerprint
    key = "docs\0r\0a.md\0x = 1"
    assert first.fingerprint == hashlib.sha256(f"{key}\0{0}".encode()).hexdigest()[:32]
    assert again.numbered == hashlib.sha256(key.encode()).hexdigest()[:32] + ":2"


# -- merges: a conflict resolution's edges, and a conflict committed as git wrote it ---------


@pytest.mark.parametrize(
    ("old_start", "old_count", "inside"),
    [
        (9, 0, True),  # an insertion right above the opening marker
        (8, 0, False),
        (14, 0, True),  # right below the closing marker
        (15, 0, False),
        (10, 5, True),  # the whole region
        (9, 2, False),  # from the line above into it
        (14, 2, False),  # from its last line below it
    ],
)
def test_a_hunk_is_inside_a_conflict_up_to_its_edges(
    old_start: int, old_count: int, inside: bool
) -> None:
    hunk = Hunk(old_start, old_count, 1, 1)
    assert merges._inside(hunk, [(3, 5), (10, 14)]) is inside


def _conflicting_merge(repo: Repo) -> tuple[Git, str, str]:
    repo.commit("Base\n\nBody.\n", {"c.txt": "a\nb\nc\n"})
    repo.branch("side")
    theirs = repo.commit("Theirs\n\nBody.\n", {"c.txt": "a\nTHEIRS\nc\n"})
    repo.checkout("main")
    ours = repo.commit("Ours\n\nBody.\n", {"c.txt": "a\nOURS\nc\n"})
    return Git(repo.path), ours, theirs


def _judged(repo: Repo, git: Git, ours: str, theirs: str, tree: str) -> list[str]:
    auto = git.merge_tree(ours, theirs)
    assert auto is not None and auto.conflicted == ["c.txt"]
    sha = repo.git("commit-tree", tree, "-p", ours, "-p", theirs, "-m", "Merge").strip()
    result = GateResult("merges")
    merge = merges._Merge(Commit(sha, [ours, theirs], b"Merge\n", 0, []), tree, auto)
    merges._judge(result, git, merge, None)
    return [f.rule for f in result.findings]


def test_a_conflict_committed_as_git_wrote_it_is_still_resolved(repo: Repo) -> None:
    git, ours, theirs = _conflicting_merge(repo)
    auto = git.merge_tree(ours, theirs)
    assert auto is not None
    assert _judged(repo, git, ours, theirs, auto.tree) == ["merge-resolved"]


def test_a_conflict_resolved_by_taking_one_side_is_resolved_not_evil(repo: Repo) -> None:
    git, ours, theirs = _conflicting_merge(repo)
    tree = repo.git("rev-parse", f"{ours}^{{tree}}").strip()
    assert _judged(repo, git, ours, theirs, tree) == ["merge-resolved"]


# -- findings baseline: what may be recorded, the file format --------------------------------

FB = findings_baseline
EXPECTED = f" (expected the format {FB.FORMAT})"


@pytest.mark.parametrize(
    ("gate", "finding", "ok"),
    [
        ("docs", Finding("r", "error", "m"), True),
        ("ledger", Finding("r", "warning", "m"), True),
        ("style", Finding("r", "error", "m"), False),  # not a content gate
        ("docs", Finding("r", "error", "m", commit="abc"), False),  # a verdict on a commit
        ("docs", Finding("r", "info", "m"), False),
        ("docs", Finding("conflict-marker", "error", "m"), False),  # protected
        ("ratchet", Finding("ratchet-regression", "error", "m"), False),  # own baseline
    ],
)
def test_only_content_findings_that_may_be_debt_are_eligible(
    gate: str, finding: Finding, ok: bool
) -> None:
    assert FB.eligible(gate, finding) is ok


def test_each_finding_is_fingerprinted_with_its_repeat_and_its_file_read_once() -> None:
    reads: list[str] = []

    def read(path: str) -> bytes | None:
        reads.append(path)
        return {"a.md": b"same\nsame\n"}.get(path)

    found = [
        Finding("r", "error", "m", path="a.md", line=1),
        Finding("r", "error", "m", path="a.md", line=2),
        Finding("r", "error", "m", path="gone.md", line=1),
        Finding("r", "error", "m", path="a.md"),  # no line: no text
        Finding("r", "error", "m", line=4),  # no path
    ]
    prints = [fp for _, fp in FB.fingerprints("docs", found, read)]
    assert reads == ["a.md", "gone.md"]
    seen: dict[str, int] = {}
    want = [
        finding_identity(seen, "docs", "r", "a.md", "same").fingerprint,
        finding_identity(seen, "docs", "r", "a.md", "same").fingerprint,
        finding_identity(seen, "docs", "r", "gone.md", "").fingerprint,
        finding_identity(seen, "docs", "r", "a.md", "").fingerprint,
        finding_identity(seen, "docs", "r", "", "").fingerprint,
    ]
    assert prints == want
    assert len(set(prints)) == 5 and all(len(p) == 32 for p in prints)


def test_a_line_that_is_not_utf8_has_a_fingerprint() -> None:
    content = b"caf\xe9 = 1\n"
    assert _fingerprint(content, 1) != _fingerprint(b"cafe = 1\n", 1)
    assert FB.line_text([content[:-1]], 1) == "caf\udce9 = 1"


def _parse_error(raw: bytes) -> str:
    with pytest.raises(UsageError) as exc:
        FB.parse(raw, "f.json")
    return str(exc.value)


def _doc(findings: object, schema: str = FB.SCHEMA_ID) -> bytes:
    return json.dumps({"schema": schema, "findings": findings}).encode()


ENTRY = {"gate": "docs", "rule": "r", "path": "a.md", "fingerprint": "f1", "message": "m"}


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (
            _doc([], schema="other/1"),
            f"f.json: schema: schema 'other/1', expected '{FB.SCHEMA_ID}'",
        ),
        (_doc({}), "f.json: findings: wrong type (dict)"),
        (
            _doc([{"gate": "docs"}]),
            "f.json: findings[0]: an entry has the keys gate, rule, path, fingerprint, message",
        ),
        (
            _doc(["x"]),
            "f.json: findings[0]: an entry has the keys gate, rule, path, fingerprint, message",
        ),
        (_doc([{**ENTRY, "rule": 1}]), "f.json: findings[0]: every value is a string"),
        (_doc([ENTRY, ENTRY]), "f.json: findings[1].fingerprint: duplicate fingerprint"),
        (b"[]", "f.json: (top level): wrong type (list)"),
    ],
)
def test_a_malformed_findings_baseline_is_named_at_its_key(raw: bytes, error: str) -> None:
    assert _parse_error(raw) == error + EXPECTED


def test_a_findings_baseline_round_trips_sorted_one_entry_a_line() -> None:
    a = FB.Entry("docs", "r", "a.md", "f2", "first")
    b = FB.Entry("docs", "r", "a.md", "f1", "second")  # by message before fingerprint
    c = FB.Entry("links", "r", "\udcff.md", "f3", "m")  # a path that is not UTF-8
    raw = FB.render([c, b, a])
    assert FB.parse(raw, "f.json") == [a, b, c]
    assert raw.decode().splitlines()[:4] == [
        "{",
        f' "schema": "{FB.SCHEMA_ID}",',
        ' "findings": [',
        '  {"gate": "docs", "rule": "r", "path": "a.md", "fingerprint": "f2", "message": "first"},',
    ]
    assert raw.endswith(b"\n ]\n}\n")
    # The same fingerprint under another gate is another entry.
    assert FB.parse(FB.render([a, a._replace(gate="links")]), "f") == [a, a._replace(gate="links")]


def test_an_empty_findings_baseline_renders_as_an_empty_list() -> None:
    raw = FB.render([])
    assert raw == f'{{\n "schema": "{FB.SCHEMA_ID}",\n "findings": []\n}}\n'.encode()
    assert FB.parse(raw, "f.json") == []


# -- trailer_block: GitHub's squash shape, line numbers, blank lines ------------------------

CO_A = "Co-authored-by: A <a@x>\n"
SQUASH_CASES = [
    # (message, trailers as (key, value, line), start, end, squash)
    (
        "Subject\n\nBody.\n\nKey: v\n----\n\n" + CO_A,
        [("Key", "v", 5), ("Co-authored-by", "A <a@x>", 8)],
        5,
        8,
        True,
    ),
    (
        "Subject\n\nBody.\n\nKey: v\n\n-----\n\n" + CO_A + "Co-authored-by: B <b@x>\n",
        [("Key", "v", 5), ("Co-authored-by", "A <a@x>", 9), ("Co-authored-by", "B <b@x>", 10)],
        5,
        10,
        True,
    ),
    (  # dashes with trailing blanks, blank lines around them
        "Subject\n\nKey: v\n\n----  \n\n\n" + CO_A,
        [("Key", "v", 3), ("Co-authored-by", "A <a@x>", 8)],
        3,
        8,
        True,
    ),
    (  # a comment line and a folded value inside the co-author paragraph
        "S\n\nK: v\n----\n\nCo-authored-by: A\n# note\nCo-authored-by: B\n  <b@x>\n",
        [("K", "v", 3), ("Co-authored-by", "A", 6), ("Co-authored-by", "B <b@x>", 8)],
        3,
        9,
        True,
    ),
    (  # a patch below: the block ends where the message does
        "Subject\n\nKey: v\n----\n\n" + CO_A + "---\ndiff\n",
        [("Key", "v", 3), ("Co-authored-by", "A <a@x>", 6)],
        3,
        6,
        True,
    ),
    (  # blanks before the colon
        "Subject\n\nKey: v\n----\n\nCo-authored-by : A\n",
        [("Key", "v", 3), ("Co-authored-by", "A", 6)],
        3,
        6,
        True,
    ),
    (  # a continuation line led by one space
        "S\n\nK: v\n----\n\nCo-authored-by: A\n <a@x>\n",
        [("K", "v", 3), ("Co-authored-by", "A <a@x>", 6)],
        3,
        7,
        True,
    ),
    # Not the squash shape: the co-author paragraph alone.
    ("S\n\nK: v\n----\f\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 6)], 6, 6, False),
    ("S\n\nK: v\n----X\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 6)], 6, 6, False),
    # Dashes below a patch divider are no part of the message.
    ("\n\n" + CO_A + "---\n----\n", [("Co-authored-by", "A <a@x>", 3)], 3, 3, False),
    ("Subject\n\nKey: v\n\n---- x\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 7)], 7, 7, False),
    ("Subject\n\nKey: v\n\n---\n\n" + CO_A, [("Key", "v", 3)], 3, 3, False),  # a patch divider
    ("Subject\n\nKey: v\n\nprose\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 7)], 7, 7, False),
    ("Subject\n\nBody text\n----\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 6)], 6, 6, False),
    ("S\n\nK: v\n-\n----\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 7)], 7, 7, False),
    ("----\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 3)], 3, 3, False),  # dashes as title
    ("\n\n" + CO_A, [("Co-authored-by", "A <a@x>", 3)], 3, 3, False),
    (  # a line git writes, not a trailer: the paragraph is mixed
        "Subject\n\nKey: v\n----\n\n" + CO_A + "(cherry picked from commit abc)\n",
        [("Co-authored-by", "A <a@x>", 6)],
        6,
        7,
        False,
    ),
    # Line numbers: no final newline, blank and comment lines below, a blank first line.
    ("Subject\n\nKey: v", [("Key", "v", 3)], 3, 3, False),
    ("Subject\n\nKey: v\n\n# c\n\n", [("Key", "v", 3)], 3, 3, False),
    ("\nKey: v\n\nK2: w\n", [("K2", "w", 4)], 4, 4, False),
    ("Subject\n\nKey :v\nK2\t: w\n", [("Key", "v", 3), ("K2", "w", 4)], 3, 4, False),
]


@pytest.mark.parametrize(("message", "trailers", "start", "end", "squash"), SQUASH_CASES)
def test_the_block_and_githubs_squash_shape(
    message: str, trailers: list[tuple[str, str, int]], start: int, end: int, squash: bool
) -> None:
    block = find_block(message)
    assert [tuple(t) for t in block.trailers] == trailers
    assert (block.start, block.end, block.squash) == (start, end, squash)
    if squash:  # without the extension, git's block: the co-author paragraph alone
        plain = find_block(message, squash=False)
        assert not plain.squash and plain.trailers == tuple(
            t for t in block.trailers if t.key.lower() == "co-authored-by"
        )


def test_no_block_when_the_last_paragraph_is_not_trailers() -> None:
    for message in ("", "Subject\n", "Subject\n\nBody.\n", "S\n\n----\n" + CO_A):
        block = find_block(message)
        assert (block.trailers, block.start, block.end, block.squash) == ((), None, None, False)


def test_blank_lines_and_paragraphs_are_gits() -> None:
    assert is_blank(" \t\r") and is_blank("")
    assert not is_blank("\v") and not is_blank("\f") and not is_blank("\u00a0")
    lines = ["a", "", " \t", "b", "c", "\v", "", "d"]
    assert paragraphs(lines) == [
        Paragraph(1, ("a",)),
        Paragraph(4, ("b", "c", "\v")),
        Paragraph(8, ("d",)),
    ]
    assert paragraphs(lines)[1].end == 6
    assert paragraphs([]) == [] and paragraphs(["", " "]) == []


def test_a_trailer_key_compares_case_insensitively() -> None:
    assert Trailer("Signed-Off-By", "x", 1).has_key("signed-off-by")
    assert not Trailer("Signed-off", "x", 1).has_key("signed-off-by")


# -- appendonly: the keyed decision ----------------------------------------------------------

E = appendonly.Entry


def _losses(base: list[E], now: list[E]) -> list[tuple[str, object, object]]:
    return [
        (loss.kind, loss.base.key, None if loss.now is None else loss.now.line)
        for loss in appendonly.losses(base, now)
    ]


def test_a_base_entry_removed_altered_or_moved_is_a_loss_in_base_order() -> None:
    base = [E(1, "a", 1), E(2, "b", 2), E(3, "c", 3), E(4, "d", 4)]
    assert _losses(base, base + [E(5, "e", 5)]) == []
    assert _losses(base, [E(1, "a", 1), E(3, "c", 2), E(4, "d", 3)]) == [("removed", 2, None)]
    now = [E(1, "a", 1), E(2, "B", 2), E(3, "c", 3), E(4, "d", 4)]
    assert _losses(base, now) == [("altered", 2, 2)]
    # The fewest out of place are the moved ones.
    now = [E(2, "b", 1), E(3, "c", 2), E(4, "d", 3), E(1, "a", 4)]
    assert _losses(base, now) == [("moved", 1, 4)]
    now = [E(1, "a", 1), E(4, "d", 2), E(2, "b", 3), E(3, "c", 4)]
    assert _losses(base, now) == [("moved", 4, 2)]
    assert [loss.removed for loss in appendonly.losses(base, base[1:])] == [True]
    assert [loss.removed for loss in appendonly.losses(base, now)] == [False]


def test_a_repeated_key_keeps_the_base_entry_if_any_copy_matches() -> None:
    base = [E(1, "a", 1)]
    assert _losses(base, [E(1, "x", 1), E(1, "a", 2)]) == []
    assert _losses(base, [E(1, "x", 1), E(1, "y", 2)]) == [("altered", 1, 1)]


def test_the_longest_increasing_run_is_kept_in_place() -> None:
    li = appendonly._longest_increasing
    assert li([]) == set()
    assert li([1, 2, 3]) == {0, 1, 2}
    assert li([3, 1, 2]) == {1, 2}
    assert li([2, 2, 3]) == {1, 2}  # strictly increasing
    assert li([5, 1, 6, 2, 3, 0, 4]) == {1, 3, 4, 6}


def test_the_streaming_check_reports_duplicates_as_fed() -> None:
    check = appendonly.AppendOnly()
    assert check.feed(E(1, "a", 1)) is None
    assert check.feed(E(2, "b", 2)) is None
    assert check.feed(E(1, "z", 3)) == E(1, "a", 1)
    dups = check.feed_all([E(3, "c", 4), E(2, "q", 5), E(2, "r", 6)])
    assert dups == [(E(2, "b", 2), E(2, "q", 5)), (E(2, "b", 2), E(2, "r", 6))]
    assert check.keys() == {1, 2, 3}
    assert check.get(9) is None
    assert check.losses() == []  # no base: nothing to lose


def test_a_proven_prefix_skips_the_base() -> None:
    calls: list[int] = []

    def base() -> list[E]:
        calls.append(1)
        return [E(1, "a", 1)]

    check = appendonly.AppendOnly(base)
    check.prefix = True
    assert check.losses() == [] and calls == []
    check.prefix = False
    assert [loss.kind for loss in check.losses()] == ["removed"] and calls == [1]


def test_preloaded_content_keys_count_as_fed_entries() -> None:
    check = appendonly.AppendOnly(lambda: [E("k1", "k1", 1), E("k2", "k2", 2), E("k0", "k0")])
    check.preload_content_keys(["k1", "k2"], first_line=1)
    assert check.get("k2") == E("k2", "k2", 2)
    assert check.feed(E("k1", "k1", 3)) == E("k1", "k1", 1)
    assert check.keys() == {"k1", "k2"}
    assert [(loss.kind, loss.base.key) for loss in check.losses()] == [("removed", "k0")]
    with pytest.raises(ValueError, match="preload before feeding"):
        check.preload_content_keys(["k3"])
    fed = appendonly.AppendOnly()
    fed.feed(E(1, "a"))
    with pytest.raises(ValueError):
        fed.preload_content_keys([2])
    later = appendonly.AppendOnly()
    later.preload_content_keys(["x", "y"], first_line=7)
    assert later.get("y") == E("y", "y", 8)


# -- appendonly: where the current file comes from -------------------------------------------


def _context(repo: Repo, **opts: object) -> Context:
    return Context(Options(repo=repo.path, **opts))  # type: ignore[arg-type]


def test_the_file_judged_now_is_the_worktree_the_index_or_head(repo: Repo) -> None:
    first = repo.commit("One\n\nBody.\n", {"f.txt": "committed\n"})
    repo.write("f.txt", "staged\n")
    repo.git("add", "f.txt")
    repo.write("f.txt", "worktree\n")
    ctx = _context(repo)
    assert not appendonly.head_explicit(ctx)
    assert appendonly.read_now(ctx, "f.txt") == b"worktree\n"
    assert appendonly.worktree_file(ctx, "f.txt") == repo.path / "f.txt"
    assert appendonly.worktree_file(ctx, "gone.txt") is None
    assert appendonly.read_now(ctx, "gone.txt") is None
    staged = _context(repo, staged=True)
    assert not appendonly.head_explicit(staged)
    assert appendonly.read_now(staged, "f.txt") == b"staged\n"
    assert appendonly.worktree_file(staged, "f.txt") is None
    at_head = _context(repo, head=first)
    assert appendonly.head_explicit(at_head)
    assert appendonly.read_now(at_head, "f.txt") == b"committed\n"
    assert appendonly.worktree_file(at_head, "f.txt") is None
    both = _context(repo, head=first, staged=True)
    assert not appendonly.head_explicit(both)


def test_a_worktree_file_that_cannot_be_read_is_an_error(repo: Repo) -> None:
    repo.commit("One\n\nBody.\n", {"f.txt": "x\n"})
    (repo.path / "d").mkdir()
    ctx = _context(repo)
    with pytest.raises(UsageError, match="^d: is a directory, expected a regular file"):
        appendonly.worktree_file(ctx, "d")
    (repo.path / "f.txt").chmod(0)
    try:
        if os.access(repo.path / "f.txt", os.R_OK):
            pytest.skip("running as a user who reads every file")
        with pytest.raises(UsageError, match=r"^f\.txt: cannot read: permission denied$"):
            appendonly.worktree_file(ctx, "f.txt")
    finally:
        (repo.path / "f.txt").chmod(0o644)


# -- index_table: rows, cells, the frame, the merge driver -----------------------------------

IT = index_table


@pytest.mark.parametrize(
    ("line", "cells"),
    [
        ("| a | b\\|c | d |", ["a", "b\\|c", "d"]),
        ("a|b", ["a", "b"]),
        ("no pipe", None),
        ("| a \\|", ["a \\|"]),  # an escaped last pipe is no boundary
        ("|a|", ["a"]),
        ("  | x |  ", ["x"]),
        ("| a\\\\| b |", ["a\\\\| b"]),
    ],
)
def test_cells_split_as_gfm_splits_them(line: str, cells: list[str] | None) -> None:
    assert IT.split_cells(line) == cells


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("| #1 | R1 | T | k |", IT.Row(1, "#1", "R1", "T", "k", 7)),
        ("| [#2](u) | — | T | k |", IT.Row(2, "[#2](u)", "—", "T", "k", 7)),
        ("#3 | R | T | k", IT.Row(3, "#3", "R", "T", "k", 7)),
        ("| #1 | R1 | a\\|b | k |", IT.Row(1, "#1", "R1", "a\\|b", "k", 7)),
        ("|  #4  |  R.4_x-y  |  T  |  k  |  ", IT.Row(4, "#4", "R.4_x-y", "T", "k", 7)),
        (
            "| #1 | R1 | T |",
            "3 cells, expected 4 (Issue | Row | Title | Kind); escape a pipe as \\|",
        ),
        ("| x | R1 | T | k |", "Issue cell 'x' is not #N or [#N](link)"),
        ("| #1 | r1 | T | k |", "Row cell 'r1' is not a row id ([A-Z0-9][A-Za-z0-9_.-]*) or —"),
        ("| #1 | R1 |  | k |", "empty Title cell"),
        ("| #1 | R1 | T |  |", "empty Kind cell"),
        ("nothing", "not a table row (no `|` between cells)"),
    ],
)
def test_a_row_or_why_a_line_is_not_one(line: str, parsed: object) -> None:
    assert IT.parse_row(line, 7) == parsed


def test_a_row_reads_its_title_and_entry() -> None:
    row = IT.Row(1, "#1", "R1", "a\\|b", "k", 7)
    assert row.identity == ("#1", "R1", "a\\|b", "k")
    assert row.title_text == "a|b"
    assert row.entry() == appendonly.Entry(1, ("#1", "R1", "a\\|b", "k"), 7)


INDEX = (
    "# I\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    "| #1 | R1 | T | k |\nbad line\n\n| #1 | R2 | U | k |\n\n \n"
)


def test_a_table_with_every_kind_of_body_line() -> None:
    t = IT.parse(INDEX)
    assert t.frame == ["# I", "", "| Issue | Row | Title | Kind |", "|---|---|---|---|"]
    assert t.header_line == 3
    assert t.malformed == [
        (6, "not a table row (no `|` between cells)"),
        (7, "blank line inside the table: markdown ends the table here"),
    ]
    assert (list(t.row_keys), list(t.row_lines), t.row_count) == ([1, 1], [5, 8], 2)
    assert (t.body_start, t.body_end) == (54, 104)
    assert (t.clean, t.unique, t.duplicates(), t.keys()) == (False, False, [(1, 5, 8)], {1})
    assert t.rows == [IT.Row(1, "#1", "R1", "T", "k", 5), IT.Row(1, "#1", "R2", "U", "k", 8)]
    assert t.row_at(1) == t.rows[1]
    assert t.line_text(6) == "bad line" and t.line_text(10) == " "
    assert t.entries() == [r.entry() for r in t.rows]
    assert t.body == [
        IT.BodyLine(1, ("#1", "R1", "T", "k"), "| #1 | R1 | T | k |"),
        IT.BodyLine(("~", "bad line"), "bad line", "bad line"),
        IT.BodyLine(1, ("#1", "R2", "U", "k"), "| #1 | R2 | U | k |"),
    ]


def test_a_clean_table_and_its_lines() -> None:
    t = IT.parse(_index(_row(1), _row(2)) + "\n")
    assert t.clean and t.unique and t.duplicates() == []
    assert t.lines[-2:] == ["| #2 | R2 | Title 2 | bug |", ""]
    assert t.body_end == len(t.raw) - 1  # the blank line after the table is not the body


def test_a_header_without_a_delimiter_or_without_a_header() -> None:
    t = IT.parse("# I\n| Issue | Row | Title | Kind |\n| #1 | R1 | T | k |\n")
    assert t.frame == ["# I", "| Issue | Row | Title | Kind |"] and t.header_line == 2
    assert t.malformed == [
        (3, "the header must be followed by a delimiter line like |---|---|---|---|")
    ]
    assert list(t.row_keys) == [1] and not t.clean
    t = IT.parse("# I\n| a | b |\n")
    assert t.header_line is None and t.frame == ["# I", "| a | b |"]
    assert t.malformed == [
        (2, "no `| Issue | Row | Title | Kind |` table header: the index has no table")
    ]
    assert t.body_start == t.body_end == len(t.raw) and not t.clean and t.body == []
    assert IT.parse("# no table\n").malformed[0][0] == 1
    t = IT.parse("# I\n| Issue | Row | Title | Kind |")  # the header is the last line
    assert t.malformed == [
        (3, "the header must be followed by a delimiter line like |---|---|---|---|")
    ]
    t = IT.parse("| issue | ROW | title | kind |\n| :-- | --: | :-: | - |\n| #5 | R | T | k |")
    assert t.header_line == 1 and len(t.frame) == 2 and list(t.row_lines) == [3]


def test_the_body_ends_at_its_last_line_that_is_not_blank() -> None:
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    for tail in ("", "\n", "\n\n", "\n \t\n", "\n\u00a0\n", "\n\u3000"):
        t = IT.parse(head + "| #1 | R1 | T | k |" + tail)
        assert t.raw[t.body_start : t.body_end].rstrip(b"\n") == b"| #1 | R1 | T | k |", tail
        assert t.malformed == [] and list(t.row_keys) == [1]
    t = IT.parse(head + "| #1 | R1 | T | k |\n" + " \n" * 70_000 + "| #2 | R2 | T | k |\n")
    assert list(t.row_keys) == [1, 2] and len(t.malformed) == 70_000
    assert IT._body_end(b"x\n\n", 3) == 3


def test_rows_the_bulk_reader_refuses_go_line_by_line() -> None:
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    rows = (
        "| #1 | R1 | Tïtle | k |\n| #2 | R2 | T |k\n| #3 | — | é | k |\n"
        "| #99999999999999999999 | R | T | k |\n| #5 | R5 | T |\n"
    )
    t = IT.parse(head + rows)
    assert list(t.row_keys) == [1, 2, 3, 99999999999999999999]  # past 2**63: a list
    assert t.malformed == [
        (7, "3 cells, expected 4 (Issue | Row | Title | Kind); escape a pipe as \\|")
    ]
    assert [r.title for r in t.rows] == ["Tïtle", "T", "é", "T"]


def test_line_offsets_are_found_in_large_files() -> None:
    raw = b"".join(b"line %d\n" % i for i in range(200_000))
    for n in (1, 2, 1000, 150_000, 200_000):
        at = IT.line_start(raw, n)
        assert raw[at : raw.index(b"\n", at)] == b"line %d" % (n - 1)
    with pytest.raises(ValueError, match="no line 300001"):
        IT.line_start(raw, 300_001)
    assert IT.line_start(b"a\nb", 2) == 2
    assert IT.line_start(b"\nx\n", 2) == 1


def test_cells_escape_and_read_back() -> None:
    for text in ("x", "a|b", "a\\|b", "a\\\\|b", "\\\\\\|", "|\\|"):
        assert IT.unescape_cell(IT.escape_cell(text)) == text
    assert IT.escape_cell("a|b") == "a\\|b"
    assert IT.escape_cell("a\\|b") == "a\\\\\\|b"
    assert IT.escape_cell("a\\\\|b") == "a\\\\\\\\\\|b"
    assert IT.unescape_cell("a\\\\\\|b") == "a\\|b"
    assert IT.unescape_cell("a\\\\\\\\\\|b") == "a\\\\|b"
    assert IT.unescape_cell("a\\b") == "a\\b"


def test_new_rows_and_skeletons() -> None:
    assert IT.render_row(3, "—", "a|b", "k|") == "| #3 | — | a\\|b | k\\| |"
    assert IT.skeleton("# P\n\n\n") == "# P\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    assert IT.skeleton().startswith("# Issue index\n\n|")
    assert IT.quick_keys("| #1 | x\n  |[#22](u)\n| 3 |\nx | #4 |") == {1, 22}


def test_the_merge_driver_adds_each_sides_rows_once() -> None:
    base = _index(_row(1))
    ours = _index(_row(1), _row(2), _row(2))
    theirs = _index(_row(1), _row(3), _row(2))
    text, conflicts = index_table.merge3(base, ours, theirs)
    assert (text, conflicts) == (_index(_row(1), _row(2), _row(3)), [])
    ours = _index(_row(1), _row(2), _row(2, "Again"))  # a side's own duplicate stays
    assert index_table.merge3(base, ours, base) == (ours, [])


def test_the_merge_driver_flags_a_row_added_differently_on_both_sides() -> None:
    base = _index(_row(1))
    text, conflicts = index_table.merge3(
        base, _index(_row(1), _row(2, "Mine")), _index(_row(1), _row(2, "Yours"), _row(2, "Z"))
    )
    assert conflicts == ["issue #2 was added on both sides with different text"]
    assert text == _index(_row(1)) + (
        "<<<<<<< ours\n" + _row(2, "Mine") + "=======\n" + _row(2, "Yours") + ">>>>>>> theirs\n"
    )


def test_the_merge_driver_flags_a_row_removed_on_one_side_and_edited_on_the_other() -> None:
    base = _index(_row(1), _row(2))
    text, conflicts = index_table.merge3(base, _index(_row(1)), _index(_row(1), _row(2, "E")))
    assert conflicts == ["issue #2 was changed differently on both sides"]
    assert text == _index(_row(1)) + "<<<<<<< ours\n=======\n" + _row(2, "E") + ">>>>>>> theirs\n"


def test_the_merge_driver_merges_the_frame_three_ways() -> None:
    base, mine, yours = _index(), "# Mine\n" + _index()[13:], "# Yours\n" + _index()[13:]
    assert index_table.merge3(base, mine, base) == (mine, [])
    assert index_table.merge3(base, base, yours) == (yours, [])
    assert index_table.merge3(base, mine, mine) == (mine, [])
    text, conflicts = index_table.merge3(base, mine, yours)
    assert conflicts == ["the preamble or header was changed differently on both sides"]
    assert text.startswith("<<<<<<< ours\n# Mine\n")


def test_the_merge_driver_carries_malformed_lines() -> None:
    base = _index(_row(1), "not a row\n")
    theirs = _index(_row(1), "not a row\n", _row(2))
    text, conflicts = index_table.merge3(base, base, theirs)
    assert (text, conflicts) == (theirs, [])
    assert IT._name(("~", "x")) == "line 'x'" and IT._name(4) == "issue #4"


# -- merges: the whole gate over small real histories ----------------------------------------

NINE = "".join(f"line {i}\n" for i in range(1, 10))


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def _two_sides(
    repo: Repo,
    base: dict[str, str | bytes],
    main: dict[str, str | bytes],
    side: dict[str, str | bytes],
) -> tuple[str, str]:
    repo.commit("Base\n\nBody.\n", base)
    repo.branch("side")
    theirs = repo.commit("Side\n\nBody.\n", side)
    repo.checkout("main")
    return repo.commit("Main\n\nBody.\n", main), theirs


def _gate(repo: Repo, base: str, **opts: object) -> tuple[list[tuple[object, ...]], GateResult]:
    result = merges.run(_context(repo, base=base, **opts))
    return [(f.rule, f.message, f.path, f.line, f.commit) for f in result.findings], result


def test_what_a_clean_merge_adds_alone_is_evil(repo: Repo) -> None:
    ours, _ = _two_sides(
        repo,
        {"a.txt": NINE},
        {"a.txt": _edit(NINE, "line 1\n", "main 1\n")},
        {"a.txt": _edit(NINE, "line 9\n", "side 9\n")},
    )
    repo.git("merge", "--no-ff", "--no-commit", "side")
    merged = repo.read("a.txt").decode()
    sha = repo.commit(
        "Merge\n\nBody.\n",
        {"a.txt": _edit(merged, "line 5\n", "evil 5\n"), "new.txt": "n1\nn2\n", "bin.dat": b"\0x"},
    )
    found, result = _gate(repo, ours)
    assert found == [
        (
            "merge-evil",
            "the merge changes lines git merged without conflict: line 5 is 'evil 5' (+1/-1 "
            "against git's merge of the parents)",
            "a.txt",
            5,
            sha,
        ),
        (
            "merge-evil",
            "the merge adds bin.dat, which neither parent brings: git's merge of the parents "
            "has no such path (binary)",
            "bin.dat",
            None,
            sha,
        ),
        (
            "merge-evil",
            "the merge adds new.txt, which neither parent brings: git's merge of the parents "
            "has no such path (+2/-0)",
            "new.txt",
            1,
            sha,
        ),
    ]
    assert result.stats == {"merges": 1, "commits": 2}


def test_what_a_clean_merge_drops_or_changes_alone_is_evil(repo: Repo) -> None:
    base: dict[str, str | bytes] = {
        "a.txt": NINE,
        "gone.txt": "g1\ng2\n",
        "gone.bin": b"\0\1",
        "m.sh": "echo\n",
        "b.bin": b"\0a",
    }
    ours, _ = _two_sides(
        repo,
        base,
        {"a.txt": _edit(NINE, "line 1\n", "main 1\n")},
        {"a.txt": _edit(NINE, "line 9\n", "side 9\n")},
    )
    repo.git("merge", "--no-ff", "--no-commit", "side")
    merged = repo.read("a.txt").decode()
    (repo.path / "gone.txt").unlink()
    (repo.path / "gone.bin").unlink()
    (repo.path / "m.sh").chmod(0o755)
    sha = repo.commit("Merge\n\nBody.\n", {"a.txt": _edit(merged, "main 1\n", ""), "b.bin": b"\0b"})
    found, _ = _gate(repo, ours)
    assert found == [
        (
            "merge-evil",
            "the merge changes lines git merged without conflict: at the top it drops 1 "
            "line(s) of git's, first 'main 1' (+0/-1 against git's merge of the parents)",
            "a.txt",
            1,
            sha,
        ),
        (
            "merge-evil",
            "the merge's content of binary file b.bin differs from git's merge of the parents, "
            "which merged it without conflict",
            "b.bin",
            None,
            sha,
        ),
        (
            "merge-evil",
            "the merge deletes gone.bin, which neither parent deleted: git's merge of the "
            "parents keeps it (binary)",
            "gone.bin",
            None,
            sha,
        ),
        (
            "merge-evil",
            "the merge deletes gone.txt, which neither parent deleted: git's merge of the "
            "parents keeps it (+0/-2)",
            "gone.txt",
            None,
            sha,
        ),
        (
            "merge-evil",
            "the merge changes the mode of m.sh from 100644 to 100755; git's merge of the "
            "parents keeps 100644",
            "m.sh",
            None,
            sha,
        ),
    ]


def test_a_resolution_that_edits_outside_its_conflict_is_evil_and_resolved(repo: Repo) -> None:
    ours, theirs = _two_sides(
        repo,
        {"c.txt": NINE},
        {"c.txt": _edit(NINE, "line 5\n", "main 5\n")},
        {"c.txt": _edit(NINE, "line 5\n", "side 5\n")},
    )
    repo.git("merge", "--no-ff", "--no-commit", "side", check=False)
    resolved = _edit(_edit(NINE, "line 5\n", "both 5\n"), "line 1\n", "evil 1\n")
    sha = repo.commit("Merge\n\nBody.\n", {"c.txt": resolved})
    found, result = _gate(repo, ours)
    assert found == [
        (
            "merge-evil",
            "resolving the conflict, the merge also changes lines outside its 1 conflict "
            "hunk(s), which git merged by itself: line 1 is 'evil 1' (+1/-1 against git's "
            "merge outside the hunks)",
            "c.txt",
            1,
            sha,
        ),
        (
            "merge-resolved",
            "git's merge of the parents left c.txt in conflict; the merge resolved it: +2/-2 "
            f"against {ours[:12]} (first parent), +2/-2 against {theirs[:12]}",
            "c.txt",
            None,
            sha,
        ),
    ]
    assert result.stats == {"merges": 1, "commits": 2, "resolved": 1}


def test_a_conflict_resolved_by_one_side_and_a_path_it_deleted(repo: Repo) -> None:
    ours, theirs = _two_sides(
        repo,
        {"c.txt": NINE, "d.txt": NINE},
        {"c.txt": _edit(NINE, "line 5\n", "main 5\n"), "d.txt": _edit(NINE, "line 2\n", "x\n")},
        {"c.txt": _edit(NINE, "line 5\n", "side 5\n"), "d.txt": _edit(NINE, "line 2\n", "y\n")},
    )
    repo.git("merge", "--no-ff", "--no-commit", "side", check=False)
    (repo.path / "d.txt").unlink()
    sha = repo.commit("Merge\n\nBody.\n", {"c.txt": _edit(NINE, "line 5\n", "main 5\n")})
    found, _ = _gate(repo, ours)
    assert [f[:3] for f in found] == [
        (
            "merge-resolved",
            "git's merge of the parents left c.txt in conflict; the merge resolved it: +0/-0 "
            f"(that parent's version) against {ours[:12]} (first parent), +1/-1 against "
            f"{theirs[:12]}",
            "c.txt",
        ),
        (
            "merge-resolved",
            "git's merge of the parents left d.txt in conflict; the merge resolved it: +0/-9 "
            f"against {ours[:12]} (first parent), +0/-9 against {theirs[:12]}",
            "d.txt",
        ),
    ]
    assert all(f[4] == sha for f in found)


def test_octopus_merges_staged_changes_and_ranges_without_merges(repo: Repo) -> None:
    base = repo.commit("Base\n\nBody.\n", {"a": "1\n"})
    repo.branch("x")
    repo.commit("X\n\nBody.\n", {"x": "1\n"})
    repo.checkout("main")
    repo.branch("y")
    repo.commit("Y\n\nBody.\n", {"y": "1\n"})
    repo.checkout("main")
    main = repo.commit("M\n\nBody.\n", {"m": "1\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "Octo", "x", "y")
    octo = repo.head()
    found, result = _gate(repo, main)
    assert found == [
        (
            "merge-octopus",
            "an octopus merge of 3 parents: not judged (git's merge-tree recomputes merges of "
            "two parents only)",
            None,
            None,
            octo,
        )
    ]
    assert result.stats == {"merges": 0, "commits": 3} and result.status == "pass"
    found, result = _gate(repo, main, staged=True)
    assert found == [] and result.stats == {
        "merges": 0,
        "staged": "not judged: merges are judged over committed ranges",
    }
    found, result = _gate(repo, base, head=main)
    assert found == [] and result.stats == {"merges": 0, "commits": 1}


def test_a_merge_of_unrelated_histories_is_judged(repo: Repo) -> None:
    main = repo.commit("Main\n\nBody.\n", {"a.txt": "a\n"})
    repo.git("checkout", "-q", "--orphan", "other")
    repo.git("rm", "-q", "-rf", ".")
    repo.commit("Other\n\nBody.\n", {"b.txt": "b\n"})
    repo.checkout("main")
    repo.git("merge", "--no-ff", "--no-commit", "--allow-unrelated-histories", "other")
    sha = repo.commit("Merge\n\nBody.\n", {"c.txt": "c\n"})
    found, result = _gate(repo, main)
    assert [(f[0], f[2], f[4]) for f in found] == [("merge-evil", "c.txt", sha)]
    assert result.stats["merges"] == 1


def test_a_differing_line_is_quoted_short_and_bytes_safe() -> None:
    assert merges._quote(b"x" * 101 + b"\r") == repr("x" * 100 + "…")
    assert merges._quote(b"y" * 100) == repr("y" * 100)
    assert merges._quote(b"caf\xe9\r") == repr("caf\udce9")
    gone = Hunk(3, 2, 3, 0)
    gone.removed = [b"gone", b"b"]
    assert merges._first_difference([gone]) == (
        3,
        "after line 3 it drops 2 line(s) of git's, first 'gone'",
    )
    top = Hunk(1, 1, 0, 0)
    assert merges._first_difference([top]) == (
        1,
        "at the top it drops 1 line(s) of git's, first ''",
    )
    new = Hunk(4, 1, 4, 2)
    new.added = [b"new", b"n2"]
    assert merges._first_difference([new, Hunk(9, 0, 10, 1)]) == (4, "line 4 is 'new'")
    assert merges._sums([new, Hunk(9, 0, 10, 1)]) == (3, 1)
    assert merges.split_lines(b"a\nb\r\nc") == [b"a\n", b"b\r\n", b"c"]
    assert merges.split_lines(b"") == [] and merges.split_lines(b"a\n") == [b"a\n"]
    assert merges._counts(3, 4) == "+3/-4" and merges._version_text((2, 38, 1)) == "2.38.1"


# -- more edges, each found by a mutant that survived the tests above -----------------------


def test_the_matcher_keeps_a_mismatch_and_reads_a_chunk_across_the_base_end() -> None:
    matcher = appendonly.PrefixMatcher(b"abcdef")
    for chunk in (b"abX", b"def"):
        matcher.feed(chunk)
    assert not matcher.matched  # a later chunk that matches does not undo a mismatch
    matcher = appendonly.PrefixMatcher(b"row 1\nrow 2\n")
    for chunk in (b"row 1\n", b"row 2\nrow 3\n"):
        matcher.feed(chunk)
    assert matcher.matched
    matcher = appendonly.PrefixMatcher(b"row 1\nrow 2")
    for chunk in (b"row 1\nro", b"w 2"):
        matcher.feed(chunk)
    assert matcher.matched  # all of it, in two pieces, and nothing after


def test_a_one_byte_blob_and_a_blob_of_several_chunks() -> None:
    now = b"\nx\n"
    assert appendonly.blob_starts(_blob_oid(b"\n"), 1, _reader(now), len(now))
    big = b"".join(b"| #%d | R | T | k |\n" % i for i in range(450_000))  # over 8 MiB
    assert len(big) > 2 * (1 << 22)
    now = big + b"| #0 | R | T | k |\n"
    assert appendonly.blob_starts(_blob_oid(big), len(big), _reader(now), len(now))


def test_the_merge_driver_goes_on_after_each_conflict() -> None:
    base = _index(_row(1), _row(2))
    text, conflicts = index_table.merge3(
        base, _index(_row(1, "Mine"), _row(2)), _index(_row(1, "Yours"), _row(2))
    )
    assert text == HEAD + (
        "<<<<<<< ours\n" + _row(1, "Mine") + "=======\n" + _row(1, "Yours") + ">>>>>>> theirs\n"
    ) + _row(2)
    # Removed by theirs, edited by ours: ours' text against nothing.
    text, conflicts = index_table.merge3(base, _index(_row(1), _row(2, "E")), _index(_row(1)))
    assert conflicts == ["issue #2 was changed differently on both sides"]
    assert text == _index(_row(1)) + "<<<<<<< ours\n" + _row(2, "E") + "=======\n>>>>>>> theirs\n"
    # Rows after a conflict on an added row, and after a side's own repeat, are kept.
    base = _index(_row(1))
    ours = _index(_row(1), _row(2, "Mine"), _row(4), _row(4), _row(5))
    theirs = _index(_row(1), _row(2, "Yours"), _row(3))
    text, conflicts = index_table.merge3(base, ours, theirs)
    assert conflicts == ["issue #2 was added on both sides with different text"]
    assert text.endswith(_row(4) + _row(5) + _row(3))


def test_repeats_are_named_with_their_first_row_and_lines_read_to_the_end() -> None:
    t = IT.parse(_index(_row(1), _row(2), _row(1), _row(3), _row(2)).rstrip("\n"))
    assert t.duplicates() == [(1, 5, 7), (2, 6, 9)]
    assert t.line_text(9) == "| #2 | R2 | Title 2 | bug |"  # the last line, no newline
    assert IT.parse("\n" + _index(_row(1))).line_text(1) == ""


def test_a_span_from_a_later_line_reads_its_first_line_and_bad_json_is_named() -> None:
    lines = [b"a", b" b ", b"c"]
    assert findings_baseline.span_text(lines, 2, 1) == "b"
    finding = Finding("r", "error", "m", path="a.md", line=1, end_line=2)
    [(_, multi)] = findings_baseline.fingerprints("docs", [finding], lambda _p: b"x\ny\n")
    seen: dict[str, int] = {}
    assert multi == finding_identity(seen, "docs", "r", "a.md", "x\ny").fingerprint
    assert _parse_error(b"{").startswith("f.json: not JSON: ")
    assert _parse_error(b'{"schema": 1, "extra": 2}') == "f.json: extra: unknown key" + EXPECTED


OURS, THEIRS = "a" * 40, "b" * 40


def _open(label: str = OURS, run: str = "<<<<<<<", tail: str = "\n") -> bytes:
    return f"{run} {label}{tail}".encode()


def _close(label: str = THEIRS) -> bytes:
    return f">>>>>>> {label}\n".encode()


def test_conflict_hunks_are_found_by_markers_that_name_the_parents() -> None:
    lines = [b"x\n", _open(), b"o\n", b"=======\n", b"t\n", _close(), b"y\n"]
    lines += [_open(f"{OURS}:old/path", "<<<<<<<<", "\r\n"), b"=======\n", _close(f"{THEIRS}:p")]
    assert merges.conflict_regions(lines, OURS, THEIRS) == [(2, 6), (8, 10)]
    for bad in (
        _open(run="<<<<<<"),  # six marker characters are not enough
        _open(label=THEIRS),  # another parent's label
        _open(label=OURS + "X"),
        f"<<<<<<<X {OURS}\n".encode(),
        f"<<<<<<<{OURS}\n".encode(),  # no space
        f"x<<<<<<< {OURS}\n".encode(),
    ):
        assert merges.conflict_regions([bad, b"=======\n", _close()], OURS, THEIRS) == [], bad
    bad_close = f">>>>>>>X {THEIRS}\n".encode()
    assert merges.conflict_regions([_open(), bad_close], OURS, THEIRS) == []
    assert merges.conflict_regions([_open(), _close(OURS + "X")], OURS, THEIRS) == []


LINES = [b"a\n", b"b\n", _open(), b"x\n", b"=======\n", b"y\n", _close(), b"c\n", b"d\n"]
TWO = [b"a\n", _open(), b"=======\n", _close(), b"m\n", _open(), b"=======\n", _close(), b"m\n"]


@pytest.mark.parametrize(
    ("lines", "regions", "text", "kept"),
    [
        (LINES, [(3, 7)], b"a\nb\nRESOLVED\nc\nd\n", True),
        (LINES, [(3, 7)], b"a\nb\nc\nd\n", True),  # the conflict resolved to nothing
        (LINES, [(3, 7)], b"A\nb\nR\nc\nd\n", False),
        (LINES, [(3, 7)], b"a\nB\nR\nc\nd\n", False),  # the line right above the hunk
        (LINES, [(3, 7)], b"a\nb\nR\nc\nD\n", False),
        (TWO, [(2, 4), (6, 8)], b"a\nm\nm\n", True),
        (TWO, [(2, 4), (6, 8)], b"a\nm\n", False),  # one m for the middle and the tail
        (TWO, [(2, 4), (6, 8)], b"a\nR\nm\nR\nm\n", True),
        (TWO, [(2, 4), (6, 8)], b"a\nRm\nm\n", False),  # a run starts at a line start
        (TWO, [(2, 4), (6, 8)], b"a\nm\nX\n", False),
        (TWO[1:], [(1, 3), (5, 7)], b"m\nR\nm\n", True),  # no line above the first hunk
        (TWO[1:], [(1, 3), (5, 7)], b"R\nm\nm\n", True),
        (TWO[1:], [(1, 3), (5, 7)], b"R\nn\nm\n", False),
        # Hunks that touch: nothing between them to keep.
        ([_open(), _close(), _open(), _close(), b"z\n"], [(1, 2), (3, 4)], b"any\nz\n", True),
    ],
)
def test_a_resolution_keeps_every_line_outside_the_hunks(
    lines: list[bytes], regions: list[tuple[int, int]], text: bytes, kept: bool
) -> None:
    assert merges.outside_kept(lines, regions, text) is kept


def test_a_resolved_paths_counts_against_a_parent() -> None:
    assert merges._against({}, "p", True) == "+0/-0 (that parent's version)"
    assert merges._against({}, "p", False) == "absent in both"
    assert merges._against({"p": None}, "p", True) == "binary, differs"
    assert merges._against({"p": (1, 2)}, "p", False) == "+1/-2"
    assert merges._quote(b"x \t\r") == repr("x \t") and merges._quote(b"fooX\r") == repr("fooX")


def test_merges_whose_merge_base_a_shallow_clone_lacks_are_a_skip(
    repo: Repo, make_repo: Callable[..., Repo]
) -> None:
    repo.commit("Base\n\nBody.\n", {"a.txt": "a\n"})
    repo.branch("side")
    repo.commit("Side\n\nBody.\n", {"s.txt": "s\n"})
    repo.checkout("main")
    repo.branch("other")
    repo.commit("Other\n\nBody.\n", {"o.txt": "o\n"})
    repo.checkout("main")
    main = repo.commit("Main\n\nBody.\n", {"m.txt": "m\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "One", "side")
    first = repo.head()
    repo.git("merge", "-q", "--no-ff", "-m", "Two", "other")
    shallow = repo.clone(repo.path.parent / "shallow", "--depth", "3")
    found, result = _gate(shallow, main)
    assert found == [] and result.status == "skip"
    assert result.skip_reason == (
        f"shallow clone: the merge base of the parents of 2 merge(s) (first {first[:12]}) is "
        "not in the fetched history, so git's merge cannot be recomputed; deepen the clone "
        "(git fetch --unshallow)"
    )
    assert (result.stats["merges"], result.stats["unjudged"]) == (2, 2)


def test_a_folded_value_keeps_what_git_does_not_call_whitespace() -> None:
    # git's isspace(): space, tab, CR, LF; `git interpret-trailers --parse` prints `a \vb`.
    assert [tuple(t) for t in find_block("S\n\nK: a\n \vb\n").trailers] == [("K", "a \vb", 3)]


def test_table_edges_the_line_reader_decides() -> None:
    head = "| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    assert IT.parse_row("| [#7](u) | R | T | k", 1) == IT.Row(7, "[#7](u)", "R", "T", "k", 1)
    t = IT.parse("\n" + _index(_row(1)))  # a blank first line
    assert (t.header_line, list(t.row_keys)) == (4, [1])
    t = IT.parse(head + "| #1 | R | T | k |\n" + "\n" * 70_000)  # a long blank tail
    assert (list(t.row_keys), t.malformed, t.body_end) == ([1], [], 68)
    t = IT.parse(head + "| #1 | R | T | k |\n| #2 | R | T | k |\n\u3000\n")
    assert (t.malformed, t.body_end) == ([], 87)
    assert IT.parse("# I\n  | a | b |\n").malformed[0][0] == 2  # an indented pipe line
    t = IT.parse(head.rstrip("\n"))  # the delimiter is the last line, without a newline
    assert (len(t.frame), t.malformed, list(t.row_keys), t.body_start) == (2, [], [], 48)
