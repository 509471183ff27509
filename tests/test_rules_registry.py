"""Rule ids are a registry: a gate declares each rule once with its default severity, `add()`
refuses any other id, docs/rules.md lists exactly the declared ones, and (checked at the end
of a full run, see tests/conftest.py) every declared rule fires in some test."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

from tools import gates
from tools.report import GateResult, UndeclaredRule, declared

ROOT = Path(__file__).resolve().parents[1]
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _doc_rows(text: str) -> set[tuple[str, str]]:
    rows = set()
    for line in text.splitlines():
        if line.startswith("| [`"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rule = cells[0].split("`")[1]
            gate = cells[1].split("]")[0].lstrip("[")
            rows.add((rule, gate))
    return rows


def _sections(text: str) -> dict[str, str]:
    """rule id -> its section of examples and fixes (`### rule-id` up to the next one)."""
    out: dict[str, str] = {}
    parts = text.split("\n### ")
    for part in parts[1:]:
        out[part.split("\n", 1)[0]] = part
    return out


@pytest.fixture(scope="module")
def rules_doc():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("rules_doc")
    finally:
        sys.path.pop(0)


def _import_gates() -> None:
    for name, target in gates.all_modules().items():
        if HAVE_TORCH or name not in gates.COMMAND_GATES:
            importlib.import_module(target)


def test_docs_list_exactly_the_declared_rules(rules_doc) -> None:  # type: ignore[no-untyped-def]
    documented = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    if HAVE_TORCH:
        assert documented == rules_doc.render(), "run: python scripts/rules_doc.py > docs/rules.md"
    else:  # the numerics gates cannot be imported: compare the rest
        _import_gates()
        want = {(rule, gate) for gate, rules in declared().items() for rule in rules}
        have = {row for row in _doc_rows(documented) if row[1] not in gates.COMMAND_GATES}
        assert have == want
        numerics = frozenset(r for r, g in _doc_rows(documented) if g in gates.COMMAND_GATES)
        page = rules_doc.render(command_gates=False, elsewhere=numerics)
        ours, committed = _sections(page), _sections(documented)
        for rule in ours:
            assert ours[rule] == committed.get(rule), rule


def test_every_declared_rule_has_a_note_and_every_note_a_rule(rules_doc) -> None:  # type: ignore[no-untyped-def]
    _import_gates()
    notes = {**rules_doc.load_notes(), **rules_doc.code_notes()}
    ids = {rule for gate, rules in declared().items() for rule in rules}
    elsewhere: frozenset[str] = frozenset()
    if not HAVE_TORCH:  # the numerics rules, as the committed page lists them
        documented = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
        elsewhere = frozenset(r for r, g in _doc_rows(documented) if g in gates.COMMAND_GATES)
    assert rules_doc.check_notes(notes, ids, elsewhere) == []


def test_a_missing_or_stray_note_stops_the_page(rules_doc, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    notes = rules_doc.load_notes()
    missing = rules_doc.check_notes({}, {"conflict-marker"})
    assert missing == [
        "conflict-marker: declared, but neither its Rule nor rule-notes.yaml has a note"
    ]
    twice = {**notes, "conflict-marker": {"example": "m", "fix": "f"}}
    with pytest.raises(ValueError, match="conflict-marker: noted both beside its Rule and in"):
        rules_doc.render(twice, command_gates=HAVE_TORCH, elsewhere=_numerics(notes))
    stray = {**notes, "no-such-rule": {"example": "m", "fix": "f"}}
    with pytest.raises(ValueError, match="no-such-rule: rule-notes.yaml has a note, but no gate"):
        rules_doc.render(stray, command_gates=HAVE_TORCH, elsewhere=_numerics(notes))
    bad = tmp_path / "notes.yaml"
    bad.write_text("conflict-marker:\n  example: m\n")
    with pytest.raises(ValueError, match="exactly `example` and `fix`"):
        rules_doc.load_notes(bad)
    bad.write_text("conflict-marker:\n  example: m\n  fix: ''\n")
    with pytest.raises(ValueError, match=r"conflict-marker\.fix"):
        rules_doc.load_notes(bad)


def _numerics(notes: dict) -> frozenset[str]:
    if HAVE_TORCH:
        return frozenset()
    documented = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    return frozenset(r for r, g in _doc_rows(documented) if g in gates.COMMAND_GATES)


def test_add_refuses_an_undeclared_rule() -> None:
    importlib.import_module("tools.gates.conflicts")
    result = GateResult("conflicts")
    with pytest.raises(UndeclaredRule):
        result.add("no-such-rule", "message")
    with pytest.raises(UndeclaredRule):
        GateResult("not-a-gate").add("conflict-marker", "message")


def test_add_uses_the_declared_severity_unless_overridden() -> None:
    importlib.import_module("tools.gates.now")
    result = GateResult("now")
    assert result.add("now-heading", "m").severity == "error"
    assert result.add("now-heading", "m", severity="warning").severity == "warning"


def test_every_gate_module_declares_what_it_names() -> None:
    for name, target in gates.all_modules().items():
        if name in gates.COMMAND_GATES and not HAVE_TORCH:
            continue
        mod = importlib.import_module(target)
        assert mod.NAME == name
        assert {r.id for r in mod.RULES} == set(declared()[name])
