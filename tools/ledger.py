"""The evidence ledger ``.agents/ledger.jsonl``: content-addressed records, one JSON object a line.

A record is ``{"id", "kind", "created", "tool", **payload}`` where ``id`` is the sha256 of the
canonical JSON of the record without ``id``. Content addressing (not a hash chain) lets two
branches' appends union-merge cleanly: the same record has the same id everywhere.

This module is the API other commands use to write evidence:

- :func:`canonical_json`, :func:`record_id`, :func:`make_record` build records;
- :func:`append_records` appends atomically under an exclusive ``flock`` on the ledger itself,
  never leaving a partial line, skipping records already present, and moving a torn final line
  (a writer killed mid-append) to ``<ledger>.torn`` before writing;
- :func:`read_records` / :func:`scan_lines` stream a ledger line by line.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import io
import json
import logging
import mmap
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from tools import __version__
from tools.fsio import write_cache

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())  # a library: callers decide where notices go

RULE_MALFORMED = "ledger-malformed"
RULE_TAMPERED = "ledger-record-tampered"
RESERVED = ("id", "kind", "created", "tool")
_ID = re.compile(r"[0-9a-f]{64}")
# UTC only: a trailing Z (or +00:00), optional fraction of a second.
_CREATED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)")
_CHUNK = 1 << 16
_created_match = _CREATED.fullmatch


# -- canonical form and ids -------------------------------------------------------------------
def canonical_json(obj: Any) -> bytes:
    """Keys sorted, separators ``,``/``:``, UTF-8 without escaping non-ASCII, floats as
    Python's shortest round-trip repr; NaN and infinities raise ValueError (so does a lone
    surrogate, which has no UTF-8 form)."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


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


# -- reading ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LineError:
    """A ledger line that is not a verifying record. ``rule`` is the rule id it fires;
    ``record`` is the parsed record when the line parsed but its id does not recompute."""

    rule: str
    message: str
    torn: bool = False
    record: dict[str, Any] | None = None


class Scanned(NamedTuple):
    """One ledger line: its number, the record's claimed ``id`` (None when it has none), the
    sha256 its content actually hashes to (None when it does not parse), any error, the
    record's ``kind``, and the record itself (None when scanned in another process)."""

    line: int
    id: str | None
    computed: str | None
    error: LineError | None
    record: dict[str, Any] | None
    kind: str | None = None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in a record")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _refuse_default(obj: Any) -> Any:
    raise TypeError(f"{type(obj).__name__} is not JSON")


# Verification re-encodes every record; json.dumps builds a new encoder per call, so keep
# one C encoder with exactly canonical_json's settings (records parsed from JSON hold no cycles).
_FAST_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
try:
    import _json

    _c_encoder = _json.make_encoder(
        None, _refuse_default, _json.encode_basestring, None, ":", ",", True, False, False
    )

    def _canonical_parsed(obj: Any) -> bytes:
        return "".join(_c_encoder(obj, 0)).encode("utf-8")

except (ImportError, AttributeError, TypeError):  # another Python: the plain path is exact too
    _canonical_parsed = canonical_json


def strict_loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse_constant)


def _malformed_json(exc: ValueError) -> LineError:
    return LineError(RULE_MALFORMED, f"not a JSON object: {' '.join(str(exc).split())}")


def parse_line(raw: bytes) -> dict[str, Any] | LineError:
    """Parse one line (with or without its ``\\n``) into a record, or a ``ledger-malformed``
    error: not UTF-8, not JSON, duplicate keys, NaN/Infinity, or a missing/mistyped field.
    Ids are not checked here (see :func:`verify_record`)."""
    body = raw[:-1] if raw.endswith(b"\n") else raw
    if not body.strip():
        return LineError(RULE_MALFORMED, "empty line")
    try:
        obj = strict_loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LineError(RULE_MALFORMED, f"not UTF-8 (byte {exc.start})")
    except ValueError as exc:  # JSONDecodeError is a ValueError
        return _malformed_json(exc)
    problem = structure_error(obj)
    if problem:
        return LineError(RULE_MALFORMED, problem)
    return obj


def _scan_one(line_no: int, raw: bytes) -> Scanned:
    """Judge one newline-terminated line.

    Fast path: decode, parse, re-encode the record without ``id`` canonically, hash. When the
    line is itself the canonical form (what :func:`append_records` writes) it cannot hold a
    duplicate key, so the strict (slower) parse runs only for lines that are not.
    """
    body = raw[:-1]
    try:
        text = body.decode("utf-8")
        obj, end = _FAST_DECODER.raw_decode(text)
        if end != len(text):
            raise ValueError("not one JSON value")
    except UnicodeDecodeError as exc:
        err = LineError(RULE_MALFORMED, f"not UTF-8 (byte {exc.start})")
        return Scanned(line_no, None, None, err, None)
    except ValueError:
        parsed = parse_line(raw)  # leading/trailing blanks are fine; else the exact message
        if isinstance(parsed, LineError):
            return Scanned(line_no, None, None, parsed, None)
        obj = parsed
    rid = obj.get("id") if isinstance(obj, dict) else None
    if not isinstance(rid, str):
        problem = structure_error(obj) or "field `id` missing"
        return Scanned(line_no, None, None, LineError(RULE_MALFORMED, problem), None)
    del obj["id"]
    try:
        without_id = _canonical_parsed(obj)
    except ValueError as exc:  # a lone surrogate escaped in the JSON text has no UTF-8 form
        obj["id"] = rid
        err = LineError(RULE_MALFORMED, f"not canonical-JSON-able: {exc}")
        return Scanned(line_no, None, None, err, None)
    obj["id"] = rid
    computed = hashlib.sha256(without_id).hexdigest()
    # A verifying id is 64 hex digits by construction; the full structure check (and the
    # malformed-or-tampered decision) is needed only for the other fields, or on a mismatch.
    kind, created = obj.get("kind"), obj.get("created")
    if (
        computed != rid
        or type(kind) is not str
        or not kind
        or type(created) is not str
        or _created_match(created) is None
        or type(obj.get("tool")) is not str
    ):
        problem = structure_error(obj)
        if problem:
            return Scanned(line_no, None, None, LineError(RULE_MALFORMED, problem), None)
    # The canonical line is the canonical body with `,"id":"…"` after the keys before "id".
    at = body.find(b',"id":"')
    if (
        len(body) != len(without_id) + 72
        or body[:at] != without_id[:at]
        or body[at + 72 :] != without_id[at:]
        or body[at + 7 : at + 71] != rid.encode("ascii")
    ):
        try:  # not the canonical text: it may hide a duplicate key
            strict_loads(text)
        except ValueError as exc:
            return Scanned(line_no, None, None, _malformed_json(exc), None)
    error = None
    if computed != rid:
        error = LineError(
            RULE_TAMPERED,
            f"record {rid[:12]}… ({obj['kind']}) does not recompute: its content hashes "
            f"to {computed[:12]}…",
            record=obj,
        )
    return Scanned(line_no, rid, computed, error, obj, obj.get("kind"))


def _torn(line_no: int, raw: bytes) -> Scanned:
    err = LineError(
        RULE_MALFORMED,
        f"torn final line ({len(raw)} bytes without a trailing newline): a writer stopped "
        "mid-append; the next append moves it aside",
        torn=True,
    )
    return Scanned(line_no, None, None, err, None)


def scan_lines(lines: Iterable[bytes]) -> Iterator[Scanned]:
    """Stream ``lines`` (each ending in ``\\n`` except perhaps the last) into :class:`Scanned`.

    A final line without ``\\n`` is torn (a writer died mid-append): ``ledger-malformed``.
    """
    for line_no, raw in enumerate(lines, 1):
        if raw.endswith(b"\n"):
            yield _scan_one(line_no, raw)
        else:
            yield _torn(line_no, raw)


def read_records(
    path: Path, *, verify: bool = False
) -> Iterator[tuple[int, dict[str, Any] | LineError]]:
    """Stream ``path``: ``(line_no, record)`` or ``(line_no, LineError)`` per line.

    Without ``verify`` a record whose id does not recompute is still yielded as a record;
    with it, as a ``ledger-record-tampered`` :class:`LineError`. A missing file yields nothing.
    """
    try:
        handle = open(path, "rb")  # closed by the with below
    except FileNotFoundError:
        return
    with handle:
        for item in scan_lines(handle):
            if item.error is not None and (item.error.rule != RULE_TAMPERED or verify):
                yield item.line, item.error
            else:
                assert item.record is not None
                yield item.line, item.record


def _renumber(items: Iterable[Scanned], first_line: int) -> Iterator[Scanned]:
    if first_line == 1:
        yield from items
        return
    for item in items:
        yield item._replace(line=item.line + first_line - 1)


def scan_bytes(data: bytes, *, start: int = 0, first_line: int = 1) -> Iterator[Scanned]:
    """:func:`scan_lines` over an in-memory ledger (a blob read from git), from byte
    ``start`` (a line start) numbering from ``first_line``."""
    return _renumber(scan_lines(io.BytesIO(data[start:] if start else data)), first_line)


def _lines_between(handle: Any, start: int, end: int) -> Iterator[bytes]:
    """The lines of an open binary file in [start, end), streamed."""
    handle.seek(start)
    left = end - start
    while left > 0:
        raw = handle.readline(left)
        if not raw:
            return
        left -= len(raw)
        yield raw


# Below this size one process scans; above it the file is cut at line boundaries and each
# core scans a part (re-encoding every record is the cost, and it is CPU-bound Python).
PARALLEL_MIN_BYTES = 8 << 20


def _scan_part(path: str, start: int, end: int) -> list[str | Scanned]:
    """Scan bytes [start, end) of ``path`` (whole lines), for another process: a clean
    record travels as its id alone, anything else as its :class:`Scanned` without the
    record; lines are numbered from 1 within the part."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.pread(fd, end - start, start)
    finally:
        os.close(fd)
    out: list[str | Scanned] = []
    for item in scan_lines(io.BytesIO(data)):
        if item.error is None and item.id is not None:
            out.append(item.id)
        else:
            out.append(item._replace(record=None))
    return out


def _cuts(fd: int, start: int, end: int, parts: int) -> list[tuple[int, int]]:
    """[start, end) cut into ``parts`` ranges at line boundaries, relative to ``start``."""
    size = end - start
    bounds = [0]
    for k in range(1, parts):
        at = max(size * k // parts, bounds[-1])
        chunk = os.pread(fd, min(_CHUNK, size - at), start + at)
        nl = chunk.find(b"\n")
        while nl < 0 and chunk:  # a very long line: keep looking
            at += len(chunk)
            chunk = os.pread(fd, min(_CHUNK, size - at), start + at)
            nl = chunk.find(b"\n")
        if nl < 0:
            break
        bounds.append(at + nl + 1)
    bounds.append(size)
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def scan_file(
    path: Path,
    *,
    start: int = 0,
    end: int | None = None,
    first_line: int = 1,
    jobs: int | None = None,
) -> Iterator[Scanned]:
    """:func:`scan_lines` over bytes [start, end) of a ledger file (``start`` at a line
    start), numbering from ``first_line``; streamed. A large range is scanned by one process
    per core (results come back in line order; ``record`` and the ``kind`` of a clean record
    are then None)."""
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if end is None:
        end = os.stat(path).st_size
    parts: list[tuple[int, int]] = []
    if jobs > 1 and end - start >= PARALLEL_MIN_BYTES and hasattr(os, "fork"):
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            parts = [(a + start, b + start) for a, b in _cuts(fd, start, end, jobs)]
        finally:
            os.close(fd)
    if len(parts) < 2:
        with open(path, "rb") as handle:
            yield from _renumber(scan_lines(_lines_between(handle, start, end)), first_line)
        return
    import multiprocessing as mp  # only a large ledger pays for these imports
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(len(parts) - 1, mp_context=mp.get_context("fork")) as pool:
        later = [pool.submit(_scan_part, str(path), a, b) for a, b in parts[1:]]
        offset = first_line - 1
        for part in [_scan_part(str(path), *parts[0]), *(f.result() for f in later)]:
            for i, item in enumerate(part, offset + 1):
                if isinstance(item, str):
                    yield Scanned(i, item, item, None, None)
                else:
                    yield item._replace(line=i)
            offset += len(part)


@contextlib.contextmanager
def read_locked(path: Path) -> Iterator[tuple[int, int]]:
    """Open ``path`` read-only under a shared flock (appenders hold it exclusively), so the
    bytes stay put while they are judged. Yields (fd, size)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield fd, os.fstat(fd).st_size
    finally:
        os.close(fd)


# -- what was verified before -----------------------------------------------------------------
CACHE_SCHEMA = "tools.ledger-verified/1"


@dataclass
class Verified:
    """A leading part of a ledger (``size`` bytes, one record a line, ``raw_ids`` their ids
    as 32 raw bytes each) known to hold only well-formed records whose ids recompute, none
    twice; ``digest`` is the sha256 state after those bytes."""

    size: int
    raw_ids: bytes
    digest: Any

    @property
    def ids(self) -> list[str]:
        raw = self.raw_ids
        return [raw[i : i + 32].hex() for i in range(0, len(raw), 32)]


def _hash_range(read: Any, start: int, end: int, digest: Any) -> Any:
    for at in range(start, end, 1 << 22):
        digest.update(read(at, min(end, at + (1 << 22))))
    return digest


def load_verified(cache: Path, read: Any, size: int) -> Verified | None:
    """The cached verified prefix if it is still, byte for byte, the start of the ledger
    (``read(a, b)`` returns its bytes [a, b) and ``size`` is its length); else None."""
    try:
        raw = cache.read_bytes()
        head, _, rest = raw.partition(b"\n")
        meta = json.loads(head)
        if meta.get("schema") != CACHE_SCHEMA:
            return None
        length, lines, want = int(meta["size"]), int(meta["lines"]), str(meta["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if length > size or len(rest) != 32 * lines:
        return None
    digest = _hash_range(read, 0, length, hashlib.sha256())
    if digest.hexdigest() != want:
        return None
    return Verified(length, rest, digest)


def store_verified(cache: Path, size: int, sha256: str, raw_ids: bytes) -> None:
    """Record that the ledger's first ``size`` bytes (sha256 ``sha256``, one record a line
    with the ids ``raw_ids``, 32 bytes each) verified clean. Best effort: a cache that cannot
    be written is simply not there next time."""
    lines = len(raw_ids) // 32
    meta = {"schema": CACHE_SCHEMA, "size": size, "lines": lines, "sha256": sha256}
    data = json.dumps(meta).encode() + b"\n" + raw_ids
    write_cache(cache, data)


# -- appending --------------------------------------------------------------------------------
class Appended(list):  # type: ignore[type-arg]
    """The records actually written (a list), plus ``notices`` for the caller to print
    (for example, that a torn final line was moved aside)."""

    def __init__(self, records: Iterable[dict[str, Any]] = (), notices: Iterable[str] = ()):
        super().__init__(records)
        self.notices: list[str] = list(notices)


@dataclass
class _Prepared:
    records: list[dict[str, Any]] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)


def _prepare(records: Iterable[dict[str, Any]]) -> _Prepared:
    out = _Prepared()
    seen: set[str] = set()
    for i, record in enumerate(records):
        problem = verify_record(record)
        if problem:
            raise ValueError(f"record {i}: {problem}")
        if record["id"] in seen:
            continue
        seen.add(record["id"])
        out.records.append(record)
        out.lines.append(canonical_json(record) + b"\n")
    return out


@contextlib.contextmanager
def locked(path: Path) -> Iterator[int]:
    """Open ``path`` for appending (creating it) and hold an exclusive flock on it.

    The lock is on the ledger file itself, so no lock file litters the working tree. If the
    file was replaced while we waited (a checkout or merge writes a new inode), lock again.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield fd
    finally:
        os.close(fd)  # closing releases the flock


def _last_newline(fd: int, size: int) -> int:
    """Offset of the last ``\\n`` before ``size``, or -1."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        pos = chunk.rfind(b"\n")
        if pos >= 0:
            return start + pos
        end = start
    return -1


def torn_path(path: Path) -> Path:
    return path.with_name(path.name + ".torn")


def _move_torn_tail(fd: int, path: Path, size: int) -> str | None:
    """If the file does not end in ``\\n``, move its last partial line to ``<ledger>.torn``
    (appended there, newline-terminated) and truncate it away. Returns the notice."""
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    cut = _last_newline(fd, size) + 1
    tail = os.pread(fd, size - cut, cut)
    aside = torn_path(path)
    with open(aside, "ab") as handle:
        handle.write(tail + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.ftruncate(fd, cut)
    os.fsync(fd)
    return (
        f"{path}: moved a torn final line ({len(tail)} bytes at byte {cut}, left by a writer "
        f"that stopped mid-append) to {aside}"
    )


def _present(fd: int, size: int, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` are already the id of a record in the file.

    A substring search over the mapped file finds candidates without parsing every line;
    each hit is confirmed by parsing its line (an id may also be quoted inside a payload).
    """
    wanted = list(ids)
    if size == 0 or not wanted:
        return set()
    found: set[str] = set()
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as mem:
        for rid in wanted:
            needle = rid.encode("ascii")
            pos = mem.find(needle)
            while pos >= 0:
                start = mem.rfind(b"\n", 0, pos) + 1
                end = mem.find(b"\n", pos)
                end = size if end < 0 else end
                parsed = parse_line(mem[start:end])
                if isinstance(parsed, dict) and parsed.get("id") == rid:
                    found.add(rid)
                    break
                pos = mem.find(needle, end)
    return found


def _write_all(fd: int, data: bytes, rollback_to: int) -> None:
    """Write every byte or none: on an error the file is truncated back (we hold the lock)."""
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, rollback_to)
        raise


def append_records(path: Path, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append ``records`` to the ledger at ``path`` (created if absent), atomically.

    Each record must verify (ValueError otherwise, nothing written). Records whose id is
    already in the ledger (or repeated in ``records``) are skipped. Runs under an exclusive
    flock; the lines go out in one write, and an interrupted write is rolled back. A torn
    final line left by a killed writer is first moved to ``<ledger>.torn``.

    Returns the records actually written, as an :class:`Appended` list whose ``notices``
    say what else happened (also logged on the ``tools.ledger`` logger).
    """
    path = Path(path)
    prepared = _prepare(records)
    path.parent.mkdir(parents=True, exist_ok=True)
    notices: list[str] = []
    with locked(path) as fd:
        size = os.fstat(fd).st_size
        notice = _move_torn_tail(fd, path, size)
        if notice:
            notices.append(notice)
            log.warning(notice)
            size = os.fstat(fd).st_size
        present = _present(fd, size, (r["id"] for r in prepared.records))
        keep = [i for i, r in enumerate(prepared.records) if r["id"] not in present]
        if keep:
            _write_all(fd, b"".join(prepared.lines[i] for i in keep), size)
    return Appended([prepared.records[i] for i in keep], notices)
