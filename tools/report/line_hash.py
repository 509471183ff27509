"""The ``primaryLocationLineHash`` GitHub code scanning tracks a SARIF result by.

``github/codeql-action/upload-sarif`` fills it in before uploading (src/fingerprints.ts in that
repository); a log uploaded any other way (the REST API, another forge's importer) must carry it
already, or every upload's alerts are new ones. This module computes the same value from the
same bytes, so the alerts of a log written here are the alerts upload-sarif would have tracked.

The algorithm, as documented there:

- The file is read as text (UTF-8) and seen as UTF-16 code units. Spaces and tabs are dropped;
  a CR becomes an LF, and an LF right after a CR is dropped (so CRLF, CR and LF all end a line
  once). Each line starts at its first character that is kept (its line end, for a blank
  line). After the last character comes one end-of-file character, U+FFFF; then zeros.
- A line's hash is a polynomial over the 100 characters kept from its start on (across line
  ends): ``sum(c[j] * 37 ** (99 - j))`` modulo 2**64, computed as a rolling hash, written in
  lower-case hexadecimal without leading zeros.
- Identical hashes are told apart by how many times the hash has been seen so far in the file,
  from 1: the value is ``"<hex>:<count>"``.

Every line has a value, including the empty last "line" after a final line end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

PARTIAL_KEY = "primaryLocationLineHash"
BLOCK = 100  # characters a line's hash covers
MOD = 37  # the polynomial's base
MASK = (1 << 64) - 1  # 64-bit arithmetic, as the upload action's Long values wrap
EOF = 0xFFFF  # the character after the last one
_DROP = frozenset((ord(" "), ord("\t")))
_CR, _LF = ord("\r"), ord("\n")
_OUT = pow(MOD, BLOCK, 1 << 64)  # the weight of the character that leaves the window


def _code_units(content: bytes) -> list[int]:
    """The file as UTF-16 code units, as a JavaScript string holds it (bytes that are not
    UTF-8 each read as U+FFFD)."""
    text = content.decode("utf-8", "replace")
    units: list[int] = []
    for ch in text:
        point = ord(ch)
        if point > 0xFFFF:  # a surrogate pair in UTF-16
            point -= 0x10000
            units.extend((0xD800 + (point >> 10), 0xDC00 + (point & 0x3FF)))
        else:
            units.append(point)
    return units


def _kept(content: bytes) -> tuple[list[int], list[int]]:
    """The characters the hash reads (then EOF), and the index among them where each line
    starts."""
    stream: list[int] = []
    starts: list[int] = []
    line_start = True
    after_cr = False
    for unit in (*_code_units(content), EOF):
        if unit in _DROP or (after_cr and unit == _LF):
            after_cr = False
            continue
        after_cr = unit == _CR
        if after_cr:
            unit = _LF
        if line_start:
            starts.append(len(stream))
            line_start = False
        if unit == _LF:
            line_start = True
        stream.append(unit)
    return stream, starts


def line_hashes(content: bytes) -> list[str]:
    """The ``primaryLocationLineHash`` of every line of ``content``, line 1 first."""
    stream, starts = _kept(content)
    stream.extend([0] * BLOCK)
    wanted = set(starts)
    hashes: dict[int, int] = {}
    value = 0
    for k, unit in enumerate(stream):
        leaving = stream[k - BLOCK] if k >= BLOCK else 0
        value = (value * MOD + unit - _OUT * leaving) & MASK
        begin = k - BLOCK + 1
        if begin in wanted:
            hashes[begin] = value
    seen: dict[str, int] = {}
    out: list[str] = []
    for start in starts:
        text = format(hashes[start], "x")
        seen[text] = seen.get(text, 0) + 1
        out.append(f"{text}:{seen[text]}")
    return out


def line_hash(content: bytes, line: int) -> str | None:
    """The value of line ``line`` (1-based) of ``content``; None past its last line."""
    hashes = line_hashes(content)
    return hashes[line - 1] if 1 <= line <= len(hashes) else None


def add_to_results(results: list[dict[str, Any]], read: Callable[[str], bytes | None]) -> None:
    """Give each SARIF result placed on a line of a repository file its
    ``partialFingerprints.primaryLocationLineHash``, as upload-sarif would (results without a
    line, or on a file ``read`` cannot give, are left as they are). ``read(path)`` is the judged
    content of a repo-relative path; each file is read and hashed once."""
    files: dict[str, list[str]] = {}
    for result in results:
        where = result.get("locations") or [{}]
        physical = where[0].get("physicalLocation") or {}
        artifact = physical.get("artifactLocation") or {}
        line = (physical.get("region") or {}).get("startLine")
        if artifact.get("uriBaseId") != "%SRCROOT%" or not isinstance(line, int):
            continue
        path = unquote_to_bytes(artifact["uri"]).decode("utf-8", "surrogateescape")
        if path not in files:
            content = read(path)
            files[path] = line_hashes(content) if content is not None else []
        hashes = files[path]
        if 1 <= line <= len(hashes):
            result.setdefault("partialFingerprints", {})[PARTIAL_KEY] = hashes[line - 1]
