"""One commit message read once for both message gates (SPEC §12: "one parse per message
shared by both gates").

``trailers`` and ``style`` each need a message's lines and its trailer block (``style``
stops the body at the block). A :class:`Reading` makes each of those at most once, and a
run's context keeps one per commit (:func:`of`), so that ``tools preflight``, which runs both
gates over the same range, decodes and reads every message once. The block is the plain
shape's when the message has it (:mod:`tools.plain_message`, held to the full reading by a
property test), else git's full reading (:func:`tools.trailer_block.find_block`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tools.lines import split_lines
from tools.plain_message import plain_parts, plain_trailers
from tools.trailer_block import Block, find_block

if TYPE_CHECKING:
    from tools.context import Context
    from tools.git import Commit


# The modules whose code reads a commit's message for both message gates (cleanup, marker,
# trailer block, lines, config patterns): each gate's cache keys name their source, beside
# the gate's own module.
READING_MODULES = (
    "tools.commit_messages",
    "tools.trailer_block",
    __name__,
    "tools.plain_message",
    "tools.lines",
    "tools.bounded",
)


class Reading:
    """A message's text and what is read of it, each read on first use. Callers must not
    change what it returns (it is shared)."""

    __slots__ = ("text", "_lines", "_block", "_plain")

    def __init__(self, text: str) -> None:
        self.text = text
        self._lines: list[str] | None = None
        self._block: Block | None = None
        self._plain: dict[str, tuple[str, int] | None] = {}

    @property
    def lines(self) -> list[str]:
        """The message's lines (:func:`tools.lines.split_lines`)."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def block(self) -> Block:
        """git's trailer block, with GitHub's squash shape (:func:`find_block`)."""
        if self._block is None:
            self._block = find_block(self.text)
        return self._block

    def plain(self, marker: str) -> tuple[str, int] | None:
        """:func:`tools.plain_message.plain_parts` of the message with ``marker``."""
        if marker not in self._plain:
            self._plain[marker] = plain_parts(self.text, marker)
        return self._plain[marker]

    def trailer_block(self, marker: str | None) -> Block:
        """The block :meth:`block` finds, read from the plain shape when the message has it."""
        parts = self.plain(marker) if marker else None
        found = plain_trailers(*parts) if parts is not None else None
        return found if found is not None else self.block()


def of(ctx: Context, commit: Commit) -> Reading:
    """The run's one reading of ``commit``'s message."""
    found = ctx.readings.get(commit.sha)
    if found is None:
        found = ctx.readings[commit.sha] = Reading(commit.text)
    return found
