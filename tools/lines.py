"""Text split into lines, the one way every reader here splits it."""

from __future__ import annotations


def split_lines(text: str, *, drop_cr: bool = False) -> list[str]:
    """Lines split on ``\\n`` only (a CR, a form feed or U+2028 stays on its line, unlike
    ``str.splitlines``); a final newline ends the last line and starts none. ``drop_cr``
    drops a final ``\\r`` of each line (CRLF text read as LF, as markdown reads it)."""
    lines = text.split("\n")
    if drop_cr and "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if lines[-1] == "":
        lines.pop()
    return lines
