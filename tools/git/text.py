"""Bytes from git and back: the one codec of the git layer (``surrogateescape``, so a
non-UTF-8 name survives a round trip) and the one unquoting of git's C-quoted names."""

from __future__ import annotations

from tools.lazy_regex import LazyRegex

_ENC = "utf-8"


_ERRORS = "surrogateescape"


def decode(raw: bytes) -> str:
    """Bytes from git to ``str`` without losing a byte (non-UTF-8 survives)."""
    return raw.decode(_ENC, _ERRORS)


def encode(text: str) -> bytes:
    return text.encode(_ENC, _ERRORS)


# git's C quoting (quote.c): these escapes, and three octal digits for any other byte (a
# control byte, and with ``core.quotePath`` every byte of a non-ASCII name, UTF-8 or not).
_C_ESCAPES = {
    **{f"{n:03o}".encode(): bytes([n]) for n in range(256)},
    b"a": b"\a",
    b"b": b"\b",
    b"t": b"\t",
    b"n": b"\n",
    b"v": b"\v",
    b"f": b"\f",
    b"r": b"\r",
    b'"': b'"',
    b"\\": b"\\",
}


_C_ESCAPE = LazyRegex(rb'\\([0-3][0-7][0-7]|[abtnvfr"\\])')


def unquote_c(raw: bytes) -> bytes:
    """A name as git C-quotes it (``"a\\tb"``, ``"\\303\\251"``) back to its bytes: the
    one unquoting of the package. A name that does not start with a quoted string (git wrote
    it as it is) is returned unchanged, as is one whose closing quote is missing; bytes after
    the closing quote are not part of the name. A backslash git would not write before a
    character stays as it is."""
    if raw[:1] != b'"':
        return raw
    body = raw[1:]
    # The closing quote is the first one no escape takes: with every escaped backslash, then
    # every escaped quote, masked (same length, left to right as git reads them), it is the
    # first quote left. Linear, at the speed of ``bytes.replace``.
    masked = body.replace(b"\\\\", b"\0\0").replace(b'\\"', b"\0\0")
    end = masked.find(b'"')
    if end < 0:
        return raw
    parts = _C_ESCAPE.compiled.split(body[:end])  # text, escape, text, …: no call per escape
    parts[1::2] = [_C_ESCAPES[code] for code in parts[1::2]]
    return b"".join(parts)
