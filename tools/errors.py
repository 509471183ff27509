"""The error type that means "the command could not judge" (exit 2), the one that means "it
judged, and refuses" (exit 1), and how they name the key path at fault."""

from __future__ import annotations

from collections.abc import Iterable


class UsageError(Exception):
    """Bad arguments, bad config, unreadable or malformed input, not a repository.

    Raised anywhere inside; only the CLI edge turns it into one ``error:`` line and exit 2.
    ``where`` names the file (and key path) at fault, ``expected`` what was expected there.
    """

    def __init__(self, message: str, *, where: str | None = None, expected: str | None = None):
        self.message = message
        self.where = where
        self.expected = expected
        super().__init__(self.render())

    def render(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.expected:
            text += f" (expected {self.expected})"
        # One line, always: a message quoting user input must not break the contract.
        return " ".join(text.splitlines())


class Refused(Exception):
    """The command judged the request and refuses it (a duplicate, say): exit 1.

    Raised inside; the CLI edge says ``refused: <message>`` on stderr.
    """


def key_path(parts: Iterable[str | int]) -> str:
    """``['docs', 'rules', 0, 'name']`` -> ``docs.rules[0].name``: where in a file an error is."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += f".{p}" if out else str(p)
    return out or "(top level)"
