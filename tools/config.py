"""Configuration: ``.agents/protocol.yaml`` validated by the JSON Schema shipped in the package.

The defaults are data too (``tools/data/defaults.yaml``). A user's config is merged over them
key by key, except that lists, ``trailers.required`` and ``ratchets`` replace the default whole.
Every problem is a :class:`UsageError` naming the file, the key path and what was expected.
"""

from __future__ import annotations

import copy
import json
import posixpath
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tools.errors import UsageError

DEFAULT_PATH = ".agents/protocol.yaml"
# Mappings that a user's value replaces whole instead of merging into.
_REPLACE_WHOLE = {("trailers", "required"), ("ratchets",)}
# Regex keys that must carry a named group, by key path pattern.
_REQUIRED_GROUPS = {
    ("ratchets", "*", "allow_marker"): "tag",
    ("docs", "spec_now", "*", "spec_link"): "spec",
}


def _data(name: str) -> str:
    return resources.files("tools").joinpath("data", name).read_text(encoding="utf-8")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``tools/data/<name>``, read once."""
    return json.loads(_data(name))


def schema() -> dict[str, Any]:
    return load_schema("protocol.schema.json")


@cache
def _defaults() -> dict[str, Any]:
    return load_yaml(_data("defaults.yaml"))


def defaults() -> dict[str, Any]:
    return copy.deepcopy(_defaults())


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (a silently shadowed key is a lie)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = 1
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str) -> Any:
    """Safe-load YAML, refusing a duplicate key (``yaml.YAMLError`` names it and its line)."""
    return yaml.load(text, Loader=_StrictLoader)


def key_path(parts: Any) -> str:
    """``['docs', 'rules', 0, 'name']`` -> ``docs.rules[0].name``."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out or "(top level)"


def is_repo_relative(path: str) -> bool:
    """True when ``path`` is relative and stays inside the repository once normalised."""
    if not path or path.startswith("/") or "\\" in path or re.match(r"^[A-Za-z]:", path):
        return False
    norm = posixpath.normpath(path)
    return norm != ".." and not norm.startswith("../")


_FORMATS = jsonschema.FormatChecker(formats=())


@_FORMATS.checks("regex", raises=re.error)
def _check_regex(value: object) -> bool:
    if isinstance(value, str):
        re.compile(value)
    return True


@_FORMATS.checks("repo-path")
def _check_repo_path(value: object) -> bool:
    return not isinstance(value, str) or is_repo_relative(value)


@_FORMATS.checks("repo-glob")
def _check_repo_glob(value: object) -> bool:
    return not isinstance(value, str) or is_repo_relative(value.lstrip("!"))


_EXPECT = {
    "regex": "a valid regular expression",
    "repo-path": "a relative path that stays inside the repository",
    "repo-glob": "a repo-relative glob that stays inside the repository",
}


def _describe(error: jsonschema.ValidationError) -> tuple[list[Any], str, str]:
    """(key path, problem, expectation) for one schema error."""
    path = list(error.absolute_path)
    v = error.validator
    if v == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        allowed = ", ".join(sorted(error.schema.get("properties", {}))) or "none"
        key = extra[0] if extra else "?"
        return path + [key], "unknown key", f"one of: {allowed}"
    if v == "format":
        fmt = error.validator_value
        detail = ""
        if fmt == "regex" and error.cause is not None:
            detail = f": {error.cause}"
        return path, f"bad value {error.instance!r}{detail}", _EXPECT.get(fmt, fmt)
    if v == "type":
        want = error.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        return path, f"wrong type ({type(error.instance).__name__})", str(want)
    if v == "enum":
        return (
            path,
            f"bad value {error.instance!r}",
            "one of " + ", ".join(repr(x) for x in error.validator_value),
        )
    if v == "const":
        return path, f"bad value {error.instance!r}", repr(error.validator_value)
    if v == "required":
        return path, error.message, "the key to be present"
    if v == "oneOf":
        # Report the deepest sub-error: it is the one the user most likely meant.
        best = jsonschema.exceptions.best_match(error.context or [])
        if best is not None and best is not error:
            return _describe(best)
        return path, f"bad value {error.instance!r}", "a value of the documented shape"
    if v == "propertyNames":
        return path, f"bad key name {error.instance!r}", "a name of letters, digits, _ . -"
    return path, error.message, str(error.validator_value)


def _is_exact_integer(checker: Any, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


# Draft 2020-12 counts 1.0 as an integer; data whose integers are counts, ids or seeds wants
# the written type to be an integer too.
_ExactIntegerValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", _is_exact_integer
    ),
)


@cache
def _validator(schema_name: str, exact_integers: bool) -> Any:
    cls = _ExactIntegerValidator if exact_integers else jsonschema.Draft202012Validator
    return cls(load_schema(schema_name), format_checker=_FORMATS)


def validate_against(
    data: Any, schema_name: str, source: str, *, exact_integers: bool = False
) -> None:
    """Validate ``data`` against the schema ``tools/data/<schema_name>``; the most relevant
    error becomes one UsageError naming ``source``, the key path and the expectation.

    ``exact_integers``: ``integer`` accepts only ints (not ``1.0``, not booleans).
    """
    validator = _validator(schema_name, exact_integers)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), str(e)))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        path, problem, expected = _describe(error)
        raise UsageError(problem, where=f"{source}: {key_path(path)}", expected=expected)


def validate(data: Any, source: str) -> None:
    """Validate a config mapping; raise one UsageError naming file, key path and expectation."""
    validate_against(data, "protocol.schema.json", source)
    _check_groups(data, source)


def _check_groups(data: dict[str, Any], source: str) -> None:
    for pattern, group in _REQUIRED_GROUPS.items():
        for path, value in _walk(data, pattern):
            if isinstance(value, str) and group not in re.compile(value).groupindex:
                raise UsageError(
                    "regex lacks its named group",
                    where=f"{source}: {key_path(path)}",
                    expected=f"a regex with a group (?P<{group}>…)",
                )


def _walk(node: Any, pattern: tuple[str, ...], path: tuple[Any, ...] = ()) -> Any:
    if not pattern:
        yield list(path), node
        return
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for k, v in items:
            yield from _walk(v, rest, path + (k,))
    elif isinstance(node, dict) and head in node:
        yield from _walk(node[head], rest, path + (head,))


def merge(base: dict[str, Any], over: dict[str, Any], path: tuple[str, ...] = ()) -> dict[str, Any]:
    """Merge ``over`` into a copy of ``base`` by the rules of the module docstring."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        here = path + (key,)
        if (
            isinstance(value, dict)
            and isinstance(out.get(key), dict)
            and here not in _REPLACE_WHOLE
        ):
            out[key] = merge(out[key], value, here)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_file(path: Path, *, display: str) -> dict[str, Any]:
    """Read and validate one config file (not merged)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read config: {exc.strerror}", where=display) from None
    try:
        data = load_yaml(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 (byte {exc.start})", where=display) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{display}:{mark.line + 1}" if mark is not None else display
        problem = getattr(exc, "problem", None) or str(exc)
        raise UsageError(f"invalid YAML: {problem}", where=where) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UsageError(
            f"wrong type ({type(data).__name__})",
            where=f"{display}: (top level)",
            expected="a mapping",
        )
    validate(data, display)
    return data


def load(repo_root: Path, config: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The effective config and the file it came from (None: defaults only).

    An explicitly named ``--config`` that does not exist is an error; the default path may be
    absent, and then every key takes its default.
    """
    if config is not None:
        path = config if config.is_absolute() else Path.cwd() / config
        if not path.is_file():
            raise UsageError("config file not found", where=str(config))
        display = str(config)
    else:
        path = repo_root / DEFAULT_PATH
        if not path.exists():
            return defaults(), None
        display = DEFAULT_PATH
    data = load_file(path, display=display)
    return merge(defaults(), data), display
