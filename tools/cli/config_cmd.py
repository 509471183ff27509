"""``tools config validate|schema|show`` and ``tools init``."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tools.cli.common import F, ResultType, command, emit, new_app, show
from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.options import Options
from tools.package_data import data_text

if TYPE_CHECKING:
    from tools.config_model import ProtocolConfig
    from tools.git import Git

# Heavy modules (the git layer, jsonschema, yaml) load inside the commands: `tools --help`
# stays fast (for speed, not to hide an import circle).

INDEX_DRIVER = "agent-index"


def _write_if_absent(path: Path, text: str, *, force: bool, mode: int | None = None) -> str:
    """Write ``text`` unless a different file is there (then only with force). Returns a verb."""
    if path.exists():
        if path.read_bytes() == text.encode():
            return "unchanged"
        if not force:
            return "kept (differs; --force to overwrite)"
    write_atomic(path, text.encode("utf-8"), mode=mode)
    return "wrote"


def starter_config(git: Git) -> str:
    """The starter config, its base the repository's detected default branch."""
    text = data_text("protocol.starter.yaml")
    base = git.default_branch()
    if base is None:
        return text
    return text.replace("\nbase: origin/main\n", f"\nbase: {json.dumps(base)}\n", 1)


def _gitattributes_lines(cfg: ProtocolConfig) -> list[str]:
    return [
        f"{cfg.index.path} merge={INDEX_DRIVER}",
        f"{cfg.ledger.path} merge=union",
    ]


def _ensure_lines(path: Path, lines: list[str], *, force: bool) -> str:
    """Append the missing attribute lines; a path given another merge attribute is kept
    unless --force, which replaces that line."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    current = old.split("\n")
    changed = False
    refused = False
    for line in lines:
        if line in current:
            continue
        target = line.split()[0]
        clash = [i for i, c in enumerate(current) if c.split()[:1] == [target] and "merge=" in c]
        if clash:
            if not force:
                refused = True
                continue
            for i in clash:
                current[i] = line
        else:
            if current and current[-1] == "":
                current[-1] = line
                current.append("")
            else:
                current.append(line)
        changed = True
    if not changed:
        return "kept (differs; --force to overwrite)" if refused else "unchanged"
    text = "\n".join(current)
    if not text.endswith("\n"):
        text += "\n"
    write_atomic(path, text.encode("utf-8"))
    return "updated"


def _now_digest(headings: list[str], today: str) -> str:
    """A digest that passes the ``now`` gate of the config it is written for."""
    parts = [f"# NOW\n<!-- now-updated: {today} -->\n"]
    for heading in headings:
        title = heading.strip()
        parts.append(f"\n## {title[:1].upper()}{title[1:]}\n- (none yet)\n")
    return "".join(parts)


def _index_header() -> str:
    from tools import index_table

    return (
        "# Issue index\n\nAppend-only: one row per issue, appended at the tail "
        "(`tools index append`).\n\n"
        f"{index_table.HEADER_LINE}\n{index_table.DELIMITER_LINE}\n"
    )


def _write_absent(path: Path, text: str) -> str:
    """Content files (the digest, the index) are written only where absent, even with
    --force: they hold the repository's own record, never a stub to refresh."""
    if path.exists() or path.is_symlink():
        return "exists"
    write_atomic(path, text.encode("utf-8"))
    return "wrote"


def _register_driver(git: Git, *, force: bool) -> str:
    from tools import hooks

    driver = f"merge.{INDEX_DRIVER}.driver"
    want = {
        f"merge.{INDEX_DRIVER}.name": "tools: ordered union of the append-only issue index",
        # The absolute `tools` that installs it, failing closed (SPEC §9.3).
        driver: hooks.driver_command(hooks.tools_command()),
    }
    verbs = []
    for key, value in want.items():
        status, out = git.run("config", "--local", "--get", key, ok=(0, 1))
        have = out.decode().strip() if status == 0 else None
        if have == value:
            verbs.append("unchanged")
        elif have is not None and key == driver and hooks.is_our_driver(have):
            git.run("config", "--local", key, value)  # ours, of any version or install
            verbs.append("wrote")
        elif have is not None and not force:
            verbs.append("kept (differs; --force to overwrite)")
        else:
            git.run("config", "--local", key, value)
            verbs.append("wrote")
    return "wrote" if "wrote" in verbs else verbs[-1] if "kept" in verbs[-1] else verbs[0]


FileArg = Annotated[Path | None, typer.Argument(help="Config file (default: the repo's).")]


def config_validate(opts: Options, file: FileArg = None) -> None:
    """Validate a config file against the schema; exit 2 naming the key path if it is bad."""
    from tools import config as config_mod
    from tools.cli.results.config import ConfigValid
    from tools.git import Git

    if file is not None:
        if not file.is_file():
            raise UsageError("config file not found", where=str(file))
        config_mod.load_file(file, display=str(file))
        show(ConfigValid(str(file)), opts)
        return
    git = Git(opts.repo)
    _, source = config_mod.load(
        git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache
    )
    show(ConfigValid(str(source) if source else None), opts)


def config_schema() -> None:
    """Print the JSON Schema of the config."""
    from tools import config as config_mod

    emit(json.dumps(config_mod.schema(), indent=2) + "\n")


def config_show(opts: Options) -> None:
    """Print the effective config, defaults filled in."""
    from tools import config as config_mod
    from tools.cli.results.config import ConfigShown
    from tools.git import Git

    git = Git(opts.repo)
    cfg, source = config_mod.load(
        git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache
    )
    show(ConfigShown(cfg, str(source) if source else None), opts)


ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite what differs.")]
AdoptOpt = Annotated[
    bool,
    typer.Option(
        "--adopt",
        help="Adopt a repository with history: detect its trailer conventions, "
        "baseline today's ratchet counts and findings as debt.",
    ),
]


WithOpt = Annotated[
    str | None,
    typer.Option(
        "--with",
        help="With --adopt: keep these protocol files although the tree has none "
        "(comma-separated: now, index, ratchet).",
    ),
]


def _wanted(value: str | None, *, adopt: bool) -> set[str]:
    from tools.adopt.learn_files import WITH_CHOICES

    if value is None:
        return set()
    if not adopt:
        raise UsageError("--with: only with --adopt (plain `tools init` writes every file)")
    wanted = {part.strip() for part in value.split(",") if part.strip()}
    unknown = sorted(wanted - set(WITH_CHOICES))
    if unknown:
        raise UsageError(
            f"--with: unknown {', '.join(unknown)} (choose from {', '.join(WITH_CHOICES)})"
        )
    return wanted


def init(
    opts: Options,
    force: ForceOpt = False,
    adopt: AdoptOpt = False,
    with_: WithOpt = None,
) -> None:
    """Write a starter config, .gitattributes lines, the merge driver, hook stubs, and
    what the config's gates require that is absent (a stamped NOW digest, the index).

    Idempotent; anything that exists and differs is kept unless --force (then exit 1);
    the digest and the index are never overwritten.
    """
    from tools import config as config_mod
    from tools import hooks
    from tools.cli.results.config import InitDone
    from tools.git import Git

    wanted = _wanted(with_, adopt=adopt)
    git = Git(opts.repo)
    cfg_path = git.root / config_mod.DEFAULT_PATH
    text = starter_config(git)
    evidence: list[str] = []
    if adopt:
        from tools.adopt.learn import adopted_config

        text, evidence = adopted_config(git, text, wanted)
    steps = [
        (
            str(cfg_path.relative_to(git.root)),
            _write_if_absent(cfg_path, text, force=force),
        )
    ]
    cfg = config_mod.load_typed(
        git.root, opts.config, tools_dir=git.tools_dir(), no_cache=opts.no_cache
    )
    steps += _repository_files(git, cfg, force=force)
    steps += [(os.path.relpath(h.path, git.root), h.verb) for h in hooks.install(git, force=force)]
    notes: list[str] = []
    if adopt:
        more, notes = _adopt_state(opts, force=force)
        steps += more
    done = InitDone(tuple(steps), tuple(evidence), tuple(notes))
    show(done, opts, exit_code=1 if done.refused else 0)


def _repository_files(git: Git, cfg: ProtocolConfig, *, force: bool) -> list[tuple[str, str]]:
    """The attribute lines, the merge driver, and what the config's gates require, so that
    the next commit can pass: (what, verb) per step."""
    steps = [
        (
            ".gitattributes",
            _ensure_lines(git.root / ".gitattributes", _gitattributes_lines(cfg), force=force),
        )
    ]
    steps.append((f"git config merge.{INDEX_DRIVER}.*", _register_driver(git, force=force)))
    gates = set(cfg.preflight.gates)
    if "now" in gates:
        today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        now_path = cfg.now.path
        text = _now_digest(list(cfg.now.headings), today)
        steps.append((now_path, _write_absent(git.root / now_path, text)))
    if "index" in gates:
        index_path = cfg.index.path
        steps.append((index_path, _write_absent(git.root / index_path, _index_header())))
    return steps


def register(app: typer.Typer) -> None:
    cfg_app = new_app("The configuration .agents/protocol.yaml.")

    def writes(name: str) -> Callable[[F], F]:
        return command(formats=ResultType("tools.cli.results.config", name))

    cfg_app.command("validate")(writes("ConfigValid")(config_validate))
    cfg_app.command("schema")(config_schema)
    cfg_app.command("show")(writes("ConfigShown")(config_show))
    app.add_typer(cfg_app, name="config")
    app.command("init")(writes("InitDone")(init))


def _adopt_state(opts: Options, *, force: bool) -> tuple[list[tuple[str, str]], list[str]]:
    """Ratchet baselines at today's counts, then the findings baseline of what is left, and
    the lines that say what is now recorded as debt."""
    from tools.adopt import state
    from tools.context import Context

    ctx = Context(opts)
    steps: list[tuple[str, str]] = []
    notes: list[str] = []
    for step in state.ratchet_baselines(ctx, force=force):
        steps.append((step.what, step.verb))
        notes.append(f"ratchet baseline {step.detail}")
    # A fresh context: the findings are judged against the baselines just written.
    findings = state.findings_baseline(Context(opts), force=force)
    steps.append((findings.what, findings.verb))
    per_rule = ", ".join(f"{rule} {n}" for rule, n in sorted(findings.debt.items()))
    notes.append(f"debt: {findings.detail}" + (f" ({per_rule})" if per_rule else ""))
    return steps, notes
