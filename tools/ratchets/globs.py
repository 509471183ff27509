"""Git wildmatch globs (gitignore semantics through ``pathspec``) over repo-relative paths.

A set of globs is compiled once into one regex when no glob is negated (``!glob``), so that
matching 20,000 paths costs one regex call each; with negations the globs are evaluated in
order and the last one that matches decides, as in a ``.gitignore``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

try:  # pathspec >= 1.0 names git's own semantics "gitignore"
    from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern as _Pattern
except ImportError:  # pragma: no cover - pathspec 0.12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from pathspec.patterns import GitWildMatchPattern as _Pattern  # type: ignore[assignment]

# pathspec names a group in every pattern; a combined alternation must not repeat the name.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


class GlobSet:
    """Whether a path matches a list of globs (an empty list matches nothing)."""

    def __init__(self, globs: Sequence[str]):
        self.globs = list(globs)
        compiled: list[tuple[bool, str]] = []
        for glob in self.globs:
            pattern = _Pattern(glob)
            if pattern.include is None or pattern.regex is None:
                continue  # a blank or comment line selects nothing
            text = _NAMED_GROUP.sub("(?:", pattern.regex.pattern)
            compiled.append((bool(pattern.include), text))
        self._ordered = [(inc, re.compile(text, re.DOTALL)) for inc, text in compiled]
        self._one: re.Pattern[str] | None = None
        if compiled and all(inc for inc, _ in compiled):
            self._one = re.compile("|".join(f"(?:{t})" for _, t in compiled), re.DOTALL)

    def pathspecs(self) -> list[str] | None:
        """Git pathspecs selecting at least every path this set matches (for narrowing a
        ``git grep``), or None when a glob does not translate (a negation)."""
        out: list[str] = []
        for glob in self.globs:
            if glob.startswith("!"):
                return None
            body = glob.rstrip("/")
            if not body or glob.startswith("#"):
                continue
            if "/" not in body:
                body = "**/" + body  # no slash: matches at any depth, as in a .gitignore
            body = body.lstrip("/")
            # A glob that names a folder matches everything under it.
            out += [f":(glob){body}", f":(glob){body}/**"]
        return out

    def __bool__(self) -> bool:
        return bool(self._ordered)

    def one_regex(self) -> str | None:
        """The set as one regex text (None when a glob is negated: order matters then)."""
        return self._one.pattern if self._one is not None else None

    def match(self, path: str) -> bool:
        if self._one is not None:
            return self._one.match(path) is not None
        hit = False
        for include, rx in self._ordered:
            if rx.match(path) is not None:
                hit = include
        return hit
