"""Appending one row to the issue index (``tools index append``): under an exclusive ``flock``
on the index itself, so that concurrent appends serialize, and written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from tools import index_table
from tools.errors import Refused, UsageError
from tools.fsio import write_atomic
from tools.git import decode, encode
from tools.ledger.store import locked


class Appended(NamedTuple):
    """The row appended: its line number in the index, and its text."""

    line_no: int
    line: str


def append_row(text: str, row_line: str) -> tuple[str, int]:
    """``text`` with ``row_line`` after the table's last line; returns it and the row's line
    number. Blank lines that end the file stay after the new row; the line ending follows the
    file's (CRLF stays CRLF)."""
    lines = text.split("\n")
    trailing_newline = lines[-1] == ""
    if trailing_newline:
        lines.pop()
    eol = "\r" if lines and lines[-1].endswith("\r") else ""
    end = len(lines)
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, row_line + eol)
    return "\n".join(lines) + "\n", end + 1


def append(full: Path, root: Path, rel: str, issue: int, line: str) -> Appended:
    """Append the rendered row ``line`` of ``issue`` to the index at ``full`` (``rel`` in the
    repository at ``root``; created from the skeleton when absent or blank).

    Raises :class:`~tools.errors.Refused` when the issue already has a row (exit 1), and
    :class:`~tools.errors.UsageError` when the index is a directory, has no table header, or
    cannot be written (exit 2).
    """
    if full.is_dir():
        raise UsageError("is a directory, expected the index file", where=rel)
    try:
        return _append_locked(full, root, rel, issue, line)
    except OSError as exc:
        raise UsageError(f"cannot write: {exc.strerror}", where=rel) from None


def _append_locked(full: Path, root: Path, rel: str, issue: int, line: str) -> Appended:
    full.parent.mkdir(parents=True, exist_ok=True)
    # Lock the index while reading and replacing it, so concurrent appends serialize.
    with locked(full, root) as fd:
        size = os.fstat(fd).st_size
        raw = os.pread(fd, size, 0) if size else b""
        text = decode(raw) if raw.strip() else index_table.skeleton()
        table = index_table.parse(text)
        if table.header_line is None:
            raise UsageError(
                f"no `{index_table.HEADER_LINE}` table header to append under", where=rel
            )
        have = next((r for r in table.rows if r.key == issue), None)
        if have is not None:
            raise Refused(f"issue #{issue} is already in {rel} (line {have.line})")
        new_text, at = append_row(text, line)
        write_atomic(full, encode(new_text), root=root)
    return Appended(at, line)
