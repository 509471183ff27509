"""JSON Schema validation shared by every input the tools read (the config, golden manifests,
top-p plans, grid-tie evidence): the schemas ship in ``tools/data/``; the most relevant error
becomes one :class:`UsageError` naming the file, the key path and what was expected.

jsonschema is imported here only, so commands that validate nothing never pay for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema

from tools.errors import UsageError, key_path
from tools.package_data import data_text
from tools.repo_paths import is_repo_relative


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``tools/data/<name>``, read once."""
    schema: dict[str, Any] = json.loads(data_text(name))
    return schema


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
    path: list[Any] = list(error.absolute_path)
    v = error.validator
    instance: Any = error.instance
    wanted: Any = error.validator_value
    if v == "additionalProperties":
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        properties = schema.get("properties", {})
        extra = sorted(set(instance) - set(properties))
        allowed = ", ".join(sorted(properties)) or "none"
        key = extra[0] if extra else "?"
        return path + [key], "unknown key", f"one of: {allowed}"
    if v == "format":
        fmt = wanted
        detail = ""
        if fmt == "regex" and error.cause is not None:
            detail = f": {error.cause}"
        return path, f"bad value {instance!r}{detail}", _EXPECT.get(fmt, fmt)
    if v == "type":
        want = wanted
        want = " or ".join(want) if isinstance(want, list) else want
        return path, f"wrong type ({type(instance).__name__})", str(want)
    if v == "enum":
        return (
            path,
            f"bad value {instance!r}",
            "one of " + ", ".join(repr(x) for x in wanted),
        )
    if v == "const":
        return path, f"bad value {instance!r}", repr(wanted)
    if v == "required":
        return path, error.message, "the key to be present"
    if v == "oneOf":
        # Report the deepest sub-error: it is the one the user most likely meant.
        best = jsonschema.exceptions.best_match(error.context or [])
        if best is not None and best is not error:
            return _describe(best)
        return path, f"bad value {instance!r}", "a value of the documented shape"
    if v == "propertyNames":
        return path, f"bad key name {instance!r}", "a name of letters, digits, _ . -"
    return path, error.message, str(wanted)


def _is_exact_integer(checker: Any, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


# Draft 2020-12 counts 1.0 as an integer; data whose integers are counts, ids or seeds wants
# the written type to be an integer too.
# (types-jsonschema leaves ``extend`` untyped.)
_ExactIntegerValidator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
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
