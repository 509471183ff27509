"""The identity of a finding: the one scheme by which every output recognises a finding again on
a later run, after edits moved it to another line (SPEC §3.3, §13).

An identity is a key, the NUL-joined gate, rule, path and anchor (what stays the same when the
finding moves), with a repeat count telling identical findings apart by their order. The
findings baseline and the GitLab Code Quality report anchor on the whitespace-normalised text
of the lines the finding names (``findings_baseline.fingerprints`` reads them); SARIF, which
reads no file, anchors on the finding's commit and message. Both outputs come from
:func:`finding_identity`, so two identities of one finding never disagree on what "the same
finding" means.
"""

import hashlib
from typing import NamedTuple


def _digest(text: str) -> str:
    # 128 bits of SHA-256: short enough to read, far from any collision in one report.
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


class FindingIdentity(NamedTuple):
    """A finding's key and how many findings with the same key came before it (from 0)."""

    key: str
    repeat: int

    @property
    def fingerprint(self) -> str:
        """32 hex digits over the key and the repeat: the findings baseline's and GitLab's
        ``fingerprint``."""
        return _digest(f"{self.key}\0{self.repeat}")

    @property
    def numbered(self) -> str:
        """``DIGEST:N``, the key's digest and the repeat from 1: the form code scanning expects
        of a SARIF partial fingerprint."""
        return f"{_digest(self.key)}:{self.repeat + 1}"


def finding_identity(
    seen: dict[str, int], gate: str, rule: str, path: str, *anchor: str
) -> FindingIdentity:
    """The identity of the next finding of ``gate``/``rule`` on ``path`` anchored by ``anchor``
    (the texts that survive a line move; none for a finding that names no line).

    ``seen`` counts the keys handed out so far in one run: pass the same dict for every finding
    of that run, in report order, so that identical findings get repeats 0, 1, 2…"""
    key = "\0".join((gate, rule, path, *anchor))
    repeat = seen.get(key, 0)
    seen[key] = repeat + 1
    return FindingIdentity(key, repeat)
