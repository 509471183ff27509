"""Each command's `--format`: a gate report in every format, a command's own output only in
the formats it produces; any other is exit 2 before the command does anything."""

from __future__ import annotations

import json

import pytest
import typer

from tests.conftest import Repo

TEXT_JSON = "text or json"

# (the command line, a format it cannot produce, what the refusal says it prints)
REFUSED = [
    (["config", "show"], "sarif", TEXT_JSON),
    (["config", "validate"], "json", "text"),
    (["init"], "sarif", "text"),
    (
        ["index", "append", "--issue", "1", "--row", "—", "--title", "t", "--kind", "k"],
        "json",
        "text",
    ),
    (["ledger", "merge", "r.json"], "sarif", "text"),
    (["ledger", "show"], "github", TEXT_JSON),
    (["baseline", "write", "--add"], "sarif", TEXT_JSON),
    (["baseline", "show"], "sarif", TEXT_JSON),
    (["ratchet", "tighten"], "github", TEXT_JSON),
    (["spec", "render", "s.md", "--id", "ab"], "json", "text"),
    (["golden", "capture", "c"], "json", "text"),
    (["hooks", "install"], "json", "text"),
    (["hooks", "run", "pre-commit"], "sarif", "text"),
    (["demo"], "json", "text"),
    (["mutate", "run", "p.yaml"], "sarif", TEXT_JSON),
    (["mutate", "collect", "p.yaml"], "github", TEXT_JSON),
    (["mutate", "recover"], "sarif", TEXT_JSON),
    (["mutate", "matrix", "p.yaml"], "text", "json"),
    (["attribute", "--good", "a", "--bad", "b", "--test", "true"], "sarif", TEXT_JSON),
]


def _words(argv: list[str]) -> int:
    """How many words of ``argv`` name the command."""
    return 1 if argv[0] in ("init", "demo", "attribute") else 2


@pytest.mark.parametrize(("argv", "fmt", "prints"), REFUSED, ids=lambda v: str(v))
def test_a_format_a_command_cannot_produce_is_exit_2_and_does_nothing(
    repo: Repo, argv: list[str], fmt: str, prints: str
) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "# Start\n"})
    hooks_before = sorted(p.name for p in (repo.path / ".git" / "hooks").iterdir())
    n = _words(argv)
    # Right after the command's name (`hooks run` passes what follows HOOK to the hook), and
    # before the subcommand.
    after = [*argv[:n], "--format", fmt, *argv[n:]]
    for run in (repo.tools(*after), repo.tools("--format", fmt, *argv)):
        assert run.exit_code == 2
        assert run.stdout == ""
        named = " ".join(["tools", *argv[:n]])
        assert (
            run.stderr == f"error: --format {fmt}: `{named}` prints {prints}, not a gate report\n"
        )
    # Refused before anything ran: nothing written, no hook installed.
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
    assert sorted(p.name for p in (repo.path / ".git" / "hooks").iterdir()) == hooks_before


def test_the_formats_a_command_produces_still_work(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "# Start\n\n## Usage\n"})
    shown = repo.tools("config", "show", "--format", "json")
    assert shown.exit_code == 0 and "preflight" in json.loads(shown.stdout)
    assert repo.tools("--format", "text", "config", "show").stdout.startswith("# effective")
    checked = repo.tools("index", "check", "--format", "sarif")
    assert checked.exit_code == 0
    assert checked.sarif()["runs"][0]["tool"]["driver"]["name"] == "tools"
    anchors = repo.tools("links", "anchors", str(repo.path / "README.md"), "--format", "sarif")
    assert anchors.exit_code == 0
    assert len(anchors.sarif()["runs"][0]["results"]) == 2
    assert repo.tools("ledger", "show", "--format", "json").stdout == "[]\n"


def test_a_command_without_a_format_option_refuses_the_flag(repo: Repo) -> None:
    run = repo.tools("config", "schema", "--format", "json")
    assert run.exit_code == 2 and run.stderr.startswith("error: No such option: --format")


def test_a_command_is_a_function_that_runs_alone(
    repo: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    from tools.cli.file_checks import conflicts_check
    from tools.cli.ledgers import ledger_show
    from tools.options import Options

    repo.commit("Start\n\nBody.\n", {"a.txt": "<<<<<<< HEAD\nx\n"})
    ledger_show(Options(repo=repo.path, fmt="json"))
    assert capsys.readouterr().out == "[]\n"
    with pytest.raises(typer.Exit) as ended:
        conflicts_check(Options(repo=repo.path))
    assert ended.value.exit_code == 1
    assert capsys.readouterr().out.startswith("FAIL conflicts (1 error)")


def test_github_annotations_of_a_real_run_come_errors_first(repo: Repo) -> None:
    """A branch whose report holds a warning (style) before an error (ratchet), and notices
    in between: the annotations come errors, warnings, notices, all of them."""
    marker = "FOLLOWING_AGENTS_PROTOCOL\n\nFollowing-Agents-Protocol: true\nAI-Assisted: false\n"
    repo.commit(f"Start\n\nBody.\n\n{marker}", {"a.txt": "a\n"})
    repo.branch("topic")
    subject = "Add a subject line that goes on and on, well past the limit of seventy-two"
    repo.commit(f"{subject}\n\nBody.\n\n{marker}", {"src/a.cc": "int f() { return at::kCUDA; }\n"})
    report = repo.tools("--format", "json", "preflight", "--base", "main").json()
    order = [f["severity"] for g in report["gates"] for f in g["findings"]]
    assert order.index("warning") < order.index("error")  # the report's own order
    run = repo.tools("--format", "github", "preflight", "--base", "main")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    kinds = [line.split(" ", 1)[0] for line in lines[:-1]]
    rank = {"::error": 0, "::warning": 1, "::notice": 2}
    assert [rank[k] for k in kinds] == sorted(rank[k] for k in kinds), kinds
    assert len(kinds) == len(order) and kinds[0] == "::error"
    assert lines[-1].startswith("Not green: ")
