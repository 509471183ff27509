"""docs/config-reference.md is generated from the shipped JSON Schema and defaults
(scripts/config_doc.py): it documents every key, and it is never stale."""

from __future__ import annotations

import copy
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "config-reference.md"


@pytest.fixture(scope="module")
def config_doc() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("config_doc")
    finally:
        sys.path.pop(0)


def _schema() -> dict[str, Any]:
    return json.loads((ROOT / "tools" / "data" / "protocol.schema.json").read_text())


def _defaults_text() -> str:
    return (ROOT / "tools" / "data" / "defaults.yaml").read_text()


def test_the_committed_page_is_the_scripts_output(config_doc: Any) -> None:
    assert PAGE.read_text(encoding="utf-8") == config_doc.render(), (
        "run: python scripts/config_doc.py > docs/config-reference.md"
    )


def _key_paths(value: Any, prefix: str = "") -> list[str]:
    out = []
    for key, sub in value.items():
        path = f"{prefix}.{key}" if prefix else key
        out.append(path)
        if isinstance(sub, dict) and path not in ("ratchets", "trailers.required"):
            out.extend(_key_paths(sub, path))
    return out


def test_every_default_key_is_a_row_with_its_default(config_doc: Any) -> None:
    page = config_doc.render()
    defaults = yaml.safe_load(_defaults_text())
    for path in _key_paths(defaults):
        if isinstance(defaults.get(path), dict) and path != "ratchets":
            assert f"\n## {path}\n" in page, path  # a section of its own
            continue
        rows = [line for line in page.splitlines() if line.startswith(f"| `{path}` |")]
        assert len(rows) == 1, path
        value: Any = defaults
        for part in path.split("."):
            value = value[part]
        if not isinstance(value, dict) or path == "trailers.required":
            assert f"`{config_doc._flow(value)}`" in rows[0], (path, rows[0])


def test_the_default_ratchets_are_quoted_verbatim(config_doc: Any) -> None:
    page = config_doc.render()
    block = page.split("### The default ratchets", 1)[1].split("```yaml\n", 1)[1]
    block = block.split("```", 1)[0]
    assert yaml.safe_load(block)["ratchets"] == yaml.safe_load(_defaults_text())["ratchets"]


def _schema_paths(node: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        out.append(path)
        items = sub.get("items")
        if isinstance(items, dict) and "properties" in items:
            out.extend(_schema_paths(items, path + "[]"))
    return out


def test_every_key_of_the_schema_is_a_row(config_doc: Any) -> None:
    page = config_doc.render()
    schema = _schema()
    for path in _schema_paths(schema):
        if "properties" in schema["properties"].get(path, {}):
            assert f"\n## {path}\n" in page, path  # a section of its own
            continue
        assert f"| `{path}` |" in page, path
    for name in ("patternRatchet", "markdownRatchet"):
        for key in schema["$defs"][name]["properties"]:
            assert f"| `ratchets.<name>.{key}` |" in page, (name, key)


def test_a_key_without_a_description_stops_the_script(config_doc: Any) -> None:
    schema = _schema()
    broken = copy.deepcopy(schema)
    del broken["properties"]["now"]["properties"]["max_lines"]["description"]
    with pytest.raises(ValueError, match="now.max_lines"):
        config_doc.render(broken, _defaults_text())
    broken = copy.deepcopy(schema)
    del broken["$defs"]["markdownRatchet"]["properties"]["cell_max"]["description"]
    with pytest.raises(ValueError, match=r"ratchets\.<name>\.cell_max"):
        config_doc.render(broken, _defaults_text())


def test_a_default_the_schema_does_not_know_stops_the_script(config_doc: Any) -> None:
    text = _defaults_text() + "now_and_then:\n  every: 3\n"
    with pytest.raises(ValueError, match="now_and_then"):
        config_doc.render(_schema(), text)
    text = _defaults_text().replace("  max_entry: 400\n", "  max_entry: 400\n  max_words: 9\n")
    with pytest.raises(ValueError, match=r"now\.max_words"):
        config_doc.render(_schema(), text)


def test_descriptions_leave_the_schema_behaviour_alone() -> None:
    """The descriptions are annotations: a config the schema rejects names the same key."""
    from tools import schema as schema_mod
    from tools.errors import UsageError

    with pytest.raises(UsageError) as caught:
        schema_mod.validate_against({"now": {"max_lines": 0}}, "protocol.schema.json", "c.yaml")
    assert "now.max_lines" in str(caught.value)
