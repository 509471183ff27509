"""The terminal a command writes to: whether it takes colour, and how text reaches it."""

from __future__ import annotations

import os
import sys
from typing import Any


def color_wanted(stream: Any = None) -> bool:
    """Colour only on a terminal, never when ``NO_COLOR`` is set to anything (no-color.org)
    nor on a ``dumb`` terminal."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    stream = sys.stdout if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def safe_text(text: str) -> str:
    """``text`` with bytes that are not UTF-8 (kept as surrogates) escaped: printable always."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
