"""Print docs/config-reference.md from the config's JSON Schema and its defaults: every key
path, its type, its default and its description, as the package ships them
(tools/data/protocol.schema.json, tools/data/defaults.yaml).

    python scripts/config_doc.py > docs/config-reference.md

tests/test_config_doc.py fails when docs/config-reference.md differs from this output. A
schema key without a `description`, or a default the schema does not know, stops the script:
the reference documents every key or none.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "tools" / "data" / "protocol.schema.json"
DEFAULTS = ROOT / "tools" / "data" / "defaults.yaml"

# The name a reader gives the keys of a mapping whose keys are theirs to choose.
MAP_KEYS = {
    "trailers.required": "<key>",
    "rules": "<rule id>",
    "ratchets": "<name>",
    "ratchets.<name>.buckets": "<bucket>",
}

# Named types of the schema's $defs, as a reader would call them.
DEF_NAMES = {
    "repoPath": "path",
    "glob": "glob",
    "regex": "regex",
    "gateName": "gate name",
}

HEAD = """# Configuration reference

Every key of `.agents/protocol.yaml`, with its type, its default and what it does. Generated
from the JSON Schema the config is validated against
([tools/data/protocol.schema.json](../tools/data/protocol.schema.json), printed by
`tools config schema`) and the defaults
([tools/data/defaults.yaml](../tools/data/defaults.yaml), filled in by `tools config show`)
with `python scripts/config_doc.py > docs/config-reference.md`; a test keeps it in step.

How a config is merged over the defaults, and what a bad value prints:
[configuration.md](configuration.md). What each gate does with its keys: the gate's own page,
linked from each section.

- Every key is optional. A user's config is merged over the defaults key by key; lists,
  `trailers.required` and `ratchets` replace the default value whole.
- **Default** `—`: the key has no default value of its own; when it is absent, it means what
  its description says. **required**: an entry of that list or mapping must give the key.
- `path`: relative to the repository root, staying inside it (no leading `/`, no `..` out).
  `glob`: git wildmatch on repo-relative paths (`**` crosses folders; `!glob` re-excludes).
  `regex`: an RE2 regular expression, compiled when the config is loaded (linear-time
  matching; no backreferences or lookaround:
  [configuration.md](configuration.md#regular-expressions)).
  `<name>` in a key path stands for a name you choose.
"""

SECTION_DOCS = {
    "base": "[the guide](guide.md#the-range)",
    "preflight": "[the guide](guide.md#gates)",
    "index": "[ledgers.md](ledgers.md#the-issue-index--indexpath-default-agentsissue-indexmd)",
    "ledger": "[ledgers.md](ledgers.md#the-evidence-ledger--ledgerpath-default-agentsledgerjsonl)",
    "trailers": "[commit-gates.md](commit-gates.md#configuration-trailers-style)",
    "style": "[commit-gates.md](commit-gates.md#configuration-trailers-style)",
    "docs": "[docs-and-links.md](docs-and-links.md#tools-docs-check)",
    "ratchets": "[ratchet.md](ratchet.md#configuration)",
    "now": "[gates.md](gates.md#now--the-resume-digest)",
    "specs": "[specs-and-evidence.md](specs-and-evidence.md#the-spec-format)",
    "links": "[docs-and-links.md](docs-and-links.md#tools-links-check)",
    "goldens": "[numerics.md](numerics.md#goldens-goldenscase)",
}


@dataclass
class Row:
    path: str
    type: str
    default: str
    description: str


class Reference:
    def __init__(self, schema: dict[str, Any], defaults: dict[str, Any]) -> None:
        self.schema = schema
        self.defaults = defaults
        self.undocumented: list[str] = []

    # -- the schema, read --------------------------------------------------------------------

    def resolve(self, node: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The node with its ``$ref`` followed (its own keys win, as siblings of ``$ref``
        annotate it), and the name of the $def it refers to, if any."""
        ref = node.get("$ref")
        if not ref:
            return node, None
        name = ref.rsplit("/", 1)[-1]
        target, _ = self.resolve(self.schema["$defs"][name])
        return {**target, **{k: v for k, v in node.items() if k != "$ref"}}, name

    def describe(self, node: dict[str, Any], path: str) -> str:
        text = node.get("description")
        if not text:
            self.undocumented.append(path)
            return ""
        return text

    def type_of(self, node: dict[str, Any], path: str = "") -> str:
        node, name = self.resolve(node)
        if name in DEF_NAMES:
            return DEF_NAMES[name]
        if name == "globs":
            return self._sized("list of globs", node)
        if "const" in node:
            return f"`{node['const']}`"
        if "enum" in node:
            return " or ".join(_literal(v) for v in node["enum"])
        if "oneOf" in node:
            return " or ".join(self._variant(v) for v in node["oneOf"])
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        words = []
        for kind in kinds:
            if kind == "array":
                words.append(self._sized(f"list of {self._plural(node['items'])}", node))
            elif kind == "object":
                words.append(self._mapping(node, path))
            elif kind == "integer" and "minimum" in node:
                words.append(f"integer ≥ {node['minimum']}")
            elif kind == "string" and "pattern" in node:
                words.append(f"string matching `{node['pattern']}`")
            else:
                words.append(str(kind))
        return " or ".join(words)

    def _variant(self, node: dict[str, Any]) -> str:
        resolved, name = self.resolve(node)
        if resolved.get("type") == "object" and "properties" in resolved:
            keys = ", ".join(f"`{k}`" for k in resolved["properties"])
            return f"a mapping of {keys}"
        return self.type_of(node)

    def _plural(self, items: dict[str, Any]) -> str:
        resolved, _ = self.resolve(items)
        if resolved.get("type") == "object" and "properties" in resolved:
            return "mappings"
        one = self.type_of(items)
        if one.startswith("`") or " or " in one:
            return f"({one})"
        return {"glob": "globs", "regex": "regexes", "gate name": "gate names"}.get(one, one + "s")

    def _mapping(self, node: dict[str, Any], path: str = "") -> str:
        values = node.get("additionalProperties")
        if not isinstance(values, dict):
            return "mapping"
        key = MAP_KEYS.get(path, "name")
        kinds = [
            self.resolve(v)[0].get("properties", {}).get("kind", {}).get("const")
            for v in self.resolve(values)[0].get("oneOf", [])
        ]
        if kinds and all(kinds):
            shapes = " or ".join(f"`kind: {k}`" for k in kinds)
            return f"mapping of `{key}` → a ratchet ({shapes}, below)"
        return f"mapping of `{key}` → {self._variant(values)}"

    @staticmethod
    def _sized(text: str, node: dict[str, Any]) -> str:
        if node.get("minItems"):
            text = "non-empty " + text
        if node.get("uniqueItems"):
            text += ", no repeats"
        return text

    # -- the defaults --------------------------------------------------------------------------

    def default_of(self, path: str, required: bool) -> str:
        if required:
            return "required"
        value: Any = self.defaults
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                return "—"
            value = value[part]
        if path == "ratchets":
            names = ", ".join(f"`{name}`" for name in value)
            return f"{names} ([below](#the-default-ratchets))"
        return f"`{_flow(value)}`"

    # -- rows -----------------------------------------------------------------------------------

    def rows(self, node: dict[str, Any], prefix: str) -> Iterator[Row]:
        resolved, _ = self.resolve(node)
        required = set(resolved.get("required", []))
        for key, sub in resolved.get("properties", {}).items():
            path = f"{prefix}.{key}" if prefix else key
            sub_resolved, _ = self.resolve(sub)
            yield Row(
                path,
                self.type_of(sub, path),
                self.default_of(path, key in required),
                self.describe(sub_resolved, path),
            )
            yield from self.children(sub, path)

    def children(self, node: dict[str, Any], path: str) -> Iterator[Row]:
        resolved, _ = self.resolve(node)
        if "properties" in resolved:
            yield from self.rows(resolved, path)
        items = resolved.get("items")
        if isinstance(items, dict) and "properties" in self.resolve(items)[0]:
            yield from self.rows(items, path + "[]")
        values = resolved.get("additionalProperties")
        if isinstance(values, dict) and path in MAP_KEYS:
            key = f"{path}.{MAP_KEYS[path]}"
            values_resolved, _ = self.resolve(values)
            variants = values_resolved.get("oneOf", [values])
            objects = [v for v in variants if "properties" in self.resolve(v)[0]]
            if len(objects) > 1:
                return  # several shapes: each gets its own table (see ``variants``)
            if any("properties" not in self.resolve(v)[0] for v in variants):
                yield Row(key, self.type_of(values), "—", self.describe(values_resolved, key))
            for variant in objects:
                yield from self.rows(variant, key)

    def variants(self, path: str) -> list[tuple[str, str, list[Row]]]:
        """For a mapping whose values take several shapes (a ratchet): per shape, its
        ``kind``, description and rows."""
        node, _ = self.resolve(self.schema["properties"][path])
        out = []
        for variant in node["additionalProperties"]["oneOf"]:
            resolved, _ = self.resolve(variant)
            kind = resolved["properties"]["kind"]["const"]
            text = self.describe(resolved, f"{path} (kind: {kind})")
            out.append((kind, text, list(self.rows(resolved, f"{path}.{MAP_KEYS[path]}"))))
        return out

    # -- the page -------------------------------------------------------------------------------

    def render(self, defaults_text: str) -> str:
        self.check_defaults()
        out = [HEAD]
        for key, node in self.schema["properties"].items():
            resolved, _ = self.resolve(node)
            out.append(f"\n## {key}\n\n")
            text = self.describe(resolved, key)
            where = SECTION_DOCS.get(key)
            if key in ("base", "rules"):  # one row: a scalar, or a mapping of the user's keys
                out.append(
                    _table([Row(key, self.type_of(node), self.default_of(key, False), text)])
                )
                if where:
                    out.append(f"\nSee {where}.\n")
                continue
            out.append(_sentence(text) + (f" See {where}." if where else "") + "\n\n")
            if key == "ratchets":
                row = Row(key, self.type_of(node, key), self.default_of(key, False), text)
                out.append(_table([row]))
                for kind, kind_text, rows in self.variants(key):
                    out.append(f"\n### `kind: {kind}`\n\n{_sentence(kind_text)}\n\n")
                    out.append(_table(rows))
                out.append("\n### The default ratchets\n\n")
                out.append(
                    "Without a `ratchets` key, the config has this one (from the defaults):\n"
                )
                out.append("\n```yaml\n" + _section_text(defaults_text, key) + "```\n")
                continue
            out.append(_table(list(self.children(node, key))))
        if self.undocumented:
            raise ValueError(
                "schema keys without a description: " + ", ".join(sorted(set(self.undocumented)))
            )
        return "".join(out)

    def check_defaults(self) -> None:
        """Every key of the defaults is a key of the schema (a default nobody can document
        is a default nobody can set)."""
        unknown = []

        def walk(value: Any, node: dict[str, Any], path: str) -> None:
            resolved, _ = self.resolve(node)
            props = resolved.get("properties")
            if not isinstance(value, dict) or props is None:
                return
            for key, sub in value.items():
                where = f"{path}.{key}" if path else key
                if key not in props:
                    unknown.append(where)
                else:
                    walk(sub, props[key], where)

        walk(self.defaults, self.schema, "")
        if unknown:
            raise ValueError("defaults without a schema key: " + ", ".join(unknown))


def _literal(value: Any) -> str:
    return "null" if value is None else f"`{value}`"


def _flow(value: Any) -> str:
    """A default as it would be written in the YAML config, on one line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        dumped = yaml.safe_dump(value, default_flow_style=True, width=10**6)
        return dumped.removesuffix("\n").removesuffix("\n...")
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[Row]) -> str:
    lines = ["| Key | Type | Default | Description |", "|---|---|---|---|"]
    for r in rows:
        cells = [f"`{r.path}`", r.type, r.default, _sentence(r.description)]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _section_text(text: str, key: str) -> str:
    """The lines of a top-level key of a YAML file, verbatim (comments kept)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for line in lines:
        top = line[:1] not in ("", " ", "\n", "#")
        if top:
            inside = line.startswith(f"{key}:")
        if inside:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return "".join(out)


def render(schema: dict[str, Any] | None = None, defaults_text: str | None = None) -> str:
    """The page. ``schema`` and ``defaults_text`` default to the shipped files."""
    if schema is None:
        schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    if defaults_text is None:
        defaults_text = DEFAULTS.read_text(encoding="utf-8")
    return Reference(schema, yaml.safe_load(defaults_text)).render(defaults_text)


if __name__ == "__main__":
    sys.stdout.write(render())
