"""style: commit style (SPEC §4.3).

Judges the same messages as the trailers gate (:mod:`tools.commit_messages`: range,
``--commit``, message file as git will store it). The subject
is git's: the first paragraph, its lines joined by a space (what ``git log --format=%s``
shows). Merge commits -- two or more parents -- are skipped; the subject text never decides.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from tools import commit_messages, verdict_cache
from tools.bounded import config_pattern
from tools.commit_messages import (
    Debt,
    Emit,
    Subject,
    emitter,
    judged,
    marker_lines,
)
from tools.config_model import StyleConfig
from tools.gates.commit_range import RANGE_EMPTY
from tools.message_reading import READING_MODULES, Reading
from tools.report import GateResult, Rule, Severity, declare
from tools.trailer_block import SPACE, is_blank

if TYPE_CHECKING:
    from tools.context import Context

NAME = "style"
SUBJECT_PERIOD = Rule(
    "subject-period",
    "error",
    "the subject ends with a period",
    example="the subject ends with a period: 'Tidy the header.'",
    fix="Drop the final period of the subject.",
)

BODY_MISSING = Rule(
    "body-missing",
    "error",
    "nothing authored between the subject and the marker/trailers",
    example=(
        "no body: nothing is written between the subject and the FOLLOWING_AGENTS_PROTOCOL marker"
    ),
    fix=(
        "Write a body between the subject and the marker or trailers: what changed "
        "and why. A repository that does not want bodies sets `style.require_body: "
        "false`."
    ),
)

SUBJECT_LENGTH = Rule(
    "subject-length",
    "warning",
    "the subject is longer than style.subject_max",
    example="the subject is 73 characters, over style.subject_max (72)",
    fix=(
        "Shorten the subject to `style.subject_max` characters and move the detail into the body."
    ),
)

SUBJECT_PATTERN = Rule(
    "subject-pattern",
    "error",
    "the subject does not match style.subject_pattern",
    example=(
        "the subject 'Add the widget' does not match '^(feat|fix|docs)(\\\\([a-z-]+\\\\))?: '"
    ),
    fix=(
        "Rewrite the subject so that `style.subject_pattern` matches it (here: "
        "`feat: add the widget`)."
    ),
)

RULES = declare(NAME, [SUBJECT_PERIOD, BODY_MISSING, SUBJECT_LENGTH, SUBJECT_PATTERN, RANGE_EMPTY])


def subject_of(lines: list[str]) -> tuple[str, int] | None:
    """git's subject (first paragraph, lines joined by a space) and its first line."""
    start = 0
    while start < len(lines) and is_blank(lines[start]):
        start += 1
    if start == len(lines):
        return None
    end = start + 1
    while end < len(lines) and not is_blank(lines[end]):
        end += 1
    return " ".join(line.strip(SPACE) for line in lines[start:end]), start + 1


def judge(
    text: str,
    cfg: StyleConfig,
    marker: str | None,
    emit: Emit,
    *,
    reading: Reading | None = None,
) -> None:
    """File every style finding of one message through ``emit``; ``reading``: the run's
    shared reading of ``text`` (:mod:`tools.message_reading`), else one is made."""
    if reading is None:
        reading = Reading(text)
    lines = reading.lines
    found = subject_of(lines)
    if found is None:
        if cfg.require_body:
            emit(BODY_MISSING.id, "the message is empty: no subject and no body", None)
        return
    subject, line = found
    if subject.endswith("."):
        emit(SUBJECT_PERIOD.id, f"the subject ends with a period: {subject!r}", line)
    if len(subject) > cfg.subject_max:
        emit(
            SUBJECT_LENGTH.id,
            f"the subject is {len(subject)} characters, over style.subject_max ({cfg.subject_max})",
            line,
        )
    pattern = cfg.subject_pattern
    if pattern is not None and not config_pattern(pattern, "style.subject_pattern").search(subject):
        emit(SUBJECT_PATTERN.id, f"the subject {subject!r} does not match {pattern!r}", line)
    if cfg.require_body:
        _body(reading, line, marker, emit)


def _body(reading: Reading, subject_line: int, marker: str | None, emit: Emit) -> None:
    text, lines = reading.text, reading.lines
    # The subject paragraph ends at the first blank line after it.
    n = subject_line
    while n <= len(lines) and not is_blank(lines[n - 1]):
        n += 1
    stop, upto = len(lines) + 1, "the end of the message"
    block = reading.trailer_block(marker)
    if block.start is not None:
        stop, upto = block.start, "the trailers"
    if marker is not None:
        marks = marker_lines(text, marker)
        if marks and marks[0] < stop:
            stop, upto = marks[0], f"the {marker} marker"
    if any(not is_blank(lines[i - 1]) for i in range(n, stop)):
        return
    emit(
        BODY_MISSING.id, f"no body: nothing is written between the subject and {upto}", subject_line
    )


# What the verdict cache leaves out of its key: applied to a verdict after it is computed (the
# subject-length severity) or deciding whether the gate runs. Every other key is in the key.
_APPLIED_AFTER = frozenset({"enabled", "subject_length"})
# The modules whose code computes a verdict: their source is in the key.
JUDGING_MODULES = (__name__, *READING_MODULES)


def open_cache(ctx: Context, subjects: list[Subject]) -> verdict_cache.VerdictCache | None:
    """The gate's verdict cache (SPEC §12), keyed by what :func:`judge` reads of the config
    (the style section and the trailers marker); None when nothing judged is a commit, or the
    cache is off."""
    if all(s.commit is None for s in subjects):
        return None
    section = ctx.config_data.get("style", {})
    inputs = {
        "style": {k: v for k, v in section.items() if k not in _APPLIED_AFTER},
        "marker": ctx.config.trailers.marker,
    }
    return verdict_cache.open_for(ctx, NAME, inputs, JUDGING_MODULES, (r.id for r in RULES))


def _judge_all(ctx: Context, result: GateResult, subjects: list[Subject], debt: Debt) -> None:
    cfg = ctx.config.style
    marker = ctx.config.trailers.marker
    cache = open_cache(ctx, subjects)

    def severity(rule: str) -> Severity | None:
        # style.subject_length is the rule's default; `rules:` overrides it (SPEC §3.3), so a
        # rule named there is filed at its declared severity for `rules:` to set.
        if rule != SUBJECT_LENGTH.id or rule in ctx.config.rules:
            return None
        return cfg.subject_length

    for subject in judged(result, subjects, ctx.config.trailers.fixups):
        verdict_cache.through(
            cache,
            subject.sha,
            functools.partial(judge, subject.text, cfg, marker, reading=subject.reading),
            emitter(result, subject, debt, severity),
        )
    if cache is not None:
        cache.save()


prefetch, run = commit_messages.gate(NAME, lambda config: config.style.enabled, _judge_all)
