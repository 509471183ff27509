"""Config globs: git wildmatch semantics on whole repo-relative paths, through ``pathspec``.

One meaning for every glob of the config (docs rules, links, ratchets): a pattern is matched
against the whole repo-relative path, as git's ``:(glob)`` pathspec does: ``*`` stays within
one directory, ``**`` crosses directories, and a pattern without a slash (``README.md``,
``*.md``) names a top-level path only (gitignore would match it at any depth; a config that
means any depth says ``**/*.md``). A pattern naming a directory (``docs``, ``docs/``) covers
every path under it. A leading ``!`` negates, the last matching pattern winning.

Without negations the set compiles into one regex, so matching 20,000 paths costs one regex
call each; it also translates into git pathspecs that narrow a ``git grep``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable

try:  # pathspec >= 1.0 names git's own semantics "gitignore"
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern as _Pattern
except ImportError:  # pragma: no cover - pathspec 0.12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pathspec.patterns import GitWildMatchPattern as _Pattern  # type: ignore[assignment]

# pathspec names a group in every pattern; a combined alternation must not repeat the name.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def _anchored(body: str) -> str:
    """A gitignore pattern that matches ``body`` against the whole path only."""
    return body if body.startswith("/") else "/" + body


class Globs:
    """Whether a path matches a list of config globs (an empty list matches nothing);
    ``match`` is cached per path (paths repeat across the commits of a range)."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns = list(patterns)
        compiled: list[tuple[bool, str]] = []
        for glob in self.patterns:
            negate = glob.startswith("!")
            body = glob[1:] if negate else glob
            if not body.strip() or body.startswith("#"):
                continue  # a blank or comment line selects nothing
            pattern = _Pattern(("!" if negate else "") + _anchored(body))
            if pattern.include is None or pattern.regex is None:
                continue
            compiled.append((bool(pattern.include), _NAMED_GROUP.sub("(?:", pattern.regex.pattern)))
        self._ordered = [(inc, re.compile(text, re.DOTALL)) for inc, text in compiled]
        self._one: re.Pattern[str] | None = None
        if compiled and all(inc for inc, _ in compiled):
            self._one = re.compile("|".join(f"(?:{t})" for _, t in compiled), re.DOTALL)
        self._cache: dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self._ordered)

    def match(self, path: str) -> bool:
        hit = self._cache.get(path)
        if hit is None:
            if self._one is not None:
                hit = self._one.match(path) is not None
            else:
                hit = False
                for include, rx in self._ordered:
                    if rx.match(path) is not None:
                        hit = include
            self._cache[path] = hit
        return hit

    def one_regex(self) -> str | None:
        """The set as one regex text (None when a glob is negated: order matters then)."""
        return self._one.pattern if self._one is not None else None

    def pathspecs(self) -> list[str] | None:
        """Git pathspecs selecting at least every path this set matches (for narrowing a
        ``git grep``), or None when a glob does not translate (a negation)."""
        out: list[str] = []
        for glob in self.patterns:
            if glob.startswith("!"):
                return None
            body = glob.strip("/")
            if not body.strip() or glob.startswith("#"):
                continue
            # A glob that names a folder matches everything under it.
            out += [f":(glob){body}", f":(glob){body}/**"]
        return out
