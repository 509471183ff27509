"""Ledger records: their canonical JSON form and content-addressed ids (SPEC §5).

A record is ``{"id", "kind", "created", "tool", **payload}`` where ``id`` is the sha256 of the
canonical JSON of the record without ``id``: keys sorted, separators ``,``/``:``, UTF-8 without
escaping non-ASCII, floats as Python's shortest round-trip repr, NaN and infinities refused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Any

from tools import __version__

RULE_MALFORMED = "ledger-malformed"
RULE_TAMPERED = "ledger-record-tampered"
RESERVED = ("id", "kind", "created", "tool")
_ID = re.compile(r"[0-9a-f]{64}")
# UTC only: a trailing Z (or +00:00), optional fraction of a second.
_CREATED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)")
created_match = _CREATED.fullmatch


# -- canonical form and ids -------------------------------------------------------------------
# One encoder with the canonical settings, made once: verification encodes every record of a
# ledger, and json.dumps would build a new encoder per call. No cycle check: a record parsed
# from JSON holds none, and a cycle built in code recurses into the RecursionError below.
_CANONICAL = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
).encode


def canonical_json(obj: Any) -> bytes:
    """Keys sorted, separators ``,``/``:``, UTF-8 without escaping non-ASCII, floats as
    Python's shortest round-trip repr; NaN and infinities raise ValueError (so does a lone
    surrogate, which has no UTF-8 form, and a cycle)."""
    try:
        text = _CANONICAL(obj)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    return text.encode("utf-8")


def record_id(record: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``record`` without its ``id``."""
    body = {k: v for k, v in record.items() if k != "id"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_record(
    kind: str, payload: dict[str, Any], *, created: str | None = None
) -> dict[str, Any]:
    """A complete record: ``{"kind", "created", "tool", **payload, "id"}``.

    ``payload`` may not carry the reserved keys (``id``, ``kind``, ``created``, ``tool``):
    silently overriding one would forge what the record says about itself.
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError("kind must be a non-empty string")
    clash = [k for k in RESERVED if k in payload]
    if clash:
        raise ValueError(f"payload may not set the reserved key(s) {', '.join(clash)}")
    if created is None:
        created = utc_now()
    elif not isinstance(created, str) or not _CREATED.fullmatch(created):
        raise ValueError(
            f"created {created!r} is not a UTC ISO-8601 time like 2026-11-30T05:20:00Z"
        )
    record: dict[str, Any] = {"kind": kind, "created": created, "tool": __version__, **payload}
    try:
        record["id"] = record_id(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"payload is not canonical JSON: {exc}") from None
    return record


def structure_error(record: Any) -> str | None:
    """Why ``record`` is not a well-formed record (ignoring whether its id recomputes), or None."""
    if not isinstance(record, dict):
        return f"a record is a JSON object, not {type(record).__name__}"
    rid = record.get("id")
    if not isinstance(rid, str) or not _ID.fullmatch(rid):
        return "field `id` missing or not 64 lowercase hex digits"
    kind = record.get("kind")
    if not isinstance(kind, str) or not kind:
        return "field `kind` missing or not a non-empty string"
    created = record.get("created")
    if not isinstance(created, str) or not _CREATED.fullmatch(created):
        return "field `created` missing or not a UTC ISO-8601 time (e.g. 2026-11-30T05:20:00Z)"
    if not isinstance(record.get("tool"), str):
        return "field `tool` missing or not a string"
    return None


def verify_record(record: Any) -> str | None:
    """Why ``record`` does not verify (structure, or an id that does not recompute), or None."""
    problem = structure_error(record)
    if problem:
        return problem
    try:
        computed = record_id(record)
    except ValueError as exc:
        return f"not canonical JSON: {exc}"
    if computed != record["id"]:
        return f"id {record['id'][:12]}… does not recompute (content hashes to {computed[:12]}…)"
    return None
