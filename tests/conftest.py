"""One fixture that builds real git repositories in temp dirs, and runs the real CLI."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from tools.cli.main import app

# Deterministic identities and dates: tests must not depend on the machine's git config.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def __post_init__(self) -> None:
        # The exit-code contract, checked on every run of every test: exit 2 is one
        # `error:` line about the input, never a crash of ours (exit 3) in disguise.
        if self.exit_code == 2:
            assert self.stderr.startswith("error: "), self.stderr
            assert "internal error" not in self.stderr, self.stderr
            assert "Traceback" not in self.stderr, self.stderr
        if self.exit_code == 3:
            assert self.stderr.startswith("error: internal error: "), self.stderr

    def json(self) -> dict:
        data = json.loads(self.stdout)
        validate_report(data)
        return data

    def sarif(self) -> dict:
        """stdout as a SARIF log, validated against the official SARIF 2.1.0 schema."""
        data = json.loads(self.stdout)
        validate_sarif(data)
        return data


def validate_report(data: dict) -> None:
    schema = json.loads(resources.files("tools").joinpath("data", "report.schema.json").read_text())
    jsonschema.validate(data, schema)


# The OASIS SARIF 2.1.0 (errata 01) schema, vendored: tests/data/README.md names its source.
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"


@functools.cache
def _sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def validate_sarif(data: dict) -> None:
    _sarif_validator().validate(data)


class Repo:
    """A real git repository under a temp dir."""

    def __init__(self, path: Path, *, init: bool = True):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        if init:
            self.git("init", "-q", "-b", "main")
            self.git("config", "user.name", "Test Committer")
            self.git("config", "user.email", "committer@example.com")
            self.git("config", "commit.gpgsign", "false")
        self._tick = 0

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, input=input, capture_output=True, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}"
            )
        return proc.stdout.decode("utf-8", "surrogateescape")

    def git_bytes(self, *args: str) -> bytes:
        """``git args…`` stdout as bytes (for messages and blobs that must not be decoded)."""
        proc = subprocess.run(["git", *args], cwd=self.path, capture_output=True, check=True)
        return proc.stdout

    def write(self, rel: str, content: str | bytes) -> Path:
        full = self.path / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        full.write_bytes(content)
        return full

    def read(self, rel: str) -> bytes:
        return (self.path / rel).read_bytes()

    def commit(
        self,
        message: str | bytes = "Change things\n\nBody.\n",
        files: dict[str, str | bytes] | None = None,
        *,
        allow_empty: bool = True,
        date: str | None = None,
    ) -> str:
        """Write ``files``, stage everything and commit ``message`` verbatim (no cleanup)."""
        for rel, content in (files or {}).items():
            self.write(rel, content)
        self.git("add", "-A")
        if isinstance(message, str):
            message = message.encode()
        self._tick += 1
        env = dict(os.environ)
        stamp = date or f"2026-01-01T00:{self._tick // 60:02d}:{self._tick % 60:02d}Z"
        env.update({"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        args = ["git", "commit", "-q", "--cleanup=verbatim", "--no-verify", "-F", "-"]
        if allow_empty:
            args.append("--allow-empty")
        subprocess.run(args, cwd=self.path, input=message, env=env, check=True, capture_output=True)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).strip()

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("checkout", "-q", "-b", name, start)

    def checkout(self, rev: str) -> None:
        self.git("checkout", "-q", rev)

    def clone(self, dest: Path, *args: str) -> Repo:
        """A real clone of this repository (``args``: e.g. ``--depth 1``)."""
        subprocess.run(
            ["git", "clone", "-q", *args, f"file://{self.path}", str(dest)],
            check=True,
            capture_output=True,
        )
        return Repo(dest, init=False)

    def tools(self, *args: str, input: str | bytes | None = None) -> Run:
        """Run the real CLI in-process against this repository."""
        return run_cli(["--repo", str(self.path), *args], input=input)


def run_cli(args: list[str], input: str | bytes | None = None, cwd: Path | None = None) -> Run:
    runner = CliRunner()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = runner.invoke(app, args, input=input, prog_name="tools")
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Repo]:
    counter = {"n": 0}

    def factory(name: str | None = None, **kwargs: object) -> Repo:
        counter["n"] += 1
        return Repo(tmp_path / (name or f"repo{counter['n']}"), **kwargs)  # type: ignore[arg-type]

    return factory


@pytest.fixture
def repo(make_repo: Callable[..., Repo]) -> Repo:
    return make_repo("repo")


@pytest.fixture
def cli() -> Callable[..., Run]:
    return run_cli


# -- every declared rule fires somewhere in the suite -------------------------------------------
_FIRED: set[tuple[str, str]] = set()


def pytest_configure(config: pytest.Config) -> None:
    from tools.report import GateResult

    original = GateResult.add

    def recording_add(self: GateResult, rule: str, message: str, **kwargs: object):  # type: ignore[no-untyped-def]
        finding = original(self, rule, message, **kwargs)  # type: ignore[arg-type]
        _FIRED.add((self.gate, rule))
        return finding

    GateResult.add = recording_add  # type: ignore[method-assign]


def _full_run(session: pytest.Session) -> bool:
    opt = session.config.option
    tests_dir = Path(__file__).resolve().parent
    given = [Path(str(a).split("::")[0]).resolve() for a in session.config.args]
    return (
        not opt.collectonly
        and not opt.keyword
        and not opt.markexpr
        and not getattr(opt, "deselect", None)
        and given == [tests_dir]
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After a full, green run: a declared rule that no test made fire is a failure (the
    registry, the docs and the tests are tied together)."""
    if exitstatus != 0 or not _full_run(session):
        return
    import importlib
    import importlib.util

    from tools import gates
    from tools.report import declared

    have_torch = importlib.util.find_spec("torch") is not None
    for name, target in gates.all_modules().items():
        if name in gates.COMMAND_GATES and not have_torch:
            continue
        importlib.import_module(target)
    silent = sorted(
        (gate, rule)
        for gate, rules in declared().items()
        for rule in rules
        if (gate, rule) not in _FIRED and (have_torch or gate not in gates.COMMAND_GATES)
    )
    if silent:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        text = ", ".join(f"{gate}/{rule}" for gate, rule in silent)
        if reporter is not None:
            reporter.write_line(f"declared rules that no test made fire: {text}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
