"""The in-toto Statement v1 of a reproduced record (SPEC §11)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://agent-protocol-gates.dev/evidence-replay/v1"
CI_VARIABLES = ("GITHUB_RUN_ID", "GITHUB_WORKFLOW_REF")


def build(
    record: dict[str, Any],
    observed: dict[str, Any],
    *,
    commit: str | None,
    befores: list[tuple[str, str]],
    conditions: dict[str, Any] | None,
) -> dict[str, Any]:
    """The statement: the record and each target's before content as subjects, the replay's
    observed fields, the tool, the runner's conditions and the CI run (when set) as predicate."""
    from tools import __version__

    subject: list[dict[str, Any]] = [
        {"name": f"ledger:{record['id']}", "digest": {"sha256": record["id"]}}
    ]
    for path, sha in befores:
        digest = {"sha256": sha, **({"gitCommit": commit} if commit else {})}
        subject.append({"name": path, "digest": digest})
    ci = {k: os.environ[k] for k in CI_VARIABLES if os.environ.get(k)}
    predicate: dict[str, Any] = {
        "record": record["id"],
        "kind": record["kind"],
        "commit": commit,
        "observed": observed,
        "tool": {"name": "tools", "version": __version__},
        "conditions": conditions,
    }
    if ci:
        predicate["ci"] = ci
    return {
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": PREDICATE_TYPE,
        "predicate": predicate,
    }


def encode(statement: dict[str, Any]) -> bytes:
    """The statement's bytes: the ledger's canonical JSON (what is signed is what is kept)."""
    from tools.ledger import canonical_json

    return canonical_json(statement)


def write(
    folder: Path, statement: dict[str, Any], record: dict[str, Any], *, root: Path | None = None
) -> list[Path]:
    """In ``folder``: ``<id>.statement.json`` (the whole statement), ``<id>.predicate.json``
    (the predicate alone, for ``actions/attest`` ``predicate-path``) and ``<id>.record.json``
    (the record's canonical JSON without its id: the bytes whose sha256 is the id, for
    ``subject-path`` and ``gh attestation verify``). ``root``: the repository, when the folder
    lies in it (never written through a link)."""
    from tools.fsio import write_atomic

    folder.mkdir(parents=True, exist_ok=True)
    rid = statement["predicate"]["record"]
    subject = {k: v for k, v in record.items() if k != "id"}
    parts = (
        ("statement", encode(statement) + b"\n"),
        ("predicate", encode(statement["predicate"]) + b"\n"),
        ("record", encode(subject)),
    )
    out = []
    for suffix, data in parts:
        path = folder / f"{rid}.{suffix}.json"
        write_atomic(path, data, root=root)
        out.append(path)
    return out


def names_record(statement: Any, rid: str) -> str | None:
    """Why ``statement`` is not a replay statement of record ``rid`` (None: it is)."""
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        return "the payload is not an in-toto Statement v1"
    if statement.get("predicateType") != PREDICATE_TYPE:
        return f"the predicate type is {statement.get('predicateType')!r}"
    subjects = statement.get("subject")
    want = {"name": f"ledger:{rid}", "digest": {"sha256": rid}}
    if not isinstance(subjects, list) or want not in subjects:
        return f"the statement's subject does not name record {rid[:12]}…"
    predicate = statement.get("predicate")
    if not isinstance(predicate, dict) or predicate.get("record") != rid:
        return f"the statement's predicate does not name record {rid[:12]}…"
    return None
