"""The git hooks: what each judges, how they are installed, and how a foreign hook is kept.

Every installed hook is one ``exec`` of ``tools hooks run HOOK "$@"`` through the absolute
path of the ``tools`` that installed it, so it works without the virtual environment active
and fails closed, saying how to reinstall, when that executable is gone.

- ``pre-commit`` judges the staged change with the content gates only: it never judges the
  messages of commits already made, so an amend or a reword can replace a bad HEAD.
- ``commit-msg`` judges the message being written (trailers, with the placeholder check, and
  style), merges and fixups as configured.
- ``pre-push`` judges the commits being pushed with every configured gate that reads history
  or a commit's tree: it sees what the other hooks never do (commits made by ``revert``,
  ``cherry-pick``, ``rebase`` and ``am``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tools.config_model import ProtocolConfig
from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.git import Git, run_git
from tools.options import Options
from tools.report import GateResult, Report

HOOKS = ("pre-commit", "commit-msg", "pre-push")
# The gates that judge the staged change (SPEC §4.9's content gates).
CONTENT_GATES = ("conflicts", "index", "docs", "ratchet", "now", "spec", "links", "ledger")
MESSAGE_GATES = ("trailers", "style")
# What pre-push judges over the pushed range: the gates that read history, and the ratchet,
# which counts the pushed commit's own tree. conflicts, now, spec and links judge a working
# tree or the index (pre-commit's job, and CI's `tools preflight` on the checked-out head).
PUSH_GATES = ("trailers", "style", "index", "docs", "ledger", "merges", "ratchet")
# Every hook script we write carries this line; a hook without it is the user's own.
OURS = "# tools-hook:"
# Hooks written by earlier versions, before the marker line: ours too, replaced freely.
_LEGACY = "# Installed by `tools init` / `tools hooks install`"
ZERO_SHA = "0" * 40


# -- installing -------------------------------------------------------------------------------


def tools_command() -> list[str]:
    """The absolute command that runs this ``tools``: the console script that is running, or
    the one beside this interpreter, else this interpreter with ``-m tools`` (``-P`` keeps a
    repository's own ``tools/`` package from shadowing this one)."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "tools" and argv0.is_file():
        return [str(argv0.absolute())]
    beside = Path(sys.executable).parent / "tools"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, *flags, "-m", "tools"]


def script(hook: str, command: list[str]) -> str:
    """The text of one installed hook."""
    exe = command[0]
    run = " ".join(shlex.quote(part) for part in command)
    gone = (
        f"tools: {hook} hook: {exe} is gone; reinstall the hooks from the environment that "
        "has tools: tools hooks install --force"
    )
    return (
        "#!/bin/sh\n"
        f"{OURS} installed by `tools hooks install`; the work is `tools hooks run {hook}`.\n"
        f"if [ ! -x {shlex.quote(exe)} ]; then\n"
        f"    echo {shlex.quote(gone)} >&2\n"
        "    exit 1\n"
        "fi\n"
        f'exec {run} hooks run {hook} "$@"\n'
    )


def hooks_dir(git: Git) -> Path:
    """Where git runs this repository's hooks from (``core.hooksPath`` as configured)."""
    _, out, _ = run_git(
        git.root, "rev-parse", "--git-path", "hooks", repository=True, hooks_off=False
    )
    found = Path(out.decode().strip())
    return found if found.is_absolute() else git.root / found


def is_ours(text: str) -> bool:
    return OURS in text or _LEGACY in text


@dataclass(frozen=True)
class Installed:
    path: Path
    verb: str  # wrote | unchanged | updated | kept … | moved …

    @property
    def refused(self) -> bool:
        return self.verb.startswith("kept")


def install(git: Git, *, force: bool) -> list[Installed]:
    """Install the three hooks. Ours (of any version) are rewritten; a hook that is not ours
    is kept (without ``force``) or moved to ``HOOK.local``, which ours then calls first."""
    folder = hooks_dir(git)
    command = tools_command()
    done: list[Installed] = []
    for hook in HOOKS:
        path = folder / hook
        text = script(hook, command)
        verb = "wrote"
        if path.exists() or path.is_symlink():
            old = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
            if old == text:
                done.append(Installed(path, "unchanged"))
                continue
            if is_ours(old):
                verb = "updated"
            elif not force:
                done.append(Installed(path, "kept (not ours; --force moves it to .local)"))
                continue
            else:
                local = path.with_name(hook + ".local")
                if local.exists() or local.is_symlink():
                    raise UsageError(
                        f"{local} exists already: merge {path.name} into it by hand, then "
                        "run `tools hooks install --force` again",
                        where=str(path),
                    )
                os.replace(path, local)
                verb = f"moved yours to {local.name}, which runs first; wrote"
        write_atomic(path, text.encode("utf-8"), mode=0o755)
        done.append(Installed(path, verb))
    return done


# -- running ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PushedRef:
    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str


def parse_push_lines(data: bytes) -> list[PushedRef]:
    """git's pre-push stdin: one ``<local ref> <local sha> <remote ref> <remote sha>`` a line."""
    refs: list[PushedRef] = []
    for number, raw in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise UsageError(
                f"pre-push input line {number} is not `<local ref> <sha> <remote ref> <sha>`"
            )
        refs.append(PushedRef(*parts))
    return refs


def pre_commit_framework_ref(env: Mapping[str, str]) -> list[PushedRef]:
    """The pushed range as the pre-commit framework passes it (it reads git's stdin itself
    and sets ``PRE_COMMIT_FROM_REF`` / ``PRE_COMMIT_TO_REF``); none outside it."""
    to = env.get("PRE_COMMIT_TO_REF")
    if not to:
        return []
    local = env.get("PRE_COMMIT_LOCAL_BRANCH", "HEAD")
    remote = env.get("PRE_COMMIT_REMOTE_BRANCH", local)
    return [PushedRef(local, to, remote, env.get("PRE_COMMIT_FROM_REF") or ZERO_SHA)]


def run_local(git: Git, hook: str, args: list[str], stdin: bytes) -> int:
    """Run the user's own hook kept as ``HOOK.local`` (first, as git would have); its status."""
    local = hooks_dir(git) / f"{hook}.local"
    if not (local.is_file() and os.access(local, os.X_OK)):
        return 0
    proc = subprocess.run([str(local), *args], input=stdin, check=False)
    return proc.returncode


def configured(names: tuple[str, ...], config: ProtocolConfig) -> list[str]:
    """The gates of ``names`` a hook runs: the message gates always (their own ``enabled``
    keys switch them off, as the commit-msg hook always did), the others as far as
    ``preflight.gates`` lists them."""
    wanted = set(config.preflight.gates) | set(MESSAGE_GATES)
    return [name for name in names if name in wanted]


def judge(opts: Options, names: tuple[str, ...]) -> Report:
    """The configured gates among ``names``, on one context built from ``opts``."""
    from tools import gates
    from tools.context import Context

    ctx = Context(opts)
    return gates.judged(ctx, gates.run_all(configured(names, ctx.config), ctx))


def push_options(git: Git, base: Options, ref: PushedRef) -> Options | None:
    """The range options that judge one pushed ref (None: a deleted ref, nothing to judge).
    An existing remote ref that is known here bounds the range; a new branch, or a remote sha
    this clone does not have (a force-push over unfetched work), is judged from its merge base
    with the config's ``base``."""
    if ref.local_sha == ZERO_SHA:
        return None
    since = None
    if ref.remote_sha != ZERO_SHA and git.resolve(ref.remote_sha) is not None:
        since = ref.remote_sha
    # Every other option kept; a pushed range is a range run (the protocol pseudo-gate
    # reports what it changes).
    return base._replace(base=since, head=ref.local_sha, range_run=True)


def pending(git: Git) -> GateResult | None:
    from tools.gates import inplace_pending

    return inplace_pending.run(git)


def green_line(report: Report, seconds: float) -> str | None:
    """The one line of a green hook; None when the report has something to show."""
    if report.status != "pass":
        return None
    findings = [f for g in report.gates for f in g.findings]
    # Recorded debt (the findings baseline) is counted on the line, not listed on every commit.
    if any(f.severity != "info" and f.baseline_state != "unchanged" for f in findings):
        return None
    debt = sum(1 for f in findings if f.baseline_state == "unchanged")
    owed = f", {debt} finding{'s' if debt != 1 else ''} of recorded debt (tools baseline show)"
    n = len(report.gates)
    if n == 0:
        return f"tools: nothing to judge ({seconds:.1f} s)\n"
    return f"tools: {n} gate{'s' if n != 1 else ''} green{owed if debt else ''} ({seconds:.1f} s)\n"


def elapsed_since(start: float) -> float:
    return time.monotonic() - start
