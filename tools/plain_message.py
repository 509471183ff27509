"""The plain shape of a protocol commit message, recognised in a few C-level passes.

Most messages of an agent-heavy history look alike: a title, body paragraphs, the marker as a
paragraph of its own, then one paragraph of ``Key: value`` trailers and a final newline.
For such a message the marker rules hold (one marker line, its own paragraph, not the last)
and git's trailer block is exactly that last paragraph, so the trailers gate need not walk
the message line by line to learn either. :func:`plain_block` says whether a message has
that shape, with every condition a substring test or one regex match, and returns the block
:func:`tools.trailer_block.find_block` would find (:func:`plain_parts` finds the shape up to
the last paragraph, :func:`plain_trailers` reads that paragraph); any other message (tabs,
CRs, comment or divider lines, blank-looking lines, folded trailers, several blank lines in a
row) is left to the full reading. A property test holds the two readings to the same block
and marker lines.
"""

from __future__ import annotations

import re

from tools.trailer_block import CO_AUTHORED_BY, SPACE, Block, Trailer

# The last paragraph: ``Key: value`` lines only; a key of git's key characters, then ": "
# and a value that neither starts nor (checked below) ends with whitespace.
_TRAILER_LINES = re.compile(r"(?:[A-Za-z0-9-]++: [^ \n][^\n]*+\n)*+[A-Za-z0-9-]++: [^ \n][^\n]*+")


def plain_block(text: str, marker: str) -> Block | None:
    """The trailer block of ``text`` when it has the plain shape with ``marker`` as its
    marker paragraph, else None (then the message needs the full reading)."""
    parts = plain_parts(text, marker)
    return None if parts is None else plain_trailers(*parts)


def plain_parts(text: str, marker: str) -> tuple[str, int] | None:
    """The last paragraph of ``text`` and its first line, when ``text`` has the plain shape
    up to that paragraph (its trailers are :func:`plain_trailers`'s to check), else None."""
    if not marker or "\n" in marker or marker.strip(SPACE) != marker:
        return None
    if not text.endswith("\n") or text.startswith(("\n", "#")):
        return None
    body = text[:-1]
    # Anything that makes git's reading differ from a split on blank lines: a tab, a CR or
    # NUL; a possible patch divider; a comment line (git drops those; a scissors line starts
    # with "#"); a line of spaces or a trailing space (" \n"); blank lines in a row.
    if (
        body.endswith((" ", "\n"))
        or "\t" in body
        or "\r" in body
        or "\0" in body
        or "---" in body
        or "\n#" in body
        or " \n" in body
        or "\n\n\n" in body
    ):
        return None
    if body.count(marker) != 1:  # the marker once, so no other line can be a marker line
        return None
    head, sep, last = body.rpartition("\n\n")
    if not sep:
        return None
    above, sep, marker_paragraph = head.rpartition("\n\n")
    # A paragraph above the marker paragraph: the title, so the trailers are not the title.
    if not sep or marker_paragraph != marker:
        return None
    return last, body.count("\n", 0, len(head)) + 3  # the blank line, then the trailers


def is_trailer_paragraph(last: str) -> bool:
    """Whether the last paragraph of a message of the plain shape is ``Key: value`` lines
    only (each key of git's key characters, each value neither starting nor ending with
    whitespace), so that git reads it, and nothing else, as the trailer block."""
    return _TRAILER_LINES.fullmatch(last) is not None


def plain_trailers(last: str, start: int) -> Block | None:
    """The trailer block that the last paragraph ``last`` (first line ``start``) of a message
    of the plain shape is, when it is ``Key: value`` lines only, else None."""
    if not is_trailer_paragraph(last):
        return None
    found = []
    number = start
    for line in last.split("\n"):
        key, _, value = line.partition(": ")
        found.append(tuple.__new__(Trailer, (key, value, number)))  # Trailer(), less a call
        number += 1
    trailers = tuple(found)
    if all(t.key.lower() == CO_AUTHORED_BY for t in trailers):
        return None  # GitHub's squash shape may join a paragraph above: the full reading
    return Block(trailers, start, start + len(trailers) - 1)
