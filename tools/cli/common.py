"""What every command shares: global options accepted before and after the subcommand,
the ``error:`` / exit-2 edge, running gates into one rendered report, and writing a
command's typed result through the same output path (:func:`show`)."""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, TypeVar, cast

import typer
from typer.core import TyperGroup

from tools.cli import say_interrupted
from tools.errors import UsageError
from tools.exits import EXIT_FAIL, EXIT_INTERNAL, EXIT_USAGE, environment_error, internal_error
from tools.options import CONFIG_FROM
from tools.report import FORMATS, Report, TextOptions, render
from tools.report import formats as formats_of
from tools.terminal import color_wanted, safe_text

if TYPE_CHECKING:
    from tools.options import Options

F = TypeVar("F", bound=Callable[..., Any])


# What ``--format`` a command produces, its default first: a gate report in every renderer,
# or a command's own output (text, text and json, or json alone).
REPORT: tuple[str, ...] = FORMATS
TEXT: tuple[str, ...] = ("text",)
TEXT_JSON: tuple[str, ...] = ("text", "json")
JSON: tuple[str, ...] = ("json",)


class ResultType(NamedTuple):
    """The type of a command's result, named by module and class so that its module (the
    type and its renderers) loads when the command runs, not at start-up. The command's
    ``--format`` values are the formats registered for that type, so the two cannot drift."""

    module: str
    name: str

    def load(self) -> type:
        kind: type = getattr(importlib.import_module(self.module), self.name)
        return kind

    def formats(self) -> tuple[str, ...]:
        return formats_of(self.load())


RepoOpt = Annotated[
    Path | None,
    typer.Option("--repo", help="Repository to judge (default: the one containing the cwd)."),
]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="Config file (default: .agents/protocol.yaml).")
]
ConfigFromOpt = Annotated[
    str | None,
    typer.Option(
        "--config-from",
        envvar="TOOLS_CONFIG_FROM",
        metavar="base|head",
        help="Read the config and baselines from the merge base's tree (base) or the judged "
        "tree (head, the default); env TOOLS_CONFIG_FROM.",
    ),
]
RequireProtocolOpt = Annotated[
    bool,
    typer.Option(
        "--require-protocol",
        help="A tree without .agents/protocol.yaml fails (exit 1) instead of being judged by "
        "the defaults (for CI).",
    ),
]
NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Neither read nor write the range gates' verdict cache (.git/tools/cache); env "
        "TOOLS_NO_CACHE=1.",
    ),
]
# The functional Enum API with computed members, which mypy cannot follow.
Fmt = enum.Enum("Fmt", {f: f for f in FORMATS}, type=str)  # type: ignore[misc]
FormatOpt = Annotated[
    Fmt | None, typer.Option("--format", case_sensitive=False, help="Output format.")
]


def emit(text: str, *, err: bool = False) -> None:
    """Write text; bytes that are not UTF-8 (kept as surrogates) print escaped, never crash."""
    typer.echo(safe_text(text), nl=False, err=err)


def append_ledger(
    root: Path, full: Path, rel: str, records: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Append ``records`` to the ledger ``full`` (shown as ``rel``,
    :func:`tools.ledger.store.append_to_ledger`) and say its notices on stderr; the records
    written."""
    from tools.ledger.store import append_to_ledger

    written = append_to_ledger(root, full, rel, records)
    for notice in written.notices:
        emit(f"notice: {notice}\n", err=True)
    return written


def fail_usage(message: str) -> typer.Exit:
    emit(f"error: {' '.join(message.splitlines())}\n", err=True)
    return typer.Exit(EXIT_USAGE)


class _Interrupted(Exception):
    """SIGINT reached the command: carried past click, which would print a blank line."""


class ToolsGroup(TyperGroup):
    """Turns usage errors into one ``error:`` line and exit 2, and a bug of ours (any other
    exception) into one ``error: internal error:`` line and exit 3."""

    def invoke(self, ctx: Any) -> Any:
        from tools import file_reads

        # Each command starts from the default read limits; the config it loads sets its own.
        file_reads.configure(file_reads.DEFAULT_LIMITS)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        parse = functools.partial(
            super().main, args, prog_name, complete_var, False, windows_expand_args, **extra
        )
        if not standalone_mode:
            return parse()
        try:
            rv = parse()
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except typer.Abort:
            emit("error: aborted\n", err=True)
            sys.exit(130)
        except (_Interrupted, KeyboardInterrupt):
            say_interrupted()
            sys.exit(130)
        except UsageError as exc:
            emit(f"error: {exc.render()}\n", err=True)
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            message = environment_error(exc)
            if message is None:
                _internal(exc)
            emit(f"error: {message}\n", err=True)
            sys.exit(EXIT_USAGE)
        except typer.TyperException as exc:  # the parser's usage errors
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
                emit(ctx.get_help() + "\n")
                sys.exit(EXIT_USAGE)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            emit(f"error: {' '.join(exc.format_message().splitlines())}{hint}\n", err=True)
            sys.exit(EXIT_USAGE)
        except Exception as exc:  # a bug of ours: still one line, the trace only on request
            _internal(exc)
        sys.exit(rv if isinstance(rv, int) else 0)


def _internal(exc: BaseException) -> None:
    emit(internal_error(exc), err=True)
    sys.exit(EXIT_INTERNAL)


def new_app(help: str) -> typer.Typer:
    return typer.Typer(
        cls=ToolsGroup,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


def _param(name: str, annotation: Any, default: Any = None) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )


_RANGE_PARAMS = {
    "base": Annotated[
        str | None, typer.Option("--base", help="Base ref (default: config `base`).")
    ],
    "head": Annotated[str | None, typer.Option("--head", help="Head ref (default: HEAD).")],
    "require_commits": Annotated[
        bool, typer.Option("--require-commits", help="An empty range fails instead of passing.")
    ],
}
_COMMIT_PARAM = Annotated[str | None, typer.Option("--commit", help="Judge this one commit.")]
_STAGED_PARAM = Annotated[
    bool,
    typer.Option("--staged", help="Judge the index against HEAD (the commit about to be made)."),
]
_FAIL_ON_SKIP = Annotated[bool, typer.Option("--fail-on-skip", help="A skip exits 1 instead of 0.")]
_MAX_FINDINGS = Annotated[
    int,
    typer.Option(
        "--max-findings", min=0, help="Text: at most N findings per gate (0: all; default 50)."
    ),
]
_STATISTICS = Annotated[
    bool, typer.Option("--statistics", help="Text: one line per rule id with its count.")
]


def _injected(*, check: bool, staged: bool, range_: bool, commit: bool) -> list[inspect.Parameter]:
    """The options ``command`` adds to a command body's own: the global ones, and as asked
    the check, range, commit and staged options."""
    extra = [
        _param("repo", RepoOpt),
        _param("config", ConfigOpt),
        _param("config_from", ConfigFromOpt),
        _param("fmt", FormatOpt),
        _param("require_protocol", RequireProtocolOpt, False),
        _param("no_cache", NoCacheOpt, False),
    ]
    if check:
        extra.append(_param("fail_on_skip", _FAIL_ON_SKIP, False))
        extra.append(_param("max_findings", _MAX_FINDINGS, 50))
        extra.append(_param("statistics", _STATISTICS, False))
    if range_:
        extra += [
            _param("base", _RANGE_PARAMS["base"]),
            _param("head", _RANGE_PARAMS["head"]),
            _param("require_commits", _RANGE_PARAMS["require_commits"], False),
        ]
    if commit:
        extra.append(_param("commit", _COMMIT_PARAM))
    if staged:
        extra.append(_param("staged", _STAGED_PARAM, False))
    return extra


def _options(given: dict[str, Any], glob: dict[str, Any], *, range_: bool, fmt: str) -> Options:
    """The command's options: its own values over those given before the subcommand."""
    from tools.options import Options  # loaded when a command runs, not for --version

    return Options(
        repo=given.get("repo") or glob.get("repo"),
        config=given.get("config") or glob.get("config"),
        config_from=given.get("config_from") or glob.get("config_from") or "head",
        fmt=fmt,
        fail_on_skip=bool(given.get("fail_on_skip")),
        require_protocol=bool(given.get("require_protocol") or glob.get("require_protocol")),
        base=given.get("base"),
        head=given.get("head"),
        commit=given.get("commit"),
        staged=bool(given.get("staged")),
        require_commits=bool(given.get("require_commits")),
        max_findings=int(given.get("max_findings", 50)),
        statistics=bool(given.get("statistics")),
        range_run=range_ and not given.get("staged") and not given.get("commit"),
        no_cache=bool(given.get("no_cache") or glob.get("no_cache")),
    )


def _format(chosen: Any, formats: tuple[str, ...], where: str) -> str:
    """The format asked for, or the command's own default (its first); one it cannot produce
    is a usage error naming the flag and what the command prints."""
    if not chosen:
        return formats[0]
    # A Fmt member from typer (given here or before the subcommand), or a plain name.
    fmt = str(chosen.value) if isinstance(chosen, enum.Enum) else str(chosen)
    if fmt not in formats:
        raise UsageError(
            f"--format {fmt}: `{where}` prints " + " or ".join(formats) + ", not a gate report"
        )
    return fmt


def command(
    *,
    formats: tuple[str, ...] | ResultType,
    check: bool = False,
    staged: bool = False,
    range_: bool = False,
    commit: bool = False,
) -> Callable[[F], F]:
    """Wrap a command body ``fn(opts: Options, **own_params)`` for typer.

    Injects the global options (``--repo``, ``--config``, ``--format``) and, as asked,
    ``--fail-on-skip``, ``--staged``, ``--base/--head/--require-commits`` and ``--commit``;
    merges them with the values given before the subcommand; maps UsageError to exit 2.
    ``formats``: the ``--format`` values the command produces, its default first (a gate
    report: ``REPORT``), or the :class:`ResultType` it writes with :func:`show` (its
    registered formats); any other is exit 2 before the body runs.
    """

    def deco(fn: F) -> F:
        # eval_str: command modules use postponed annotations; resolve them in fn's module.
        sig = inspect.signature(fn, eval_str=True)
        own = [p for p in sig.parameters.values() if p.name != "opts"]
        extra = _injected(check=check, staged=staged, range_=range_, commit=commit)
        injected = {p.name for p in extra}
        extra.append(_param("_ctx", typer.Context))

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            ctx = kwargs.pop("_ctx")
            given = {k: kwargs.pop(k) for k in list(kwargs) if k in injected}
            root = ctx.find_root()
            glob = root.obj if isinstance(root.obj, dict) else {}
            try:
                can = formats.formats() if isinstance(formats, ResultType) else formats
                fmt = _format(given.get("fmt") or glob.get("fmt"), can, ctx.command_path)
                opts = _options(given, glob, range_=range_, fmt=fmt)
                if opts.config_from not in CONFIG_FROM:
                    raise UsageError(
                        f"--config-from {opts.config_from!r} (or TOOLS_CONFIG_FROM)",
                        expected="base or head",
                    )
                if opts.require_protocol:
                    _require_protocol(opts)
                return fn(opts, **kwargs)
            except UsageError as exc:
                raise fail_usage(exc.render()) from None

        # typer reads the signature inspect reports; a function object takes the attribute.
        wrapper.__signature__ = sig.replace(parameters=own + extra)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in own + extra}
        del wrapper.__wrapped__  # typer must read the new signature, not fn's
        wrapper.declared_formats = formats  # type: ignore[attr-defined]  # read by the tests
        return cast(F, wrapper)

    return deco


def _require_protocol(opts: Options) -> None:
    """``--require-protocol``: exit 1, in one line, on a tree without a protocol file."""
    from tools.config import DEFAULT_PATH
    from tools.context import has_protocol

    if not has_protocol(opts):
        emit(
            f"tools: no protocol in this tree ({DEFAULT_PATH}): --require-protocol fails\n",
            err=True,
        )
        raise typer.Exit(EXIT_FAIL)


def finish(report: Report, opts: Options, *, summary: bool = True) -> None:
    """Render ``report`` on stdout and exit with the contract's code."""
    color = opts.fmt == "text" and color_wanted()
    text = TextOptions(max_findings=opts.max_findings, statistics=opts.statistics)
    emit(
        render(
            report,
            opts.fmt,
            summary=summary,
            color=color,
            fail_on_skip=opts.fail_on_skip,
            text=text,
        )
    )
    raise typer.Exit(report.exit_code(fail_on_skip=opts.fail_on_skip))


def show(result: object, opts: Options, *, exit_code: int = 0) -> None:
    """Write a command's typed ``result`` on stdout in ``opts.fmt``, by the renderer its
    module registered (:func:`tools.report.register`), then end with ``exit_code``: return
    for 0, so that a command body still runs alone as a function."""
    emit(render(result, opts.fmt))
    if exit_code:
        raise typer.Exit(exit_code)


def run_gates(opts: Options, names: Sequence[str], *, summary: bool = False) -> None:
    """Build one context, run the named gates on it, render and exit."""
    # Loaded here, for start-up speed (not for a circle): the gates pull in git and config.
    from tools import gates
    from tools.context import Context

    ctx = Context(opts)
    finish(gates.judged(ctx, gates.run_all(names, ctx)), opts, summary=summary)
