"""What the last commits of a repository already do: the marker line and its placement, the
trailer keys every marked commit carries, and the shape of its ``Assisted-by`` values.

Each decision comes with its evidence (``514 of 642 commits glue the marker to their trailers
→ marker_placement: line``), printed by ``tools init --adopt``. The thresholds are ours and
documented in docs/adoption.md.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tools.commit_messages import is_own_paragraph, marker_lines
from tools.gates.trailers import assisted_by_ok
from tools.lines import split_lines
from tools.trailer_block import find_block

WINDOW = 200  # the last commits read (merges excepted)
# A marker is a line that is one all-capitals token (FOLLOWING_AGENTS_PROTOCOL).
_MARKER_SHAPE = re.compile(r"[A-Z][A-Z0-9_]{5,}")
MARKER_SHARE = 0.2  # carried by at least this share of the window's commits
REQUIRED_SHARE = 0.9  # a trailer key carried by this share of the marked commits is required
MAX_VALUES = 4  # a required key with more distinct values than this is not required
ASSISTED_SHARE = 0.5  # Assisted-by in this share of the marked commits: assisted_by: true
# ``ID:MODEL [TOOL]…`` with an ID that may hold spaces (``Claude Code:claude-opus-4-8 [X]``).
SPACED_ID_FORMAT = r"[^\s:\[\]](?:[^:\[\]]*[^\s:\[\]])?:[^\s\[\]]+(?:\s+\[[^\[\]\s][^\[\]]*\])+"
SKIP_KEYS = frozenset({"assisted-by", "co-authored-by", "signed-off-by"})


@dataclass
class Detected:
    """The trailer conventions found, as config values, with one evidence line per choice."""

    commits: int = 0
    marker: str | None = None
    placement: str = "paragraph"
    required: dict[str, list[str]] = field(default_factory=dict)
    assisted_by: bool = False
    assisted_by_format: str | None = None
    evidence: list[str] = field(default_factory=list)

    def trailers_config(self) -> dict[str, Any]:
        out: dict[str, Any] = {"marker": self.marker}
        if self.marker is not None:
            out["marker_placement"] = self.placement
        out["required"] = self.required
        out["assisted_by"] = self.assisted_by
        if self.assisted_by_format is not None:
            out["assisted_by_format"] = self.assisted_by_format
        return out


def _marker(messages: list[str], preferred: str | None) -> str | None:
    counts: Counter[str] = Counter()
    for text in messages:
        body = split_lines(text)[1:]
        counts.update({line.strip() for line in body if _MARKER_SHAPE.fullmatch(line.strip())})
    if not counts:
        return None
    if preferred and counts.get(preferred, 0) >= MARKER_SHARE * len(messages):
        return preferred
    best, n = max(counts.items(), key=lambda item: (item[1], item[0] == preferred, item[0]))
    return best if n >= max(2, MARKER_SHARE * len(messages)) else None


def _block(text: str, marker: str | None) -> tuple[Any, bool]:
    """The trailer block of a message (read without a glued marker line) and whether the
    marker was glued."""
    lines = split_lines(text)
    if marker is not None:
        found = [n for n in marker_lines(text, marker) if n > 1]
        if found and not is_own_paragraph(lines, found[0]):
            rest = lines[: found[0] - 1] + lines[found[0] :]
            return find_block("\n".join(rest) + "\n"), True
    return find_block(text), False


def detect(messages: list[str], preferred_marker: str | None = None) -> Detected:
    """The conventions of ``messages`` (newest first, merges excepted)."""
    out = Detected(commits=len(messages))
    n = len(messages)
    marker = _marker(messages, preferred_marker)
    out.marker = marker
    if marker is None:
        out.evidence.append(
            f"no line of one all-capitals token is carried by {MARKER_SHARE:.0%} of the last "
            f"{n} commits → marker: null (no marker rules)"
        )
        marked = messages
    else:
        marked = [m for m in messages if any(k > 1 for k in marker_lines(m, marker))]
        out.evidence.append(
            f"{len(marked)} of {n} commits carry the line {marker} → marker: {marker}"
        )
    blocks = [_block(m, marker) for m in marked]
    if marker is not None:
        glued = sum(1 for _, g in blocks if g)
        out.placement = "line" if glued else "paragraph"
        out.evidence.append(
            f"{glued} of {len(marked)} commits glue the marker to their trailers → "
            f"marker_placement: {out.placement}"
        )
    _required(out, [b for b, _ in blocks])
    _assisted(out, [b for b, _ in blocks])
    return out


def _required(out: Detected, blocks: list[Any]) -> None:
    keys: Counter[str] = Counter()
    spelled: dict[str, Counter[str]] = {}
    values: dict[str, Counter[str]] = {}
    for block in blocks:
        seen = set()
        for t in block.trailers:
            low = t.key.lower()
            spelled.setdefault(low, Counter())[t.key] += 1
            values.setdefault(low, Counter())[t.value] += 1
            seen.add(low)
        keys.update(seen)
    total = len(blocks)
    for low, count in sorted(keys.items(), key=lambda item: (-item[1], item[0])):
        if low in SKIP_KEYS or total == 0 or count < REQUIRED_SHARE * total:
            continue
        key = spelled[low].most_common(1)[0][0]
        distinct = [v for v, _ in values[low].most_common()]  # most used first
        if len(distinct) > MAX_VALUES:
            out.evidence.append(
                f"{count} of {total} marked commits carry {key}: with {len(distinct)} distinct "
                f"values → not required (a required key lists its values)"
            )
            continue
        out.required[key] = distinct
        out.evidence.append(
            f"{count} of {total} marked commits carry {key}: ({', '.join(distinct)}) → required"
        )
    if not out.required:
        out.evidence.append(
            f"no trailer key is carried by {REQUIRED_SHARE:.0%} of {total} marked commits → "
            "required: {}"
        )


def _assisted(out: Detected, blocks: list[Any]) -> None:
    values = [t.value for b in blocks for t in b.get("Assisted-by")]
    carrying = sum(1 for b in blocks if b.get("Assisted-by"))
    total = len(blocks)
    out.assisted_by = total > 0 and carrying >= ASSISTED_SHARE * total
    out.evidence.append(
        f"{carrying} of {total} marked commits carry Assisted-by → assisted_by: "
        f"{str(out.assisted_by).lower()}"
    )
    if not out.assisted_by or not values:
        return
    odd = [v for v in values if not assisted_by_ok(v)]
    if not odd:
        out.evidence.append(
            f"all {len(values)} Assisted-by values are ID:MODEL [TOOL] → assisted_by_format: null"
        )
        return
    spaced = re.compile(SPACED_ID_FORMAT)
    if all(spaced.fullmatch(v) for v in values):
        out.assisted_by_format = SPACED_ID_FORMAT
        out.evidence.append(
            f"{len(odd)} of {len(values)} Assisted-by values are not ID:MODEL [TOOL] "
            f"(e.g. `{odd[0]}`) but all are ID:MODEL [TOOL] with spaces in the ID → "
            "assisted_by_format: that shape"
        )
        return
    out.evidence.append(
        f"{len(odd)} of {len(values)} Assisted-by values fit no shape tools knows (e.g. "
        f"`{odd[0]}`) → assisted_by_format: null; new commits use ID:MODEL [TOOL]"
    )
