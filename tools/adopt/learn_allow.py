"""The allow marker a repository already uses (SPEC §9.3), and where its tags are kept.

A marker is a word ending in ``-ALLOW`` or ``_ALLOW`` with a tag in parentheses, written
anywhere in today's tree (``// DSR-ALLOW(W3): pending the migration``); a tag is a word of
letters, digits and ``_ . # -`` (a placeholder such as ``<row-id>`` is none). The marker
used most becomes the ratchets' ``allow_marker``. Where the issue index does not hold those
tags, the markdown tables whose key column does are found: the column of a table holding
the most used tags, then the next for the tags left, and so on (at most
:data:`MAX_SOURCES`), each holding at least one, become ``allow_tags_from``. Each choice is
printed with its evidence; nothing names a particular repository's marker or files.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from tools import markdown

if TYPE_CHECKING:
    from tools.git import Git

MAX_SOURCES = 3
# git grep's extended regex (POSIX ERE) and Python's read it alike.
_USE = r"[A-Z][A-Z0-9]*([-_][A-Z0-9]+)*[-_]ALLOW\([ ]*[A-Za-z0-9#][A-Za-z0-9_.#-]*[ ]*\)"
_PARTS = re.compile(r"([A-Z][A-Z0-9_-]*[-_]ALLOW)\(\s*([^()\s]+)\s*\)")


class AllowLearned(NamedTuple):
    """The marker's regex, the ``allow_tags_from`` entries, and the evidence."""

    marker: str
    sources: list[dict[str, object]]
    evidence: list[str]


def marker_uses(git: Git) -> list[tuple[str, str, str]]:
    """(path, marker name, tag) of every marker written in HEAD's tree."""
    status, out = git.run(
        "grep", "-I", "-o", "-z", "-E", "--no-color", "-e", _USE, "HEAD", ok=(0, 1)
    )
    if status != 0:
        return []
    uses: list[tuple[str, str, str]] = []
    for record in out.decode("utf-8", "replace").split("\n"):
        where, nul, text = record.partition("\0")
        if not nul:
            continue
        path = where.partition(":")[2]
        for found in _PARTS.finditer(text):
            uses.append((path, found.group(1), found.group(2)))
    return uses


def _cell(tag: str) -> re.Pattern[bytes]:
    """A table cell holding ``tag`` alone, in backticks or emphasis or not."""
    return re.compile(rb"\|[ \t`*_]*" + re.escape(tag.encode()) + rb"[ \t`*_]*\|")


def _columns(raw: bytes, path: str) -> list[tuple[int, set[str]]]:
    """(1-based column, the body rows' keys in it) of each column of each table."""
    doc = markdown.parse(raw.decode("utf-8", "replace"), where=path)
    out: list[tuple[int, set[str]]] = []
    for table in doc.tables:
        body = [r for r in table.rows if not r.header]
        width = max((len(r.plain) for r in body), default=0)
        for k in range(width):
            out.append((k + 1, {r.plain[k].strip() for r in body if k < len(r.plain)}))
    return out


def learn_allow(
    uses: list[tuple[str, str, str]],
    paths: Iterable[str],
    read: Callable[[str], bytes | None],
    index_tags: set[str],
) -> AllowLearned | None:
    """The marker most used in ``uses`` and the matrices (markdown files of ``paths``) whose
    key columns hold its tags that ``index_tags`` (the issue index's row ids and issue
    numbers) lacks; None when no marker is used."""
    if not uses:
        return None
    names = Counter(name for _, name, _ in uses)
    name, count = names.most_common(1)[0]
    tags = sorted({tag for _, n, tag in uses if n == name})
    files = len({p for p, n, _ in uses if n == name})
    marker = name + r"\((?P<tag>[^()]+)\)"
    shown = ", ".join(tags[:6]) + (", …" if len(tags) > 6 else "")
    evidence = [
        f"{name}(<tag>) is written {count} time(s) in {files} file(s) of the tree (tags "
        f"{shown}) → allow_marker: {marker}"
    ]
    left = {t for t in tags if t not in index_tags and t.lstrip("#") not in index_tags}
    sources: list[dict[str, object]] = []
    if left:
        candidates: list[tuple[str, int, set[str]]] = []
        for path in sorted(p for p in paths if p.lower().endswith(".md")):
            raw = read(path)
            if raw is None or not any(_cell(t).search(raw) for t in left):
                continue  # no table cell holds a tag: not parsed
            for column, keys in _columns(raw, path):
                held = keys & left
                if held:
                    candidates.append((path, column, held))
        while left and candidates and len(sources) < MAX_SOURCES:
            path, column, held = max(candidates, key=lambda c: (len(c[2] & left), -c[1]))
            held = held & left
            if not held:
                break
            sources.append({"matrix": path, "key_column": column})
            evidence.append(
                f"{len(held)} of {len(tags)} tag(s) ({', '.join(sorted(held)[:6])}) are keys "
                f"of column {column} of a table of {path} → allow_tags_from: "
                f"{{matrix: {path}, key_column: {column}}}"
            )
            left -= held
    if left:
        evidence.append(
            f"{len(left)} tag(s) ({', '.join(sorted(left)[:6])}) are no row id or issue of the "
            "index nor a key of any table: allow-tag-unknown until a row records them"
        )
    return AllowLearned(marker, sources, evidence)
