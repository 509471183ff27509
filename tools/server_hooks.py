"""Server-side hooks (SPEC §13): ``pre-receive`` (and ``update``) in a bare repository on a
self-hosted server (plain git over ssh, Gitea, GitLab's server hooks).

A push cannot change its own rules: each updated branch's new commits are judged with the
protocol of the branch being updated, its current tip (``--config-from base``: the merge base of
the tip and the pushed commit, which is the tip itself for a fast-forward). A new branch is
judged from its merge base with the repository's default branch (``HEAD``), with ``HEAD``'s
protocol. A deletion is allowed, and so is anything that is not a branch (tags, notes). As on a
client (SPEC §9.3), a branch whose protocol commit holds no ``.agents/protocol.yaml`` is not
judged. The gates are pre-push's (:data:`tools.hooks.PUSH_GATES`): those that read a commit's
history or tree, since a bare repository has no working tree.

The hook refuses the whole push (git's pre-receive is all or nothing) with, per failing ref,
its findings and one line naming the ref; ``update`` judges one ref, and refuses only it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from tools import hooks
from tools.errors import UsageError
from tools.fsio import write_atomic
from tools.git import Git
from tools.options import Options
from tools.report import Report

SERVER_HOOKS = ("pre-receive", "update")
BRANCHES = "refs/heads/"


@dataclass(frozen=True)
class Received:
    """One ref a push updates, as git tells ``pre-receive``: its old and new sha and name."""

    old: str
    new: str
    ref: str


@dataclass(frozen=True)
class Said:
    """What a server hook prints (git relays both streams to the pusher) and its exit code."""

    out: str
    err: str
    code: int


def parse_receive_lines(data: bytes) -> list[Received]:
    """git's pre-receive stdin: one ``<old sha> <new sha> <ref>`` a line."""
    shape = "<old sha> <new sha> <ref>"
    return [Received(*parts) for parts in hooks.input_fields(data, "pre-receive", 3, shape)]


def update_args(args: list[str]) -> Received:
    """The one ref of the ``update`` hook: git passes ``REF OLD NEW``."""
    if len(args) != 3:
        raise UsageError("the update hook takes three arguments: REF OLD NEW")
    ref, old, new = args
    return Received(old, new, ref)


def options_for(git: Git, opts: Options, received: Received) -> Options | str:
    """The options that judge one pushed ref, or why it is not judged."""
    if not received.ref.startswith(BRANCHES):
        return "not a branch"
    if received.new == hooks.ZERO_SHA:
        return "deleted"
    if git.resolve(received.new) is None:
        raise UsageError(f"{received.ref}: the pushed commit {received.new} is not here")
    if received.old == hooks.ZERO_SHA:
        # A new branch: HEAD's commits are not its own; HEAD's protocol judges (in a bare
        # repository the config is read from HEAD).
        default = git.resolve("HEAD")
        if default is None or default == received.new:
            return "the default branch has no commits yet: no protocol to judge it with"
        rules, base, config_from = default, default, "head"
    else:
        # The branch's own tip: its merge base with the pushed commit holds the rules.
        rules = git.merge_base(received.old, received.new) or received.old
        base, config_from = received.old, "base"
    if not hooks.commit_has_protocol(git, rules):
        return f"no protocol at {rules[:12]}: not judged"
    return opts._replace(
        base=base, head=received.new, config_from=config_from, range_run=True, bare_ok=True
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _refused_line(ref: str, report: Report) -> str:
    errors: dict[str, int] = {}
    for gate in report.gates:
        for f in gate.findings:
            if f.severity == "error":
                errors[gate.gate] = errors.get(gate.gate, 0) + 1
    commits = max((g.stats.get("commits", 0) for g in report.gates), default=0)
    by_gate = ", ".join(f"{gate} {n}" for gate, n in errors.items())
    total = sum(errors.values())
    return (
        f"tools: {ref} refused: {_plural(total, 'error')} ({by_gate}) "
        f"in {_plural(int(commits), 'commit')}"
    )


def judge(git: Git, opts: Options, received: list[Received], started: float) -> Said:
    """The verdict on a push's refs: refused (exit 1) when any ref's gates fail."""
    from tools.report.text import failing_lines, skip_line

    body: list[str] = []
    refused: list[str] = []
    judged = green = 0
    for item in received:
        ref_opts = options_for(git, opts, item)
        if isinstance(ref_opts, str):
            continue
        judged += 1
        report = hooks.judge(ref_opts, hooks.PUSH_GATES)
        body += [skip_line(g) for g in report.gates if g.status == "skip"]
        if report.status == "fail":
            body += failing_lines(report, show_all=_shows(item))
            line = _refused_line(item.ref, report)
            body.append(line)
            refused.append(line)
        else:
            green += 1
    took = f"({hooks.elapsed_since(started):.1f} s)"
    if refused:
        tail = f"tools: push refused: {_plural(len(refused), 'ref')} of {judged} failed {took}"
        return Said("", "\n".join([*body, tail]) + "\n", 1)
    if not judged:
        return Said(f"tools: no branch to judge in this push {took}\n", "", 0)
    said = "\n".join([*body, f"tools: {_plural(green, 'branch')} judged, green {took}"])
    return Said(said + "\n", "", 0)


def _shows(item: Received) -> str:
    """The command that shows a refused ref's findings in full, in a clone with the commits."""
    base = "HEAD" if item.old == hooks.ZERO_SHA else item.old[:12]
    return f"tools preflight --config-from base --base {base} --head {item.new[:12]}"


def run(opts: Options, hook: str, args: list[str], stdin: bytes) -> Said:
    """Run ``hook`` (pre-receive or update) in the bare repository of ``opts``."""
    started = time.monotonic()
    git = Git(opts.repo, bare_ok=True)
    if not git.bare:
        raise UsageError(f"the {hook} hook runs in a bare repository (a server's)")
    received = parse_receive_lines(stdin) if hook == "pre-receive" else [update_args(args)]
    status = hooks.run_local(git, hook, args, stdin)
    if status != 0:
        return Said("", f"tools: {hook}.local (your own hook) failed with exit {status}\n", 1)
    return judge(git, opts, received, started)


def install(git: Git, *, force: bool) -> list[hooks.Installed]:
    """Install ``pre-receive`` in the bare repository of ``git``; a hook there that is not
    ours is kept (without ``force``) or moved to ``pre-receive.local``, which ours runs first."""
    if not git.bare:
        raise UsageError(
            f"--server installs server-side hooks in a bare repository; {git.root} has a "
            "working tree (run `tools hooks install` there instead)"
        )
    hook = "pre-receive"
    path = hooks.hooks_dir(git) / hook
    text = hooks.script(hook, hooks.tools_command())
    verb = "wrote"
    if path.exists() or path.is_symlink():
        old = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
        if old == text:
            return [hooks.Installed(path, "unchanged")]
        if hooks.is_ours(old):
            verb = "updated"
        elif not force:
            return [hooks.Installed(path, "kept (not ours; --force moves it to .local)")]
        else:
            local = path.with_name(hook + ".local")
            if local.exists() or local.is_symlink():
                raise UsageError(f"{local} exists already: merge {hook} into it by hand")
            os.replace(path, local)
            verb = f"moved yours to {local.name}, which runs first; wrote"
    write_atomic(path, text.encode("utf-8"), mode=0o755)
    return [hooks.Installed(path, verb)]
