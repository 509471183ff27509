"""What the last commits show of the commit style: how long subjects run, whether commits
have a body, and whether a bare marker ends a message (SPEC §9.3).

Each decision is a config value with one evidence line; a value equal to the default is not
written (the file then says only what differs). The thresholds are ours and documented in
docs/adoption.md.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from tools.commit_messages import marker_lines
from tools.config_model import StyleConfig
from tools.gates.style import BODY_MISSING, judge, subject_of
from tools.lines import split_lines
from tools.trailer_block import is_blank

SUBJECT_SHARE = 0.95  # subject_max covers this share of the history's subjects
BODY_SHARE = 0.9  # body-missing is judged only if this share of the commits have a body
MARKER_LAST_SHARE = 0.1  # a bare marker ending this share of marked messages is the habit
MARKER_LAST_MIN = 2  # …and at least this many of them (one stray commit decides nothing)

# Only the body rule is asked of style.judge: no subject limit, no pattern.
_BODY_ONLY = StyleConfig(
    enabled=True,
    subject_max=1 << 30,
    subject_length="warning",
    subject_pattern=None,
    require_body=True,
)


class StyleLearned(NamedTuple):
    """The style keys that differ from the defaults, the rule severities to set, and one
    evidence line per decision."""

    style: dict[str, object]
    rules: dict[str, str]
    evidence: list[str]


def _has_body(text: str, marker: str | None) -> bool:
    missing: list[str] = []
    judge(text, _BODY_ONLY, marker, lambda rule, _msg, _line: missing.append(rule))
    return BODY_MISSING.id not in missing


def _ends_with_marker(text: str, marker: str) -> bool:
    lines = split_lines(text)
    while lines and is_blank(lines[-1]):
        lines.pop()
    return bool(lines) and len(lines) in marker_lines(text, marker)


def _subject_max(messages: list[str], default: int, out: StyleLearned) -> None:
    lengths = sorted(len(found[0]) for m in messages if (found := subject_of(split_lines(m))))
    if not lengths:
        out.evidence.append("no subjects to measure → subject_max: the default")
        return
    covered = lengths[max(0, math.ceil(SUBJECT_SHARE * len(lengths)) - 1)]
    within = sum(1 for n in lengths if n <= default)
    if covered <= default:
        out.evidence.append(
            f"{within} of {len(lengths)} subjects are at most {default} characters (the "
            f"default covers {SUBJECT_SHARE:.0%}) → subject_max: {default}"
        )
        return
    fits = sum(1 for n in lengths if n <= covered)
    out.style["subject_max"] = covered
    out.evidence.append(
        f"{fits} of {len(lengths)} subjects are at most {covered} characters ({within} at "
        f"most {default}) → subject_max: {covered}"
    )


def _require_body(messages: list[str], marker: str | None, out: StyleLearned) -> None:
    with_body = sum(1 for m in messages if _has_body(m, marker))
    total = len(messages)
    keep = total == 0 or with_body >= BODY_SHARE * total
    if not keep:
        out.style["require_body"] = False
    out.evidence.append(
        f"{with_body} of {total} commits have a body (body-missing needs "
        f"{BODY_SHARE:.0%}) → require_body: {str(keep).lower()}"
    )


def _marker_last(marked: list[str], marker: str, out: StyleLearned) -> None:
    last = sum(1 for m in marked if _ends_with_marker(m, marker))
    allowed = last >= MARKER_LAST_MIN and last >= MARKER_LAST_SHARE * len(marked)
    if allowed:
        out.rules["marker-last"] = "off"
    verdict = "rules: marker-last: off" if allowed else "marker-last stays an error"
    out.evidence.append(
        f"{last} of {len(marked)} marked commits end with the bare {marker} line → {verdict}"
    )


def learn_style(messages: list[str], marker: str | None, default_max: int) -> StyleLearned:
    """The style the history of ``messages`` (newest first, merges excepted) follows."""
    out = StyleLearned({}, {}, [])
    _subject_max(messages, default_max, out)
    _require_body(messages, marker, out)
    if marker is not None:
        marked = [m for m in messages if any(n > 1 for n in marker_lines(m, marker))]
        _marker_last(marked, marker, out)
    return out
