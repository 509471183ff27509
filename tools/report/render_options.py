"""What a renderer is told besides the result: the renderer API every format module shares.

A renderer is a function ``(result, RenderOptions) -> str`` that writes the whole output of a
command in one format; :mod:`tools.report.formats` finds it by result type and format.
"""

from collections.abc import Callable
from typing import NamedTuple, TypeVar

R = TypeVar("R")


class TextOptions(NamedTuple):
    """How much of the findings the text format prints (json, github, sarif: everything)."""

    max_findings: int = 50  # per gate; 0: all
    statistics: bool = False  # one line per rule instead of the findings


class RenderOptions(NamedTuple):
    """``summary``: the text format's closing verdict line; ``color``: SGR codes in text (the
    caller decides: a terminal, and no ``NO_COLOR``); ``fail_on_skip``: the exit code the
    sarif log records; ``text``: how many findings text prints."""

    summary: bool = True
    color: bool = False
    fail_on_skip: bool = False
    text: TextOptions = TextOptions()


# ``Renderer[Report]``: a function that writes a whole report in one format.
Renderer = Callable[[R, RenderOptions], str]
