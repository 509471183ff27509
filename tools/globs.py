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
from collections.abc import Callable, Iterable

_MAGIC = frozenset("*?[\\!")
_Predicate = Callable[[str], bool]


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


def fast_predicate(glob: str) -> _Predicate | None:
    """A string test equal to the glob's wildmatch (whole path; a matched folder covers
    what is under it) for the common shapes, or None: ``**/*SUFFIX``, ``**/NAME``,
    ``**/NAME/**``, ``PREFIX/**`` and a literal path."""
    body = glob.strip("/")
    if glob.startswith("!") or not body:
        return None
    if body.startswith("**/*"):
        suffix = body[4:]
        if suffix and _literal(suffix) and "/" not in suffix:
            inner = suffix + "/"
            return lambda p: p.endswith(suffix) or inner in p
        return None
    if body.startswith("**/"):
        rest = body[3:]
        if rest.endswith("/**"):
            name = rest[:-3]
            if _literal(name) and "/" not in name:
                inner = f"/{name}/"
                return lambda p: inner in "/" + p
            return None
        if _literal(rest) and "/" not in rest:
            inner = f"/{rest}/"
            return lambda p: inner in f"/{p}/"
        return None
    if body.endswith("/**"):
        prefix = body[:-3]
        if _literal(prefix):
            start = prefix + "/"
            return lambda p: p.startswith(start)
        return None
    if _literal(body):
        start = body + "/"
        if glob.endswith("/"):  # a folder only: what is under it, never a file of that name
            return lambda p: p.startswith(start)
        return lambda p: p == body or p.startswith(start)
    return None


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
        preds = [fast_predicate(g) for g in live]
        self._fast: list[_Predicate] | None = None
        if all(p is not None for p in preds):
            self._fast = preds  # type: ignore[assignment]

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
            return any(pred(path) for pred in self._fast)
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

    def one_regex(self) -> str | None:
        """The set as one regex text (None when a glob is negated: order matters then)."""
        self._compile()
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
