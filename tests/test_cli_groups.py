"""A command line imports and builds only the command group it names (tools.cli.main)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import typer

from tools.cli import app as main


def _names(app: typer.Typer) -> set[str]:
    return {g.name for g in app.registered_groups if g.name} | {
        c.name for c in app.registered_commands if c.name
    }


@pytest.mark.parametrize("module", list(main.GROUPS))
def test_each_module_registers_exactly_the_words_listed_for_it(module: str) -> None:
    app = typer.Typer()
    importlib.import_module(f"tools.cli.{module}").register(app)
    assert _names(app) == set(main.GROUPS[module])


def test_the_full_application_has_every_group_once() -> None:
    words = [w for ws in main.GROUPS.values() for w in ws]
    assert len(words) == len(set(words))
    assert _names(main.register(None)) == set(words)


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["now", "check"], "now"),
        (["--repo", "now", "trailers", "check"], "trailers"),  # "now" is --repo's value
        (["--format=json", "--config", "c.yaml", "ledger", "show"], "ledger"),
        (["--config-from", "base", "--format", "json", "docs"], "docs"),
        (["--version"], None),
        (["--help"], None),
        ([], None),
    ],
)
def test_command_word_skips_global_options_and_their_values(
    args: list[str], word: str | None
) -> None:
    assert main.command_word(args) == word


def _modules_after(args: list[str]) -> set[str]:
    code = f"import sys, tools.cli.main as m\nm.register({args!r})\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_a_command_line_loads_only_its_own_group() -> None:
    mods = _modules_after(["--format", "json", "now", "check"])
    groups = {m for m in mods if m.removeprefix("tools.cli.") in main.GROUPS}
    assert groups == {"tools.cli.file_checks"}
    assert _modules_after(["--version"]).isdisjoint(f"tools.cli.{g}" for g in main.GROUPS)


@pytest.mark.parametrize("args", [["--help"], [], ["no-such-command"]])
def test_help_and_unknown_words_load_every_group(args: list[str]) -> None:
    mods = _modules_after(args)
    assert {f"tools.cli.{g}" for g in main.GROUPS} <= mods


def test_unknown_command_is_still_refused_with_every_command_known() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: No such command 'no-such-command'")
