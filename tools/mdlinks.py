"""Where a markdown link points: the resolution of a link target to a repo-relative path, as
GitHub resolves it (:func:`resolve`), line anchors (``#L10``, ``#L10-L20``), and GitHub's slug
of a heading (:func:`slug`), here rather than in the parser's module so that a run whose
files are all cached names a missing anchor's near match without loading the parser.

The links themselves are read by :mod:`tools.markdown` (the one markdown parser).
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple
from urllib.parse import unquote, unquote_to_bytes

from tools.git import decode


# -- anchors ---------------------------------------------------------------------------------
def slug(plain: str) -> str:
    """GitHub's anchor for a heading's rendered text (before de-duplication): lower case;
    what is not a letter, mark, number, connector (``_``), hyphen or space dropped; spaces to
    hyphens."""
    low = plain.lower()
    if low.isascii():  # the common case, in one C-level pass
        return low.translate(_ASCII_SLUG)
    out: list[str] = []
    for ch in low:
        if ch == " ":
            out.append("-")
        elif ch == "-" or unicodedata.category(ch) in _KEPT:
            out.append(ch)
    return "".join(out)


_KEPT = frozenset(["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc"])
_ASCII_SLUG = {
    c: ("-" if c == 32 else (chr(c) if chr(c).isalnum() or chr(c) in "-_" else None))
    for c in range(128)
}


# -- targets ---------------------------------------------------------------------------------
class Target(NamedTuple):
    """Where a link target points inside the repository."""

    path: str  # repo-relative, "" for the repository root
    fragment: str | None  # after "#", percent-decoded; None when there is no "#"


def is_external(target: str) -> bool:
    """A URL with a scheme (``https:``, ``mailto:``…) or protocol-relative (``//host``)."""
    if target.startswith("//"):
        return True
    colon = target.find(":")
    if colon < 1:
        return False
    scheme = target[:colon]
    return (
        scheme[0].isascii()
        and scheme[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c in "+.-") for c in scheme)
    )


def percent_decode(text: str) -> str:
    """``%20`` -> space; bytes that are not UTF-8 survive (as in git paths)."""
    if "%" not in text:
        return text
    return decode(unquote_to_bytes(text))


class Escapes(ValueError):
    """A target that climbs above the repository root."""


def resolve(source: str, target: str) -> Target:
    """Resolve a local ``target`` written in the file ``source`` (both repo-relative), as
    GitHub does: relative to the file's folder, or to the repository root when it starts
    with ``/``; the query is dropped, the path percent-decoded. Raises :class:`Escapes`."""
    path, hash_, fragment = target.partition("#")
    path = path.partition("?")[0]
    frag = unquote(fragment, errors="surrogateescape") if hash_ else None
    if not path:
        return Target(source, frag)
    path = percent_decode(path)
    if path.startswith("/"):
        parts: list[str] = []
    else:
        parts = source.split("/")[:-1]
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if not parts:
                raise Escapes(target)
            parts.pop()
            continue
        parts.append(seg)
    return Target("/".join(parts), frag)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _line_ref(part: str) -> int | None:
    """``L10`` or ``L10C3`` -> 10."""
    if not part.startswith("L"):
        return None
    line, sep, column = part[1:].partition("C")
    if not _digits(line) or (sep and not _digits(column)):
        return None
    return int(line)


def line_anchor(fragment: str) -> tuple[int, int] | None:
    """``L10`` -> (10, 10); ``L10-L20`` -> (10, 20); columns (``L10C3``) allowed; else None."""
    first, dash, second = fragment.partition("-")
    a = _line_ref(first)
    if a is None:
        return None
    if not dash:
        return a, a
    b = _line_ref(second)
    return None if b is None else (a, b)
