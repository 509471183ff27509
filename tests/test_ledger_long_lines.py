"""Long ledger lines are judged on their skeleton (tools.ledger.scan): the verdicts, ids and
messages are the full parse's, and a tampered large record is still caught by the real CLI."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tools.ledger import LARGE_LINE, canonical_json, make_record, scan_lines

LED = ".agents/ledger.jsonl"
BIG = LARGE_LINE + 1000


def big_record(text: str = "line of output\n", **extra: object) -> dict:
    body = text * (BIG // max(1, len(text)) + 1)
    return make_record(
        "mutation-run", {"log": body, "rc": 0, **extra}, created="2026-12-01T10:00:00Z"
    )


def both(line: bytes) -> tuple:
    """(long-line verdict, full-parse verdict) of one line, comparable."""

    def key(items: list) -> tuple:
        (item,) = items
        err = (item.error.rule, item.error.message) if item.error else None
        return item.id, item.computed, err, item.kind

    return key(list(scan_lines([line], records=False))), key(list(scan_lines([line])))


def test_a_canonical_long_record_verifies_with_its_own_id() -> None:
    rec = big_record()
    line = canonical_json(rec) + b"\n"
    fast, full = both(line)
    assert fast == full == (rec["id"], rec["id"], None, "mutation-run")


def test_one_byte_changed_in_the_long_string_is_tampered() -> None:
    line = canonical_json(big_record()) + b"\n"
    at = line.index(b"output") + 500_000
    edited = line[:at] + (b"X" if line[at : at + 1] != b"X" else b"Y") + line[at + 1 :]
    fast, full = both(edited)
    assert fast == full
    assert fast[2][0] == "ledger-record-tampered" and fast[0] != fast[1]


# Writing that is not canonical, and malformed lines: the same verdict and message.
VARIANTS = [
    lambda line: line.replace(b'"log":"', b'"log": "', 1),  # whitespace
    lambda line: line.replace(b"output", b"outp\\u0075t", 1),  # an escape not needed
    lambda line: line.replace(b"output", b"outp\\/t", 1),  # another
    lambda line: line.replace(b'"rc":0', b'"rc":0,"rc":1', 1),  # a duplicate key
    lambda line: line.replace(b"output", b"outp\\ud800t", 1),  # a lone surrogate
    lambda line: line.replace(b"output", b"outp\xfft", 1),  # not UTF-8
    lambda line: line[:-3] + b"\n",  # cut short
    lambda line: line.replace(b'"kind":"mutation-run"', b'"kind":""', 1),  # bad field
    lambda line: line.replace(b'"rc":0', b'"rc":NaN', 1),
    lambda line: line.replace(b'"created":"2026', b'"created":"x2026', 1),
]


def test_variants_judge_as_the_full_parse_judges() -> None:
    line = canonical_json(big_record()) + b"\n"
    for variant in VARIANTS:
        fast, full = both(variant(line))
        assert fast == full, variant


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.text(min_size=1, max_size=8),
    st.dictionaries(st.text(max_size=4), st.text(max_size=6), max_size=3),
    st.sampled_from(["", "kind", "key"]),
)
def test_generated_long_records_judge_as_the_full_parse_judges(
    unit: str, extra: dict, where: str
) -> None:
    extra = {k: v for k, v in extra.items() if k not in ("id", "kind", "created", "tool", "log")}
    if where == "key":
        extra["k" * (70_000)] = 1  # a long key stays in the skeleton
    rec = big_record(unit, **extra)
    if where == "kind":
        rec = make_record("k" * 70_000, {"log": rec["log"]}, created="2026-12-01T10:00:00Z")
    line = canonical_json(rec) + b"\n"
    fast, full = both(line)
    assert fast == full and fast[2] is None
    loose = json.dumps(rec, ensure_ascii=True, indent=None).encode() + b"\n"  # escapes all
    fast, full = both(loose)
    assert fast == full


def test_ledger_verify_catches_a_tampered_large_record(repo: Repo) -> None:
    small = make_record("attribution", {"n": 1}, created="2026-12-01T09:00:00Z")
    repo.commit("Base\n\nBody.\n", {LED: canonical_json(small) + b"\n"})
    repo.branch("feature")
    line = canonical_json(big_record()) + b"\n"
    repo.write(LED, canonical_json(small) + b"\n" + line)
    run = repo.tools("--format", "json", "ledger", "verify", "--base", "main")
    assert run.exit_code == 0, run.stdout
    at = line.index(b"output") + 700_000
    repo.write(LED, canonical_json(small) + b"\n" + line[:at] + b"Z" + line[at + 1 :])
    run = repo.tools("--format", "json", "ledger", "verify", "--base", "main")
    assert run.exit_code == 1
    found = [f for f in run.json()["gates"][0]["findings"] if f["rule"] != "range-empty"]
    assert [(f["rule"], f["line"]) for f in found] == [("ledger-record-tampered", 2)]
    assert "mutation-run" in found[0]["message"]
