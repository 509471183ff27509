"""Rule ids are a registry: a gate declares each rule once with its default severity, example
and fix, `add()` refuses any other id, docs/rules.md lists exactly the declared ones (rendered
without torch or numpy: the numerics gates declare theirs in tools/numerics/rules.py), and
(checked at the end of a full run, see tests/conftest.py) every declared rule fires in some
test."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools import gates
from tools.report import GateResult, UndeclaredRule, declared

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
NUMERICS = ("torch", "numpy")

# Runs scripts/rules_doc.py as `python scripts/rules_doc.py` does, with the modules named in
# argv[1] made unimportable (None in sys.modules: `import` raises ImportError and find_spec
# answers None, as when they are not installed); prints the page and which of torch and
# numpy ended up imported.
RENDER = r"""
import contextlib, io, json, runpy, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None
page = io.StringIO()
with contextlib.redirect_stdout(page):
    runpy.run_path(sys.argv[2], run_name="__main__")
loaded = sorted(n for n in ("torch", "numpy") if sys.modules.get(n) is not None)
print(json.dumps({"page": page.getvalue(), "loaded": loaded}))
"""


def _doc_rows(text: str) -> set[tuple[str, str]]:
    rows = set()
    for line in text.splitlines():
        if line.startswith("| [`"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rule = cells[0].split("`")[1]
            gate = cells[1].split("]")[0].lstrip("[")
            rows.add((rule, gate))
    return rows


@pytest.fixture(scope="module")
def rules_doc():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("rules_doc")
    finally:
        sys.path.pop(0)


def _numerics_importable() -> bool:
    """torch and numpy import here (not merely found: a stand-in that raises counts as absent)."""
    try:
        for name in NUMERICS:
            importlib.import_module(name)
    except ImportError:
        return False
    return True


def test_docs_list_exactly_the_declared_rules(rules_doc) -> None:  # type: ignore[no-untyped-def]
    documented = DOC.read_text(encoding="utf-8")
    assert documented == rules_doc.render(), "run: python scripts/rules_doc.py > docs/rules.md"
    table = rules_doc.import_rules()
    assert set(table) == set(gates.all_modules())
    assert _doc_rows(documented) == {
        (rule, gate) for gate, rules in table.items() for rule in rules
    }


@pytest.mark.parametrize("blocked", [(), NUMERICS], ids=["as-installed", "without-numerics"])
def test_the_page_needs_neither_torch_nor_numpy(blocked: tuple[str, ...]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", RENDER, json.dumps(blocked), str(ROOT / "scripts" / "rules_doc.py")],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["loaded"] == []
    assert out["page"] == DOC.read_text(encoding="utf-8")


def test_the_command_gates_rules_come_from_their_torch_free_module(rules_doc) -> None:  # type: ignore[no-untyped-def]
    modules = rules_doc.rule_modules()
    assert "tools.numerics.rules" in modules
    assert not set(modules) & set(gates.COMMAND_GATES.values())


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("example", "", "an `example`"), ("fix", "  \n", "a `fix`")],
)
def test_a_rule_without_its_example_or_fix_stops_the_page(  # type: ignore[no-untyped-def]
    rules_doc, field: str, value: str, message: str
) -> None:
    table = rules_doc.import_rules()
    rule = table["conflicts"]["conflict-marker"]
    broken = {**table, "conflicts": {**table["conflicts"]}}
    broken["conflicts"]["conflict-marker"] = rule._replace(**{field: value})
    with pytest.raises(ValueError, match=f"conflicts: conflict-marker: declared without {message}"):
        rules_doc.render(broken)
    assert rules_doc.check_notes(table) == []


def test_a_registered_gate_without_declared_rules_stops_the_page(  # type: ignore[no-untyped-def]
    rules_doc, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered = gates.all_modules()
    monkeypatch.setattr(
        gates, "all_modules", lambda: {**registered, "phantom": "tools.gates.conflicts"}
    )
    with pytest.raises(ValueError, match="phantom: registered, but no rule module declares"):
        rules_doc.render()


def test_a_changed_fix_makes_the_committed_page_stale(rules_doc) -> None:  # type: ignore[no-untyped-def]
    table = rules_doc.import_rules()
    rule = table["grid-tie"]["off-grid"]
    changed = {**table, "grid-tie": {**table["grid-tie"]}}
    changed["grid-tie"]["off-grid"] = rule._replace(fix=rule.fix + " Then rerun.")
    page = rules_doc.render(changed)
    assert page != DOC.read_text(encoding="utf-8")
    assert "rounding grid, so" in page and "rescue the set. Then rerun.\n" in page


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
    numerics = _numerics_importable()
    for name, target in gates.all_modules().items():
        if name in gates.COMMAND_GATES and not numerics:
            continue
        mod = importlib.import_module(target)
        assert mod.NAME == name
        assert {r.id for r in mod.RULES} == set(declared()[name])
    rules = importlib.import_module("tools.numerics.rules")
    by_name = {
        rules.GOLDEN: rules.GOLDEN_RULES,
        rules.GRID_TIE: rules.GRID_TIE_RULES,
        rules.TOPP_COUNT: rules.TOPP_RULES,
    }
    assert set(by_name) == set(gates.COMMAND_GATES)
    for name, declared_rules in by_name.items():
        assert list(declared()[name].values()) == declared_rules
