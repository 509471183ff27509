"""The typed config: every key of the schema has its field, a user's values land in them, and
the context holds both the typed config and the merged mapping it came from."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tests.conftest import Repo
from tools.config import defaults, merge, schema
from tools.config_model import (
    MarkdownRatchetConfig,
    PatternRatchetConfig,
    ProtocolConfig,
    StyleConfig,
    _section,
    protocol_config,
)
from tools.context import Context, Options

# Sections whose value is a mapping of names, not an object of fixed keys.
_NAMED = {"rules", "ratchets"}


def _fields(cls: type) -> set[str]:
    named: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]  # every section: a named tuple
    return set(named)


def test_every_schema_key_has_a_typed_field() -> None:
    """A key added to the schema without its field would be silently unreadable."""
    props = schema()["properties"]
    assert set(props) == _fields(ProtocolConfig)
    typed = protocol_config(defaults())
    for name, section in props.items():
        if name in _NAMED or section.get("type") != "object":
            continue
        value = getattr(typed, name)
        assert set(section["properties"]) <= _fields(type(value)), name


def test_pattern_and_markdown_ratchets_have_every_schema_key() -> None:
    defs = schema()["$defs"]
    for key, cls in (
        ("patternRatchet", PatternRatchetConfig),
        ("markdownRatchet", MarkdownRatchetConfig),
    ):
        assert set(defs[key]["properties"]) <= _fields(cls), key


def test_a_section_built_by_field_names_refuses_a_name_that_is_no_field() -> None:
    # Sections are built from the mapping by their fields' names; a converted value given
    # under a misspelt name would otherwise leave the raw value in place without a word.
    style = defaults()["style"]
    assert _section(StyleConfig, style) == StyleConfig(**style)
    with pytest.raises(TypeError, match="'subject_maxx'"):
        _section(StyleConfig, style, subject_maxx=1)


def _user(over: dict[str, Any]) -> ProtocolConfig:
    return protocol_config(merge(defaults(), over))


def test_a_users_values_land_in_the_typed_fields() -> None:
    cfg = _user(
        {
            "base": "main",
            "rules": {"now-budget": False, "subject-length": "error"},
            "trailers": {
                "required": {"X-Key": ["a", "b"]},
                "exceptions": [{"commit": "abcd", "rule": "marker-missing", "reason": "old"}],
            },
            "docs": {
                "rules": [
                    {
                        "name": "r",
                        "when_row_moves": {"matrix": "m.md", "to": ["done"], "key_column": 2},
                        "require_changed": ["CHANGELOG.md"],
                    }
                ],
                "spec_now": [{"matrix": "m.md", "spec_link": "(?P<spec>x)", "states": ["done"]}],
            },
            "ratchets": {
                "size": {"kind": "markdown", "path": "README.md", "cell_max": 10},
                "p": {
                    "kind": "pattern",
                    "buckets": {"b": "x", "c": {"regex": "y", "outside_guards": []}},
                },
            },
        }
    )
    assert cfg.base == "main"
    assert dict(cfg.rules) == {"now-budget": "off", "subject-length": "error"}
    assert dict(cfg.trailers.required) == {"X-Key": ("a", "b")}
    assert cfg.trailers.exceptions[0].reason == "old"
    (rule,) = cfg.docs.rules
    assert rule.when_changed == () and rule.renames is False and rule.message is None
    assert rule.when_row_moves is not None and rule.when_row_moves.key_column == 2
    assert rule.when_row_moves.state_column is None
    assert cfg.docs.spec_now[0].key_column == 1
    size, p = cfg.ratchets["size"], cfg.ratchets["p"]
    assert isinstance(size, MarkdownRatchetConfig) and size.cell_max == 10
    assert size.paragraph_max is None and size.baseline is None
    assert isinstance(p, PatternRatchetConfig) and p.include is None
    assert p.buckets["b"].regex == "x" and p.buckets["b"].outside_guards is None
    assert p.buckets["c"].outside_guards == ()


def test_the_defaults_need_no_user_key() -> None:
    cfg = protocol_config(defaults())
    assert cfg.trailers.marker == "FOLLOWING_AGENTS_PROTOCOL"
    assert cfg.preflight.gates[0] == "conflicts"
    assert cfg.style.subject_max == 72 and cfg.now.max_age_days is None
    assert set(cfg.ratchets) == {"device-leakage"}


def test_the_context_holds_the_typed_config_and_its_mapping(repo: Repo) -> None:
    repo.write(".agents/protocol.yaml", "base: main\nstyle:\n  subject_max: 50\n")
    repo.commit("config")
    ctx = Context(Options(repo=repo.path))
    assert ctx.config.style.subject_max == 50 and ctx.config.base == "main"
    assert ctx.config_data == merge(defaults(), {"base": "main", "style": {"subject_max": 50}})
    canonical = json.dumps(ctx.config_data, sort_keys=True, separators=(",", ":"))
    assert ctx.describe()["config_sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
    with pytest.raises(AttributeError):  # the config is a named tuple, frozen
        ctx.config.base = "other"  # type: ignore[misc]
    assert ctx.config.index.path == ".agents/issue-index.md"  # the section, not tuple.index
    with pytest.raises(AttributeError):  # a section is a named tuple: frozen too
        ctx.config.style.subject_max = 10  # type: ignore[misc]
