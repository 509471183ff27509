"""Config globs: git wildmatch semantics on repo-relative paths, through ``pathspec``.

A pattern is matched against the whole repo-relative path, as git's ``:(glob)`` pathspec
does: ``*`` stays within one directory, ``**`` crosses directories, and a pattern without a
slash (``README.md``, ``*.md``) names a top-level path only (gitignore would match it at any
depth; a config that means any depth says ``**/*.md``). A pattern naming a directory
(``docs``, ``docs/``) covers every path under it. A leading ``!`` negates, the last matching
pattern winning, as in gitignore.
"""

from __future__ import annotations

from collections.abc import Iterable

import pathspec


def _anchored(pattern: str) -> str:
    negate = pattern.startswith("!")
    body = pattern[1:] if negate else pattern
    if not body.startswith("/"):
        body = "/" + body
    return ("!" if negate else "") + body


class Globs:
    """A compiled list of config globs; ``match`` is cached per path (paths repeat across
    the commits of a range)."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns = list(patterns)
        self._spec = pathspec.GitIgnoreSpec.from_lines([_anchored(p) for p in self.patterns])
        self._cache: dict[str, bool] = {}

    def match(self, path: str) -> bool:
        hit = self._cache.get(path)
        if hit is None:
            hit = bool(self.patterns) and self._spec.match_file(path)
            self._cache[path] = hit
        return hit

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __repr__(self) -> str:
        return f"Globs({self.patterns!r})"
