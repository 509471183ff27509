"""Counting: the configured ratchets, compiled once, counted over one tree in one pass.

Shared by the gate (``tools ratchet check``, preflight) and ``tools ratchet tighten``. Every
selected ratchet is counted in the same pass over the tree: a file two ratchets select is read
once. Counts are honest by construction: a site is exempted only by an allow marker whose tag
the issue index knows (or a matrix the ratchet's ``allow_tags_from`` names has as a row's key);
a marker with an unknown tag exempts nothing.
"""

import functools
import itertools
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from tools.background import Background
from tools.bounded import config_pattern
from tools.config_model import (
    BucketConfig,
    MarkdownRatchetConfig,
    ProtocolConfig,
    RatchetConfig,
)
from tools.errors import UsageError
from tools.git import GitError, decode
from tools.globs import Globs
from tools.lazy_regex import LazyRegex
from tools.ratchets import baseline as baseline_mod
from tools.ratchets import markdown_measures as md_kind
from tools.ratchets.guards import GuardSet
from tools.ratchets.literals import required
from tools.ratchets.pattern import (
    Bucket,
    Detector,
    Marker,
    is_binary,
)
from tools.ratchets.tree import Tree
from tools.repo_paths import is_repo_relative

_TAG_ISSUE = LazyRegex(r"#?([0-9]+)")


class Ratchet:
    """One configured ratchet, ready to count."""

    __slots__ = (
        "name",
        "kind",
        "baseline",
        "where",
        "buckets",
        "include",
        "exclude",
        "detector",
        "path",
        "paragraph_max",
        "cell_max",
        "exempt_files",
        "tag_sources",
    )

    def __init__(
        self,
        name: str,
        kind: str,
        baseline: str,
        where: str,
        buckets: list[str],
        *,
        include: Globs | None = None,
        exclude: Globs | None = None,
        detector: Detector | None = None,
        path: str | None = None,
        paragraph_max: int = md_kind.PARAGRAPH_MAX,
        cell_max: int = md_kind.CELL_MAX,
        exempt_files: dict[str, dict[str, int | None]] | None = None,
        tag_sources: tuple[tuple[str, int], ...] = (),
    ) -> None:
        self.name = name
        self.kind = kind  # "pattern" | "markdown"
        self.baseline = baseline  # repo-relative path of its baseline file
        self.where = where  # "<config file>: ratchets.<name>", for messages
        self.buckets = buckets
        self.include = include
        self.exclude = exclude
        self.detector = detector
        self.path = path  # markdown: the file
        self.paragraph_max = paragraph_max
        self.cell_max = cell_max
        # path -> bucket -> how many of its first sites are exempt (None: all)
        self.exempt_files = exempt_files if exempt_files is not None else {}
        # (matrix path, 1-based key column): tables whose rows' keys are tags too
        self.tag_sources = tag_sources

    def selects(self, path: str) -> bool:
        if self.kind == "markdown":
            return path == self.path
        assert self.include is not None and self.exclude is not None
        return self.include.match(path) and not self.exclude.match(path)

    def selected(self, paths: list[str]) -> list[bool]:
        """:meth:`selects` of each path, in bulk."""
        if self.kind == "markdown":
            return [path == self.path for path in paths]
        assert self.include is not None and self.exclude is not None
        included = self.include.match_all(paths)
        if not self.exclude:
            return included
        if self.exclude.fast:  # string tests: as cheap on every path as on the included
            # included > excluded: included and not excluded, one C-level map.
            return list(map(operator.gt, included, self.exclude.match_all(paths)))
        # The exclusions only where the inclusions hold (they may take pathspec's slow path).
        inside = list(itertools.compress(paths, included))
        dropped = set(itertools.compress(inside, self.exclude.match_all(inside)))
        if not dropped:
            return included
        return [hit and path not in dropped for path, hit in zip(paths, included, strict=True)]


class Site(NamedTuple):
    path: str
    line: int
    text: str  # what identifies the site across versions (its line, stripped)


class Exemption(NamedTuple):
    """An exempted site: by an allow marker (``tag``, ``marker_line``) or by the file's
    ``exempt_files`` allowance (``allowance``: N, or None for all; ``tag`` empty)."""

    bucket: str
    site: Site
    tag: str
    marker_line: int
    allowance: int | None = None
    by_file: bool = False


class MarkerUse(NamedTuple):
    path: str
    line: int
    tag: str


class Count:
    """One ratchet counted over one tree, filled in as the tree is read."""

    __slots__ = ("ratchet", "counts", "sites", "exempt", "unknown_tags", "files", "per_file")

    def __init__(self, ratchet: Ratchet) -> None:
        self.ratchet = ratchet
        self.counts: dict[str, int] = {b: 0 for b in ratchet.buckets}
        self.sites: dict[str, list[Site]] = {}  # counted sites per bucket
        self.exempt: list[Exemption] = []
        self.unknown_tags: list[MarkerUse] = []
        self.files = 0  # tracked files of the tree in the ratchet's scope
        self.per_file: dict[str, dict[str, int]] = {}


# -- configuration ------------------------------------------------------------------------------
def _globs(value: Any, where: str, default: list[str]) -> Globs:
    globs = default if value is None else list(value)
    for i, glob in enumerate(globs):
        if not isinstance(glob, str) or not is_repo_relative(glob.lstrip("!")):
            raise UsageError(
                f"bad value {glob!r}",
                where=f"{where}[{i}]",
                expected="a repo-relative glob that stays inside the repository",
            )
    return Globs(globs)


def _bucket(name: str, value: BucketConfig, where: str) -> Bucket:
    pattern = value.regex
    regex = config_pattern(pattern, f"{where}.regex")
    guards = None
    if value.outside_guards is not None:
        guards = GuardSet(
            [
                config_pattern(p, f"{where}.outside_guards[{i}]")
                for i, p in enumerate(value.outside_guards)
            ]
        )
    return Bucket(
        name,
        pattern,
        regex,
        required(pattern),
        value.examples,
        value.counter_examples,
        guards,
    )


def _exempt_files(value: Any, where: str, buckets: list[str]) -> dict[str, dict[str, int | None]]:
    """``exempt_files``: {path: {bucket: N | "*"}}, checked against the ratchet's buckets."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError("wrong type", where=where, expected='a mapping {path: {bucket: N | "*"}}')
    out: dict[str, dict[str, int | None]] = {}
    for path, allowances in value.items():
        at = f"{where}.{path}"
        if not isinstance(path, str) or not is_repo_relative(path):
            raise UsageError(
                f"bad path {path!r}", where=where, expected="a repo-relative file path"
            )
        if not isinstance(allowances, dict) or not allowances:
            raise UsageError(
                "wrong type", where=at, expected='a non-empty mapping {bucket: N | "*"}'
            )
        out[path] = {}
        for bucket, n in allowances.items():
            if bucket not in buckets:
                raise UsageError(
                    f"no bucket named {bucket!r}",
                    where=f"{at}.{bucket}",
                    expected="a bucket of this ratchet: " + ", ".join(buckets),
                )
            if n == "*":
                out[path][bucket] = None
            elif isinstance(n, int) and not isinstance(n, bool) and n >= 0:
                out[path][bucket] = n
            else:
                raise UsageError(
                    f"bad value {n!r}",
                    where=f"{at}.{bucket}",
                    expected='a non-negative integer or "*"',
                )
    return out


def load(
    config: ProtocolConfig, source: str | None, names: list[str] | None = None
) -> list[Ratchet]:
    """The ratchets of ``config`` (all, or those ``names`` names, in that order)."""
    src = source or "(default config)"
    table = config.ratchets
    if names:
        unknown = [n for n in names if n not in table]
        if unknown:
            known = ", ".join(table) or "none configured"
            raise UsageError(
                f"no ratchet named {unknown[0]!r}", where=f"{src}: ratchets", expected=known
            )
        selected = list(dict.fromkeys(names))
    else:
        selected = list(table)
    return [_one(name, table[name], f"{src}: ratchets.{name}") for name in selected]


def _one(name: str, cfg: RatchetConfig, where: str) -> Ratchet:
    base = cfg.baseline or baseline_mod.default_path(name)
    if not is_repo_relative(base):
        raise UsageError(
            f"bad value {base!r}", where=f"{where}.baseline", expected="a repo-relative path"
        )
    if isinstance(cfg, MarkdownRatchetConfig):
        path = cfg.path
        if not is_repo_relative(path):
            raise UsageError(
                f"bad value {path!r}", where=f"{where}.path", expected="a repo-relative path"
            )
        return Ratchet(
            name,
            "markdown",
            base,
            where,
            list(md_kind.BUCKETS),
            path=path,
            paragraph_max=cfg.paragraph_max or md_kind.PARAGRAPH_MAX,
            cell_max=cfg.cell_max or md_kind.CELL_MAX,
        )
    raw_buckets = cfg.buckets
    if not raw_buckets:
        raise UsageError("no buckets", where=f"{where}.buckets", expected="at least one bucket")
    buckets = [_bucket(str(b), v, f"{where}.buckets.{b}") for b, v in raw_buckets.items()]
    marker = None
    if cfg.allow_marker:
        pattern = cfg.allow_marker
        regex = config_pattern(pattern, f"{where}.allow_marker")
        if "tag" not in regex.groupindex:
            raise UsageError(
                "regex lacks its named group",
                where=f"{where}.allow_marker",
                expected="a regex with a group (?P<tag>…)",
            )
        marker = Marker(pattern, regex, required(pattern))
    strip = cfg.strip
    if strip not in (None, "c"):
        raise UsageError(f"bad value {strip!r}", where=f"{where}.strip", expected="'c' or null")
    for b in buckets:
        if b.guards is not None and strip != "c":
            raise UsageError(
                "outside_guards needs `strip: c` (guards are C preprocessor conditionals)",
                where=f"{where}.buckets.{b.name}.outside_guards",
                expected="strip: c on the ratchet, or no outside_guards",
            )
    names = [b.name for b in buckets]
    return Ratchet(
        name,
        "pattern",
        base,
        where,
        names,
        include=_globs(cfg.include, f"{where}.include", ["**"]),
        exclude=_globs(cfg.exclude, f"{where}.exclude", []),
        detector=Detector(buckets, marker, strip),
        exempt_files=_exempt_files(cfg.exempt_files, f"{where}.exempt_files", names),
        tag_sources=tuple((s.matrix, s.key_column) for s in cfg.allow_tags_from),
    )


# -- armed detectors ----------------------------------------------------------------------------
def unarmed(ratchet: Ratchet) -> dict[str, list[str]]:
    """Per bucket, why its detector cannot be trusted: an example it no longer counts, or a
    counter example it counts. Empty when every control holds."""
    out: dict[str, list[str]] = {}
    det = ratchet.detector
    if det is None:
        return out
    for bucket in det.buckets:
        problems = [
            f"does not count its example {ex!r}"
            for ex in bucket.examples
            if not det.line_matches(bucket, ex)
        ]
        problems += [
            f"counts its counter example {ex!r}"
            for ex in bucket.counter_examples
            if det.line_matches(bucket, ex)
        ]
        if problems:
            out[bucket.name] = problems
    return out


# -- counting -----------------------------------------------------------------------------------
def known_tags(tree: Tree, index_path: str) -> tuple[set[str], set[int]]:
    """(row ids, issue numbers) of the issue index as ``tree`` holds it."""
    from tools import index_table  # only when some file holds a marker

    raw = tree.read(index_path)
    if raw is None:
        return set(), set()
    table = index_table.parse(decode(raw))
    rows = {r.row for r in table.rows if r.row != index_table.NO_ROW}
    return rows, {r.key for r in table.rows}


def matrix_keys(tree: Tree, sources: tuple[tuple[str, int], ...]) -> set[str]:
    """The keys of the body rows of every table of each ``(matrix, key_column)`` source as
    ``tree`` holds it: the key cell as rendered (`` `S1` `` and ``**S1**`` are ``S1``)."""
    from tools import markdown  # only when a marker is found and the ratchet names a matrix

    keys: set[str] = set()
    for path, column in sources:
        raw = tree.read(path)
        if raw is None:
            continue
        doc = markdown.parse(decode(raw), where=path)
        k = column - 1
        for table in doc.tables:
            for row in table.rows:
                if not row.header and k < len(row.plain):
                    key = row.plain[k].strip()
                    if key:
                        keys.add(key)
    return keys


def tag_known(tag: str, known: tuple[set[str], set[int]], keys: set[str] | None = None) -> bool:
    """Whether ``tag`` is a row id or an issue number of the index (``known``), or one of
    the matrices' ``keys``."""
    m = _TAG_ISSUE.compiled.fullmatch(tag)
    if m is not None and int(m.group(1)) in known[1]:
        return True
    return tag in known[0] or (keys is not None and tag in keys)


class TreeStats:
    """How many files a count read, and how many of them were binary."""

    __slots__ = ("files", "binary")

    def __init__(self) -> None:
        self.files = 0
        self.binary = 0


def _probes(ratchet: Ratchet) -> list[str] | None:
    """Literals one of which every file holding a site or a marker of ``ratchet`` contains;
    None when some bucket (or the marker) has none, or for the markdown kind."""
    det = ratchet.detector
    if det is None:
        return None
    needs = [b.needs for b in det.buckets] + ([det.marker.needs] if det.marker else [])
    out: list[str] = []
    for n in needs:
        if n.probe is None:
            return None
        out += n.probe
    return out


def _pathspecs(ratchets: list[Ratchet]) -> list[str] | None:
    """Git pathspecs covering the include globs of ``ratchets`` (None: search everything)."""
    out: list[str] = []
    for r in ratchets:
        assert r.include is not None
        specs = r.include.pathspecs()
        if not specs:
            return None
        out += specs
    return list(dict.fromkeys(out))


# (ratchet, path, bucket) -> sites; (ratchet, path) -> markers, before tags are judged
_Sites = dict[str, dict[str, dict[str, list[tuple[int, str]]]]]
_Markers = dict[str, dict[str, list[tuple[int, str]]]]


def count(
    tree: Tree,
    ratchets: list[Ratchet],
    index_path: str,
    *,
    prefilter: bool = True,
    keep: Sequence[str] = (),
    started: Background[set[str]] | None = None,
) -> tuple[dict[str, Count], TreeStats]:
    """Count every ratchet over ``tree`` in one pass (each file read once).

    ``prefilter``: ask git for the files that hold a bucket's literal first and read only
    those (the fast path); False reads every selected file (the plain path, which the tests
    use as the oracle of the fast one). ``keep``: small files the caller reads next (the
    baselines), fetched in the same pass. ``started``: :func:`search` of this tree and
    these ratchets, started earlier."""
    results = {r.name: Count(r) for r in ratchets}
    wanted = _wanted(tree, ratchets, results, prefilter, started)
    raw_sites: _Sites = {r.name: {} for r in ratchets}
    raw_markers: _Markers = {r.name: {} for r in ratchets}
    stats = TreeStats()
    for path, data in tree.read_many(list(wanted), [*keep, index_path]):
        stats.files += 1
        if is_binary(data):
            stats.binary += 1
            continue
        for r in wanted[path]:
            if r.kind == "markdown":
                res = results[r.name]
                counts, sites = md_kind.measure(
                    decode(data), r.paragraph_max, r.cell_max, where=path
                )
                res.counts["chars"] += counts["chars"]
                res.per_file[path] = {"chars": counts["chars"]} if counts["chars"] else {}
                raw_sites[r.name][path] = sites
                continue
            assert r.detector is not None
            scan = r.detector.scan(data)
            if scan is None:
                continue
            if scan.sites:
                raw_sites[r.name][path] = scan.sites
            if scan.markers:
                raw_markers[r.name][path] = scan.markers
    _judge(tree, ratchets, results, raw_sites, raw_markers, index_path)
    return results, stats


def _literals(ratchets: list[Ratchet]) -> tuple[set[str], list[str]]:
    """The ratchets the prefilter serves (every bucket has literals) and their literals."""
    literals: dict[str, None] = {}
    filtered: set[str] = set()
    for r in ratchets:
        probes = _probes(r)
        if probes is not None:
            filtered.add(r.name)
            literals.update(dict.fromkeys(probes))
    return filtered, list(literals)


def search(
    tree: Tree, ratchets: list[Ratchet], paths: list[str] | None = None
) -> Background[set[str]] | None:
    """git's search of ``tree`` for the files that may hold a site of the ratchets the
    prefilter serves, started on a thread (None: it serves none). ``paths``: the tracked
    paths of a tree on disk (see :meth:`Tree.may_contain`)."""
    filtered, literals = _literals(ratchets)
    if not filtered:
        return None
    pathspecs = _pathspecs([r for r in ratchets if r.name in filtered])
    return Background(functools.partial(tree.may_contain, literals, paths, pathspecs))


def _wanted(
    tree: Tree,
    ratchets: list[Ratchet],
    results: dict[str, Count],
    prefilter: bool,
    started: Background[set[str]] | None,
) -> dict[str, list[Ratchet]]:
    """Which ratchets read each path: those whose globs select it (counted as their files),
    less those whose literals git's search says the file lacks."""
    filtered = _literals(ratchets)[0] if prefilter else set()
    # git searches on a thread while the tree is listed and matched to the globs (on disk,
    # once the listing says which folders are symlinks and must be left out).
    pending = None
    if filtered and tree.in_git:
        pending = started or search(tree, ratchets)
    paths = tree.paths()
    if filtered and not tree.in_git:
        pending = search(tree, ratchets, paths)
    masks = [r.selected(paths) for r in ratchets]
    for r, mask in zip(ratchets, masks, strict=True):
        results[r.name].files += sum(mask)
    candidates: set[str] | None = None
    if pending is not None:
        try:
            candidates = pending.result()
        except GitError:
            candidates = None  # the prefilter is an optimisation: fall back to reading all
    if candidates is None:
        return _scope(paths, ratchets, masks)
    if len(filtered) == len(ratchets):  # every ratchet reads only the files git found
        found = list(map(candidates.__contains__, paths))
        paths = list(itertools.compress(paths, found))
        masks = [list(itertools.compress(mask, found)) for mask in masks]
        return _scope(paths, ratchets, masks)
    wanted: dict[str, list[Ratchet]] = {}
    for path, rs in _scope(paths, ratchets, masks).items():
        chosen = [r for r in rs if r.name not in filtered or path in candidates]
        if chosen:
            wanted[path] = chosen
    return wanted


def _scope(
    paths: list[str], ratchets: list[Ratchet], masks: list[list[bool]]
) -> dict[str, list[Ratchet]]:
    """The ratchets whose globs select each path (``masks``: each ratchet's selection of
    ``paths``). Paths selected by the same ratchets share one list, which nothing changes."""
    if not ratchets:
        return {}
    scope: dict[str, list[Ratchet]] = {}
    shared: dict[tuple[bool, ...], list[Ratchet]] = {}
    for path, hits in zip(paths, zip(*masks, strict=True), strict=True):
        if True in hits:
            chosen = shared.get(hits)
            if chosen is None:
                chosen = shared[hits] = [r for r, hit in zip(ratchets, hits, strict=True) if hit]
            scope[path] = chosen
    return scope


def _judge(
    tree: Tree,
    ratchets: list[Ratchet],
    results: dict[str, Count],
    raw_sites: _Sites,
    raw_markers: _Markers,
    index_path: str,
) -> None:
    """Judge the markers' tags (the index is read only when a marker is found), then count
    each site, or exempt it by a marker or by its file's allowance."""
    known: tuple[set[str], set[int]] | None = None
    for r in ratchets:
        res = results[r.name]
        keys: set[str] | None = None  # the matrices' keys, read on the first marker
        for path, markers in raw_markers[r.name].items():
            if known is None:
                known = known_tags(tree, index_path)
            if keys is None:
                keys = matrix_keys(tree, r.tag_sources)
            for line, tag in markers:
                if not tag_known(tag, known, keys):
                    res.unknown_tags.append(MarkerUse(path, line, tag))
        for path, per_bucket in raw_sites[r.name].items():
            exempt_at: dict[int, tuple[str, int]] = {}
            for line, tag in raw_markers[r.name].get(path, []):
                if known is not None and tag_known(tag, known, keys):
                    for covered in (line, line + 1):
                        exempt_at.setdefault(covered, (tag, line))
            _tally(res, path, per_bucket, exempt_at, r.exempt_files.get(path, {}))


def _tally(
    res: Count,
    path: str,
    per_bucket: dict[str, list[tuple[int, str]]],
    exempt_at: dict[int, tuple[str, int]],
    allowances: dict[str, int | None],
) -> None:
    """Count one file's sites into ``res``."""
    tally = res.per_file.setdefault(path, {})
    for bucket, found in per_bucket.items():
        # exempt_files: the first N sites in file order that no marker exempts
        allowance = allowances.get(bucket, 0)  # None: every site
        used = 0
        for line, text in found:
            site = Site(path, line, text.strip())
            hit = exempt_at.get(line)
            if hit is not None:
                res.exempt.append(Exemption(bucket, site, hit[0], hit[1]))
                continue
            if allowance is None or used < allowance:
                used += 1
                res.exempt.append(Exemption(bucket, site, "", 0, allowance, True))
                continue
            res.sites.setdefault(bucket, []).append(site)
            res.counts[bucket] += 1
            tally[bucket] = tally.get(bucket, 0) + 1
    if not tally:
        del res.per_file[path]
