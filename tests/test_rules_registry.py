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
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            gate = cells[1].split("]")[0].lstrip("[")
            rows.add((cells[0].strip("`"), gate))
    return rows


def test_docs_list_exactly_the_declared_rules() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        rules_doc = importlib.import_module("rules_doc")
    finally:
        sys.path.pop(0)
    documented = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    if HAVE_TORCH:
        assert documented == rules_doc.render(), "run: python scripts/rules_doc.py > docs/rules.md"
    else:  # the numerics gates cannot be imported: compare the rest
        for name, target in gates.all_modules().items():
            if name not in gates.COMMAND_GATES:
                importlib.import_module(target)
        want = {(rule, gate) for gate, rules in declared().items() for rule in rules}
        have = {row for row in _doc_rows(documented) if row[1] not in gates.COMMAND_GATES}
        assert have == want


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
