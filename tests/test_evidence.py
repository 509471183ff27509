"""The evidence renderer: the exact table text of the contract, blocks in a spec, idempotence."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pytest

from tools import evidence, ledger, markdown
from tools.errors import UsageError

CREATED = "2026-01-01T00:00:00Z"
BASE = "4712dac4" + "0" * 32
BEFORE = "1a2b3c4d5e6f" + "0" * 52
MUTATED = "9" * 64
PLAN = "specs/plans/p.yaml"


def arm(name: str, **changes: Any) -> dict[str, Any]:
    """A mutation-arm record with every field of the contract (a GREEN control by default)."""
    payload: dict[str, Any] = {
        "plan": PLAN,
        "plan_sha256": "b" * 64,
        "base": BASE,
        "arm": name,
        "mutation": "none",
        "mutations": [],
        "overlay": [],
        "targets": [],
        "applied": True,
        "numstat": [],
        "build": "make",
        "test": "make test",
        "compile_rc": 0,
        "run_rc": 0,
        "run_rcs": [0],
        "verdict": "GREEN",
        "expect": None,
        "restored": None,
    }
    payload.update(changes)
    return ledger.make_record("mutation-arm", payload, created=CREATED)


def reverted_arm(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "mutation": "revert src/a.c to 4712dac^",
        "mutations": [{"kind": "revert", "path": "src/a.c", "to": "4712dac^"}],
        "targets": [
            {
                "path": "src/a.c",
                "sha256_before": BEFORE,
                "sha256_mutated": MUTATED,
                "sha256_after": BEFORE,
            }
        ],
        "numstat": [{"path": "src/a.c", "added": 3, "deleted": 1}],
        "run_rc": 1,
        "run_rcs": [1],
        "verdict": "RED",
        "restored": True,
    }
    fields.update(changes)
    return arm("B", **fields)


def run_record(arm_records: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "plan": PLAN,
        "plan_sha256": "b" * 64,
        "base": BASE,
        "spec": "specs/x.md",
        "arms": [a["id"] for a in arm_records],
        "verdicts": {a["arm"]: a["verdict"] for a in arm_records},
        "overlay": [],
    }
    payload.update(changes)
    return ledger.make_record("mutation-run", payload, created=CREATED)


def lookup_of(*records: dict[str, Any]):
    table = {r["id"]: r for r in records}
    return table.get


def attribution(**changes: Any) -> dict[str, Any]:
    good, bad, first = "1" * 40, "2" * 40, "1a2b3c4d5e6f" + "7" * 28
    target = {
        "path": "src/a.c",
        "sha256_before": BEFORE,
        "sha256_mutated": MUTATED,
        "sha256_after": BEFORE,
    }
    payload: dict[str, Any] = {
        "plan": f"attribute:{good[:12]}..{bad[:12]}",
        "good": good,
        "bad": bad,
        "first_bad": first,
        "test": "make test",
        "build": None,
        "paths": ["src/a.c"],
        "revert": {"run_rc": 0, "targets": [target]},
        "restore": {"run_rc": 1, "targets": [target]},
        "verdict": "ATTRIBUTED",
        "reason": None,
        "spec": "specs/x.md",
    }
    payload.update(changes)
    return ledger.make_record("attribution", payload, created=CREATED)


# -- the tables, exactly ------------------------------------------------------------------------
CONTRACT_RUN_TABLE = """\
| arm | mutation | applied | sha256 before → after | compile_rc | run_rc | verdict | restored |
|---|---|---|---|---|---|---|---|
| control | none | yes | — | 0 | 0 | GREEN | — |
| B | revert src/a.c to 4712dac^ | yes (+3/-1) | `src/a.c` 1a2b3c4d5e6f → 1a2b3c4d5e6f | 0 | 1 | RED | yes |
"""  # noqa: E501 (the contract's text, verbatim)


def test_mutation_run_table_is_the_contracts_text() -> None:
    control, b = arm("control"), reverted_arm()
    run = run_record([control, b])
    assert evidence.render_table(run, lookup_of(control, b, run)) == CONTRACT_RUN_TABLE


def test_arm_rows_follow_the_order_of_arms_not_of_the_ledger() -> None:
    control, b = arm("control"), reverted_arm()
    run = run_record([b, control])
    rows = evidence.render_table(run, lookup_of(control, b)).splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == ["| B", "| control"]


def test_overlay_column_right_after_mutation() -> None:
    control, b = arm("control"), reverted_arm()
    overlay = [
        {"patch": "specs/patches/1392.diff"},
        {"revert": {"path": "src/b.c", "to": "HEAD~3"}},
        {"kind": "replace", "path": "src/m.cpp", "old": "n_out", "new": "R", "count": 1},
    ]
    run = run_record([control, b], overlay=overlay)
    described = (
        "patch specs/patches/1392.diff; revert src/b.c to HEAD~3; "
        "replace 'n_out'→'R' ×1 in src/m.cpp"
    )
    assert evidence.render_table(run, lookup_of(control, b)) == (
        "| arm | mutation | overlay | applied | sha256 before → after | compile_rc | run_rc "
        "| verdict | restored |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        f"| control | none | {described} | yes | — | 0 | 0 | GREEN | — |\n"
        f"| B | revert src/a.c to 4712dac^ | {described} | yes (+3/-1) "
        "| `src/a.c` 1a2b3c4d5e6f → 1a2b3c4d5e6f | 0 | 1 | RED | yes |\n"
    )


def test_several_runs_join_run_rcs_and_absent_hashes() -> None:
    flaky = reverted_arm(
        run_rc=1,
        run_rcs=[1, 0, 1],
        verdict="FLAKY",
        targets=[
            {"path": "src/new.c", "sha256_before": None, "sha256_mutated": MUTATED,
             "sha256_after": None},
            {"path": "src/a.c", "sha256_before": BEFORE, "sha256_mutated": None,
             "sha256_after": "c" * 64},
        ],
        numstat=[{"path": "src/new.c", "added": 5, "deleted": 0},
                 {"path": "src/a.c", "added": 0, "deleted": 7}],
    )  # fmt: skip
    run = run_record([flaky])
    row = evidence.render_table(run, lookup_of(flaky)).splitlines()[2]
    assert row == (
        "| B | revert src/a.c to 4712dac^ | yes (+5/-7) | `src/new.c` absent → absent<br>"
        "`src/a.c` 1a2b3c4d5e6f → cccccccccccc | 0 | 1,0,1 | FLAKY | yes |"
    )


def test_nulls_no_and_not_applied() -> None:
    broken = arm(
        "M1",
        mutation="replace 'x'→'y' ×1 in b.c",
        applied=False,
        compile_rc=None,
        run_rc=None,
        run_rcs=[],
        verdict="NOT-APPLIED",
        restored=False,
    )
    row = evidence.render_table(run_record([broken]), lookup_of(broken)).splitlines()[2]
    assert row == "| M1 | replace 'x'→'y' ×1 in b.c | no | — | — | — | NOT-APPLIED | no |"


def test_pipes_and_newlines_in_cells_are_escaped() -> None:
    odd = arm(
        "odd|name",
        mutation="replace 'a|b'→'c\nd' ×1 in x.c",
        targets=[{"path": "we|rd.c", "sha256_before": BEFORE, "sha256_after": BEFORE}],
    )
    row = evidence.render_table(run_record([odd]), lookup_of(odd)).splitlines()[2]
    assert row == (
        "| odd\\|name | replace 'a\\|b'→'c d' ×1 in x.c | yes "
        "| `we\\|rd.c` 1a2b3c4d5e6f → 1a2b3c4d5e6f | 0 | 0 | GREEN | — |"
    )
    assert markdown.code_texts("`a``b`") == ["a``b"]
    assert evidence.code("a`b") == "`` a`b ``"


def test_the_runs_verdict_wins_over_the_arms() -> None:
    control = arm("control", run_rc=1, run_rcs=[1], verdict="RED")
    b = reverted_arm()
    run = run_record([control, b], verdicts={"control": "RED", "B": "UNANCHORED"})
    rows = evidence.render_table(run, lookup_of(control, b)).splitlines()[2:]
    assert rows[1].endswith("| RED | yes |".replace("RED", "UNANCHORED"))


ATTRIBUTION_TABLE = """\
| first bad | paths | revert → run_rc | restore → run_rc | sha256 before → after | verdict |
|---|---|---|---|---|---|
| 1a2b3c4d5e6f | `src/a.c` | 0 | 1 | `src/a.c` 1a2b3c4d5e6f → 1a2b3c4d5e6f | ATTRIBUTED |
"""


def test_attribution_table() -> None:
    record = attribution()
    assert evidence.render_table(record, lookup_of()) == ATTRIBUTION_TABLE


def test_attribution_not_attributed_with_reason_and_no_first_bad() -> None:
    record = attribution(
        first_bad=None,
        paths=["src/a.c", "src/b|c.c"],
        revert={"run_rc": None, "targets": []},
        restore={"run_rc": None, "targets": []},
        verdict="NOT-ATTRIBUTED",
        reason="bisection found no\nfirst bad commit",
    )
    assert evidence.render_table(record, lookup_of()) == (
        "| first bad | paths | revert → run_rc | restore → run_rc | sha256 before → after "
        "| verdict |\n"
        "|---|---|---|---|---|---|\n"
        "| — | `src/a.c`<br>`src/b\\|c.c` | — | — | — | NOT-ATTRIBUTED |\n"
        "\n"
        "Reason: bisection found no first bad commit\n"
    )


# -- refusals -----------------------------------------------------------------------------------
def test_a_kind_without_a_table_is_refused() -> None:
    record = ledger.make_record("golden-capture", {"plan": "x"}, created=CREATED)
    with pytest.raises(UsageError, match="no evidence table for kind golden-capture"):
        evidence.render_table(record, lookup_of(), where="specs/x.md")


def test_a_missing_arm_record_is_refused_naming_the_spec() -> None:
    control = arm("control")
    run = run_record([control])
    with pytest.raises(UsageError) as err:
        evidence.render_table(run, lookup_of(), where="specs/x.md")
    assert err.value.render().startswith("specs/x.md: record ")
    assert "not in the ledger" in err.value.render()


def test_an_arm_of_another_kind_or_shape_is_refused() -> None:
    other = ledger.make_record("golden-capture", {"plan": PLAN}, created=CREATED)
    with pytest.raises(UsageError, match="not a mutation-arm"):
        evidence.render_table(run_record([arm("c")], arms=[other["id"]]), lookup_of(other))
    bad = arm("c", run_rcs="1")
    with pytest.raises(UsageError, match="run_rcs"):
        evidence.render_table(run_record([bad]), lookup_of(bad))
    with pytest.raises(UsageError, match="`paths`"):
        evidence.render_table(attribution(paths="src/a.c"), lookup_of())


def test_a_plan_that_cannot_be_a_marker_value_is_refused() -> None:
    control = arm("control")
    for plan in ("", " p", "a --> b", "two\nlines"):
        run = run_record([control], plan=plan)
        with pytest.raises(UsageError, match="plan"):
            evidence.render_block(run, lookup_of(control))


# -- blocks in a spec ---------------------------------------------------------------------------
SPEC = """\
# A spec

## 1. Owed

- #2 the thing.

## 6. Now

Where it stands.

## 7. Later

Not yet.
"""


def test_render_into_appends_at_the_end_of_a_numbered_now_section() -> None:
    control, b = arm("control"), reverted_arm()
    run = run_record([control, b])
    out = evidence.render_into(SPEC, run, lookup_of(control, b), where="specs/x.md")
    assert out == SPEC.replace(
        "Where it stands.\n",
        "Where it stands.\n\n"
        f"<!-- tools:evidence id={run['id']} plan={PLAN} -->\n"
        + CONTRACT_RUN_TABLE
        + "<!-- /tools:evidence -->\n",
    )
    assert evidence.render_into(out, run, lookup_of(control, b), where="specs/x.md") == out
    (block,) = evidence.find_blocks(out)
    assert (block.id, block.plan) == (run["id"], PLAN)
    assert block.body == CONTRACT_RUN_TABLE
    lines = markdown.split_lines(out)
    assert lines[block.start - 1].startswith("<!-- tools:evidence id=")
    assert lines[block.end - 1] == evidence.CLOSE_MARKER
    assert evidence.unbacked(block, lookup_of(control, b, run), where="specs/x.md") is None


def test_render_into_a_now_section_that_ends_the_file_or_is_empty() -> None:
    record = attribution()
    at_end = "# S\n\n## Owed\n\n## Now\n"
    out = evidence.render_into(at_end, record, lookup_of(), where="s.md")
    assert out.startswith("# S\n\n## Owed\n\n## Now\n\n<!-- tools:evidence id=")
    assert out.endswith(ATTRIBUTION_TABLE + "<!-- /tools:evidence -->\n")
    followed = "## Now\n## Next\n"
    out = evidence.render_into(followed, record, lookup_of(), where="s.md")
    assert out.startswith("## Now\n\n<!-- tools:evidence id=")
    assert out.endswith("<!-- /tools:evidence -->\n\n## Next\n")
    assert evidence.render_into(out, record, lookup_of(), where="s.md") == out


def test_rerendering_a_plan_replaces_its_block_and_keeps_the_others() -> None:
    control, b = arm("control"), reverted_arm()
    first = run_record([control, b])
    other = attribution()
    text = evidence.render_into(SPEC, first, lookup_of(control, b), where="s.md")
    text = evidence.render_into(text, other, lookup_of(), where="s.md")
    b2 = reverted_arm(run_rc=0, run_rcs=[0], verdict="GREEN")
    second = run_record([control, b2])
    again = evidence.render_into(text, second, lookup_of(control, b2), where="s.md")
    blocks = evidence.find_blocks(again)
    assert [(x.plan, x.id) for x in blocks] == [(PLAN, second["id"]), (other["plan"], other["id"])]
    assert "| B | revert src/a.c to 4712dac^ | yes (+3/-1) " in blocks[0].body
    assert "| 0 | 0 | GREEN | yes |" in blocks[0].body
    assert blocks[1].body == ATTRIBUTION_TABLE
    assert again.count("<!-- tools:evidence ") == 2
    assert markdown.split_lines(again)[-3:] == ["## 7. Later", "", "Not yet."]


def test_render_into_keeps_crlf_and_setext_headings() -> None:
    text = "Title\r\n=====\r\n\r\nOwed\r\n----\r\n\r\nNow\r\n---\r\nsome\r\n"
    record = attribution()
    out = evidence.render_into(text, record, lookup_of(), where="s.md")
    assert out.startswith(text)
    added = out[len(text) :]
    assert added.startswith("\r\n<!-- tools:evidence ")
    assert added.count("\r\n") == added.count("\n")
    assert evidence.render_into(out, record, lookup_of(), where="s.md") == out


def test_render_into_refuses_a_spec_without_now_and_malformed_markers() -> None:
    record = attribution()
    with pytest.raises(UsageError, match="no `Now` section"):
        evidence.render_into("# S\n\n## Owed\n", record, lookup_of(), where="specs/s.md")
    unclosed = SPEC + f"<!-- tools:evidence id={'a' * 64} plan=x -->\n"
    with pytest.raises(UsageError, match="without `<!-- /tools:evidence -->`"):
        evidence.render_into(unclosed, record, lookup_of(), where="specs/s.md")
    outside = (
        "## Owed\n"
        f"<!-- tools:evidence id={'a' * 64} plan={record['plan']} -->\n"
        "<!-- /tools:evidence -->\n## Now\n"
    )
    with pytest.raises(UsageError, match="outside the `Now` section"):
        evidence.render_into(outside, record, lookup_of(), where="specs/s.md")


def test_render_into_refuses_a_now_section_ending_in_an_open_fence() -> None:
    with pytest.raises(UsageError, match="unclosed code fence"):
        evidence.render_into("## Now\n```\ncode\n", attribution(), lookup_of(), where="s.md")


def test_markers_inside_fenced_code_are_examples_not_blocks() -> None:
    marker = f"<!-- tools:evidence id={'a' * 64} plan=x -->"
    text = f"## Now\n\n```markdown\n{marker}\n| hand | made |\n{evidence.CLOSE_MARKER}\n```\n"
    assert evidence.scan_blocks(text) == ([], [])


def test_malformed_markers_are_problems() -> None:
    rid = "a" * 64
    cases = {
        f"<!-- tools:evidence id={rid[:-1]} plan=x -->\n": "64-hex",
        f"<!-- tools:evidence id={rid} plan= -->\n<!-- /tools:evidence -->\n": "plan value",
        f" <!-- tools:evidence id={rid} plan=x -->\n<!-- /tools:evidence -->\n": "alone",
        f"<!-- tools:evidence id={rid} plan=x\n": "end with `-->`",
        "<!-- /tools:evidence -->\n": "without an opening one",
        "<!-- tools:evidence-ish -->\n": "malformed evidence marker",
        f"<!-- tools:evidence id={rid} plan=x -->\n"
        f"<!-- tools:evidence id={rid} plan=y -->\n<!-- /tools:evidence -->\n": "not closed",
        f"<!-- tools:evidence id={rid} plan=x -->\n<!-- /tools:evidence -->\n"
        f"<!-- tools:evidence id={'b' * 64} plan=x -->\n<!-- /tools:evidence -->\n": "second block",
    }
    for text, expected in cases.items():
        _, problems = evidence.scan_blocks(text)
        assert problems, text
        assert any(expected in p.message for p in problems), (text, problems)


def test_unbacked_says_which_line_differs() -> None:
    control, b = arm("control"), reverted_arm()
    run = run_record([control, b])
    look = lookup_of(control, b, run)
    text = evidence.render_into(SPEC, run, look, where="s.md")
    edited = text.replace("| 0 | 1 | RED | yes |", "| 0 | 0 | RED | yes |")
    (block,) = evidence.find_blocks(edited)
    why = evidence.unbacked(block, look, where="s.md")
    assert why is not None and f"line {block.start + 4} differs" in why
    assert "tools spec render s.md --id" in why
    assert "not in the ledger" in (evidence.unbacked(block, lookup_of(), where="s.md") or "")
    assert "not in the ledger" in (
        evidence.unbacked(block, lookup_of(run, control), where="s.md") or ""
    )
    tampered = dict(run, base="f" * 40)
    assert "does not verify" in (
        evidence.unbacked(block, lookup_of(tampered, control, b), where="s.md") or ""
    )


def test_describe_mutation_shapes() -> None:
    assert evidence.describe_mutation({"patch": "p.diff"}) == "patch p.diff"
    assert evidence.describe_mutation({"kind": "patch", "path": "p.diff"}) == "patch p.diff"
    assert (
        evidence.describe_mutation({"replace": {"path": "b.c", "old": "x", "new": "y"}})
        == "replace 'x'→'y' in b.c"
    )
    assert evidence.describe_mutation({"what": 1}) == '{"what": 1}'


# -- reading the ledger -------------------------------------------------------------------------
def test_collect_records_keeps_only_what_was_asked() -> None:
    control, b = arm("control"), reverted_arm()
    stranger = arm("z", plan="other.yaml")
    run = run_record([control, b])
    lines = [ledger.canonical_json(r) + b"\n" for r in (control, b, stranger, run)]
    lines.insert(1, b"not json\n")
    got = evidence.collect_records(lines, {run["id"]}, {PLAN})
    assert set(got) == {run["id"], control["id"], b["id"]}
    assert set(evidence.collect_records(lines, {stranger["id"]})) == {stranger["id"]}
    spaced = b'{"id": "' + run["id"].encode() + b'", "kind": "x"}\n'  # not canonical: parsed
    assert evidence.collect_records([spaced], {run["id"]}) == {}  # malformed: skipped
    assert list(evidence.iter_lines(b"a\nb")) == [b"a\n", b"b"]


# -- hostile input ------------------------------------------------------------------------------
ADVERSARIAL = [
    "<!-- tools:evidence " * 52_000,
    "`" + "``x" * 350_000,
    "\\`" * 520_000,
    "`a" * 520_000,
    "#1" * 520_000,
    "#" * 1_048_576,
    "<!-- tools:evidence id=" + "a" * 1_048_576,
    "| a " * 260_000,
]


@pytest.mark.parametrize("line", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_one_mib_adversarial_lines_are_linear(line: str) -> None:
    text = f"## Owed\n{line}\n## Now\n{line}\n"
    start = time.monotonic()
    evidence.scan_blocks(text)
    with contextlib.suppress(UsageError):  # refusing is fine; taking long is not
        evidence.render_into(text, attribution(), lookup_of(), where="s.md")
    assert time.monotonic() - start < 5
