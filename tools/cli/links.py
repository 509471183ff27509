"""``tools links check``: relative links and anchors of the repository's markdown."""

from __future__ import annotations

import typer

from tools.cli.common import command, new_app, run_gates
from tools.options import Options


def register(app: typer.Typer) -> None:
    links = new_app("Links in markdown that must resolve: paths, heading and line anchors.")

    @links.command("check")
    @command(check=True, staged=True)
    def links_check(opts: Options) -> None:
        """Every markdown file of links.paths (minus links.exclude): relative links name an
        existing path, #anchors a heading, #L10-L20 lines within the file. With --staged the
        staged files and tree are judged."""
        run_gates(opts, ["links"])

    app.add_typer(links, name="links")
