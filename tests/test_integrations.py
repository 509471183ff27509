"""The integrations, for real in temp repositories: the pre-commit framework running this
repository's `.pre-commit-hooks.yaml` (`pre-commit try-repo`, and real commits through
`pre-commit install` with the configuration docs/ci.md gives), plain git hooks where `tools
hooks install` was not yet tested (outside a repository, a linked worktree, a repository with a
`tools/` package of its own), and the GitHub workflow files: this repository's and the
adopters' one in docs/ci.md, whose `tools` commands run against a pull request checked out the
way GitHub checks it out.

The pre-commit framework installs the hooks' distribution from a repository into a virtual
environment of its own: once per module here (``PRE_COMMIT_HOME`` is shared by the module), and
once more for the one `try-repo` call, which builds its own every time.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo, run_cli
from tests.snapshot import ROOT, git_snapshot
from tools import __version__
from tools.report import FORMATS

DIST_NAME = "agent-protocol-gates"
MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: codex:o3 [git]"
PREFLIGHT = "tools preflight (staged change)"
TRAILERS_HOOK = "tools trailers (commit message)"
STYLE_HOOK = "tools style (commit message)"
MESSAGE_HOOK = "tools commit-msg (trailers and style)"
# A repository like the model one has a `tools/` package of its own; importing it is an error.
FOREIGN = "imported the tools package of the repository itself"
FOREIGN_INIT = f"raise SystemExit({FOREIGN!r})\n"
# pre-commit builds a hook environment from the package index; generous for a loaded machine.
SLOW = 900


def good(subject: str = "Add the widget", body: str = "The widget was missing.") -> str:
    return f"{subject}\n\n{body}\n\n{MARKER}\n\n{TRAILERS}\n"


def _path_without_this_venv() -> str:
    """PATH without the test run's own `tools`: only the hook environment's may answer."""
    here = Path(sys.executable).parent
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) != here]
    return os.pathsep.join(keep)


def run_as_user(
    cwd: Path,
    *args: str | Path,
    input: str | None = None,
    tools_on_path: bool = False,
    pre_commit_home: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """A command as a user runs it in a shell: ``git …`` (hooks included) or ``pre-commit …``
    (the framework). Without ``tools_on_path`` only a hook environment's `tools` can answer."""
    env = dict(os.environ)
    for key in ("VIRTUAL_ENV", "PYTHONPATH", "GIT_DIR", "GIT_EDITOR"):
        env.pop(key, None)
    if tools_on_path:  # the console script of the test run's own install, as a shell has it
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    else:
        env["PATH"] = _path_without_this_venv()
    if pre_commit_home is not None:
        env["PRE_COMMIT_HOME"] = str(pre_commit_home)
    env["PRE_COMMIT_COLOR"] = "never"
    argv = [str(a) for a in args]
    if argv[0] == "pre-commit":
        argv = [sys.executable, "-m", "pre_commit", *argv[1:]]
    return subprocess.run(
        argv, cwd=cwd, input=input, env=env, capture_output=True, text=True, timeout=SLOW
    )


@dataclass
class Framework:
    source: Path  # the one-commit snapshot of this repository the hooks come from
    rev: str
    home: Path  # PRE_COMMIT_HOME, shared by the module
    config: str  # the adopter's .pre-commit-config.yaml (docs/ci.md's, pointed at source)

    def run(
        self, cwd: Path, *args: str | Path, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return run_as_user(cwd, *args, input=input, pre_commit_home=self.home)


def out(proc: subprocess.CompletedProcess[str]) -> str:
    return proc.stdout + proc.stderr


def hook_line(text: str, name: str) -> str | None:
    """pre-commit's result line of one hook (``name....Passed``), or None if it did not run."""
    lines = [line for line in text.splitlines() if line.startswith(name + ".")]
    assert len(lines) <= 1, lines
    return lines[0] if lines else None


def assert_hooks(text: str, **expected: str | None) -> None:
    """``preflight="Passed", message="Failed", style=None`` (None: the hook did not run)."""
    names = {
        "preflight": PREFLIGHT,
        "message": MESSAGE_HOOK,
        "trailers": TRAILERS_HOOK,
        "style": STYLE_HOOK,
    }
    for key, verdict in expected.items():
        line = hook_line(text, names[key])
        if verdict is None:
            assert line is None, f"{names[key]} ran:\n{text}"
        else:
            assert line is not None and line.endswith(verdict), f"{names[key]}:\n{text}"


# -- docs/ci.md, read as the tests' source of configuration ----------------------------------

DOCS = ROOT / "docs" / "ci.md"


def fenced_blocks(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang fenced blocks of our own markdown (trusted, small input)."""
    blocks: list[str] = []
    body: list[str] | None = None
    for line in text.splitlines():
        if body is None:
            if line.strip() == f"```{lang}":
                body = []
        elif line.strip() == "```":
            blocks.append("\n".join(body) + "\n")
            body = None
        else:
            body.append(line)
    assert body is None, f"an unclosed ```{lang} block in {DOCS}"
    return blocks


def docs_yaml() -> list[str]:
    return fenced_blocks(DOCS.read_text(), "yaml")


def docs_pre_commit_config() -> dict:
    found = [yaml.safe_load(b) for b in docs_yaml() if "default_install_hook_types" in b]
    assert len(found) == 1, "docs/ci.md gives one .pre-commit-config.yaml"
    return found[0]


# -- the pre-commit framework ----------------------------------------------------------------


@pytest.fixture(scope="module")
def framework(tmp_path_factory: pytest.TempPathFactory) -> Framework:
    source, rev = git_snapshot(tmp_path_factory.mktemp("hook-source") / "repo")
    config = docs_pre_commit_config()
    assert len(config["repos"]) == 1
    config["repos"][0].update(repo=str(source), rev=rev)
    fw = Framework(
        source=source,
        rev=rev,
        home=tmp_path_factory.mktemp("pre-commit-home"),
        config=yaml.safe_dump(config, sort_keys=False),
    )
    # Build the hook environment once, in a repository of its own.
    warm = tmp_path_factory.mktemp("warm")
    subprocess.run(["git", "init", "-q"], cwd=warm, check=True)
    (warm / ".pre-commit-config.yaml").write_text(fw.config)
    proc = fw.run(warm, "pre-commit", "install-hooks")
    assert proc.returncode == 0, f"pre-commit could not build the hook environment:\n{out(proc)}"
    return fw


def adopt(repo: Repo, fw: Framework, protocol: str | None = None) -> Repo:
    """`tools init`, a `tools/` package of the repository's own, and the framework's hooks."""
    if protocol is not None:
        repo.write(".agents/protocol.yaml", protocol)
    run = repo.tools("init")
    assert run.exit_code in (0, 1), run.stdout + run.stderr
    repo.write("tools/__init__.py", FOREIGN_INIT)
    repo.write(".pre-commit-config.yaml", fw.config)
    # --overwrite: `tools init` installed the plain hooks; one mechanism, not both.
    proc = fw.run(repo.path, "pre-commit", "install", "--overwrite")
    assert proc.returncode == 0, out(proc)
    for hook in ("pre-commit", "commit-msg"):  # default_install_hook_types
        assert f".git/hooks/{hook}" in proc.stdout, proc.stdout
        assert "pre-commit" in (repo.path / ".git" / "hooks" / hook).read_text()
    return repo


def commit(
    fw: Framework, repo: Repo, message: str, files: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    for rel, content in (files or {}).items():
        repo.write(rel, content)
    assert fw.run(repo.path, "git", "add", "-A").returncode == 0
    proc = fw.run(repo.path, "git", "commit", "-q", "-F", "-", input=message)
    assert FOREIGN not in out(proc)
    return proc


def test_try_repo_runs_the_commit_msg_hooks_on_the_message_file(
    framework: Framework, repo: Repo, tmp_path: Path
) -> None:
    repo.tools("init")
    message = tmp_path / "MSG"
    message.write_text(good("Add the widget."))  # the trailers are right, the subject is not
    proc = framework.run(
        repo.path, "pre-commit", "try-repo", framework.source, "--ref", framework.rev,
        "--hook-stage", "commit-msg", "--commit-msg-filename", message,
    )  # fmt: skip
    text = out(proc)
    assert proc.returncode == 1, text
    # try-repo runs every commit-msg hook of the manifest. The protocol `tools init` wrote is
    # not staged, so the hook's tree has none: tools-commit-msg passes it unjudged, while the
    # plain checks judge by the defaults.
    assert_hooks(text, preflight=None, message="Passed", trailers="Passed", style="Failed")
    # pre-commit hands the hook the message file (relative to the repository's root).
    assert f"{os.path.relpath(message, repo.path)}:1" in text and "subject-period" in text


def test_hooks_pass_and_refuse_commits_for_the_right_reasons(
    framework: Framework, repo: Repo
) -> None:
    adopt(repo, framework)
    # The first commit after adoption, protocol-complete: every hook runs and passes.
    proc = commit(framework, repo, good())
    assert proc.returncode == 0, out(proc)
    assert_hooks(out(proc), preflight="Passed", message="Passed", trailers=None)
    head = repo.head()

    # No marker paragraph, no trailers: refused by the trailers hook, on git's message file.
    proc = commit(framework, repo, "Add a\n\nBecause.\n", {"a.txt": "a\n"})
    assert proc.returncode != 0
    assert_hooks(out(proc), preflight="Passed", message="Failed")
    assert "marker-missing" in out(proc) and ".git/COMMIT_EDITMSG" in out(proc)
    assert repo.head() == head

    # The trailers are right, the subject ends with a period: refused by the style hook.
    proc = commit(framework, repo, good("Add a."))
    assert proc.returncode != 0
    assert_hooks(out(proc), preflight="Passed", message="Failed")
    assert "subject-period" in out(proc) and "marker-missing" not in out(proc)
    assert repo.head() == head

    # A staged conflict marker: refused at the pre-commit stage; git never asks for a message.
    proc = commit(framework, repo, good("Add a"), {"a.txt": "<<<<<<< HEAD\na\n>>>>>>> b\n"})
    assert proc.returncode != 0
    assert_hooks(out(proc), preflight="Failed", message=None)
    assert "conflict-marker" in out(proc)
    assert repo.head() == head

    proc = commit(framework, repo, good("Add a"), {"a.txt": "a\n"})
    assert proc.returncode == 0, out(proc)
    assert repo.git("log", "-1", "--format=%s").strip() == "Add a"


def test_a_tree_without_a_protocol_commits_through_the_framework_unjudged(
    framework: Framework, repo: Repo
) -> None:
    # A branch made before adoption: the framework's hooks are installed, no protocol yet.
    repo.write(".pre-commit-config.yaml", framework.config)
    installed = framework.run(repo.path, "pre-commit", "install")
    assert installed.returncode == 0, out(installed)
    proc = commit(framework, repo, "fix stuff.\n", {"a.txt": "a\n"})
    assert proc.returncode == 0, out(proc)
    # Judged, "fix stuff." would fail both message gates (the framework shows a passing
    # hook's output only when verbose).
    assert_hooks(out(proc), preflight="Passed", message="Passed")


def _branches(fw: Framework, repo: Repo, protocol: str, feature: str, main: str) -> None:
    adopt(repo, fw, protocol)
    assert commit(fw, repo, good("Start"), {"a.txt": "one\ntwo\n"}).returncode == 0
    repo.branch("feature")
    assert commit(fw, repo, good("Feature work"), {"a.txt": feature}).returncode == 0
    repo.checkout("main")
    assert commit(fw, repo, good("Main work"), {"a.txt": main}).returncode == 0


def test_a_merge_in_progress_is_not_blocked_with_merges_skip(
    framework: Framework, repo: Repo
) -> None:
    _branches(framework, repo, "trailers: {merges: skip}\n", "one\ntwo\nb\n", "z\none\ntwo\n")
    # git merge runs the commit-msg hooks on .git/MERGE_MSG ("Merge branch 'feature'").
    proc = framework.run(repo.path, "git", "merge", "--no-ff", "--no-edit", "feature")
    assert proc.returncode == 0, out(proc)
    assert_hooks(out(proc), message="Passed")
    assert len(repo.git("log", "-1", "--format=%P").split()) == 2


def test_a_merge_concluded_after_conflicts_passes_both_stages_with_merges_skip(
    framework: Framework, repo: Repo
) -> None:
    _branches(framework, repo, "trailers: {merges: skip}\n", "one\nfeature\n", "one\nmain\n")
    stopped = framework.run(repo.path, "git", "merge", "feature")
    assert stopped.returncode != 0 and "CONFLICT" in out(stopped)
    repo.write("a.txt", "one\nmain and feature\n")
    framework.run(repo.path, "git", "add", "a.txt")
    proc = framework.run(repo.path, "git", "commit", "--no-edit")
    assert proc.returncode == 0, out(proc)
    assert_hooks(out(proc), preflight="Passed", message="Passed", trailers=None)
    assert len(repo.git("log", "-1", "--format=%P").split()) == 2


def test_a_merge_message_keeps_the_contract_with_merges_check(
    framework: Framework, repo: Repo
) -> None:
    _branches(framework, repo, "trailers: {merges: check}\n", "one\ntwo\nb\n", "z\none\ntwo\n")
    refused = framework.run(repo.path, "git", "merge", "--no-ff", "--no-edit", "feature")
    assert refused.returncode != 0
    assert_hooks(out(refused), message="Failed")
    assert "marker-missing" in out(refused) and ".git/MERGE_MSG" in out(refused)
    framework.run(repo.path, "git", "merge", "--abort")
    proc = framework.run(
        repo.path, "git", "merge", "--no-ff", "feature", "-m", good("Merge the feature")
    )
    assert proc.returncode == 0, out(proc)
    assert_hooks(out(proc), message="Passed")


def test_the_hook_environment_is_the_distribution_without_torch(framework: Framework) -> None:
    envs = sorted(framework.home.glob("repo*/py_env-*"))
    assert len(envs) == 1, envs
    python = envs[0] / "bin" / "python"
    script = (
        "import importlib.metadata as m, importlib.util as u\n"
        f"print(m.version({DIST_NAME!r}), u.find_spec('torch') is None)\n"
    )
    proc = framework.run(envs[0], python, "-c", script)
    assert proc.returncode == 0, out(proc)
    assert proc.stdout.split() == [__version__, "True"]


# -- plain git hooks -------------------------------------------------------------------------


def test_plain_hooks_run_our_console_script_in_a_repo_with_its_own_tools_package(
    repo: Repo,
) -> None:
    repo.tools("init")  # installs the plain hooks
    repo.write("tools/__init__.py", FOREIGN_INIT)
    repo.git("add", "-A")
    proc = run_as_user(
        repo.path, "git", "commit", "-q", "-F", "-", input=good(), tools_on_path=True
    )
    assert proc.returncode == 0, out(proc)
    repo.write("a.txt", "a\n")
    repo.git("add", "-A")
    bad = "Add a\n\nBecause.\n"
    proc = run_as_user(repo.path, "git", "commit", "-q", "-F", "-", input=bad, tools_on_path=True)
    assert proc.returncode != 0 and "marker-missing" in out(proc)
    assert FOREIGN not in out(proc)


def test_hooks_install_outside_a_repository_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever holds the temp dir, git must not find a repository above it.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    run = run_cli(["hooks", "install"], cwd=tmp_path)
    assert run.exit_code == 2 and "not a git repository" in run.stderr
    assert list(tmp_path.iterdir()) == []


def test_hooks_installed_from_a_linked_worktree_guard_it(repo: Repo, tmp_path: Path) -> None:
    # An adopted repository: hooks judge only a tree that holds a protocol (SPEC §9.3).
    repo.commit("Start\n\nThe first commit.\n", {".agents/protocol.yaml": "{}\n"})
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    run = run_cli(["hooks", "install"], cwd=linked)
    assert run.exit_code == 0, run.stdout + run.stderr
    # Hooks live in the common git dir: every worktree of the repository shares them.
    for hook in ("pre-commit", "commit-msg"):
        assert os.access(repo.path / ".git" / "hooks" / hook, os.X_OK)
    (linked / "a.txt").write_text("<<<<<<< HEAD\na\n>>>>>>> b\n")
    subprocess.run(["git", "add", "-A"], cwd=linked, check=True)
    proc = run_as_user(linked, "git", "commit", "-q", "-m", "Add a", tools_on_path=True)
    assert proc.returncode != 0 and "conflict-marker" in out(proc)


# -- GitHub Actions --------------------------------------------------------------------------

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))


def load_workflow(text: str) -> dict:
    data = yaml.safe_load(text)
    assert isinstance(data, dict) and "jobs" in data, "a workflow has jobs"
    # YAML 1.1 reads the key `on` as the boolean true.
    data["on"] = data.pop(True, data.get("on"))
    assert data["on"], "a workflow has triggers"
    return data


def steps_of(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def tools_commands(steps: list[dict]) -> Iterator[tuple[dict, list[str]]]:
    """Each `tools …` command line of the steps' scripts, split as the shell splits it, up to
    the first shell operator (a redirection, ``||``…)."""
    for step in steps:
        for line in str(step.get("run", "")).splitlines():
            words = shlex.split(line, comments=True)
            if words and Path(words[0]).name == "tools":
                cut = [i for i, w in enumerate(words) if w in {">", ">>", "|", "||", "&&", ";"}]
                yield step, words[1 : cut[0] if cut else len(words)]


def _checkout_step(steps: list[dict]) -> dict:
    found = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert len(found) == 1
    return found[0]


def test_the_workflow_files_parse_and_name_what_exists() -> None:
    assert "ci.yml" in [p.name for p in WORKFLOWS]
    for path in WORKFLOWS:
        steps = steps_of(load_workflow(path.read_text()))
        for step in steps:
            if "uses" in step:  # an action pinned to a release, never a branch
                action, _, ref = step["uses"].partition("@")
                assert action and ref.startswith("v"), step["uses"]
            for word in shlex.split(str(step.get("run", "")), comments=True):
                if word.startswith(".ci/"):
                    assert os.access(ROOT / word, os.X_OK), f"{path.name} runs {word}"


def test_this_repository_workflow_runs_ci_run_then_the_range_gates() -> None:
    workflow = load_workflow((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    assert "pull_request" in workflow["on"]
    steps = steps_of(workflow)
    assert _checkout_step(steps)["with"]["fetch-depth"] == 0
    runs = [str(s.get("run", "")) for s in steps]
    torch_at = next(i for i, r in enumerate(runs) if "torch==" in r)
    ci_at = runs.index(".ci/run")
    gates = [(s, c) for s, c in tools_commands(steps) if "--format" in c]
    assert len(gates) == 1
    step, command = gates[0]
    assert torch_at < ci_at < runs.index(step["run"])
    assert command == [
        "preflight", "--config-from", "base", "--base", "origin/$BASE_REF",
        "--head", "$HEAD_SHA", "--format", "github",
    ]  # fmt: skip
    assert "pull_request" in step["if"]
    # The torch of the hosted runner is .ci/run's pin, the CPU build.
    pin = next(w for w in (ROOT / ".ci/run").read_text().split() if w.startswith("torch=="))
    assert pin in runs[torch_at].split()
    assert "--index-url https://download.pytorch.org/whl/cpu" in runs[torch_at]


def test_the_adopters_workflow_in_the_docs_installs_this_distribution() -> None:
    assert importlib.metadata.version(DIST_NAME) == __version__
    workflows = [load_workflow(b) for b in docs_yaml() if "jobs:" in b]
    assert len(workflows) == 1
    steps = steps_of(workflows[0])
    assert _checkout_step(steps)["with"]["fetch-depth"] == 0
    install = f'pip install "{DIST_NAME} @ git+https://github.com/<owner>/<repo>@<commit>"'
    assert any(install in str(s.get("run")) for s in steps)
    code = "".join(fenced_blocks(DOCS.read_text(), "sh") + docs_yaml())
    assert install in code
    assert "pip install tools" not in code  # the unrelated project of that name


@pytest.fixture
def pull_request(make_repo: Callable[..., Repo]) -> tuple[Repo, str]:
    """A pull request checked out as GitHub's workflow sees it: a full clone (``origin/main``),
    HEAD at GitHub's synthetic merge of the branch into main. Returns (clone, branch tip)."""
    origin = make_repo("origin")
    origin.tools("init")
    origin.commit(good("Start"), {"a.txt": "a\n"})
    origin.branch("topic")
    origin.commit(good("Add b"), {"b.txt": "b\n"})
    tip = origin.commit(good("Add c"), {"c.txt": "c\n"})
    origin.checkout("main")
    base = origin.commit(good("Change a"), {"a.txt": "a2\n"})
    clone = origin.clone(origin.path.parent / "checkout")
    clone.git("checkout", "-q", "--detach", "origin/main")
    clone.git("merge", "-q", "--no-ff", "--no-verify", "-m", f"Merge {tip} into {base}", tip)
    return clone, tip


def _workflow_commands() -> list[tuple[str, dict, list[str]]]:
    """(where, step, command) for every `tools` command of the workflows."""
    found = []
    for path in WORKFLOWS:
        steps = steps_of(load_workflow(path.read_text()))
        found += [(path.name, s, c) for s, c in tools_commands(steps)]
    for block in docs_yaml():
        data = yaml.safe_load(block)
        steps = data if isinstance(data, list) else steps_of(data) if "jobs" in data else []
        found += [("docs/ci.md", s, c) for s, c in tools_commands(steps)]
    return found


def test_every_tools_command_of_the_workflows_runs_on_a_pull_request(
    pull_request: tuple[Repo, str],
) -> None:
    clone, tip = pull_request
    # What GitHub puts in the expressions for a pull request into main, at this tip.
    github = {"${{ github.base_ref }}": "main", "${{ github.event.pull_request.head.sha }}": tip}
    commands = _workflow_commands()
    assert len(commands) >= 3  # this repository's gate step, the adopters' and its SARIF step
    for where, step, command in commands:
        values = {f"${name}": github[expr] for name, expr in step.get("env", {}).items()}
        args = []
        for word in command:
            for var, value in values.items():
                word = word.replace(var, value)
            assert "$" not in word, f"{where}: {word} is not set in the step's env"
            args.append(word)
        run = run_cli(args, cwd=clone.path)
        if "sarif" in args and "sarif" not in FORMATS:
            # docs/ci.md describes the SARIF upload ahead of --format sarif: until it lands,
            # the format is the one thing the command lacks.
            assert run.exit_code == 2 and "--format" in run.stderr, (where, run.stderr)
            continue
        assert run.exit_code == 0, (where, args, run.stdout, run.stderr)
        if "github" in args:
            assert "::error" not in run.stdout


def test_without_head_the_synthetic_merge_commit_joins_the_range(
    pull_request: tuple[Repo, str],
) -> None:
    clone, _ = pull_request
    # The starter config leaves merges out (`trailers.merges: skip`): the merge is in the
    # range, and counted as left out.
    run = run_cli(["preflight", "--base", "origin/main", "--format", "json"], cwd=clone.path)
    assert run.exit_code == 0, run.stdout + run.stderr
    trailers = next(g for g in run.json()["gates"] if g["gate"] == "trailers")
    assert trailers["stats"]["merges_skipped"] == 1
    # With merges judged, its message (no marker) fails.
    strict = clone.path.parent / "strict.yaml"
    strict.write_text("trailers: {merges: check}\n")
    args = ["--config", str(strict), "preflight", "--base", "origin/main", "--format", "github"]
    run = run_cli(args, cwd=clone.path)
    assert run.exit_code == 1
    assert "marker-missing" in run.stdout and "::error" in run.stdout
