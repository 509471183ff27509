"""The typed results of the commands that write no gate report: each command's ``--format``
values are its result type's registered formats, the registered renderer is what writes its
bytes, and the result modules load only when their command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from tests.conftest import Repo
from tools.cli.common import REPORT, TEXT, ResultType
from tools.cli.main import app
from tools.report import RenderOptions, formats, register, render
from tools.report.renderers import renderer

# Every command that writes a result of its own, and the formats docs/output-formats.md names.
RESULT_FORMATS = {
    "config validate": ("text",),
    "config show": ("text", "json"),
    "init": ("text",),
    "index append": ("text",),
    "ledger merge": ("text",),
    "ledger show": ("text", "json"),
    "baseline write": ("text", "json"),
    "baseline show": ("text", "json"),
    "ratchet tighten": ("text", "json"),
    "spec render": ("text",),
    "golden capture": ("text",),
    "hooks install": ("text",),
    "mutate run": ("text", "json"),
    "mutate matrix": ("json",),
    "evidence matrix": ("json",),
    "mutate collect": ("text", "json"),
    "mutate recover": ("text", "json"),
    "attribute": ("text", "json"),
}
# Text that is no result: the hook's green line (its report goes to stderr) and the tour.
OWN_TEXT = {"hooks run", "demo"}


def _commands(group: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, cmd in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(cmd, "commands"):  # a group (typer's click, whichever it ships)
            yield from _commands(cmd, f"{path} ")
        else:
            yield path, cmd


def _declared() -> dict[str, Any]:
    root = typer.main.get_command(app)
    return {path: getattr(cmd.callback, "declared_formats", None) for path, cmd in _commands(root)}


def test_every_command_declares_what_it_writes() -> None:
    declared = _declared()
    results = {p: d for p, d in declared.items() if isinstance(d, ResultType)}
    assert {p: d.formats() for p, d in results.items()} == RESULT_FORMATS
    others = {p for p, d in declared.items() if d not in (REPORT, None) and p not in results}
    assert others == OWN_TEXT
    assert all(declared[p] == TEXT for p in OWN_TEXT)


@pytest.mark.parametrize("path", sorted(RESULT_FORMATS))
def test_a_result_type_has_a_renderer_per_format_and_no_other(path: str) -> None:
    kind = _declared()[path].load()
    assert formats(kind) == RESULT_FORMATS[path]
    assert all(renderer(kind, fmt) is not None for fmt in RESULT_FORMATS[path])
    assert renderer(kind, "sarif") is None and renderer(kind, "github") is None


def test_the_registered_renderer_writes_the_bytes(repo: Repo) -> None:
    from tools.cli.results.config import ConfigShown

    repo.commit("Start\n\nBody.\n", {"README.md": "# Start\n"})
    shown = repo.tools("config", "show", "--format", "json")
    json_renderer = renderer(ConfigShown, "json")
    assert json_renderer is not None
    try:
        register(ConfigShown, "json", lambda r, o: f"source={r.source} keys={len(r.config)}\n")
        swapped = repo.tools("config", "show", "--format", "json")
    finally:
        register(ConfigShown, "json", json_renderer)
    assert swapped.exit_code == 0
    assert swapped.stdout == f"source=None keys={len(json.loads(shown.stdout))}\n"
    assert repo.tools("config", "show", "--format", "json").stdout == shown.stdout


def test_a_result_keeps_data_and_each_format_writes_it() -> None:
    from tools.cli.results.ledger import LedgerMerged, LedgerShown

    record = {"id": "ab" * 32, "created": "2026-01-01T00:00:00Z", "kind": "k", "z": [1]}
    shown = LedgerShown((record,))
    assert render(shown, "text") == f"{'ab' * 6}  2026-01-01T00:00:00Z  k\n"
    assert render(shown, "json").startswith('[{"id": "abab')
    assert render(LedgerShown((record,), one=True), "text").startswith('{\n  "created"')
    refused = LedgerMerged(".agents/ledger.jsonl", failed=2)
    assert render(refused, "text") == (
        "nothing written to .agents/ledger.jsonl: 2 record(s) failed verification\n"
    )
    merged = LedgerMerged(".agents/ledger.jsonl", merged=3, present=1)
    assert render(merged, "text", summary=False) == (
        "merged 3 record(s) into .agents/ledger.jsonl; 1 already present\n"
    )
    assert RenderOptions().summary  # a result's renderer takes the report's options too


def test_result_modules_load_only_when_their_command_runs() -> None:
    for args in (["--version"], ["--help"], ["config", "--help"]):
        run = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "tools", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "tools.cli.results" not in run.stderr
