"""The steps of the GitHub Action (``action.yml`` at the repository root, SPEC §13).

``python -P -m tools.github_action range`` reads the event GitHub ran the job for
(``GITHUB_EVENT_NAME``, the payload at ``GITHUB_EVENT_PATH``) and writes the range to judge to
``GITHUB_OUTPUT``: on a pull request, ``origin/<base ref>`` to the pull request's head sha; on
a push, ``before..after``, a new branch (or a force-push whose old tip is not here) from its
merge base with the default branch; a deletion is not judged. ``... preflight`` runs
``tools preflight --config-from <config-from> --base B --head H``: the annotations (github
format, §9.3's order and cap) in the log, the Markdown summary in ``GITHUB_STEP_SUMMARY``, the
SARIF log where the ``sarif`` input says, and the report's status as the ``status`` output.
Its exit code is preflight's. Bad input is one ``error:`` line and exit 2.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ZERO = "0" * 40
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


class ActionError(Exception):
    """The action was given something it cannot use (exit 2)."""


@dataclass(frozen=True)
class Range:
    """What to judge: ``base`` and ``head`` revisions, or why nothing (``skip``)."""

    base: str = ""
    head: str = ""
    skip: str = ""
    fork: bool = False


def _get(payload: Mapping[str, Any], *keys: str) -> str:
    value: Any = payload
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) else ""


def select(event: str, payload: Mapping[str, Any], sha: str, known: Callable[[str], bool]) -> Range:
    """The range of ``event`` (its ``payload``; ``sha``: ``GITHUB_SHA``); ``known(rev)`` says
    whether a revision is in the clone."""
    default = _get(payload, "repository", "default_branch") or "main"
    if event in PULL_REQUEST_EVENTS:
        base_ref = _get(payload, "pull_request", "base", "ref")
        head = _get(payload, "pull_request", "head", "sha")
        if not base_ref or not head:
            raise ActionError(f"the {event} payload names no base ref or head sha")
        fork = _get(payload, "pull_request", "head", "repo", "full_name") != _get(
            payload, "pull_request", "base", "repo", "full_name"
        )
        return Range(f"origin/{base_ref}", head, fork=fork)
    if event == "push":
        before, after = _get(payload, "before"), _get(payload, "after")
        ref = _get(payload, "ref")
        if payload.get("deleted") or after in ("", ZERO):
            return Range(skip=f"the push deleted {ref or 'a ref'}: nothing to judge")
        if before in ("", ZERO) or not known(before):
            # A new branch, or a force-push over history this clone lacks: its own commits.
            return Range(f"origin/{default}", after)
        return Range(before, after)
    # Anything else (a manual run, a schedule): the checked-out commit against the default.
    return Range(f"origin/{default}", sha or "HEAD")


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], capture_output=True, check=False)


def known(rev: str) -> bool:
    """Whether ``rev`` names a commit of the clone in the current directory."""
    return _git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}").returncode == 0


def fetch_missing(selected: Range) -> None:
    """Fetch the base branch or the head commit where the checkout left them out (a default
    ``actions/checkout`` fetches one commit); what cannot be fetched is left to preflight,
    which says so."""
    if selected.base.startswith("origin/") and not known(selected.base):
        branch = selected.base[len("origin/") :]
        _git(
            "fetch",
            "-q",
            "--no-tags",
            "origin",
            f"+refs/heads/{branch}:refs/remotes/{selected.base}",
        )
    if selected.head and not known(selected.head):
        _git("fetch", "-q", "--no-tags", "origin", selected.head)


def _write(env: Mapping[str, str], name: str, text: str) -> None:
    target = env.get(name)
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(text)


def step_range(env: Mapping[str, str]) -> int:
    """Write ``base``, ``head``, ``skip`` and ``fork`` to ``GITHUB_OUTPUT``."""
    event = env.get("GITHUB_EVENT_NAME", "")
    path = env.get("GITHUB_EVENT_PATH", "")
    try:
        payload = json.loads(Path(path).read_bytes()) if path else {}
    except (OSError, ValueError) as exc:
        raise ActionError(f"GITHUB_EVENT_PATH {path!r} is no event payload: {exc}") from exc
    if not isinstance(payload, dict):
        raise ActionError(f"GITHUB_EVENT_PATH {path!r} is no event payload (not an object)")
    selected = select(event, payload, env.get("GITHUB_SHA", ""), known)
    if not selected.skip:
        fetch_missing(selected)
    fields = {
        "base": selected.base,
        "head": selected.head,
        "skip": selected.skip,
        "fork": "true" if selected.fork else "false",
    }
    _write(env, "GITHUB_OUTPUT", "".join(f"{k}={v}\n" for k, v in fields.items()))
    return 0


def tools_command() -> list[str]:
    """This installation's ``tools``: the console script beside this interpreter (never a
    ``tools/`` package of the repository being judged), else ``python -P -m tools``."""
    beside = Path(sys.executable).parent / "tools"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    return [sys.executable, "-P", "-m", "tools"]


def preflight_args(env: Mapping[str, str]) -> list[str]:
    """``tools preflight``'s arguments from the action's inputs and the selected range."""
    require = env.get("TOOLS_REQUIRE_COMMITS", "false").strip().lower()
    if require not in ("true", "false", ""):
        raise ActionError(f"require-commits: {require!r} is not true or false")
    try:
        extra = shlex.split(env.get("TOOLS_ARGS", ""))
    except ValueError as exc:
        raise ActionError(f"args: {exc}") from exc
    args = ["preflight", "--config-from", env.get("TOOLS_CONFIG_FROM") or "base"]
    args += ["--base", env.get("TOOLS_BASE", ""), "--head", env.get("TOOLS_HEAD", "")]
    if require == "true":
        args.append("--require-commits")
    return args + extra


def _run(args: list[str], fmt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tools_command(), *args, "--format", fmt], capture_output=True, text=True, check=False
    )


def step_preflight(env: Mapping[str, str]) -> int:
    """Judge the range; write the annotations, the summary, the SARIF log and ``status``."""
    from tools.report.summary import markdown, unjudged

    if env.get("TOOLS_SKIP"):
        _write(env, "GITHUB_STEP_SUMMARY", unjudged(env["TOOLS_SKIP"]))
        _write(env, "GITHUB_OUTPUT", "status=skip\n")
        print(f"tools: {env['TOOLS_SKIP']}")
        return 0
    args = preflight_args(env)
    judged = _run(args, "json")
    if judged.returncode not in (0, 1):
        # Could not judge (exit 2) or failed itself (3): its one error line says why.
        sys.stderr.write(judged.stderr)
        _write(env, "GITHUB_STEP_SUMMARY", unjudged(judged.stderr.strip() or "tools failed"))
        _write(env, "GITHUB_OUTPUT", "status=fail\n")
        return judged.returncode
    report = json.loads(judged.stdout)
    sys.stdout.write(_run(args, "github").stdout)
    sarif = env.get("TOOLS_SARIF", "")
    if sarif:
        Path(sarif).parent.mkdir(parents=True, exist_ok=True)
        Path(sarif).write_text(_run(args, "sarif").stdout, encoding="utf-8")
        if env.get("TOOLS_FORK") == "true":
            print(
                f"::notice title=tools/sarif::SARIF written to {sarif}; a fork's pull request "
                "has no security-events: write, so an upload from this job is refused"
            )
    _write(env, "GITHUB_STEP_SUMMARY", markdown(report))
    _write(env, "GITHUB_OUTPUT", f"status={report['status']}\n")
    return judged.returncode


def main(argv: list[str] | None = None) -> int:
    """``range`` or ``preflight``, with GitHub's environment; exit 2 on bad input."""
    argv = sys.argv[1:] if argv is None else argv
    steps = {"range": step_range, "preflight": step_preflight}
    try:
        if len(argv) != 1 or argv[0] not in steps:
            raise ActionError("usage: python -P -m tools.github_action range|preflight")
        return steps[argv[0]](os.environ)
    except ActionError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
