"""ledger gate and `tools ledger merge|show`: every rule fires on a real repository, and its
clean twin stays quiet; tampering is detected and named."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Repo
from tools.ledger import append_records, canonical_json, make_record

LED = ".agents/ledger.jsonl"


def rec(n: int, kind: str = "attribution", **extra: object) -> dict:
    return make_record(kind, {"n": n, **extra}, created=f"2026-01-01T00:00:{n:02d}Z")


def text(*records: dict) -> bytes:
    return b"".join(canonical_json(r) + b"\n" for r in records)


def start(repo: Repo, *numbers: int) -> list[dict]:
    """main holds a ledger of ``numbers``; the feature branch is checked out."""
    records = [rec(n) for n in numbers]
    repo.commit("Base\n\nBody.\n", {LED: text(*records)})
    repo.branch("feature")
    return records


def verify(repo: Repo, *extra: str):
    return repo.tools("--format", "json", "ledger", "verify", "--base", "main", *extra)


def findings(run) -> list[dict]:
    """The gate's findings, less the context's range-empty note (tested on its own below)."""
    return [f for f in run.json()["gates"][0]["findings"] if f["rule"] != "range-empty"]


def rules(run) -> list[str]:
    return [f["rule"] for f in findings(run)]


def test_appends_verify_quietly(repo: Repo) -> None:
    start(repo, 1, 2)
    append_records(repo.path / LED, [rec(3), rec(4)])
    repo.commit("Append\n\nBody.\n")
    append_records(repo.path / LED, [rec(5)])  # and one not committed yet
    run = verify(repo)
    assert run.exit_code == 0, run.stdout
    assert rules(run) == []
    stats = run.json()["gates"][0]["stats"]
    assert stats == {"commits": 1, "records": 5, "bad_lines": 0, "cached_bytes": 0}


def test_tampered_one_byte_is_detected_and_named(repo: Repo) -> None:
    records = start(repo, 1, 2, 3)
    raw = (repo.path / LED).read_bytes()
    edited = raw.replace(b'"n":2', b'"n":7')
    assert len(edited) == len(raw) and edited != raw
    repo.commit("Edit\n\nBody.\n", {LED: edited})
    run = verify(repo)
    assert run.exit_code == 1
    assert rules(run) == ["ledger-record-tampered", "ledger-record-removed"]
    tampered, altered = findings(run)
    assert tampered["line"] == 2 and records[1]["id"][:12] in tampered["message"]
    assert "altered" in altered["message"] and records[1]["id"][:12] in altered["message"]


def test_tampered_quiet_for_a_reformatted_but_equal_record(repo: Repo) -> None:
    start(repo)
    record = rec(1)
    pretty = json.dumps(record, indent=None, separators=(", ", ": ")).encode() + b"\n"
    repo.commit("Add\n\nBody.\n", {LED: pretty})
    run = verify(repo)
    assert run.exit_code == 0 and rules(run) == []


def test_record_removed_that_the_base_has(repo: Repo) -> None:
    records = start(repo, 1, 2, 3)
    repo.commit("Drop\n\nBody.\n", {LED: text(records[0], records[2], rec(4))})
    run = verify(repo)
    assert run.exit_code == 1
    assert rules(run) == ["ledger-record-removed"]
    f = findings(run)[0]
    assert records[1]["id"][:12] in f["message"] and "gone" in f["message"]
    assert "line 2 at the merge base" in f["message"]


def test_two_records_swapped_are_detected_and_named(repo: Repo) -> None:
    a, b, c = start(repo, 1, 2, 3)
    repo.commit("Swap\n\nBody.\n", {LED: text(a, c, b)})
    run = verify(repo)
    assert run.exit_code == 1
    assert rules(run) == ["ledger-record-removed"]
    f = findings(run)[0]
    assert "moved" in f["message"] and f["line"] in (2, 3)
    assert b["id"][:12] in f["message"] or c["id"][:12] in f["message"]


def test_duplicate(repo: Repo) -> None:
    records = start(repo, 1)
    repo.commit("Dup\n\nBody.\n", {LED: text(records[0], rec(2), records[0])})
    run = verify(repo)
    assert rules(run) == ["ledger-duplicate"]
    f = findings(run)[0]
    assert f["line"] == 3 and "first at line 1" in f["message"]


def test_malformed_lines_with_line_numbers(repo: Repo) -> None:
    start(repo, 1)
    bad = [
        b"not json\n",
        b"[1, 2]\n",
        b"\n",
        b'{"id": "abc", "kind": "x", "created": "2026-01-01T00:00:00Z", "tool": "0"}\n',
        text(rec(5)).replace(b'"n":5', b'"n":NaN'),
        text(rec(6))[:-1].replace(b"}", b',"n":6}', 1) + b"\n",  # duplicate key
        b"\xff\xfe\n",
    ]
    repo.commit("Junk\n\nBody.\n", {LED: text(rec(1)) + b"".join(bad)})
    run = verify(repo)
    got = [(f["rule"], f["line"]) for f in findings(run)]
    assert got == [("ledger-malformed", n) for n in range(2, 9)]
    messages = [f["message"] for f in findings(run)]
    assert "JSON object" in messages[1] and "empty" in messages[2] and "`id`" in messages[3]
    assert "NaN" in messages[4] and "duplicate key" in messages[5] and "UTF-8" in messages[6]


def test_torn_final_line_is_malformed_then_repaired_by_the_next_append(repo: Repo) -> None:
    start(repo, 1)
    torn = text(rec(2))[:40]
    (repo.path / LED).write_bytes(text(rec(1)) + torn)
    run = verify(repo)
    assert rules(run) == ["ledger-malformed"]
    assert findings(run)[0]["line"] == 2 and "torn" in findings(run)[0]["message"]
    written = append_records(repo.path / LED, [rec(3)])
    assert written == [rec(3)] and "torn" in written.notices[0]
    assert (repo.path / (LED + ".torn")).read_bytes() == torn + b"\n"
    assert rules(verify(repo)) == []


def test_ledger_absent(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    repo.branch("feature")
    run = verify(repo)
    assert run.exit_code == 0
    assert [(f["rule"], f["severity"]) for f in findings(run)] == [("ledger-absent", "info")]


def test_range_empty_is_noted_and_fails_with_require_commits(repo: Repo) -> None:
    start(repo, 1)
    run = verify(repo)
    assert run.exit_code == 0
    found = run.json()["gates"][0]["findings"]
    assert [(f["rule"], f["severity"]) for f in found] == [("range-empty", "info")]
    assert verify(repo, "--require-commits").exit_code == 1


def test_ledger_absent_quiet_when_present(repo: Repo) -> None:
    start(repo, 1)
    assert rules(verify(repo)) == []


def test_ledger_deleted_since_base_is_judged_emptied(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.git("rm", "-q", LED)
    repo.commit("Drop\n\nBody.\n")
    run = verify(repo)
    assert rules(run) == ["ledger-record-removed", "ledger-record-removed"]


def test_no_base_is_a_skip_but_base_free_checks_still_fail(repo: Repo) -> None:
    start(repo, 1)
    run = repo.tools("--format", "json", "ledger", "verify")
    gate = run.json()["gates"][0]
    assert run.exit_code == 0 and gate["status"] == "skip" and "origin/main" in gate["reason"]
    (repo.path / LED).write_bytes(text(rec(1), rec(1)))
    run = repo.tools("--format", "json", "ledger", "verify")
    assert run.exit_code == 1 and rules(run) == ["ledger-duplicate"]


def test_staged_is_judged_against_head(repo: Repo) -> None:
    records = start(repo, 1, 2)
    repo.write(LED, text(records[1]))
    repo.git("add", LED)
    run = repo.tools("--format", "json", "ledger", "verify", "--staged")
    assert rules(run) == ["ledger-record-removed"]
    repo.write(LED, text(*records, rec(3)))
    repo.git("add", LED)
    run = repo.tools("--format", "json", "ledger", "verify", "--staged")
    assert run.exit_code == 0 and rules(run) == []


def test_head_option_judges_that_commit(repo: Repo) -> None:
    records = start(repo, 1, 2)
    repo.commit("Drop\n\nBody.\n", {LED: text(records[0])})
    (repo.path / LED).write_bytes(text(*records))  # the working tree is fine again
    assert rules(verify(repo)) == []
    assert rules(verify(repo, "--head", "HEAD")) == ["ledger-record-removed"]


def test_union_merge_of_two_branches_verifies(repo: Repo) -> None:
    repo.commit("Attrs\n\nBody.\n", {".gitattributes": f"{LED} merge=union\n"})
    start(repo, 1)
    repo.branch("side")
    append_records(repo.path / LED, [rec(2), rec(3)])
    repo.commit("Side\n\nBody.\n")
    repo.checkout("feature")
    append_records(repo.path / LED, [rec(4)])
    repo.commit("Ours\n\nBody.\n")
    repo.git("merge", "-q", "--no-edit", "side")
    run = verify(repo)
    assert run.exit_code == 0 and rules(run) == []
    assert run.json()["gates"][0]["stats"]["records"] == 4


def test_preflight_runs_the_ledger_gate(repo: Repo) -> None:
    start(repo, 1)
    (repo.path / LED).write_bytes(text(rec(1)) + b"oops\n")
    run = repo.tools("preflight", "--gate", "ledger", "--base", "main")
    assert run.exit_code == 1 and "FAIL ledger" in run.stdout and "ledger-malformed" in run.stdout


# -- tools ledger merge ------------------------------------------------------------------------
def write_json(path: Path, data: object) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def test_merge_appends_receipts_in_created_then_id_order(repo: Repo, tmp_path: Path) -> None:
    start(repo, 1)
    late, early, mid = rec(30), rec(10), rec(20)
    a = write_json(tmp_path / "a.json", late)
    b = write_json(tmp_path / "b.json", [mid, early, rec(1)])
    run = repo.tools("ledger", "merge", a, b)
    assert run.exit_code == 0, run.stderr
    assert "merged 3 record(s)" in run.stdout and "1 already present" in run.stdout
    assert (repo.path / LED).read_bytes() == text(rec(1), early, mid, late)
    again = repo.tools("ledger", "merge", b, a)
    assert again.exit_code == 0 and "merged 0 record(s)" in again.stdout
    assert rules(verify(repo)) == []


def test_merge_same_created_orders_by_id(repo: Repo, tmp_path: Path) -> None:
    start(repo)
    same = [make_record("k", {"v": i}, created="2026-02-02T00:00:00Z") for i in range(5)]
    run = repo.tools("ledger", "merge", write_json(tmp_path / "r.json", same))
    assert run.exit_code == 0
    assert (repo.path / LED).read_bytes() == text(*sorted(same, key=lambda r: r["id"]))


def test_merge_writes_nothing_if_any_record_fails(repo: Repo, tmp_path: Path) -> None:
    start(repo, 1)
    before = (repo.path / LED).read_bytes()
    forged = dict(rec(2), n=99)
    good = write_json(tmp_path / "good.json", rec(3))
    bad = write_json(tmp_path / "bad.json", [forged])
    run = repo.tools("ledger", "merge", good, bad)
    assert run.exit_code == 1
    assert "bad.json record 0" in run.stderr and "does not recompute" in run.stderr
    assert (repo.path / LED).read_bytes() == before


def test_merge_unreadable_receipt_is_exit_2(repo: Repo, tmp_path: Path) -> None:
    start(repo, 1)
    before = (repo.path / LED).read_bytes()
    (tmp_path / "x.json").write_text("{not json")
    (tmp_path / "n.json").write_text("42")
    for name in ("x.json", "n.json", "missing.json"):
        run = repo.tools("ledger", "merge", str(tmp_path / name))
        assert run.exit_code == 2, name
        assert run.stderr.startswith("error: ") and name in run.stderr
    assert (repo.path / LED).read_bytes() == before


# -- tools ledger show -------------------------------------------------------------------------
def test_show_lists_and_filters(repo: Repo) -> None:
    repo.commit("Base\n\nBody.\n", {LED: text(rec(1), rec(2, kind="grid-tie"), rec(3))})
    run = repo.tools("ledger", "show")
    assert run.exit_code == 0
    assert len(run.stdout.splitlines()) == 3
    run = repo.tools("ledger", "show", "--kind", "grid-tie")
    assert run.stdout.split() == [
        rec(2, kind="grid-tie")["id"][:12],
        "2026-01-01T00:00:02Z",
        "grid-tie",
    ]
    run = repo.tools("--format", "json", "ledger", "show", "--kind", "attribution")
    assert json.loads(run.stdout) == [rec(1), rec(3)]
    run = repo.tools("ledger", "show", "--id", rec(3)["id"][:10])
    assert json.loads(run.stdout) == rec(3)
    # An id the user named that matches nothing: one error line, exit 2 (never a bare exit 1).
    missing = repo.tools("ledger", "show", "--id", "0" * 64)
    assert missing.exit_code == 2 and "no record" in missing.stderr


def test_show_skips_bad_lines_with_a_warning(repo: Repo) -> None:
    repo.commit("Base\n\nBody.\n", {LED: text(rec(1)) + b"junk\n"})
    run = repo.tools("ledger", "show")
    assert run.exit_code == 0 and len(run.stdout.splitlines()) == 1
    assert "1 line(s)" in run.stderr


def test_a_large_ledger_scanned_in_parts_finds_the_same(repo: Repo, monkeypatch) -> None:
    """Above the size threshold each core scans a part; findings and line numbers must be
    those of a single scan (a duplicate across parts, a tampered line, a torn end)."""
    from tools.ledger import scan as ledger_mod

    records = [rec(n % 60, kind=f"k{n}") for n in range(200)]
    body = text(*records[:120]) + b"junk\n" + text(*records[120:])
    body = body.replace(b'"kind":"k150"', b'"kind":"k151"')
    body += text(records[3]) + b'{"torn'
    repo.commit("Base\n\nBody.\n", {"README": "x\n"})
    repo.write(LED, body)

    def run_with(threshold: int) -> list[tuple]:
        monkeypatch.setattr(ledger_mod, "PARALLEL_MIN_BYTES", threshold)
        run = repo.tools("--format", "json", "ledger", "verify", "--base", "HEAD")
        return [(f["rule"], f["line"]) for f in findings(run)]

    single = run_with(1 << 40)
    monkeypatch.setattr(ledger_mod.os, "cpu_count", lambda: 3)  # three parts, two forked
    parts = run_with(1)
    assert parts == single
    assert ("ledger-malformed", 121) in single and ("ledger-malformed", 203) in single
    assert ("ledger-record-tampered", 152) in single and ("ledger-duplicate", 202) in single


# -- the verified-prefix cache ----------------------------------------------------------------
def test_a_verified_prefix_is_not_reverified_but_still_judged(repo: Repo) -> None:
    records = start(repo, 1, 2, 3)
    first = verify(repo)
    assert first.json()["gates"][0]["stats"]["cached_bytes"] == 0
    size = (repo.path / LED).stat().st_size
    append_records(repo.path / LED, [rec(4), records[1]])  # records[1] is skipped: present
    (repo.path / LED).write_bytes((repo.path / LED).read_bytes() + text(records[0]))
    run = verify(repo)
    stats = run.json()["gates"][0]["stats"]
    assert stats["cached_bytes"] == size and stats["records"] == 5
    assert [(f["rule"], f["line"]) for f in findings(run)] == [("ledger-duplicate", 5)]
    assert "first at line 1" in findings(run)[0]["message"]
    assert repo.git("status", "--porcelain", "--ignored").split() == ["M", LED]


def test_a_changed_prefix_invalidates_what_was_verified(repo: Repo) -> None:
    start(repo, 1, 2, 3)
    assert rules(verify(repo)) == []
    raw = (repo.path / LED).read_bytes()
    (repo.path / LED).write_bytes(raw.replace(b'"n":1', b'"n":9'))
    run = verify(repo)
    assert run.json()["gates"][0]["stats"]["cached_bytes"] == 0
    assert rules(run) == ["ledger-record-tampered", "ledger-record-removed"]
    assert findings(run)[0]["line"] == 1
    # Put back, verified again from the start: clean.
    (repo.path / LED).write_bytes(raw)
    assert rules(verify(repo)) == []


def test_the_cache_also_serves_the_staged_ledger(repo: Repo) -> None:
    start(repo, 1, 2)
    repo.tools("ledger", "verify", "--staged")
    append_records(repo.path / LED, [rec(3)])
    repo.git("add", LED)
    run = repo.tools("--format", "json", "ledger", "verify", "--staged")
    assert run.exit_code == 0 and run.json()["gates"][0]["stats"]["cached_bytes"] > 0


def test_deeply_nested_line_is_malformed_not_a_crash(repo: Repo) -> None:
    start(repo, 1)
    deep = b'{"id":' * 5000 + b"1" + b"}" * 5000 + b"\n"
    repo.write(LED, repo.read(LED) + deep)
    run = verify(repo)
    assert run.exit_code == 1, run.stderr
    assert [(f["rule"], f["line"]) for f in findings(run)] == [("ledger-malformed", 2)]
    assert "nested deeper than 100 levels" in findings(run)[0]["message"]
    receipt = repo.path.parent / "receipt.json"
    receipt.write_bytes(b"[" * 5000 + b"]" * 5000)
    merged = repo.tools("ledger", "merge", str(receipt))
    said = merged.stderr + merged.stdout
    assert merged.exit_code in (1, 2) and "deeper than 100 levels" in said


# -- merges -----------------------------------------------------------------------------------
def _merge_other_branch(repo: Repo, resolve: str) -> None:
    """main holds records 1, 2; branch ``other`` appends 3, ``feature`` appends 4 and merges
    ``other`` with a real `git merge`, its ledger conflict resolved by ``resolve``."""
    start(repo, 1, 2)
    repo.branch("other", "main")
    repo.commit("Append 3\n\nBody.\n", {LED: text(rec(1), rec(2), rec(3))})
    repo.checkout("feature")
    repo.commit("Append 4\n\nBody.\n", {LED: text(rec(1), rec(2), rec(4))})
    merged = repo.git("merge", "-q", "--no-ff", "-m", "Merge other\n\nBody.", "other", check=False)
    assert "CONFLICT" in merged  # both sides appended: git cannot merge the ledger alone
    if resolve == "ours":
        repo.git("checkout", "--ours", LED)
    else:
        repo.write(LED, text(rec(1), rec(2), rec(4), rec(3)))
    repo.git("add", LED)
    repo.git("commit", "-q", "--no-edit", "--no-verify")


def test_merge_that_drops_the_other_sides_record_is_lost(repo: Repo) -> None:
    _merge_other_branch(repo, "ours")
    run = verify(repo)
    assert run.exit_code == 1
    assert rules(run) == ["ledger-merge-lost"]
    lost = findings(run)[0]
    assert lost["commit"] == repo.head() and lost["path"] == LED
    assert rec(3)["id"][:12] in lost["message"] and "lacks" in lost["message"]
    assert repo.head("other")[:12] in lost["message"]


def test_merge_that_keeps_both_sides_is_quiet(repo: Repo) -> None:
    _merge_other_branch(repo, "union")
    run = verify(repo)
    assert run.exit_code == 0, run.stdout
    assert rules(run) == []


def test_merge_that_alters_a_parents_record_is_lost(repo: Repo) -> None:
    start(repo, 1)
    repo.branch("other", "main")
    repo.commit("Append 2\n\nBody.\n", {LED: text(rec(1), rec(2))})
    repo.checkout("feature")
    repo.commit("Change\n\nBody.\n", {"a.txt": "a\n"})
    repo.git("merge", "-q", "--no-ff", "--no-commit", "other")
    # The merge keeps record 2's id but edits its payload (and so its hash).
    repo.write(LED, text(rec(1)) + text(rec(2)).replace(b'"n":2', b'"n":9'))
    repo.git("add", LED)
    repo.git("commit", "-q", "-m", "Merge other\n\nBody.", "--no-verify")
    run = verify(repo)
    assert "ledger-merge-lost" in rules(run)
    assert any("altered" in f["message"] for f in findings(run) if f["rule"] == "ledger-merge-lost")
