"""YAML input: every YAML file the tools read (the config, golden manifests, top-p plans,
mutation plans) is parsed here, duplicate keys refused, nesting bounded, and every problem
one :class:`UsageError` naming the file (and the line, for a YAML error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tools import file_reads
from tools.bounded import check_yaml
from tools.errors import UsageError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (a silently shadowed key is a lie)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml(text: str) -> Any:
    """Safe-load YAML, refusing a duplicate key (``yaml.YAMLError`` names it and its line)."""
    return yaml.load(text, Loader=_StrictLoader)


def read_yaml(path: Path, where: str, *, root: Path | None = None) -> Any:
    """Read and parse one YAML file (duplicate keys refused); every problem is one
    UsageError naming ``where`` (and the line, for a YAML error). The file is read only if it
    is a regular file (inside ``root``, given) within ``limits.max_file_bytes``."""
    return parse_yaml(file_reads.read_file(path, where, root=root), where)


def parse_yaml(raw: bytes, where: str) -> Any:
    """YAML bytes as data (UTF-8, duplicate keys refused), or one UsageError naming
    ``where`` (and the line, for a YAML error). Nesting and alias expansion are bounded
    (:mod:`tools.bounded`) before anything is built."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"not UTF-8 (byte {exc.start})", where=where) from None
    check_yaml(text, where)
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise UsageError(f"invalid YAML: {problem}", where=at) from None
