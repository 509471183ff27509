"""Regexes compiled on their first use.

Every command imports the modules of the gates it runs, and a module-level ``re.compile``
runs at import: 44 of them compiled in 9.6 ms of a 20,000-file preflight, 30 of which that
run never used. A pattern that only some inputs reach (a table row off the fast path, an
inline HTML tag, a preprocessor condition, a quoted path) is declared as a
:class:`LazyRegex` and compiled the first time one does; a pattern that nearly every run
uses stays a plain ``re.compile``.
"""

from __future__ import annotations

import functools
import re
from typing import AnyStr, Generic


class LazyRegex(Generic[AnyStr]):
    """``re.compile(pattern, flags)``, run when :attr:`compiled` is first read (after that,
    reading it costs an instance attribute lookup)."""

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self.flags = flags

    @functools.cached_property
    def compiled(self) -> re.Pattern[AnyStr]:
        return re.compile(self.pattern, self.flags)
