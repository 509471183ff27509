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
FORMAT_MODULES = ("text", "json_report", "github", "sarif", "gitlab")


def _report() -> Report:
    gate = GateResult(conflicts.NAME)  # importing the gate declared its rules
    gate.add("conflict-marker", "conflict marker <<<<<<< at column 0", path="a.txt", line=1)
    return Report([gate])


def test_a_report_has_every_format_and_a_subclass_inherits_them() -> None:
    class Judged(Report):
        pass

    assert formats(Report) == FORMATS == ("text", "json", "github", "sarif", "gitlab")
    assert formats(Judged) == FORMATS
    out = render(Judged(_report().gates), "github")
    assert out.startswith("::error file=a.txt,line=1,title=conflicts/conflict-marker::")


def test_a_format_the_result_lacks_is_a_usage_error_naming_what_it_has() -> None:
    with pytest.raises(FormatUnavailable) as caught:
        render(_report(), "yaml")
    assert isinstance(caught.value, UsageError)
    assert (
        caught.value.render()
        == "--format yaml: this command prints text or json or github or sarif or gitlab"
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
    # What a format may read besides: a finding's identity (SPEC §3.3), the protected rules,
    # and GitHub's line hash; none of them reaches back to the dispatch.
    helpers = {
        "tools.finding_identity",
        "tools.findings_baseline",
        "tools.gate_registry",
        "tools.report.line_hash",
    }
    for helper in ("finding_identity", "findings_baseline", "gate_registry"):
        reached = _imports(ROOT / "tools" / f"{helper}.py")
        assert not reached & {"tools.report", "tools.report.renderers"}, helper
    assert _imports(PACKAGE / "line_hash.py") == set()
    below |= helpers
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


# -- --format github: the order GitHub needs, and what it will not show ----------------------


def _long_report() -> Report:
    """25 errors, 3 warnings, a skip and 2 notices, the notices and warnings first in the
    report's order (as a range's pseudo-gates and the message gates come before conflicts)."""
    from tools.gates import docs, style

    notes = GateResult(docs.NAME)
    notes.add("docs-absent", "no docs.rules and no docs.spec_now configured")
    notes.add("docs-absent", "a second notice")
    warned = GateResult(style.NAME)
    for n in range(3):
        warned.add("subject-length", f"subject {n} is long", commit=f"{n:040x}")
    skipped = GateResult("trailers").skip("the base gone does not resolve")
    errors = GateResult(conflicts.NAME)
    for n in range(25):
        errors.add("conflict-marker", f"conflict marker {n}", path="a.txt", line=n + 1)
    return Report([notes, warned, skipped, errors])


def test_github_prints_errors_then_warnings_then_notices() -> None:
    lines = render(_long_report(), "github").splitlines()
    assert lines[-1].startswith("Not green: ")
    kinds = [line.split(" ", 1)[0] for line in lines[:-1]]
    assert kinds == ["::error"] * 25 + ["::warning"] * 4 + ["::notice"] * 3
    assert [line.split("::")[2] for line in lines[:3]] == [
        "conflict marker 0",
        "conflict marker 1",
        "conflict marker 2",
    ]
    # The skip first among the warnings: a gate that did not judge matters most of them.
    assert lines[25] == "::warning title=trailers::trailers skipped: the base gone does not resolve"


def test_github_says_in_one_notice_what_it_will_not_show_and_where_it_is() -> None:
    lines = render(_long_report(), "github").splitlines()
    notices = [line for line in lines if line.startswith("::notice")]
    overflow = [line for line in notices if "annotations-not-shown" in line]
    assert len(overflow) == 1 and notices[0] == overflow[0]  # first of the notices: it shows
    text = overflow[0].split("::", 2)[2]
    assert "GitHub shows 10 annotations of each severity per step" in text
    assert "15 errors will not show" in text and "warning" not in text.split("(")[0]
    assert "25 errors, 4 warnings, 2 notices" in text
    assert "this step's log" in text and "--format sarif" in text
    # Every finding is still printed: the format stays complete.
    assert sum(line.startswith("::error") for line in lines) == 25


def test_github_adds_no_notice_when_everything_shows() -> None:
    report = _long_report()
    report.gates[-1].findings[10:] = []
    out = render(report, "github")
    assert "annotations-not-shown" not in out
    # Eleven notices: the notice says one of them (its own place taken) will not show.
    many = GateResult("docs")
    for n in range(11):
        many.add("docs-absent", f"notice {n}")
    text = render(Report([many]), "github")
    assert "2 notices will not show" in text and text.startswith("::notice title=tools/annot")


def test_github_never_names_a_file_the_judged_tree_lacks() -> None:
    from tools.gates import spec
    from tools.report.model import mark_absent

    gate = GateResult(spec.NAME)
    gate.add("spec-absent", "specs/ does not exist in the index: nothing to judge", path="specs")
    report = Report([gate, _report().gates[0]])
    assert "file=specs," in render(report, "github")  # nobody looked: taken as present
    mark_absent(report, lambda path: path == "a.txt")
    out = render(report, "github").splitlines()
    assert out[0].startswith("::error file=a.txt,line=1,")
    assert out[1] == (
        "::notice title=spec/spec-absent::specs: specs/ does not exist in the index: "
        "nothing to judge"
    )
