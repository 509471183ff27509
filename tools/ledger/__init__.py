"""The evidence ledger ``.agents/ledger.jsonl``: content-addressed records, one JSON object a
line. Content addressing (not a hash chain) lets two branches' appends union-merge cleanly: the
same record has the same id everywhere.

Split by job: :mod:`~tools.ledger.record` (canonical form and ids), :mod:`~tools.ledger.scan`
(reading, verifying, the verified-prefix cache), :mod:`~tools.ledger.store` (locked appends,
torn-line repair). The names other commands use are re-exported here.
"""

from __future__ import annotations

from tools.ledger.record import (
    RESERVED,
    RULE_MALFORMED,
    RULE_TAMPERED,
    canonical_json,
    make_record,
    record_id,
    structure_error,
    utc_now,
    verify_record,
)
from tools.ledger.scan import (
    CACHE_SCHEMA,
    LARGE_LINE,
    PARALLEL_MIN_BYTES,
    LineError,
    Scanned,
    Verified,
    load_verified,
    parse_line,
    read_locked,
    read_records,
    scan_bytes,
    scan_file,
    scan_lines,
    store_verified,
    strict_loads,
)
from tools.ledger.store import Appended, append_records, append_to_ledger, locked, torn_path

__all__ = [
    "CACHE_SCHEMA",
    "LARGE_LINE",
    "PARALLEL_MIN_BYTES",
    "RESERVED",
    "RULE_MALFORMED",
    "RULE_TAMPERED",
    "Appended",
    "LineError",
    "Scanned",
    "Verified",
    "append_records",
    "append_to_ledger",
    "canonical_json",
    "load_verified",
    "locked",
    "make_record",
    "parse_line",
    "read_locked",
    "read_records",
    "record_id",
    "scan_bytes",
    "scan_file",
    "scan_lines",
    "store_verified",
    "strict_loads",
    "structure_error",
    "torn_path",
    "utc_now",
    "verify_record",
]
