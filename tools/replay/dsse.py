"""DSSE envelopes (https://github.com/secure-systems-lab/dsse, protocol v1.0).

The signature covers the pre-authentication encoding of the payload type and the payload,
never the payload alone: ``PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP
body``, lengths as ASCII decimal byte counts. The signature itself is made and checked by
``ssh-keygen -Y`` (:mod:`tools.replay.sshsig`); ``sig`` carries its armoured text, base64.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, NamedTuple

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding of ``payload_type`` and ``payload``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def envelope(
    payload: bytes, signature: str, keyid: str, payload_type: str = PAYLOAD_TYPE
) -> dict[str, Any]:
    """The envelope of ``payload`` with one signature (an armoured SSH signature)."""
    return {
        "payloadType": payload_type,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [
            {"keyid": keyid, "sig": base64.b64encode(signature.encode("ascii")).decode("ascii")}
        ],
    }


class Signature(NamedTuple):
    keyid: str
    armoured: str  # the SSH signature as ``ssh-keygen -Y sign`` wrote it


class Opened(NamedTuple):
    payload_type: str
    payload: bytes
    signatures: list[Signature]


def open_envelope(env: Any) -> Opened:
    """The parts of an envelope; ValueError naming what does not parse."""
    if not isinstance(env, dict):
        raise ValueError("the envelope is not a JSON object")
    kind, body, sigs = env.get("payloadType"), env.get("payload"), env.get("signatures")
    if not isinstance(kind, str) or not isinstance(body, str) or not isinstance(sigs, list):
        raise ValueError("the envelope lacks payloadType, payload or signatures")
    try:
        payload = base64.b64decode(body, validate=True)
        out = []
        for s in sigs:
            if not isinstance(s, dict) or not isinstance(s.get("sig"), str):
                raise ValueError("a signature entry without `sig`")
            text = base64.b64decode(s["sig"], validate=True).decode("ascii")
            out.append(Signature(str(s.get("keyid", "")), text))
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"not base64: {exc}") from None
    if not out:
        raise ValueError("the envelope carries no signature")
    return Opened(kind, payload, out)
