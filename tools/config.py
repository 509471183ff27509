"""Configuration: ``.agents/protocol.yaml`` validated by the JSON Schema shipped in the package.

The defaults are data too (``tools/data/defaults.yaml``). A user's config is merged over them
key by key, except that lists, ``trailers.required`` and ``ratchets`` replace the default whole.
Every problem is a :class:`UsageError` naming the file, the key path and what was expected.
The schema machinery lives in :mod:`tools.schema` and loads only when a file is validated; the
validated mapping becomes typed values in :mod:`tools.config_model`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from tools.config_model import ProtocolConfig, protocol_config
from tools.errors import UsageError, key_path
from tools.package_data import data_text
from tools.repo_paths import is_repo_relative

# Kept importable from here for the modules that check paths through this one.
__all__ = [
    "DEFAULT_PATH",
    "ProtocolConfig",
    "defaults",
    "is_repo_relative",
    "load",
    "load_bytes",
    "load_file",
    "load_merged",
    "key_path",
    "merge",
    "protocol_config",
    "refuse_outside_link",
    "schema",
    "validate",
]

DEFAULT_PATH = ".agents/protocol.yaml"
# Mappings that a user's value replaces whole instead of merging into.
_REPLACE_WHOLE = {("trailers", "required"), ("ratchets",)}
# Every key that holds a regular expression, by key path pattern, with the named group it
# must carry (None: none). Each is compiled by RE2 (tools.bounded.config_pattern).
_PATTERNS: dict[tuple[str, ...], str | None] = {
    ("trailers", "assisted_by_format"): None,
    ("style", "subject_pattern"): None,
    ("docs", "rules", "*", "when_added_line"): None,
    ("docs", "spec_now", "*", "spec_link"): "spec",
    ("ratchets", "*", "buckets", "*"): None,  # a bucket given as its regex alone
    ("ratchets", "*", "buckets", "*", "regex"): None,
    ("ratchets", "*", "buckets", "*", "outside_guards", "*"): None,
    ("ratchets", "*", "allow_marker"): "tag",
}


def schema() -> dict[str, Any]:
    from tools.schema import load_schema  # jsonschema loads only when a schema is needed

    return load_schema("protocol.schema.json")


@cache
def _defaults() -> dict[str, Any]:
    from tools.yaml_files import load_yaml  # PyYAML loads only when YAML is read

    data: dict[str, Any] = load_yaml(data_text("defaults.yaml"))
    return data


def defaults() -> dict[str, Any]:
    import copy

    return copy.deepcopy(_defaults())


def validate(data: Any, source: str) -> None:
    """Validate a config mapping; raise one UsageError naming file, key path and expectation."""
    from tools.schema import validate_against  # jsonschema loads only when a file is validated

    validate_against(data, "protocol.schema.json", source)
    _check_patterns(data, source)


def _check_patterns(data: dict[str, Any], source: str) -> None:
    """Compile every regex of the config with RE2, as the gates will: a pattern RE2 cannot
    express, or one lacking its named group, is exit 2 naming its key."""
    from tools.bounded import config_pattern

    for keys, group in _PATTERNS.items():
        for path, value in _walk(data, keys):
            if not isinstance(value, str):
                continue
            compiled = config_pattern(value, f"{source}: {key_path(path)}")
            if group is not None and group not in compiled.groupindex:
                raise UsageError(
                    "regex lacks its named group",
                    where=f"{source}: {key_path(path)}",
                    expected=f"a regex with a group (?P<{group}>…)",
                )


def _walk(
    node: Any, pattern: tuple[str, ...], path: tuple[Any, ...] = ()
) -> Iterator[tuple[list[Any], Any]]:
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
    import copy

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
    return load_bytes(_read(path, display), display=display)


def _read(path: Path, display: str, root: Path | None = None) -> bytes:
    """The config file's bytes: a regular file (inside ``root``, given), read under the
    default ``limits``: the config that could change them is the one being read."""
    from tools import file_reads

    return file_reads.read_file(
        path, display, root=root, limit=file_reads.DEFAULT_LIMITS.max_file_bytes
    )


def validation_cache(tools_dir: Path, *, no_cache: bool = False) -> Path | None:
    """The folder of validated configs (:mod:`tools.config_cache`) of the repository whose
    git directory holds ``tools_dir`` (the git layer's :meth:`~tools.git.Git.tools_dir`);
    None when the cache is off for this run."""
    from tools import config_cache

    return config_cache.folder(tools_dir.parent, no_cache=no_cache)


def load_bytes(raw: bytes, *, display: str) -> dict[str, Any]:
    """Parse and validate one config's bytes (not merged). The cache of validated configs is
    :func:`load_merged`'s: this reads and validates every time."""
    from tools.yaml_files import parse_yaml

    data = parse_yaml(raw, display)
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


def load_merged(
    raw: bytes | None, *, display: str, cache: Path | None = None, remember: bool = True
) -> dict[str, Any]:
    """The effective config of one config's bytes (None: no file): validated and merged
    over the defaults.

    ``cache`` (:func:`validation_cache`) keeps the merged value of every config that
    validated (:mod:`tools.config_cache`): an unchanged config then loads neither the YAML
    parser nor the schema validator. Any change to the file, the code that reads it, the
    schema, the defaults or the tool's version reads and validates again; an invalid config
    is never kept, so it is validated on every run. ``remember=False``: the cache is read,
    never written (another revision's config, read once)."""
    from tools import config_cache

    if raw is None:
        return _kept_defaults(cache)
    name = config_cache.key(raw)
    known = config_cache.get(cache, name)
    if known is not None:
        return known
    merged = merge(_kept_defaults(cache), load_bytes(raw, display=display))
    if remember:
        config_cache.put(cache, name, merged)
    return merged


def _kept_defaults(cache: Path | None) -> dict[str, Any]:
    """The defaults alone: every config-less revision's, so kept whichever revision read them
    (a range whose base has no config reads no YAML, and a config read anew is merged over
    them without parsing the shipped file)."""
    from tools import config_cache

    if cache is None:
        return defaults()
    name = config_cache.key(None)
    known = config_cache.get(cache, name)
    if known is None:
        known = defaults()
        config_cache.put(cache, name, known)
    return known


def refuse_outside_link(path: Path, repo_root: Path, display: str) -> None:
    """UsageError when ``path`` is reached through a symbolic link that leaves the
    repository: a pull request's link must not make the tool read (and quote in its errors)
    a file of the machine that judges it."""
    if not path.is_symlink() and path.resolve() == path.absolute():
        return
    try:
        path.resolve().relative_to(repo_root.resolve())
    except ValueError:
        raise UsageError(
            "is a symbolic link (or lies below one) that leaves the repository: not read",
            where=display,
        ) from None


def load(
    repo_root: Path,
    config: Path | None = None,
    *,
    tools_dir: Path | None = None,
    no_cache: bool = False,
) -> tuple[dict[str, Any], str | None]:
    """The effective config and the file it came from (None: defaults only).

    An explicitly named ``--config`` that does not exist is an error; the default path may be
    absent, and then every key takes its default. ``tools_dir`` (the git layer's
    :meth:`~tools.git.Git.tools_dir`) names the repository whose validation cache is used;
    None, or ``no_cache`` (``--no-cache``): no cache.
    """
    cache = validation_cache(tools_dir, no_cache=no_cache) if tools_dir is not None else None
    if config is not None:
        path = config if config.is_absolute() else Path.cwd() / config
        if path.is_dir():
            raise UsageError("is a directory, expected a YAML config file", where=str(config))
        if not path.is_file():
            raise UsageError("config file not found", where=str(config))
        display = str(config)
    else:
        path = repo_root / DEFAULT_PATH
        if not path.exists() and not path.is_symlink():
            return load_merged(None, display=DEFAULT_PATH, cache=cache), None
        refuse_outside_link(path, repo_root, DEFAULT_PATH)
        display = DEFAULT_PATH
        return load_merged(_read(path, display, repo_root), display=display, cache=cache), display
    return load_merged(_read(path, display), display=display, cache=cache), display


def load_typed(
    repo_root: Path,
    config: Path | None = None,
    *,
    tools_dir: Path | None = None,
    no_cache: bool = False,
) -> ProtocolConfig:
    """The effective config of :func:`load` as typed sections (commands that read a few
    keys and never print the mapping)."""
    data, _ = load(repo_root, config, tools_dir=tools_dir, no_cache=no_cache)
    typed = protocol_config(data)
    apply_limits(typed)
    return typed


def apply_limits(cfg: ProtocolConfig) -> None:
    """Make ``cfg``'s ``limits`` those of every later file read (:mod:`tools.file_reads`)."""
    from tools import file_reads

    file_reads.configure(file_reads.Limits(cfg.limits.max_file_bytes, cfg.limits.max_line_bytes))
