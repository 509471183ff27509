"""Validated configs kept between runs, so that an unchanged ``.agents/protocol.yaml`` loads
neither the YAML parser nor the JSON Schema validator (SPEC §12: the commit-msg hook runs on
every commit, and those two imports alone cost several times the interpreter's start).

What is kept. The effective config of one config file's bytes (or of no file: the defaults),
validated and merged over the defaults, as JSON. Only a config that validated is kept: an
invalid one is parsed and validated on every run, so its error is the same, cached or not.

Key. The sha256 of the entry format, the tool's version, the interpreter's version, the source
of the modules that read, validate and merge a config and the data files they read (schema,
defaults), and the config's bytes: code changed without a new version, or one byte of the file,
is another key. A key names everything its value depends on, so the folder may be carried
between machines as the verdict cache's is.

Where. ``<git common dir>/tools/cache/config/<key>``, beside the verdict cache, never in the
judged tree; a symbolic link on the way turns the cache off for the run.

Verified reads. An entry is ``HEADER``, the sha256 of its key and payload, a newline, then the
payload; it is used only when the header and the checksum match and the payload is a JSON
mapping. Anything else is a miss: the file is read and validated again and the entry rewritten.

Writes are atomic (a temp file renamed into place), best effort, and bounded: past
:data:`MAX_ENTRIES` entries the oldest go. ``--no-cache`` or ``TOOLS_NO_CACHE`` turns the cache
off: nothing is read, nothing written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tools import verdict_cache

HEADER = b"tools-config/1\n"
MAX_ENTRIES = 32
# What the effective config of given bytes depends on besides them: the code that parses,
# bounds, validates and merges (tools/…) and the data it reads (tools/data/…).
_SOURCES = (
    "config.py",
    "config_model.py",
    "schema.py",
    "yaml_files.py",
    "bounded.py",
    "repo_paths.py",
    "data/protocol.schema.json",
    "data/defaults.yaml",
)
_CHECK = 64  # hex digits of the checksum


def folder(git_dir: Path, *, no_cache: bool = False) -> Path | None:
    """The cache folder of the repository whose git directory is ``git_dir``; None when the
    cache is off (``no_cache``, ``TOOLS_NO_CACHE``) or a folder on the way is a link."""
    if verdict_cache.off(no_cache):
        return None
    tools_dir = verdict_cache.common_dir(git_dir) / "tools"
    found = tools_dir / "cache" / "config"
    for path in (tools_dir, tools_dir / "cache", found):
        if path.is_symlink():
            return None
    return found


def key(raw: bytes | None) -> str:
    """The key of the effective config of ``raw`` (None: no config file)."""
    from tools import __version__

    h = hashlib.sha256(HEADER)
    for part in (__version__, sys.version, verdict_cache.source_digest(_SOURCES)):
        h.update(part.encode() + b"\0")
    h.update(b"absent" if raw is None else b"file\0" + raw)
    return h.hexdigest()


def _checksum(name: str, payload: bytes) -> bytes:
    return hashlib.sha256(name.encode("ascii") + b"\n" + payload).hexdigest().encode("ascii")


def get(cache: Path | None, name: str) -> dict[str, Any] | None:
    """The config kept under key ``name``, verified; None: none, or one not to be trusted."""
    if cache is None:
        return None
    data = verdict_cache.read_entry(cache / name)
    if data is None:
        return None
    start = len(HEADER) + _CHECK + 1
    if not data.startswith(HEADER) or data[start - 1 : start] != b"\n":
        return None
    payload = data[start:]
    if data[len(HEADER) : start - 1] != _checksum(name, payload):
        return None
    try:
        found = json.loads(payload)
    # A checksum that matches a payload that is not JSON (or nests past the parser): not ours.
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, dict) else None


def put(cache: Path | None, name: str, value: dict[str, Any]) -> None:
    """Keep ``value`` under key ``name`` when JSON gives back exactly that value (a YAML date
    or a non-string key would not come back as it was: not kept). Best effort."""
    if cache is None:
        return
    try:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return
    if json.loads(text) != value:
        return
    payload = text.encode("ascii")
    from tools.fsio import write_cache

    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    write_cache(cache / name, HEADER + _checksum(name, payload) + b"\n" + payload)
    _evict(cache)


def _evict(cache: Path) -> None:
    """Keep the newest :data:`MAX_ENTRIES` entries; remove the temp files of killed writes."""
    from tools.fsio import STALE_S

    entries: list[tuple[float, str]] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(cache):
            with contextlib.suppress(OSError):
                entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
    now = time.time()
    temps = [(w, p) for w, p in entries if p.endswith(".tools-tmp")]
    kept = sorted((e for e in entries if not e[1].endswith(".tools-tmp")), reverse=True)
    gone = kept[MAX_ENTRIES:] + [(w, p) for w, p in temps if now - w > STALE_S]
    for _, path in gone:
        with contextlib.suppress(OSError):
            os.unlink(path)
