"""``attestation`` ledger records: a DSSE envelope over a reproduced record's statement,
signed with an SSH key (``tools evidence sign``), and their verification against an
``allowed_signers`` file (``tools ledger verify --require-attested``), offline."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from tools.replay import dsse, sshsig
from tools.replay.attested import ATTESTATION_INVALID, EVIDENCE_UNATTESTED, NAME
from tools.report import GateResult

KIND = "attestation"


def make(statement: dict[str, Any], key: Path, keyid: str) -> dict[str, Any]:
    """The ``attestation`` record of ``statement``, signed by the key file ``key``."""
    from tools import ledger
    from tools.replay.statement import PREDICATE_TYPE, encode

    payload = encode(statement)
    signature = sshsig.sign(key, dsse.pae(dsse.PAYLOAD_TYPE, payload))
    predicate = statement["predicate"]
    return ledger.make_record(
        KIND,
        {
            "attests": predicate["record"],
            "attests_kind": predicate["kind"],
            "predicate_type": PREDICATE_TYPE,
            "keyid": keyid,
            "envelope": dsse.envelope(payload, signature, keyid),
        },
    )


class Checked(NamedTuple):
    """An attestation's verdict: the principal that signed it, or why it is invalid."""

    principal: str | None
    problem: str | None


def check(att: dict[str, Any], allowed: Path, revoked: Path | None) -> Checked:
    """Whether ``att`` is a valid attestation of the record it names, by a principal of
    ``allowed`` whose key ``revoked`` does not list."""
    from tools.replay.statement import names_record

    rid = att.get("attests")
    if not isinstance(rid, str):
        return Checked(None, "it names no record")
    try:
        opened = dsse.open_envelope(att.get("envelope"))
        statement = json.loads(opened.payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return Checked(None, f"the payload does not parse: {exc}")
    if opened.payload_type != dsse.PAYLOAD_TYPE:
        return Checked(None, f"the payload type is {opened.payload_type!r}")
    problem = names_record(statement, rid)
    if problem is not None:
        return Checked(None, problem)
    signed = dsse.pae(opened.payload_type, opened.payload)
    problems = []
    for sig in opened.signatures:
        got = sshsig.check(allowed, sig.armoured, signed, revoked=revoked)
        if got.principal is not None:
            return Checked(got.principal, None)
        problems.append(str(got.problem))
    return Checked(None, "the signature does not verify: " + "; ".join(problems))


def of(records: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The attestation records, by the id of the record each names."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r.get("kind") == KIND and isinstance(r.get("attests"), str):
            out.setdefault(r["attests"], []).append(r)
    return out


def vouched(
    records: list[dict[str, Any]], allowed: Path, revoked: Path | None
) -> tuple[dict[str, str], list[tuple[dict[str, Any], str]]]:
    """(record id -> the principal of its first valid attestation, [(invalid attestation,
    why)]) over ``records``."""
    ids = {r["id"] for r in records}
    good: dict[str, str] = {}
    bad: list[tuple[dict[str, Any], str]] = []
    for rid, atts in of(records).items():
        for att in atts:
            got = check(att, allowed, revoked)
            if got.problem is None and rid not in ids:
                got = Checked(None, f"it names record {rid[:12]}…, which the ledger lacks")
            if got.principal is not None:
                good.setdefault(rid, got.principal)
            else:
                bad.append((att, str(got.problem)))
    return good, bad


def judge(
    records: list[dict[str, Any]],
    kinds: list[str],
    allowed: Path,
    revoked: Path | None,
    shown: str,
    where: tuple[str, dict[str, int]] | None = None,
) -> GateResult:
    """The ``attestations`` gate: every record of ``kinds`` vouched for by an allowed
    principal (``shown``: how the allowed-signers file is named in messages; ``where``: the
    ledger's path and each record's line, for the findings' places)."""
    result = GateResult(NAME)
    path, lines = where if where is not None else (None, {})

    def place(rid: str) -> dict[str, Any]:
        line = lines.get(rid)
        return {"path": path, "line": line} if line else {}

    good, bad = vouched(records, allowed, revoked)
    for att, why in bad:
        result.add(
            ATTESTATION_INVALID.id,
            f"attestation {att['id'][:12]}… of record {str(att.get('attests'))[:12]}…: {why}",
            **place(att["id"]),
        )
    required = [r for r in records if r.get("kind") in kinds]
    for r in required:
        if r["id"] not in good:
            result.add(
                EVIDENCE_UNATTESTED.id,
                f"record {r['id'][:12]}… ({r['kind']}) has no valid attestation by a "
                f"principal of {shown}",
                **place(r["id"]),
            )
    result.stats.update(
        {"required": len(required), "attested": sum(r["id"] in good for r in required)}
    )
    return result
