"""``tools trailers check`` and ``tools style check``: the commit-message gates."""

from __future__ import annotations

from typing import Annotated

import typer

from tools.cli.common import REPORT, command, new_app, run_gates
from tools.errors import UsageError
from tools.options import Options

MessageFileOpt = Annotated[
    str | None,
    typer.Option(
        "--message-file",
        help="Judge this commit message alone, as the commit-msg hook does ('-': stdin).",
    ),
]


def _message_only(opts: Options, message_file: str | None) -> Options:
    """With --message-file the command judges that message alone (no range is read)."""
    if message_file is None:
        return opts
    if opts.base or opts.head or opts.commit or opts.require_commits:
        raise UsageError(
            "--message-file judges one message alone; it cannot be combined with "
            "--base, --head, --commit or --require-commits"
        )
    return opts._replace(message_file=message_file, message_only=True)


FilledOpt = Annotated[
    bool,
    typer.Option("--filled", help="Also refuse the unfilled template AGENT:MODEL [TOOL]."),
]


def _messages_only(opts: Options, message_file: str | None) -> Options:
    """What both commit-message gates set: a message file alone, or a range read without its
    changed paths (only messages are judged: no rename detection), bare repositories allowed
    (a server-side pre-receive check judges one)."""
    return _message_only(opts, message_file)._replace(range_paths=False, bare_ok=True)


def _with_memo(opts: Options, gate: str) -> Options:
    """A range run of the one gate keeps its result for the next (SPEC §12, tools.range_memo);
    a message file or one --commit reads no range to keep."""
    if opts.message_file is not None or opts.commit:
        return opts
    return opts._replace(range_memo=(gate,))


def trailers_check(
    opts: Options, message_file: MessageFileOpt = None, filled: FilledOpt = False
) -> None:
    """Judge the trailers of merge-base(base, head)..head, one --commit, or a message file."""
    opts = _messages_only(opts, message_file)._replace(filled=filled)
    run_gates(_with_memo(opts, "trailers"), ["trailers"])


def style_check(opts: Options, message_file: MessageFileOpt = None) -> None:
    """Judge the style of merge-base(base, head)..head, one --commit, or a message file."""
    run_gates(_with_memo(_messages_only(opts, message_file), "style"), ["style"])


def register(app: typer.Typer) -> None:
    gate = command(formats=REPORT, check=True, range_=True, commit=True)
    trailers = new_app("The commit trailer contract: marker paragraph and trailer block.")
    trailers.command("check")(gate(trailers_check))
    style = new_app("Commit style: subject and body.")
    style.command("check")(gate(style_check))
    app.add_typer(trailers, name="trailers")
    app.add_typer(style, name="style")
