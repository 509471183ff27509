"""The one output path of tools/report/: which formats a result has, the refusal of any other
(a usage error, exit 2 at the CLI edge), renderers registered for a command's own result type,
format modules loaded only when used, and imports that point from the renderers to the model."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.errors import UsageError
from tools.gates import conflicts
from tools.report import (
    FORMATS,
    FormatUnavailable,
    GateResult,
    RenderOptions,
    Report,
    TextOptions,
    formats,
    register,
    render,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tools" / "report"
FORMAT_MODULES = ("text", "json_report", "github", "sarif")


def _report() -> Report:
    gate = GateResult(conflicts.NAME)  # importing the gate declared its rules
    gate.add("conflict-marker", "conflict marker <<<<<<< at column 0", path="a.txt", line=1)
    return Report([gate])


def test_a_report_has_every_format_and_a_subclass_inherits_them() -> None:
    class Judged(Report):
        pass

    assert formats(Report) == FORMATS == ("text", "json", "github", "sarif")
    assert formats(Judged) == FORMATS
    out = render(Judged(_report().gates), "github")
    assert out.startswith("::error file=a.txt,line=1,title=conflicts/conflict-marker::")


def test_a_format_the_result_lacks_is_a_usage_error_naming_what_it_has() -> None:
    with pytest.raises(FormatUnavailable) as caught:
        render(_report(), "yaml")
    assert isinstance(caught.value, UsageError)
    assert (
        caught.value.render()
        == "--format yaml: this command prints text or json or github or sarif"
    )
    assert formats(dict) == ()
    with pytest.raises(FormatUnavailable, match="prints no format"):
        render({"a": 1}, "text")


def test_a_registered_result_type_renders_through_the_same_path() -> None:
    @dataclass
    class Listing:
        names: list[str]

    seen: list[RenderOptions] = []

    def listing_text(result: Listing, options: RenderOptions) -> str:
        seen.append(options)
        return "".join(f"{name}\n" for name in result.names)

    register(Listing, "text", listing_text)
    register(Listing, "json", lambda result, options: f"{result.names!r}\n")
    assert formats(Listing) == ("text", "json")
    text = TextOptions(max_findings=3, statistics=True)
    assert render(Listing(["a", "b"]), "text", summary=False, text=text) == "a\nb\n"
    assert seen == [RenderOptions(summary=False, text=text)]
    assert render(Listing(["a"]), "json") == "['a']\n"
    with pytest.raises(FormatUnavailable, match="--format sarif: this command prints text or json"):
        render(Listing([]), "sarif")
    assert formats(Report) == FORMATS  # a report's formats are not touched


def test_format_modules_load_only_when_a_report_is_written_in_their_format() -> None:
    """Start-up (every command, ``--help`` included) imports tools.report; json encoding and
    the SARIF log's hashing wait until a report is written in their format."""
    code = (
        "import sys\n"
        "from tools.report import GateResult, Report, render\n"
        "def loaded():\n"
        "    return sorted(m.rsplit('.', 1)[1] for m in sys.modules\n"
        "                  if m.startswith('tools.report.') and m.rsplit('.', 1)[1] in FMT)\n"
        f"FMT = {FORMAT_MODULES!r}\n"
        "print(loaded())\n"
        "render(Report([GateResult('x')]), 'sarif')\n"
        "print(loaded())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines() == ["[]", "['sarif']"]


def _imports(path: Path) -> set[str]:
    """Every tools module ``path`` imports, at module level or inside a function."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("tools"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tools"):
            out.add(node.module or "")
    return out


def test_imports_point_from_the_renderers_to_the_model_never_back() -> None:
    below = {"tools.report.model", "tools.report.registry", "tools.report.render_options"}
    for name in FORMAT_MODULES:
        # The format modules may read the model, the registry and the version; nothing that
        # dispatches to them (renderers.py, the package root), nor each other.
        assert _imports(PACKAGE / f"{name}.py") <= below | {"tools"}, name
    for name in ("model", "registry", "render_options"):
        reached = _imports(PACKAGE / f"{name}.py")
        assert not reached & {"tools.report", "tools.report.renderers"}, name
        assert not reached & {f"tools.report.{m}" for m in FORMAT_MODULES}, name
    assert _imports(PACKAGE / "registry.py") == set()


def test_findings_compare_by_value_and_are_unhashable() -> None:
    """A finding is filled in while a run goes (severity, baseline state), so it compares by
    every field and cannot be a set member or a key."""
    from tools.report import Finding

    one = Finding("conflict-marker", "error", "m", path="a.txt", line=3)
    same = Finding("conflict-marker", "error", "m", path="a.txt", line=3)
    assert one == same and one != Finding("conflict-marker", "error", "m", path="a.txt")
    same.baseline_state = "new"
    assert one != same and one != "conflict-marker"
    with pytest.raises(TypeError):
        hash(one)
    assert repr(one).startswith("Finding(rule='conflict-marker', severity='error'")
