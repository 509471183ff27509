"""The ``pattern`` kind: bucket regexes over the lines of selected files, an allow marker.

A bucket counts *lines* (sites): a line that matches its regex once or five times is one
site, as ``git grep -c`` counts. Regexes are matched line by line (``^`` and ``$`` are the
line's ends, a trailing ``\\r`` is dropped), after C/C++ stripping when ``strip: c``.

Speed: each regex gets a necessary condition read from its text
(:func:`tools.ratchets.literals.required`: the literals every match contains, e.g.
``include`` and one of ``cuda_runtime`` / ``/cuda/``). A
file whose bytes fail every bucket's condition is neither decoded nor stripped, and only the
lines holding a bucket's longest literal are matched. The condition is necessary, never a
guess: a regex without literals is matched on every line. The examples are counted by the
same path, so a prefilter that lost a match would disarm its bucket.
"""

from collections.abc import Iterator
from typing import NamedTuple

from tools.bounded import ConfigPattern
from tools.ratchets.cstrip import strip_c
from tools.ratchets.guards import GuardSet, guarded_lines
from tools.ratchets.literals import Needs

BINARY_PROBE = 8000  # what git itself inspects


def is_binary(data: bytes) -> bool:
    """git's heuristic (``git grep`` skips such files too): a NUL in the first 8,000 bytes."""
    return b"\0" in data[:BINARY_PROBE]


# -- lines --------------------------------------------------------------------------------------
def _trim(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def all_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based number, line without its ending) of every line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, _trim(line)


def lines_with(text: str, literal: str | None) -> Iterator[tuple[int, str]]:
    """The lines that contain ``literal`` (every line when None), in one forward pass."""
    if literal is None:
        yield from all_lines(text)
        return
    find, count = text.find, text.count
    number, counted = 1, 0  # line number of index ``counted``
    pos = find(literal)
    while pos >= 0:
        start = max(text.rfind("\n", counted, pos) + 1, counted)
        number += count("\n", counted, start)
        end = find("\n", pos)
        if end < 0:
            end = len(text)
        yield number, _trim(text[start:end])
        if end >= len(text):
            return
        counted = end + 1
        number += 1
        pos = find(literal, counted)


# -- buckets and markers ------------------------------------------------------------------------
class Bucket(NamedTuple):
    """One bucket of a pattern ratchet: its regex, what a line needs to match it, and the
    examples that arm it."""

    name: str
    pattern: str
    regex: ConfigPattern
    needs: Needs
    examples: tuple[str, ...] = ()
    counter_examples: tuple[str, ...] = ()
    guards: GuardSet | None = None  # outside_guards: sites inside such a guard do not count


class Marker:
    """A ratchet's allow marker: its regex (with a ``tag`` group) and what a line needs."""

    __slots__ = ("pattern", "regex", "needs")

    def __init__(self, pattern: str, regex: ConfigPattern, needs: Needs) -> None:
        self.pattern = pattern
        self.regex = regex
        self.needs = needs


class FileScan:
    """What one file holds: sites per bucket (line, line text) and markers (line, tag)."""

    __slots__ = ("sites", "markers")

    def __init__(self) -> None:
        self.sites: dict[str, list[tuple[int, str]]] = {}
        self.markers: list[tuple[int, str]] = []


def _matching(text: str, regex: ConfigPattern, needs: Needs) -> Iterator[tuple[int, str]]:
    """(line, text) of each line of ``text`` that ``regex`` matches (prefiltered)."""
    search, holds = regex.search, needs.holds
    multi = len(needs.clauses) > 1 or (needs.clauses and needs.anchor is None)
    for number, line in lines_with(text, needs.anchor):
        if (not multi or holds(line)) and search(line):
            yield number, line


def _last_line_end(text: str, buckets: list[Bucket]) -> int | None:
    """Where the last line a bucket may match ends (stripping need not go further);
    None when some bucket has no anchor (every line is a candidate)."""
    last = -1
    for bucket in buckets:
        if bucket.needs.anchor is None:
            return None
        last = max(last, text.rfind(bucket.needs.anchor))
    end = text.find("\n", last) if last >= 0 else 0
    return len(text) if end < 0 else end


def _drop_guarded(body: str, buckets: list[Bucket], scan: FileScan) -> None:
    """Remove from ``scan`` the sites of ``buckets`` that their ``outside_guards`` guard
    (one pass over the file's conditionals for all of them)."""
    sets = [b.guards for b in buckets if b.guards is not None]
    asked = [[line for line, _ in scan.sites[b.name]] for b in buckets]
    hidden = guarded_lines(body, sets, asked)
    for bucket, drop in zip(buckets, hidden, strict=True):
        if drop:
            kept = [site for site in scan.sites[bucket.name] if site[0] not in drop]
            if kept:
                scan.sites[bucket.name] = kept
            else:
                del scan.sites[bucket.name]


class Detector:
    """The buckets and marker of one pattern ratchet, applied to a file's bytes."""

    def __init__(self, buckets: list[Bucket], marker: Marker | None, strip: str | None):
        self.buckets = buckets
        self.marker = marker
        self.strip = strip

    def scan_text(self, text: str, wanted: list[Bucket] | None = None) -> FileScan:
        scan = FileScan()
        buckets = self.buckets if wanted is None else wanted
        if buckets:
            body = strip_c(text, _last_line_end(text, buckets)) if self.strip == "c" else text
            guarded: list[Bucket] = []
            for bucket in buckets:
                found = list(_matching(body, bucket.regex, bucket.needs))
                if found:
                    scan.sites[bucket.name] = found
                    if bucket.guards is not None and self.strip == "c":
                        guarded.append(bucket)
            if guarded:
                _drop_guarded(body, guarded, scan)
        return scan

    def scan(self, data: bytes) -> FileScan | None:
        """Sites and markers of a file's bytes; None when the prefilter rules every bucket
        and the marker out (the common case: nothing is decoded)."""
        wanted = [b for b in self.buckets if b.needs.holds_bytes(data)]
        marker = self.marker
        want_marker = marker is not None and marker.needs.holds_bytes(data)
        if not wanted and not want_marker:
            return None
        text = data.decode("utf-8", "surrogateescape")
        scan = self.scan_text(text, wanted)
        if want_marker and marker is not None:
            for number, line in lines_with(text, marker.needs.anchor):
                for m in marker.regex.finditer(line):
                    scan.markers.append((number, (m.group("tag") or "").strip()))
        return scan

    def line_matches(self, bucket: Bucket, line: str) -> bool:
        """Whether ``line`` alone would be counted by ``bucket``: the prefilter, the
        stripping and the regex, exactly as a file is counted (the armed check)."""
        if not bucket.needs.holds_bytes(line.encode("utf-8", "surrogateescape")):
            return False
        return bool(self.scan_text(line + "\n", [bucket]).sites)
