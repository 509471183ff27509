"""The findings baseline ``.agents/baselines/findings.json`` (SPEC §3.3): its entries, their
fingerprints, and the file format.

A finding is identified by its gate, rule and path and the text of the line it names,
whitespace-normalised, so that it keeps its identity when an edit above moves it; identical
findings in one file are told apart by their order (the repeat count). A finding on a
construct that spans lines (``end_line``: an evidence table) is identified by the text of every
line of it, so that changing any cell inside is a new finding (SPEC §10). A finding that names
no line is identified by its gate, rule, path and repeat count alone.

Decisions (docs/adoption.md): only findings of the content gates (conflicts excepted) that name
no commit are recorded (a verdict on a commit is judged once, in the range that brings it);
only errors and warnings; never a rule of §3.3's protected list, nor a ratchet's counting rules,
which keep their per-bucket baselines (§4.5).
"""

import json
from collections.abc import Callable, Iterable
from typing import NamedTuple

from tools.bounded import json_object
from tools.errors import UsageError
from tools.finding_identity import finding_identity
from tools.gate_registry import PROTECTED
from tools.report.model import Finding  # not the package: its renderers import this module

PATH = ".agents/baselines/findings.json"
SCHEMA_ID = "tools.findings-baseline/1"
# The content gates of SPEC §4.9 without conflicts: what the baseline may cover.
GATES = ("index", "docs", "ratchet", "now", "spec", "links", "ledger")
# Judged against baselines of their own (§4.5), never recorded here.
OWN_BASELINE = frozenset({"ratchet-regression", "ratchet-stale", "baseline-missing"})
FORMAT = (
    '{"schema": "tools.findings-baseline/1", "findings": [{"gate", "rule", "path", '
    '"fingerprint", "message"}, ...]}'
)
_KEYS = ("gate", "rule", "path", "fingerprint", "message")


class Entry(NamedTuple):
    """One recorded finding. ``message`` is what it said when recorded (for people; it is not
    matched)."""

    gate: str
    rule: str
    path: str
    fingerprint: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {k: getattr(self, k) for k in _KEYS}


def eligible(gate: str, finding: Finding) -> bool:
    """Whether ``finding`` of ``gate`` may be recorded as debt."""
    return (
        gate in GATES
        and finding.commit is None
        and finding.severity in ("error", "warning")
        and finding.rule not in PROTECTED
        and finding.rule not in OWN_BASELINE
    )


def normalise(text: str) -> str:
    return " ".join(text.split())


def line_text(lines: list[bytes] | None, line: int | None) -> str:
    """The whitespace-normalised text of line ``line`` (1-based) of a file split on ``\\n``;
    empty when there is no such line."""
    if lines is None or line is None or not 1 <= line <= len(lines):
        return ""
    return normalise(lines[line - 1].decode("utf-8", "surrogateescape"))


def span_text(lines: list[bytes] | None, line: int | None, end_line: int | None) -> str:
    """The text a fingerprint covers: line ``line``'s (:func:`line_text`) or, for a construct
    through ``end_line``, every line of it, each normalised, joined with ``\n``."""
    if end_line is None or line is None or end_line <= line:
        return line_text(lines, line)
    return "\n".join(line_text(lines, n) for n in range(line, end_line + 1))


def fingerprints(
    gate: str, findings: Iterable[Finding], read: Callable[[str], bytes | None]
) -> list[tuple[Finding, str]]:
    """Each finding with its fingerprint; ``read(path)`` gives the judged content of a path
    (read and split once per path, so many findings in one file cost one pass)."""
    contents: dict[str, list[bytes] | None] = {}
    seen: dict[str, int] = {}
    out: list[tuple[Finding, str]] = []
    for finding in findings:
        path = finding.path or ""
        text = ""
        if finding.line is not None and path:
            if path not in contents:
                raw = read(path)
                contents[path] = raw.split(b"\n") if raw is not None else None
            text = span_text(contents[path], finding.line, finding.end_line)
        identity = finding_identity(seen, gate, finding.rule, path, text)
        out.append((finding, identity.fingerprint))
    return out


def parse(raw: bytes, where: str) -> list[Entry]:
    """The entries of a findings baseline's bytes; exit 2 naming the file and key otherwise."""

    def bad(message: str, key: str | None = None) -> UsageError:
        return UsageError(
            message, where=f"{where}: {key}" if key else where, expected=f"the format {FORMAT}"
        )

    data = json_object(raw, where, frozenset({"schema", "findings"}), bad)
    if data.get("schema") != SCHEMA_ID:
        raise bad(f"schema {data.get('schema')!r}, expected {SCHEMA_ID!r}", "schema")
    items = data.get("findings")
    if not isinstance(items, list):
        raise bad(f"wrong type ({type(items).__name__})", "findings")
    out: list[Entry] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != set(_KEYS):
            raise bad(f"an entry has the keys {', '.join(_KEYS)}", f"findings[{i}]")
        if not all(isinstance(item[k], str) for k in _KEYS):
            raise bad("every value is a string", f"findings[{i}]")
        entry = Entry(**item)
        if (entry.gate, entry.fingerprint) in seen:
            raise bad("duplicate fingerprint", f"findings[{i}].fingerprint")
        seen.add((entry.gate, entry.fingerprint))
        out.append(entry)
    return out


def render(entries: Iterable[Entry]) -> bytes:
    """One entry per line, sorted, so that removing one is a one-line diff."""
    ordered = sorted(entries, key=lambda e: (e.gate, e.rule, e.path, e.message, e.fingerprint))
    # ASCII escapes: a path that is not UTF-8 survives the round trip.
    lines = [json.dumps(e.to_json()) for e in ordered]
    body = ",\n".join(f"  {line}" for line in lines)
    head = f'{{\n "schema": "{SCHEMA_ID}",\n "findings": ['
    return (head + ("\n" + body + "\n ]" if lines else "]") + "\n}\n").encode("utf-8")
