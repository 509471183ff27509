"""``tools links check``: relative links and anchors of the repository's markdown;
``tools links anchors FILE…``: the anchors GitHub makes in each file.

Imports inside the functions are there for start-up speed (``tools --version`` loads none of
them), not to hide an import circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tools.cli.common import REPORT, command, finish, new_app, run_gates
from tools.errors import UsageError
from tools.options import Options


def _read(path: str) -> bytes:
    from tools import file_reads

    if Path(path).is_dir():
        raise UsageError("is a folder, not a markdown file", where=path)
    return file_reads.read_file(Path(path), path)


def links_check(opts: Options) -> None:
    """Every markdown file of links.paths (minus links.exclude): relative links name an
    existing path, #anchors a heading, #L10-L20 lines within the file. With --staged the
    staged files and tree are judged."""
    run_gates(opts, ["links"])


def links_anchors(
    opts: Options,
    files: Annotated[list[str], typer.Argument(help="Markdown files to list.")],
) -> None:
    """List each file's anchors as GitHub makes them: line, #anchor, and the heading text
    or the HTML element that names it (info findings, in every --format)."""
    # The markdown parser loads here, not at import: the CLI's start-up stays fast.
    from tools import gates
    from tools.context import Context
    from tools.gates.links import list_anchors

    # Through the one report path (severities, metadata), as every command's; the files
    # listed may lie anywhere, but the repository whose config judges is the current one.
    ctx = Context(opts)
    finish(gates.judged(ctx, [list_anchors(files, _read)]), opts, summary=False)


def register(app: typer.Typer) -> None:
    links = new_app("Links in markdown that must resolve: paths, heading and line anchors.")
    links.command("check")(command(formats=REPORT, check=True, staged=True)(links_check))
    links.command("anchors")(command(formats=REPORT)(links_anchors))
    app.add_typer(links, name="links")
