"""Config globs: git wildmatch semantics on whole repo-relative paths, through ``pathspec``.

One meaning for every glob of the config (docs rules, links, ratchets): a pattern is matched
against the whole repo-relative path, as git's ``:(glob)`` pathspec does: ``*`` stays within
one directory, ``**`` crosses directories, and a pattern without a slash (``README.md``,
``*.md``) names a top-level path only (gitignore would match it at any depth; a config that
means any depth says ``**/*.md``). A pattern naming a directory (``docs``, ``docs/``) covers
every path under it. A leading ``!`` negates, the last matching pattern winning.

Without negations the set compiles into one regex, so matching 20,000 paths costs one regex
call each; it also translates into git pathspecs that narrow a ``git grep``. The common
shapes (``**/*.h``, ``**/cuda/**``, ``docs/**``, ``README.md``) are matched by string tests
instead, without loading ``pathspec`` at all; the regex path is their test oracle.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable

_MAGIC = frozenset("*?[\\!")


def _pattern_class() -> type:
    """pathspec's gitwildmatch pattern class, imported only when a glob needs it."""
    try:  # pathspec >= 1.0 names git's own semantics "gitignore"
        from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern as pattern
    except ImportError:  # pragma: no cover - pathspec 0.12
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from pathspec.patterns import GitWildMatchPattern as pattern  # type: ignore
    return pattern


# pathspec names a group in every pattern; a combined alternation must not repeat the name.
_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


def _literal(text: str) -> bool:
    return bool(text) and not (_MAGIC & set(text)) and "//" not in text


def simple_shape(glob: str) -> tuple[str, str] | None:
    """The glob's shape when string tests can match it exactly (a matched folder covering
    what is under it), or None: ``("suffix", S)`` for ``**/*S``, ``("name", N)`` for
    ``**/N``, ``("inside", N)`` for ``**/N/**``, ``("prefix", P)`` for ``P/**`` and a folder
    ``P/``, ``("path", P)`` for a literal path."""
    body = glob.strip("/")
    if glob.startswith("!") or not body:
        return None
    if body.startswith("**/*"):
        suffix = body[4:]
        return ("suffix", suffix) if _literal(suffix) and "/" not in suffix else None
    if body.startswith("**/"):
        rest = body[3:]
        if rest.endswith("/**"):
            name = rest[:-3]
            return ("inside", name) if _literal(name) and "/" not in name else None
        return ("name", rest) if _literal(rest) and "/" not in rest else None
    if body.endswith("/**"):
        return ("prefix", body[:-3]) if _literal(body[:-3]) else None
    if _literal(body):
        # A trailing slash names a folder only: what is under it, never a file of that name.
        return ("prefix", body) if glob.endswith("/") else ("path", body)
    return None


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def _plain(shape: tuple[str, str]) -> list[str]:
    """Plain git pathspecs (``*`` crosses ``/``; a name also matches what is under it)
    selecting at least what the shape matches; its literals hold no magic character."""
    kind, value = shape
    if kind == "suffix":
        return [f"*{value}", f"*{value}/*"]
    if kind == "name":
        return [value, f"*/{value}", f"*/{value}/*"]
    if kind == "inside":
        return [f"{value}/", f"*/{value}/*"]
    return [value]  # prefix or path: a leading directory matches what is under it


class _Simple:
    """One matcher for a set of simple globs: a few C-level string tests per path."""

    def __init__(self, shapes: list[tuple[str, str]]):
        by: dict[str, list[str]] = {}
        for kind, value in shapes:
            by.setdefault(kind, []).append(value)
        self.suffixes = tuple(by.get("suffix", ()))
        # A folder whose name ends with a suffix covers what is under it: "x.h/y.c".
        self.inner = (
            re.compile(f"(?:{_alternation(list(self.suffixes))})/") if self.suffixes else None
        )
        self.paths = frozenset(by.get("path", ()))
        self.prefixes = tuple(p + "/" for p in by.get("prefix", []) + by.get("path", []))
        inside, names = by.get("inside", []), by.get("name", [])
        self.inside = re.compile(f"/(?:{_alternation(inside)})/") if inside else None
        self.names = re.compile(f"/(?:{_alternation(names)})/") if names else None

    def __call__(self, p: str) -> bool:
        if self.suffixes and (p.endswith(self.suffixes) or self.inner.search(p)):  # type: ignore[union-attr]
            return True
        if p in self.paths or (self.prefixes and p.startswith(self.prefixes)):
            return True
        if self.inside is not None and self.inside.search("/" + p):
            return True
        return self.names is not None and self.names.search("/" + p + "/") is not None


def _anchored(body: str) -> str:
    """A gitignore pattern that matches ``body`` against the whole path only."""
    return body if body.startswith("/") else "/" + body


class Globs:
    """Whether a path matches a list of config globs (an empty list matches nothing);
    ``match`` is cached per path (paths repeat across the commits of a range)."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns = list(patterns)
        self._cache: dict[str, bool] = {}
        self._compiled = False
        self._ordered: list[tuple[bool, re.Pattern[str]]] = []
        self._one: re.Pattern[str] | None = None
        live = [g for g in self.patterns if g.lstrip("!").strip() and not g.startswith("#")]
        self._live = bool(live)
        shapes = [simple_shape(g) for g in live]
        self._fast: _Simple | None = None
        self._shapes: list[tuple[str, str]] = []
        if all(shape is not None for shape in shapes):
            self._shapes = shapes  # type: ignore[assignment]
            self._fast = _Simple(self._shapes)

    def _compile(self) -> None:
        """The regex path (pathspec's translation of each glob), built on first need."""
        if self._compiled:
            return
        self._compiled = True
        pattern_class = _pattern_class()
        compiled: list[tuple[bool, str]] = []
        for glob in self.patterns:
            negate = glob.startswith("!")
            body = glob[1:] if negate else glob
            if not body.strip() or body.startswith("#"):
                continue  # a blank or comment line selects nothing
            pattern = pattern_class(("!" if negate else "") + _anchored(body))
            if pattern.include is None or pattern.regex is None:
                continue
            compiled.append((bool(pattern.include), _NAMED_GROUP.sub("(?:", pattern.regex.pattern)))
        self._ordered = [(inc, re.compile(text, re.DOTALL)) for inc, text in compiled]
        self._one = None
        if compiled and all(inc for inc, _ in compiled):
            self._one = re.compile("|".join(f"(?:{t})" for _, t in compiled), re.DOTALL)

    def __bool__(self) -> bool:
        return self._live

    @property
    def fast(self) -> bool:
        """Whether every glob is matched by a string test (no regex, no pathspec)."""
        return self._fast is not None

    def match(self, path: str) -> bool:
        if self._fast is not None:
            return self._fast(path)
        hit = self._cache.get(path)
        if hit is None:
            hit = self._cache[path] = self.match_regex(path)
        return hit

    def match_regex(self, path: str) -> bool:
        """The plain path: pathspec's regexes (the oracle of the string tests)."""
        self._compile()
        if self._one is not None:
            return self._one.match(path) is not None
        hit = False
        for include, rx in self._ordered:
            if rx.match(path) is not None:
                hit = include
        return hit

    def _plain_pathspecs(self) -> list[str]:
        return list(dict.fromkeys(spec for shape in self._shapes for spec in _plain(shape)))

    def one_regex(self) -> str | None:
        """The set as one regex text (None when a glob is negated: order matters then)."""
        self._compile()
        return self._one.pattern if self._one is not None else None

    def pathspecs(self) -> list[str] | None:
        """Git pathspecs selecting at least every path this set matches (for narrowing a
        ``git grep``), or None when a glob does not translate (a negation). Simple shapes
        become plain pathspecs (git matches them as fast as no pathspec at all; ``:(glob)``
        ones cost it about as much again as the search)."""
        if self._fast is not None:
            return self._plain_pathspecs()
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
