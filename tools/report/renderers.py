"""The one output path: which formats a kind of result can be written in, and the call that
writes it.

A :class:`~tools.report.model.Report` renders in :data:`FORMATS`; a command whose result is of
another type registers a renderer per format it has (:func:`register`). :func:`formats` tells a
command which ``--format`` values it can honour; :func:`render` refuses any other with
:class:`FormatUnavailable`, a :class:`~tools.errors.UsageError` (exit 2).
"""

from __future__ import annotations

import importlib
from typing import Any, TypeVar

from tools.errors import UsageError
from tools.report.model import Report
from tools.report.render_options import Renderer, RenderOptions, TextOptions

T = TypeVar("T")

# A report's formats, in the order the CLI offers them; one renderer module each.
_REPORT_MODULES = {
    "text": ("tools.report.text", "render_text"),
    "json": ("tools.report.json_report", "render_json"),
    "github": ("tools.report.github", "render_github"),
    "sarif": ("tools.report.sarif", "render_sarif"),
    "gitlab": ("tools.report.gitlab", "render_gitlab"),
}
FORMATS: tuple[str, ...] = tuple(_REPORT_MODULES)


class FormatUnavailable(UsageError):
    """``--format`` names a format the result cannot be written in: the command cannot do
    what was asked (exit 2), rather than print something else and pass."""


def _loaded_on_use(module: str, name: str) -> Renderer[Report]:
    # Every command imports this module at start-up; a renderer module (json and hashlib
    # behind the sarif one) is imported only when a report is written in its format.
    def renderer(report: Report, options: RenderOptions) -> str:
        write: Renderer[Report] = getattr(importlib.import_module(module), name)
        return write(report, options)

    return renderer


# result type -> format -> renderer. The values take results of their own key's type, which
# one mapping cannot express: ``register`` is typed, and ``render`` looks up by the type.
_RENDERERS: dict[type, dict[str, Renderer[Any]]] = {
    Report: {fmt: _loaded_on_use(*where) for fmt, where in _REPORT_MODULES.items()}
}


def register(kind: type[T], fmt: str, renderer: Renderer[T]) -> None:
    """Let results of type ``kind`` (and its subclasses) be written in ``fmt`` by
    ``renderer``, so that a command's typed result goes through :func:`render` as a report
    does. A later registration for the same pair replaces the earlier one."""
    _RENDERERS.setdefault(kind, {})[fmt] = renderer


def _table(kind: type) -> dict[str, Renderer[Any]]:
    for base in kind.__mro__:
        if base in _RENDERERS:
            return _RENDERERS[base]
    return {}


def renderer(kind: type, fmt: str) -> Renderer[Any] | None:
    """The renderer that writes results of type ``kind`` in ``fmt``, or None."""
    return _table(kind).get(fmt)


def formats(kind: type) -> tuple[str, ...]:
    """The formats a result of type ``kind`` can be written in (registration order; a
    :class:`Report`'s are :data:`FORMATS`); () when none was registered."""
    return tuple(_table(kind))


def render(
    result: object,
    fmt: str,
    *,
    summary: bool = True,
    color: bool = False,
    fail_on_skip: bool = False,
    text: TextOptions = TextOptions(),
) -> str:
    """``result`` (a :class:`Report` or a registered type) written in ``fmt``; the keywords
    are the fields of :class:`RenderOptions`, which the renderer receives. Raises
    :class:`FormatUnavailable` when ``fmt`` is not in ``formats(type(result))``."""
    table = _table(type(result))
    if fmt not in table:
        can = " or ".join(table) or "no format"
        raise FormatUnavailable(f"--format {fmt}: this command prints {can}")
    options = RenderOptions(summary=summary, color=color, fail_on_skip=fail_on_skip, text=text)
    return table[fmt](result, options)
