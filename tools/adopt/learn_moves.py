"""Checkpoints on lifecycle moves (SPEC §9.3): for each status matrix adoption found (a
``docs.spec_now`` entry), the documentation files that the history changes together with
the moves of its rows into a state become a ``docs.rules`` entry triggered by
``when_row_moves``, with the matrix's key and state columns.

A move is what the docs gate calls one (:func:`tools.gates.docs.row_moves`: a row's state
changes, or a row appears with one), read commit by commit against the parent over the
window. A documentation file (:func:`tools.adopt.learn_docs.is_doc`, outside the spec folder,
not the matrix, existing today) that changed in at least ``SHARE`` of the commits moving a
row into a state, and in at least ``MIN_COMMITS`` of them, is required by the moves into that
state; one rule per matrix and file, its ``to`` every such state. The thresholds are those of
the doc checkpoints (:mod:`tools.adopt.learn_docs`).
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

from tools import markdown
from tools.adopt.learn_docs import MIN_COMMITS, SHARE, is_doc
from tools.gates.docs import MatrixRow, RowSpec, read_rows
from tools.git import Commit


class MovesLearned(NamedTuple):
    """The ``docs.rules`` entries triggered by row moves, and one evidence line per matrix."""

    rules: list[dict[str, object]]
    evidence: list[str]


def _name(matrix: str, doc: str) -> str:
    stem = posixpath.splitext(posixpath.basename(matrix))[0]
    clean = "".join(c if c.isalnum() else "-" for c in f"{stem}-moves-{doc}".lower())
    return "-".join(part for part in clean.split("-") if part)


def _into(before: list[MatrixRow], after: list[MatrixRow]) -> set[str]:
    """The states rows of ``after`` moved into from ``before``, as the docs gate pairs rows
    (:func:`tools.gates.docs.row_moves`: same table, same key, the n-th to the n-th)."""
    old: dict[tuple[tuple[str, int], str], list[MatrixRow]] = {}
    for row in before:
        old.setdefault((row.table, row.key), []).append(row)
    seen: Counter[tuple[tuple[str, int], str]] = Counter()
    into: set[str] = set()
    for row in after:
        ident = (row.table, row.key)
        n = seen[ident]
        seen[ident] += 1
        prev = old.get(ident, [])
        was = prev[n].state if n < len(prev) else None
        if row.state is not None and row.state != was:
            into.add(row.state)
    return into


def _moved(
    entry: dict[str, object], commits: list[Commit], read: Callable[[str, str], bytes | None]
) -> list[tuple[set[str], set[str]]]:
    """(the states rows moved into, the changed paths) of each commit moving a row; each
    version of the matrix is read once (a commit's parent is most often the version the
    next older commit wrote)."""
    matrix = str(entry["matrix"])
    states = entry["states"]
    column = entry.get("state_column")
    spec = RowSpec(
        frozenset(str(s) for s in states) if isinstance(states, list) else frozenset(),
        int(str(entry.get("key_column", 1))),
        column if isinstance(column, (str, int)) else None,
    )
    parsed: dict[bytes, list[MatrixRow]] = {}

    def rows(raw: bytes | None) -> list[MatrixRow]:
        if raw is None:
            return []
        if raw not in parsed:
            with markdown.uncollected():  # a row per table row: thousands of versions' worth
                parsed[raw] = read_rows(raw.decode("utf-8", "replace"), spec)
        return parsed[raw]

    out: list[tuple[set[str], set[str]]] = []
    for commit in commits:
        paths = {c.path for c in commit.changes}
        if matrix not in paths:
            continue
        new = read(commit.sha, matrix)
        if new is None:
            continue
        old = read(commit.parents[0], matrix) if commit.parents else None
        into = _into(rows(old), rows(new))
        if into:
            out.append((into, paths))
    return out


def learn_moves(
    entries: list[dict[str, object]],
    commits: list[Commit],
    read: Callable[[str, str], bytes | None],
    existing: set[str],
    spec_dir: str,
) -> MovesLearned:
    """The ``when_row_moves`` rules the history of ``commits`` (newest first, merges
    excepted, with their changed paths) keeps for the matrices of ``entries``."""
    out = MovesLearned([], [])
    inside = spec_dir.rstrip("/") + "/"
    for entry in entries:
        matrix = str(entry["matrix"])
        moved = _moved(entry, commits, read)
        into: Counter[str] = Counter()
        together: Counter[tuple[str, str]] = Counter()
        for states, paths in moved:
            docs = {
                p
                for p in paths
                if is_doc(p) and p != matrix and not p.startswith(inside) and p in existing
            }
            into.update(states)
            together.update((s, d) for s in states for d in docs)
        required: dict[str, list[str]] = {}
        for (state, doc), n in together.items():
            if into[state] >= MIN_COMMITS and n >= SHARE * into[state]:
                required.setdefault(doc, []).append(state)
        if not required:
            best = max(((n, d, s) for (s, d), n in together.items()), default=None)
            most = (
                f"most: {best[1]} with {best[0]} of {into[best[2]]} into {best[2]}" if best else ""
            )
            out.evidence.append(
                f"{matrix}: {len(moved)} commit(s) move a row; no documentation file changes "
                f"with {SHARE:.0%} of the moves into a state (and {MIN_COMMITS} of them)"
                f"{' (' + most + ')' if most else ''} → no when_row_moves rule"
            )
            continue
        for doc in sorted(required):
            to = sorted(required[doc], key=lambda s: (-into[s], s))
            trigger: dict[str, object] = {"matrix": matrix, "to": to}
            trigger["key_column"] = entry.get("key_column", 1)
            if "state_column" in entry:
                trigger["state_column"] = entry["state_column"]
            name = _name(matrix, doc)
            out.rules.append({"name": name, "when_row_moves": trigger, "require_changed": [doc]})
            counts = ", ".join(f"{together[(s, doc)]} of {into[s]} into {s}" for s in to)
            column = entry.get("state_column", "its last backticked token")
            out.evidence.append(
                f"{doc} changed with the commits moving a row of {matrix} ({counts}; key "
                f"column {trigger['key_column']}, state in {column}) → docs rule {name} "
                "(when_row_moves)"
            )
    return out
