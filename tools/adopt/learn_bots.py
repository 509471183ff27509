"""Bots whose messages the protocol does not govern (SPEC §9.3): for an author that names
itself a bot (``[bot]`` in its name or email, as forge apps do: ``dependabot[bot]``), each
trailer rule that at least ``BROKEN_SHARE`` of its commits in the window break, judged with
the adopted trailers config, is set aside for that author (a ``trailers.exceptions`` entry by
``author``): its findings stay visible as debt warnings, never errors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from tools import config as config_mod
from tools.config_model import TrailersConfig, protocol_config
from tools.gates.trailers import judge

BOT_MIN = 3  # fewer commits than this decide nothing about an author
BROKEN_SHARE = 0.5


class BotsLearned(NamedTuple):
    """The ``trailers.exceptions`` entries, and one evidence line per bot."""

    exceptions: list[dict[str, str]]
    evidence: list[str]


def is_bot(name: str, email: str) -> bool:
    """Whether an author names itself a bot, as forge apps do."""
    return "[bot]" in name.lower() or "[bot]" in email.lower()


def _fired(text: str, cfg: TrailersConfig) -> set[str]:
    fired: set[str] = set()
    judge(text, cfg, lambda rule, _msg, _line: fired.add(rule))
    return fired


def learn_bots(
    authored: Iterable[tuple[str, str, str]], trailers: Mapping[str, Any]
) -> BotsLearned:
    """From (name, email, message) of the window's commits and the adopted ``trailers``
    section, the rules each bot breaks in bulk."""
    cfg = protocol_config(config_mod.merge(config_mod.defaults(), {"trailers": dict(trailers)}))
    messages: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for name, email, text in authored:
        if is_bot(name, email):
            messages.setdefault(email.lower(), []).append(text)
            names.setdefault(email.lower(), name)
    out = BotsLearned([], [])
    for email, texts in sorted(messages.items()):
        who = f"{names[email]} <{email}>"
        if len(texts) < BOT_MIN:
            out.evidence.append(
                f"{who}: {len(texts)} commit(s) (fewer than {BOT_MIN} decide nothing) → judged "
                "as every author"
            )
            continue
        broken: Counter[str] = Counter()
        for text in texts:
            broken.update(_fired(text, cfg.trailers))
        kept = sorted(r for r, n in broken.items() if n >= BROKEN_SHARE * len(texts))
        for rule in kept:
            reason = f"a bot: {broken[rule]} of its {len(texts)} commits broke it at adoption"
            out.exceptions.append({"author": email, "rule": rule, "reason": reason})
        listed = ", ".join(f"{r} {broken[r]}" for r in kept) or "none"
        out.evidence.append(
            f"{who}: a bot, {len(texts)} commits; rules most of them break: {listed} → "
            f"{len(kept)} trailers.exceptions entr{'y' if len(kept) == 1 else 'ies'} by author"
        )
    return out
