"""Config globs: git wildmatch semantics on whole repo-relative paths, through ``pathspec``.

One meaning for every glob of the config (docs rules, links, ratchets): a pattern is matched
against the whole repo-relative path, as git's ``:(glob)`` pathspec does: ``*`` stays within
one directory, ``**`` crosses directories, and a pattern without a slash (``README.md``,
``*.md``) names a top-level path only (gitignore would match it at any depth; a config that
means any depth says ``**/*.md``). A pattern naming a directory (``docs``, ``docs/``) covers
every path under it. A leading ``!`` negates, the last matching pattern winning.

The common shapes (``**/*.h``, ``**/cuda/**``, ``docs/**``, ``README.md``) are matched by
string tests, without loading ``pathspec`` at all; the others go through pathspec's public
matcher (cached per path), which is also the string tests' oracle. A set translates into
git pathspecs that narrow a ``git grep``.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from typing import Any

_MAGIC = frozenset("*?[\\!")
_FOLDER = operator.itemgetter(0)  # of str.rpartition("/")


def _spec(lines: list[str]) -> Any:
    """pathspec's git matcher for gitignore lines, loaded only when a glob needs it."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


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
        self.name_set = frozenset(names)
        self.last_names = tuple("/" + n for n in names)

    def __call__(self, p: str) -> bool:
        folder, _, name = p.rpartition("/")
        if self.suffixes and p.endswith(self.suffixes):
            return True
        return p in self.paths or name in self.name_set or self._folder(folder)

    def match_all(self, paths: list[str]) -> list[bool]:
        """``self(p)`` for each path, as C-level maps over the paths (no Python step per
        path). A folder's prefix is a prefix of its paths, and its last name their
        ``/N`` ending; the folder regexes are first tried once on all the paths joined, and
        where nothing there matches (the usual case) no path needs its folder at all. Else
        they run once per folder (a tree's files share few folders)."""
        tests: list[Iterator[bool]] = []
        if self.suffixes:
            tests.append(map(str.endswith, paths, itertools.repeat(self.suffixes)))
        if self.paths:
            tests.append(map(self.paths.__contains__, paths))
        if self.name_set:  # the last name: a top-level path, or what follows its last slash
            tests.append(map(self.name_set.__contains__, paths))
            tests.append(map(str.endswith, paths, itertools.repeat(self.last_names)))
        if self.prefixes:  # a folder under a prefix: the path starts with it
            tests.append(map(str.startswith, paths, itertools.repeat(self.prefixes)))
        if self._folder_regexes_may_hit(paths):
            folders = list(map(_FOLDER, map(str.rpartition, paths, itertools.repeat("/"))))
            by_folder = {folder: self._folder(folder) for folder in set(folders)}
            tests.append(map(by_folder.__getitem__, folders))
        if not tests:
            return [False] * len(paths)
        hits = tests[0]
        for more in tests[1:]:
            hits = map(operator.or_, hits, more)
        return list(hits)

    def _folder_regexes_may_hit(self, paths: list[str]) -> bool:
        """Whether a folder regex may match a folder of ``paths``. Each regex is a bare
        alternation of literals, and what it is tried on in :meth:`_folder` (``F/`` and
        ``/F/`` for the folder F) lies inside ``/P`` for each path P of F: no match in the
        paths joined proves that no folder matches."""
        regexes = [r for r in (self.inner, self.inside, self.names) if r is not None]
        if not regexes or not paths:
            return False
        joined = "/" + "\n/".join(paths)
        return any(r.search(joined) is not None for r in regexes)

    def _folder(self, folder: str) -> bool:
        """Whether the folder ``folder`` makes every path below it match ("": none does)."""
        if not folder:
            return False
        inner, slashed = folder + "/", "/" + folder + "/"
        if self.inner is not None and self.inner.search(inner):
            return True
        if self.prefixes and inner.startswith(self.prefixes):
            return True
        if self.inside is not None and self.inside.search(slashed):
            return True
        return self.names is not None and self.names.search(slashed) is not None


def _anchored(body: str) -> str:
    """A gitignore pattern that matches ``body`` against the whole path only."""
    return body if body.startswith("/") else "/" + body


class Globs:
    """Whether a path matches a list of config globs (an empty list matches nothing);
    ``match`` is cached per path (paths repeat across the commits of a range)."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns = list(patterns)
        self._cache: dict[str, bool] = {}
        self._specs: list[tuple[bool, Any]] | None = None
        live = [g for g in self.patterns if g.lstrip("!").strip() and not g.startswith("#")]
        self._live = bool(live)
        shapes = [simple_shape(g) for g in live]
        self._fast: _Simple | None = None
        self._shapes: list[tuple[str, str]] = []
        if all(shape is not None for shape in shapes):
            self._shapes = shapes  # type: ignore[assignment]
            self._fast = _Simple(self._shapes)

    def _compile(self) -> list[tuple[bool, Any]]:
        """The pathspec path, built on first need: (include, matcher) in order, every glob
        anchored at the repository root. A set without negations is one matcher; with them,
        each glob is its own and the last one matching wins (GitIgnoreSpec would rank a
        match on a path before one on a folder above it)."""
        if self._specs is None:
            lines: list[tuple[bool, str]] = []
            for glob in self.patterns:
                negate = glob.startswith("!")
                body = glob[1:] if negate else glob
                if body.strip() and not body.startswith("#"):  # else it selects nothing
                    lines.append((not negate, _anchored(body)))
            if all(include for include, _ in lines):
                self._specs = [(True, _spec([line for _, line in lines]))]
            else:
                self._specs = [(include, _spec([line])) for include, line in lines]
        return self._specs

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
            hit = self._cache[path] = self.match_pathspec(path)
        return hit

    def match_all(self, paths: list[str]) -> list[bool]:
        """``match`` of each path, in bulk (the string tests, once per folder where they can)."""
        if self._fast is not None:
            return self._fast.match_all(paths)
        return [self.match(p) for p in paths]

    def match_pathspec(self, path: str) -> bool:
        """The plain path: pathspec's matching (the oracle of the string tests)."""
        hit = False
        for include, spec in self._compile():
            if spec.match_file(path):
                hit = include
        return hit

    def _plain_pathspecs(self) -> list[str]:
        return list(dict.fromkeys(spec for shape in self._shapes for spec in _plain(shape)))

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
