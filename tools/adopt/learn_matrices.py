"""Status matrices (SPEC §9.3): a markdown file whose tables' rows carry a backticked lifecycle
state in one column and link a spec becomes a ``docs.spec_now`` entry, with its states, its
key column and its state column.

A table qualifies when at least ``ROW_SHARE`` of its body rows (and at least ``MIN_ROWS``)
hold exactly one backticked token in the same column and a link into the spec folder; the
column is the one most rows fill that way. Nothing about a particular repository is assumed:
the tokens, the column and the link shape come from the tables.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from tools import markdown
from tools.bounded import ConfigPattern, config_pattern

ROW_SHARE = 0.6
MIN_ROWS = 3
MAX_STATES = 24  # more distinct tokens than this in a column is data, not a lifecycle
_TOKEN = re.compile(r"`([A-Za-z][A-Za-z0-9_.\-]*)`")


class MatricesLearned(NamedTuple):
    """The ``docs.spec_now`` entries, and one evidence line per matrix considered."""

    entries: list[dict[str, object]]
    evidence: list[str]


def _state_column(rows: list[markdown.Row]) -> int | None:
    """The 0-based column in which most rows hold exactly one backticked token, some of them
    repeated (a lifecycle; a column of distinct tokens is the rows' keys), or None."""
    tokens: dict[int, list[str]] = {}
    for row in rows:
        for i, cell in enumerate(row.cells):
            found = _TOKEN.fullmatch(cell.strip())
            if found is not None:
                tokens.setdefault(i, []).append(found.group(1))
    need = max(MIN_ROWS, ROW_SHARE * len(rows))
    lifecycles = [
        (len(seen), -i)
        for i, seen in tokens.items()
        if len(seen) >= need and len(set(seen)) < len(seen)
    ]
    return -max(lifecycles)[1] if lifecycles else None


def _links_spec(line: str, matrix: str, spec_dir: str, pattern: ConfigPattern) -> bool:
    """Whether the row names a file of the spec folder, resolved as the docs gate resolves it
    (relative to the matrix's folder, or from the root with a leading ``/``)."""
    folder = posixpath.dirname(matrix)
    for found in pattern.finditer(line):
        path = found.group("spec") or ""
        resolved = path.lstrip("/") if path.startswith("/") else posixpath.join(folder, path)
        if posixpath.normpath(resolved).startswith(spec_dir.rstrip("/") + "/"):
            return True
    return False


def _table(table: markdown.Table, matrix: str, spec_dir: str) -> tuple[str, set[str]] | None:
    """(state column header, the tokens) of a qualifying table, else None."""
    header = next((r for r in table.rows if r.header), None)
    body = [r for r in table.rows if not r.header]
    if header is None or len(body) < MIN_ROWS:
        return None
    column = _state_column(body)
    if column is None or column >= len(header.cells):
        return None
    # The pattern the config will hold, on the engine the docs gate runs it on (RE2: the rows
    # are the judged tree's text).
    pattern = config_pattern(_spec_link(spec_dir), "docs.spec_now[].spec_link")
    linked = sum(1 for r in body if _links_spec(" | ".join(r.cells), matrix, spec_dir, pattern))
    if linked < ROW_SHARE * len(body):
        return None
    tokens = {t for r in body if column < len(r.cells) for t in _TOKEN.findall(r.cells[column])}
    # A token of another shape than most is a note, not a lifecycle (`vt-cpu-ref` among
    # `ACTIVE`, `DONE`); rows' keys written there are taken out by the caller.
    upper = {t for t in tokens if t.upper() == t}
    states = upper if 2 * len(upper) >= len(tokens) else tokens - upper
    if not states or len(states) > MAX_STATES:
        return None
    return header.cells[column], states


def _spec_link(spec_dir: str) -> str:
    """A regex that finds a spec's path on a row: in a markdown link or written bare
    (``planned: specs/x.md``), from any folder."""
    last = re.escape(spec_dir.rstrip("/").rsplit("/", 1)[-1])
    return rf"(?P<spec>/?(?:[\w.\-]+/)*{last}/[\w.\-/]+\.md)"


def learn_matrices(
    paths: Iterable[str], read: Callable[[str], bytes | None], spec_dir: str
) -> MatricesLearned:
    """The status matrices among the markdown files of ``paths`` (outside the spec folder)."""
    out = MatricesLearned([], [])
    inside = spec_dir.rstrip("/") + "/"
    keys: set[str] = set()  # the matrices' first-column tokens: rows' keys, never states
    matrices: list[tuple[str, list[tuple[str, set[str]]]]] = []
    for path in sorted(p for p in paths if p.lower().endswith(".md") and not p.startswith(inside)):
        raw = read(path)
        if raw is None:
            continue
        doc = markdown.parse(raw.decode("utf-8", "replace"), where=path)
        found = []
        for table in doc.tables:
            learned = _table(table, path, spec_dir)
            if learned is not None:
                found.append(learned)
                keys.update(t for r in table.rows if r.cells for t in _TOKEN.findall(r.cells[0]))
        if found:
            matrices.append((path, found))
    for path, found in matrices:
        states = sorted(set().union(*(tokens for _, tokens in found)) - keys)
        if not states:
            continue
        headers = {h for h, _ in found}
        entry: dict[str, object] = {
            "matrix": path,
            "spec_link": _spec_link(spec_dir),
            "states": states,
            "key_column": 1,
        }
        if len(headers) == 1:
            entry["state_column"] = headers.pop()
        out.entries.append(entry)
        column = entry.get("state_column", "its last backticked token")
        out.evidence.append(
            f"{path}: {len(found)} table(s) whose rows carry a state in {column!s} "
            f"({', '.join(states[:5])}{', …' if len(states) > 5 else ''}) and link a spec "
            "→ docs.spec_now entry"
        )
    if not out.entries:
        out.evidence.append(
            f"no markdown table has rows with a backticked state and a link into {spec_dir}/ "
            "→ docs.spec_now: []"
        )
    return out
