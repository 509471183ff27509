"""``tools trailers check`` and ``tools style check``: the commit-message gates."""

from __future__ import annotations

from typing import Annotated

import typer

from tools.cli.common import command, new_app, run_gates
from tools.errors import UsageError
from tools.options import Options

MessageFileOpt = Annotated[
    str | None,
    typer.Option(
        "--message-file",
        help="Judge this commit message alone, as the commit-msg hook does ('-': stdin).",
    ),
]


def _message_only(opts: Options, message_file: str | None) -> None:
    """With --message-file the command judges that message alone (no range is read)."""
    if message_file is None:
        return
    if opts.base or opts.head or opts.commit or opts.require_commits:
        raise UsageError(
            "--message-file judges one message alone; it cannot be combined with "
            "--base, --head, --commit or --require-commits"
        )
    opts.message_file = message_file
    opts.extra["message_only"] = True


def register(app: typer.Typer) -> None:
    trailers = new_app("The commit trailer contract: marker paragraph and trailer block.")

    @trailers.command("check")
    @command(check=True, range_=True, commit=True)
    def trailers_check(
        opts: Options,
        message_file: MessageFileOpt = None,
        filled: Annotated[
            bool,
            typer.Option("--filled", help="Also refuse the unfilled template AGENT:MODEL [TOOL]."),
        ] = False,
    ) -> None:
        """Judge the trailers of merge-base(base, head)..head, one --commit, or a message file."""
        _message_only(opts, message_file)
        opts.range_paths = False  # only messages are judged: skip rename detection
        opts.bare_ok = True  # a server-side pre-receive check judges a bare repository
        opts.extra["filled"] = filled
        run_gates(opts, ["trailers"])

    style = new_app("Commit style: subject and body.")

    @style.command("check")
    @command(check=True, range_=True, commit=True)
    def style_check(opts: Options, message_file: MessageFileOpt = None) -> None:
        """Judge the style of merge-base(base, head)..head, one --commit, or a message file."""
        _message_only(opts, message_file)
        opts.range_paths = False
        opts.bare_ok = True
        run_gates(opts, ["style"])

    app.add_typer(trailers, name="trailers")
    app.add_typer(style, name="style")
