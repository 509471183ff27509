"""Baselines: ``.agents/baselines/<name>.json`` = ``{"ratchet": NAME, "buckets": {B: N}}``.

Read strictly (anything else is exit 2 naming the file and the key), written atomically with a
stable layout (two-space indent, buckets in config order, a final newline) so that a tightened
baseline is a small, reviewable diff.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools.bounded import json_object
from tools.errors import UsageError
from tools.fsio import write_atomic

FORMAT = '{"ratchet": "<name>", "buckets": {"<bucket>": <count>, ...}}'


def default_path(name: str) -> str:
    return f".agents/baselines/{name}.json"


def parse(raw: bytes, path: str, name: str) -> dict[str, int]:
    """The bucket counts of a baseline file's bytes; UsageError when it is not the format."""

    def bad(message: str, key: str | None = None) -> UsageError:
        where = f"{path}: {key}" if key else path
        return UsageError(message, where=where, expected=f"the baseline format {FORMAT}")

    def refuse_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
        seen: dict[str, object] = {}
        for key, value in pairs:
            if key in seen:
                raise bad("duplicate key", key)
            seen[key] = value
        return seen

    data = json_object(
        raw, path, frozenset({"ratchet", "buckets"}), bad, pairs_hook=refuse_duplicates
    )
    for key in ("ratchet", "buckets"):
        if key not in data:
            raise bad("missing key", key)
    if data["ratchet"] != name:
        raise bad(f"names ratchet {data['ratchet']!r}, not {name!r}", "ratchet")
    buckets = data["buckets"]
    if not isinstance(buckets, dict):
        raise bad(f"wrong type ({type(buckets).__name__})", "buckets")
    out: dict[str, int] = {}
    for bucket, count in buckets.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise bad(f"bad count {count!r}", f"buckets.{bucket}")
        out[bucket] = count
    return out


def render(name: str, buckets: dict[str, int]) -> bytes:
    return (json.dumps({"ratchet": name, "buckets": buckets}, indent=2) + "\n").encode()


def write(path: Path, name: str, buckets: dict[str, int], *, root: Path | None = None) -> None:
    """Write a baseline atomically; ``root``: the repository (a link on the way refused)."""
    write_atomic(path, render(name, buckets), root=root)
