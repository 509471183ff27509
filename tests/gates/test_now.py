"""now gate: every rule fires, and a clean digest is quiet."""

from __future__ import annotations

from tests.conftest import Repo

GOOD = """# NOW
<!-- now-updated: 2026-01-01 -->

## Live claims
- the parser agrees with git

## 2. Current gate
| gate | state |
|---|---|
| trailers | green |

Next actions
------------
1. land the ledger
"""


def _rules(run) -> list[str]:
    return [f["rule"] for f in run.json()["gates"][0]["findings"]]


def _check(repo: Repo, *extra: str):
    return repo.tools("--format", "json", "now", "check", *extra)


def test_clean_digest_passes(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {".agents/NOW.md": GOOD})
    run = _check(repo)
    assert run.exit_code == 0, run.stdout
    assert _rules(run) == []


def test_now_missing(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {"x": "y\n"})
    run = _check(repo)
    assert run.exit_code == 1
    assert _rules(run) == ["now-missing"]


def test_now_stamp_absent_and_malformed(repo: Repo) -> None:
    repo.write(".agents/NOW.md", GOOD.replace("<!-- now-updated: 2026-01-01 -->", ""))
    assert _rules(_check(repo)) == ["now-stamp"]
    repo.write(".agents/NOW.md", GOOD.replace("2026-01-01", "2026-13-40"))
    run = _check(repo)
    assert _rules(run) == ["now-stamp"]
    assert run.json()["gates"][0]["findings"][0]["line"] == 2


def test_now_stale_counts_from_head_committer_date(repo: Repo) -> None:
    cfg = "now:\n  max_age_days: 7\n"
    repo.commit(
        "Add\n\nBody.\n",
        {".agents/NOW.md": GOOD, ".agents/protocol.yaml": cfg},
        date="2026-01-08T12:00:00Z",
    )
    assert _rules(_check(repo)) == []  # 7 days: within budget
    repo.commit("Later\n\nBody.\n", date="2026-01-09T12:00:00Z")
    run = _check(repo)
    assert _rules(run) == ["now-stale"]
    assert "8 days" in run.json()["gates"][0]["findings"][0]["message"]


def test_now_stale_not_set_is_quiet(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {".agents/NOW.md": GOOD}, date="2030-01-01T00:00:00Z")
    assert _rules(_check(repo)) == []


def test_now_heading_missing_any_level_case_insensitive(repo: Repo) -> None:
    repo.write(".agents/NOW.md", GOOD.replace("## Live claims", "#### LIVE CLAIMS"))
    assert _rules(_check(repo)) == []
    repo.write(".agents/NOW.md", GOOD.replace("## Live claims", "Live claims"))
    run = _check(repo)
    assert _rules(run) == ["now-heading"]
    assert "live claims" in run.json()["gates"][0]["findings"][0]["message"]


def test_now_budget(repo: Repo) -> None:
    cfg = "now:\n  max_lines: 20\n"
    repo.write(".agents/protocol.yaml", cfg)
    n = len(GOOD.splitlines())
    repo.write(".agents/NOW.md", GOOD + "x\n" * (20 - n))
    assert _rules(_check(repo)) == []
    repo.write(".agents/NOW.md", GOOD + "x\n" * (21 - n))
    run = _check(repo)
    assert _rules(run) == ["now-budget"]


def test_now_long_entry_list_item_and_table_row(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "now:\n  max_entry: 60\n")
    ok = GOOD + "- " + "a" * 58 + "\n"  # exactly 60 characters
    repo.write(".agents/NOW.md", ok)
    assert _rules(_check(repo)) == []
    long_item = GOOD + "- " + "a" * 40 + "\n  continued " + "b" * 20 + "\n"
    repo.write(".agents/NOW.md", long_item)
    run = _check(repo)
    assert _rules(run) == ["now-long-entry"]
    long_row = GOOD + "| " + "c" * 70 + " |\n"
    repo.write(".agents/NOW.md", long_row)
    assert _rules(_check(repo)) == ["now-long-entry"]


def test_crlf_and_non_utf8_digest(repo: Repo) -> None:
    data = GOOD.replace("\n", "\r\n").encode() + b"- caf\xe9\r\n"
    repo.write(".agents/NOW.md", data)
    run = _check(repo)
    assert run.exit_code == 0, run.stdout


def test_staged_reads_the_index(repo: Repo) -> None:
    repo.commit("Add\n\nBody.\n", {".agents/NOW.md": GOOD})
    repo.write(".agents/NOW.md", GOOD.replace("<!-- now-updated: 2026-01-01 -->", ""))
    assert _rules(_check(repo, "--staged")) == []
    assert _rules(_check(repo)) == ["now-stamp"]
    repo.git("add", ".agents/NOW.md")
    assert _rules(_check(repo, "--staged")) == ["now-stamp"]


def test_configured_path(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "now:\n  path: docs/STATUS.md\n")
    repo.write("docs/STATUS.md", GOOD)
    assert _rules(_check(repo)) == []
