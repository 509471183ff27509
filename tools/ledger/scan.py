"""Reading a ledger: one line at a time into records or the rule each bad line fires, and
the cache of a prefix verified before (kept under the git directory).

Streams: a ledger may hold 100,000 records; nothing here loads it whole unless asked.
"""

import codecs
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, cast

from tools.errors import UsageError
from tools.fsio import write_cache
from tools.lazy_regex import LazyRegex
from tools.ledger.record import (
    RULE_MALFORMED,
    RULE_TAMPERED,
    canonical_json,
    created_match,
    structure_error,
)

_CHUNK = 1 << 16


# -- reading ----------------------------------------------------------------------------------
class LineError(NamedTuple):
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


_FAST_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def strict_loads(text: str) -> Any:
    """Parse JSON refusing duplicate keys, NaN and infinities; nesting deeper than
    :data:`tools.bounded.MAX_DEPTH` levels is a ValueError too (hostile input, never a crash),
    measured before parsing."""
    from tools.bounded import MAX_DEPTH, json_too_deep

    if json_too_deep(text):
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse_constant
        )
    except RecursionError:
        raise ValueError("nested too deeply to be a record") from None


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
    return cast(dict[str, Any], obj)  # structure_error vouches for an object


def _parsed(raw: bytes) -> tuple[str, Any] | LineError:
    """The line's text and its JSON value (the fast parse; the strict one, with its exact
    message, when that fails), or why it has none."""
    try:
        text = raw[:-1].decode("utf-8")
        obj, end = _FAST_DECODER.raw_decode(text)
        if end != len(text):
            raise ValueError("not one JSON value")
    except UnicodeDecodeError as exc:
        return LineError(RULE_MALFORMED, f"not UTF-8 (byte {exc.start})")
    except (ValueError, RecursionError):
        parsed = parse_line(raw)  # leading/trailing blanks are fine; else the exact message
        if isinstance(parsed, LineError):
            return parsed
        return raw[:-1].decode("utf-8"), parsed
    return text, obj


def _canonical_line(body: bytes, without_id: bytes, rid: str) -> bool:
    """Whether the line is the canonical body with ``,"id":"…"`` after the keys before
    ``id`` (then it cannot hide a duplicate key)."""
    at = body.find(b',"id":"')
    return (
        len(body) == len(without_id) + 72
        and body[:at] == without_id[:at]
        and body[at + 72 :] == without_id[at:]
        and body[at + 7 : at + 71] == rid.encode("ascii")
    )


def _scan_one(line_no: int, raw: bytes, large: "_Large | None" = None) -> Scanned:
    """Judge one newline-terminated line.

    Fast path: decode, parse, re-encode the record without ``id`` canonically, hash. When the
    line is itself the canonical form (what :func:`append_records` writes) it cannot hold a
    duplicate key, so the strict (slower) parse runs only for lines that are not.

    With ``large``, ``raw`` is the skeleton of a long line (see :func:`_scan_large`): the
    hash is taken over the canonical form with the long strings put back, and the record
    itself is not returned (it holds placeholders).
    """
    body = raw[:-1]
    parsed = _parsed(raw)
    if isinstance(parsed, LineError):
        return Scanned(line_no, None, None, parsed, None)
    text, obj = parsed
    rid = obj.get("id") if isinstance(obj, dict) else None
    if not isinstance(rid, str):
        problem = structure_error(obj) or "field `id` missing"
        return Scanned(line_no, None, None, LineError(RULE_MALFORMED, problem), None)
    del obj["id"]
    try:
        without_id = canonical_json(obj)
    except ValueError as exc:  # too deep, or a lone surrogate (escaped in the text) has no UTF-8
        obj["id"] = rid
        err = LineError(RULE_MALFORMED, f"not canonical-JSON-able: {exc}")
        return Scanned(line_no, None, None, err, None)
    obj["id"] = rid
    if large is None:
        computed = hashlib.sha256(without_id).hexdigest()
    else:
        digest = large.digest(without_id)
        if digest is None:
            return _scan_one(line_no, large.raw)  # not proved here: the whole line, parsed
        computed = digest
    # A verifying id is 64 hex digits by construction; the full structure check (and the
    # malformed-or-tampered decision) is needed only for the other fields, or on a mismatch.
    kind, created = obj.get("kind"), obj.get("created")
    if (
        computed != rid
        or type(kind) is not str
        or not kind
        or type(created) is not str
        or created_match(created) is None
        or type(obj.get("tool")) is not str
    ):
        wrong = structure_error(obj)
        if wrong:
            return Scanned(line_no, None, None, LineError(RULE_MALFORMED, wrong), None)
    if not _canonical_line(body, without_id, rid) or (large is not None and not large.canonical):
        try:  # not the canonical text: it may hide a duplicate key
            strict_loads(text)
        except ValueError as exc:
            return Scanned(line_no, None, None, _malformed_json(exc), None)
    kind = obj.get("kind")
    if large is not None:
        kind, obj = large.value(kind), None
    error = None
    if computed != rid:
        error = LineError(
            RULE_TAMPERED,
            f"record {rid[:12]}… ({kind}) does not recompute: its content hashes "
            f"to {computed[:12]}…",
            record=obj,
        )
    return Scanned(line_no, rid, computed, error, obj, kind)


# -- long lines -------------------------------------------------------------------------------
# A line this long is judged on its skeleton: every long string value is replaced by a short
# placeholder, the skeleton goes through _scan_one, and the hash is taken over the skeleton's
# canonical form with the original strings put back. Canonical encoding is compositional (an
# object's form is its members' forms in key order), so that is the hash of the whole record's
# canonical form; a string whose text is already canonical is hashed straight from the line,
# so a 100 MB record costs its own bytes and little more.
LARGE_LINE = 1 << 20
_LONG_STRING = 1 << 16
# A JSON string token exactly as the canonical encoder writes it (ensure_ascii off: only the
# quote, the backslash and control characters are escaped, the short forms where JSON has
# them); else any string token (group 2); else a lone quote (an unterminated string). One
# pass tells both where a string ends and whether its text is canonical.
_STRING = LazyRegex(
    rb'("[^"\\\x00-\x1f]*+(?:\\(?:["\\bfnrt]|u00(?:0[0-7bef]|1[0-9a-f]))[^"\\\x00-\x1f]*+)*+")'
    rb'|("[^"\\]*+(?:\\.[^"\\]*+)*+")|"',
    re.DOTALL,
)
_KEY_AFTER = LazyRegex(rb"[ \t\r\n]*+:")


class _Large:
    """The long strings of one long line, for :func:`_scan_one` on its skeleton."""

    def __init__(self, raw: bytes, spans: list[tuple[int, int, bool]], nonce: bytes):
        self.raw = raw
        self.spans = spans  # (start, end, whether the text is canonical) per long string
        self.mark = b'"\\u0001' + nonce + b":"
        self._mark_text = "\x01" + nonce.decode("ascii") + ":"
        self._placeholder = re.compile(re.escape(self.mark) + rb'([0-9]+)"')
        self.canonical = all(canonical for _, _, canonical in spans)

    def _canonical_pieces(self, k: int) -> list[Any]:
        a, b, canonical = self.spans[k]
        if canonical:
            return [memoryview(self.raw)[a:b]]
        value = json.loads(self.raw[a:b].decode("utf-8"))
        return [canonical_json(value)]  # may raise for a lone surrogate

    def digest(self, without_id: bytes) -> str | None:
        """sha256 of ``without_id`` with each placeholder replaced by the canonical form of
        its string; None when a string has none (the caller parses the whole line)."""
        h = hashlib.sha256()
        at = 0
        seen = []
        try:
            for m in self._placeholder.finditer(without_id):
                k = int(m.group(1))
                if k >= len(self.spans):
                    return None
                seen.append(k)
                h.update(without_id[at : m.start()])
                for piece in self._canonical_pieces(k):
                    h.update(piece)
                at = m.end()
        except (ValueError, RecursionError):
            return None
        # Each placeholder exactly once: no other string of the record reads as one.
        if sorted(seen) != list(range(len(self.spans))):
            return None
        h.update(without_id[at:])
        return h.hexdigest()

    def value(self, text: Any) -> Any:
        """The original string for a placeholder's value (``kind``, for labels)."""
        if isinstance(text, str) and text.startswith(self._mark_text):
            a, b, _ = self.spans[int(text[len(self._mark_text) :])]
            return json.loads(self.raw[a:b].decode("utf-8"))
        return text


def _valid_utf8(raw: bytes, end: int) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(raw)
    try:
        for at in range(0, end, 1 << 22):
            stop = min(end, at + (1 << 22))
            decoder.decode(view[at:stop], final=stop == end)
    except UnicodeDecodeError:
        return False
    return True


def _scan_large(line_no: int, raw: bytes) -> Scanned:
    """:func:`_scan_one` for a long newline-terminated line, without a copy of it per step
    (see :data:`LARGE_LINE`); anything unusual takes the ordinary path."""
    end = len(raw) - 1
    if not _valid_utf8(raw, end):
        return _scan_one(line_no, raw)  # its message names the first bad byte
    parts: list[bytes] = []
    spans: list[tuple[int, int, bool]] = []
    nonce = os.urandom(8).hex().encode("ascii")
    mark = b'"\\u0001' + nonce + b":"
    at = 0
    for m in _STRING.compiled.finditer(raw, 0, end):
        a, b = m.span()
        if m.lastindex is None:
            return _scan_one(line_no, raw)  # unterminated: the parser says so
        if b - a < _LONG_STRING or _KEY_AFTER.compiled.match(raw, b, end):
            continue  # short, or a key (keys decide the order): kept in the skeleton
        parts.append(raw[at:a])
        parts.append(mark + b"%d" % len(spans) + b'"')
        spans.append((a, b, m.lastindex == 1))
        at = b
    if not spans:
        return _scan_one(line_no, raw)
    parts.append(raw[at:])
    skeleton = b"".join(parts)
    del parts
    if skeleton.count(mark) != len(spans):
        return _scan_one(line_no, raw)  # the line holds the mark itself: no proof here
    item = _scan_one(line_no, skeleton, _Large(raw, spans, nonce))
    if item.error is not None and item.error.rule == RULE_MALFORMED:
        return _scan_one(line_no, raw)  # the message must name places in the line itself
    return item


def _torn(line_no: int, raw: bytes) -> Scanned:
    err = LineError(
        RULE_MALFORMED,
        f"torn final line ({len(raw)} bytes without a trailing newline): a writer stopped "
        "mid-append; the next append moves it aside",
        torn=True,
    )
    return Scanned(line_no, None, None, err, None)


def scan_lines(lines: Iterable[bytes], *, records: bool = True) -> Iterator[Scanned]:
    """Stream ``lines`` (each ending in ``\\n`` except perhaps the last) into :class:`Scanned`.

    A final line without ``\\n`` is torn (a writer died mid-append): ``ledger-malformed``.
    Without ``records`` the caller needs only the verdicts: a line longer than
    :data:`LARGE_LINE` is then judged without being parsed whole (its ``record`` is None).
    """
    for line_no, raw in enumerate(lines, 1):
        if not records and len(raw) > LARGE_LINE and raw.endswith(b"\n"):
            yield _scan_large(line_no, raw)
        elif raw.endswith(b"\n"):
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
    from tools import file_reads

    handle = file_reads.open_stream(path, str(path))
    if handle is None:
        return
    with handle:
        for item in scan_lines(file_reads.lines(handle, str(path))):
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


def scan_bytes(
    data: bytes, *, start: int = 0, first_line: int = 1, records: bool = True
) -> Iterator[Scanned]:
    """:func:`scan_lines` over an in-memory ledger (a blob read from git), from byte
    ``start`` (a line start) numbering from ``first_line``."""
    lines = io.BytesIO(data[start:] if start else data)
    return _renumber(scan_lines(lines, records=records), first_line)


def _lines_between(handle: Any, start: int, end: int, where: str = "") -> Iterator[bytes]:
    """The lines of an open binary file in [start, end), streamed; a line longer than
    ``limits.max_line_bytes`` is a UsageError naming ``where`` (SPEC §10)."""
    from tools import file_reads

    cap = file_reads.current().max_line_bytes
    handle.seek(start)
    left = end - start
    while left > 0:
        raw = handle.readline(min(left, cap + 1))
        if not raw:
            return
        if len(raw) > cap:
            raise UsageError(
                f"a line is longer than limits.max_line_bytes ({cap:,} bytes): not read",
                where=where or None,
            )
        left -= len(raw)
        yield raw


# Below this size one process scans; above it the file is cut at line boundaries and each
# core scans a part (re-encoding every record is the cost, and it is CPU-bound Python).
PARALLEL_MIN_BYTES = 8 << 20


def _scan_part(path: str, start: int, end: int) -> list[str | Scanned]:
    """Scan bytes [start, end) of ``path`` (whole lines), for another process: a clean
    record travels as its id alone, anything else as its :class:`Scanned` without the
    record; lines are numbered from 1 within the part."""
    out: list[str | Scanned] = []
    with open(path, "rb") as handle:
        for item in scan_lines(_lines_between(handle, start, end, path), records=False):
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
    records: bool = True,
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
            lines = _lines_between(handle, start, end, str(path))
            yield from _renumber(scan_lines(lines, records=records), first_line)
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


class Verified(NamedTuple):
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
