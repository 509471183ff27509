"""The decisions of the caches, pinned with plain calls: how a kept range joins the commits
read after it, which payloads are believed, and that a payload nested past the JSON parser
is a miss, never a traceback. (The CLI tests hold the same through real repositories.)"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tools import config_cache, range_memo
from tools.gates import style, trailers  # noqa: F401  # their rules declared
from tools.message_reading import Reading
from tools.report import GateResult
from tools.trailer_block import Block, find_block

SHA = "a" * 40
MARKER = "FOLLOWING_AGENTS_PROTOCOL"


def result(gate: str, stats: dict[str, int], rules: list[str]) -> GateResult:
    out = GateResult(gate)
    out.stats = dict(stats)
    for n, rule in enumerate(rules):
        out.add(rule, f"finding {n}", commit=SHA, line=n or None)
    return out


def test_a_kept_range_and_the_commits_after_it_join_as_one_run_files_them() -> None:
    before = result(
        "trailers", {"commits": 10, "fixups": 2, "before_cutover": 0}, ["marker-missing"]
    )
    after = result("trailers", {"commits": 13, "merges_skipped": 1}, ["trailer-missing"])
    joined = range_memo._joined(before, after)
    assert [f.rule for f in joined.findings] == ["marker-missing", "trailer-missing"]
    # commits is the whole range's already; the rest are summed, in the order a run files
    # them; a count absent from both stays absent, one present in either is kept (even 0).
    assert list(joined.stats.items()) == [
        ("commits", 13),
        ("fixups", 2),
        ("merges_skipped", 1),
        ("before_cutover", 0),
    ]
    empty = range_memo._joined(before, result("trailers", {"commits": 10}, []))
    assert empty.stats == {"commits": 10, "fixups": 2, "before_cutover": 0}


GOOD = {
    "stats": {"commits": 3, "fixups": 1},
    "findings": [["subject-period", "error", "m", SHA, 1]],
}


@pytest.mark.parametrize(
    ("change", "believed"),
    [
        (lambda d: d, True),
        (lambda d: d["findings"][0].__setitem__(0, "no-such-rule"), False),
        (lambda d: d["findings"][0].__setitem__(0, "marker-missing"), False),  # trailers' rule
        (lambda d: d["findings"][0].__setitem__(1, "fatal"), False),
        (lambda d: d["findings"][0].__setitem__(3, "xyz"), False),
        (lambda d: d["findings"][0].__setitem__(3, None), True),
        (lambda d: d["findings"][0].__setitem__(4, "1"), False),
        (lambda d: d["findings"][0].append(0), False),
        (lambda d: d.__setitem__("stats", {"fixups": 1, "commits": 3}), False),  # order
        (lambda d: d.__setitem__("stats", {"fixups": 1}), False),  # no commits
        (lambda d: d.__setitem__("stats", {"commits": -1}), False),
        (lambda d: d.__setitem__("stats", {"commits": True}), False),
        (lambda d: d.__setitem__("stats", {"commits": 3, "other": 1}), False),
        (lambda d: d.__setitem__("extra", 1), False),
    ],
)
def test_only_a_result_of_the_gate_s_own_rules_and_counts_is_believed(change, believed) -> None:
    data = json.loads(json.dumps(GOOD))
    change(data)
    found = range_memo._result(data, "style")
    assert (found is not None) == believed
    if found is not None:
        assert found.stats == data["stats"] and len(found.findings) == 1


def test_a_payload_nested_past_the_parser_is_a_miss(tmp_path: Path) -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    key = "b" * 64
    checksum = hashlib.sha256(key.encode() + b" " + deep).hexdigest().encode()
    (tmp_path / key).write_bytes(range_memo.HEADER + checksum + b" " + deep + b"\n")
    assert range_memo._read(tmp_path, key, "style") is None
    name = config_cache.key(b"base: main\n")
    cached = config_cache._checksum(name, deep)
    (tmp_path / name).write_bytes(config_cache.HEADER + cached + b"\n" + deep)
    assert config_cache.get(tmp_path, name) is None


@pytest.mark.parametrize(
    "text",
    [
        f"Add it\n\nBody.\n\n{MARKER}\n\nAI-Assisted: true\nAssisted-by: a:b [c]\n",
        f"Add it\n\nBody.\n\n{MARKER}\n\nCo-authored-by: A <a@b.c>\n",  # squash shape
        f"Add it\n\n{MARKER}\nAI-Assisted: true\n",  # not the plain shape
        "Add it\n\nBody.\n\nAI-Assisted: true\r\n",
        "",
    ],
)
def test_the_shared_reading_finds_git_s_trailer_block(text: str) -> None:
    def fields(block: Block) -> tuple[object, ...]:
        return (block.trailers, block.start, block.end, block.squash)

    reading = Reading(text)
    assert fields(reading.trailer_block(MARKER)) == fields(find_block(text))
    assert fields(reading.trailer_block(None)) == fields(find_block(text))
    assert reading.lines is reading.lines  # read once


def test_a_fifo_or_a_link_planted_in_the_cache_is_not_read(tmp_path: Path) -> None:
    import os

    from tools import verdict_cache

    real = tmp_path / "real"
    real.write_bytes(b"x")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # a read of it would wait for a writer for ever
    link = tmp_path / "link"
    link.symlink_to(real)
    assert verdict_cache.read_entry(real) == b"x"
    assert verdict_cache.read_entry(fifo) is None
    assert verdict_cache.read_entry(link) is None
    assert verdict_cache.read_entry(tmp_path / "absent") is None
    assert range_memo._read(tmp_path, "fifo", "style") is None
    assert config_cache.get(tmp_path, "fifo") is None
