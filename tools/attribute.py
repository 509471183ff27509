"""``tools attribute``: which commit broke the test, proven both ways.

1. In a detached worktree, the test is checked at ``good`` (must pass) and ``bad`` (must
   fail), then ``git bisect`` walks ``good..bad`` with the ``git bisect run`` exit-code
   protocol: a build that fails (or runs past the timeout) is a skip (125); the test's 0 is
   good, 125 a skip, 1–127 bad; any other status aborts, as it does for ``git bisect run``.
2. At ``bad``, the first bad commit C's changes to the named paths (default: every path C
   touched) are reverted (C's diff applied in reverse; where that no longer applies, the
   paths take their content at C's parent) and the test must pass; then the paths are
   restored, their sha256 must equal ``bad``'s again, and the test must fail.

Only both directions give ATTRIBUTED; anything else is NOT-ATTRIBUTED with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError
from tools.git import GitError, decode, run_git
from tools.mutate import apply as ap
from tools.mutate import verdicts as vd
from tools.mutate.arm_result import (
    MACHINE,
    ArmResult,
    Classification,
    Control,
    Step,
    Verdict,
    against_control,
    classify,
)
from tools.mutate.plan import Quiet, check_inside
from tools.mutate.proc import Registry, StepResult, run_step
from tools.mutate.runner import hash_artifacts

if TYPE_CHECKING:
    from tools.git import Git

_SHA_LINE = re.compile(rb"^([0-9a-f]{40,64}) is the first bad commit", re.MULTILINE)
_SHA_ONLY = re.compile(rb"^[0-9a-f]{40,64}$")


@dataclass
class Job:
    good: str
    bad: str
    test: str
    build: str | None
    paths: list[str] | None
    spec: str | None
    artifacts: list[str] = field(default_factory=list)
    empty_when: re.Pattern[str] | None = None
    quiet: Quiet | None = None


def prepare(
    git: Git,
    *,
    good: str,
    bad: str,
    test: str,
    build: str | None,
    paths: list[str] | None,
    spec: str | None,
    artifacts: list[str] | None = None,
    empty_when: str | None = None,
    quiet: Quiet | None = None,
) -> Job:
    """Resolve and check the arguments (UsageError, exit 2, for any that cannot be judged)."""
    from tools.repo_paths import is_repo_relative

    shas = {}
    for flag, rev in (("--good", good), ("--bad", bad)):
        sha = git.resolve(rev)
        if sha is None:
            raise UsageError(f"revision {rev!r} does not resolve", where=flag, expected="a commit")
        shas[flag] = sha
    if shas["--good"] == shas["--bad"]:
        raise UsageError("--good and --bad name the same commit", where="--bad")
    if not git.is_ancestor(shas["--good"], shas["--bad"]):
        raise UsageError(
            f"{good!r} is not an ancestor of {bad!r}", where="--good", expected="good before bad"
        )
    if not test.strip():
        raise UsageError("the test command is empty", where="--test")
    _check_paths(git.root, paths or [], "--path")
    if spec is not None:
        if not is_repo_relative(spec):
            raise UsageError(f"{spec!r} is not inside the repository", where="--spec")
        if not check_inside(git.root, spec, "--spec").is_file():
            raise UsageError(f"spec {spec!r} not found", where="--spec")
    _check_paths(git.root, artifacts or [], "--artifact")
    pattern = None
    if empty_when is not None:
        try:
            pattern = re.compile(empty_when, re.MULTILINE)
        except re.error as exc:
            raise UsageError(f"not a regular expression: {exc}", where="--empty-when") from None
    return Job(
        shas["--good"],
        shas["--bad"],
        test,
        build or None,
        paths or None,
        spec,
        list(artifacts or []),
        pattern,
        quiet,
    )


def _check_paths(root: Path, paths: list[str], flag: str) -> None:
    """Each of ``paths`` (given with ``flag``) is repo-relative and stays inside the tree."""
    from tools.repo_paths import is_repo_relative

    for path in paths:
        if not is_repo_relative(path):
            raise UsageError(
                f"{path!r} is not inside the repository",
                where=flag,
                expected="a repo-relative path",
            )
        check_inside(root, path, flag)


def _label(step_build: StepResult | None, step_test: StepResult | None) -> str:
    """good | bad | skip | abort, by the ``git bisect run`` protocol (exit codes only; the
    machine verdicts are decided by :meth:`_Runner.step`). A crash signal is a real failure:
    bad."""
    if step_build is not None and (step_build.timed_out or step_build.rc != 0):
        return "skip"
    assert step_test is not None
    if step_test.timed_out or step_test.rc == 125:
        return "skip"
    rc = step_test.rc
    assert rc is not None
    if rc == 0:
        return "good"
    if 1 <= rc <= 127 or step_test.signal in vd.CRASH_SIGNALS:
        return "bad"
    return "abort"


class _Runner:
    def __init__(self, job: Job, tree: Path, timeout: float, registry: Registry):
        self.job, self.tree, self.timeout, self.registry = job, tree, timeout, registry
        # The artifacts of the step before, and its commit: a build that left them as they
        # were at another commit did not rebuild (STALE).
        self.last: tuple[str, list[dict[str, Any]]] | None = None

    def build(self) -> StepResult | None:
        if not self.job.build:
            return None
        return run_step(self.job.build, self.tree, timeout=self.timeout, registry=self.registry)

    def test(self) -> StepResult:
        return run_step(self.job.test, self.tree, timeout=self.timeout, registry=self.registry)

    def quiet(self) -> dict[str, Any] | None:
        from tools.mutate.conditions import wait_quiet

        q = self.job.quiet
        if q is None:
            return None
        return wait_quiet(
            q.max_load,
            q.wait_s,
            tick=lambda left, load: None,
            cancelled=self.registry.cancelled.is_set,
        )

    def step(self) -> tuple[str, dict[str, Any]]:
        """Build and test at the tree's commit: the label and the step's record. A step
        that is KILLED, EMPTY, STALE, ENV-FAULT or NO-QUIET-WINDOW is a skip (125), and so
        is a build that fails or runs past the timeout (NO-BUILD, TIMEOUT): the verdicts
        are :func:`~tools.mutate.arm_result.classify`'s, the step's artifacts compared with
        the step before's at another commit as an arm's are with its control's."""
        head = decode(run_git(self.tree, "rev-parse", "HEAD")[1]).strip()
        info: dict[str, Any] = {
            "commit": head,
            "label": "skip",
            "compile_rc": None,
            "run_rc": None,
            "timed_out": False,
            "verdict": None,
            "signal": None,
        }
        quiet = self.quiet()
        if quiet is not None:
            info["quiet"] = quiet
            self.registry.check()
        seen = ArmResult(head, quiet=quiet, applied=True, test_command=self.job.test)
        if self._skipped(seen, info):
            return "skip", info
        b = self.build()
        if b is not None:
            info["compile_rc"], info["signal"] = b.rc, b.signal
            info["timed_out"] = b.timed_out
            seen = replace(seen, build=_observed(b))
            if self._skipped(seen, info):
                return "skip", info
        if self.job.artifacts:
            arts = hash_artifacts(self.tree, self.job.artifacts)
            info["artifacts"] = arts
            last, self.last = self.last, (head, arts)
            seen = replace(seen, artifacts=tuple((a["path"], a["sha256"]) for a in arts))
            if self._skipped(seen, info, last):
                return "skip", info
        t = self.test()
        info["run_rc"], info["timed_out"] = t.rc, t.timed_out
        info["signal"] = info["signal"] or t.signal
        seen = replace(seen, tests=(_observed(t),), empty_when=self.job.empty_when)
        if self._skipped(seen, info):
            return "skip", info
        label = _label(b, t)
        info["label"] = label
        return label, info

    def _skipped(
        self,
        seen: ArmResult,
        info: dict[str, Any],
        last: tuple[str, list[dict[str, Any]]] | None = None,
    ) -> bool:
        """Whether what the step has seen so far decides a verdict other than the exit
        codes' (GREEN, RED: then the bisect protocol labels the step); noted in ``info``.
        ``last``: the step before (its commit and artifacts), for STALE."""
        control = None
        if last is not None and last[0] != seen.arm:
            arts = {str(a["path"]): a["sha256"] for a in last[1]}
            control = Control(last[0], Verdict.GREEN, arts, ran_with=False)
        got = classify(seen, control)
        if got.verdict is None or got.verdict in (Verdict.GREEN, Verdict.RED):
            return False
        info["verdict"] = got.verdict.value
        if got.verdict is Verdict.STALE:
            assert last is not None
            info["stale_of"] = last[0]
        elif got.match:
            info["matched"] = got.match.record()
        return True


def _checkout(tree: Path, sha: str) -> None:
    run_git(tree, "checkout", "--force", "--detach", "--quiet", sha)


def _bisect(
    runner: _Runner, job: Job, steps: list[dict[str, Any]], note: Callable[[str], None]
) -> tuple[str | None, list[str], str | None]:
    """(first bad, candidates when ambiguous, reason when it fails)."""
    tree = runner.tree
    _, out, err = run_git(tree, "bisect", "start", job.bad, job.good, "--", ok=(0, 1, 2))
    while True:
        found = _SHA_LINE.search(out)
        if found:
            return decode(found.group(1)), [], None
        if b"only 'skip'ped commits left" in out:
            tail = out.split(b"could be any of:", 1)[-1]
            cands = [decode(x) for x in tail.split() if _SHA_ONLY.match(x)]
            short = ", ".join(c[:12] for c in cands)
            return (
                None,
                cands,
                (
                    f"bisection cannot separate {short}: the commits between them were skipped "
                    "(their build fails, or the test exits 125), so the break needs the changes "
                    "of more than one commit to be judged"
                ),
            )
        if not out.strip() and err.strip():
            raise GitError(f"git bisect: {decode(err).strip()}")
        label, info = runner.step()
        steps.append(info)
        said = f" ({info['verdict']})" if info.get("verdict") else ""
        note(f"bisect: {info['commit'][:12]} is {label}{said}")
        if label == "abort":
            return (
                None,
                [],
                (
                    f"the test exited {info['run_rc']} at {info['commit'][:12]}: outside the "
                    "bisect protocol (0 good, 1-127 bad, 125 skip), so bisection stopped"
                ),
            )
        # A build may rewrite tracked files; the next checkout must not trip over them.
        run_git(tree, "reset", "--hard", "--quiet")
        _, out, err = run_git(tree, "bisect", label, ok=(0, 1, 2))


def _changed_paths(tree: Path, commit: str) -> list[str]:
    """Every path ``commit`` changed relative to its first parent (renames as two paths)."""
    _, out, _ = run_git(
        tree, "diff-tree", "-r", "--no-renames", "--name-only", "-z", f"{commit}^", commit, "--"
    )
    return [decode(p) for p in out.split(b"\0") if p]


def _revert(tree: Path, commit: str, paths: list[str]) -> str:
    """Undo ``commit``'s changes to ``paths`` in ``tree``: its diff in reverse, or, where that
    no longer applies, each path's content at ``commit^``. Returns the method used."""
    _, diff, _ = run_git(
        tree,
        "--literal-pathspecs",
        "diff",
        "--binary",
        "--no-renames",
        "--no-ext-diff",
        "--no-color",
        f"{commit}^",
        commit,
        "--",
        *paths,
    )
    if diff.strip():
        status, _, _ = run_git(
            tree, "apply", "-R", "--whitespace=nowarn", "-", input=diff, ok=range(256)
        )
        if status == 0:
            return "reverse-patch"
    for path in paths:
        ap.write_state(tree, path, ap.state_at(tree, f"{commit}^", path))
    return "content"


def judge(
    revert: dict[str, Any], restore: dict[str, Any], *, changed: bool, first_bad: str
) -> tuple[str, str | None]:
    """ATTRIBUTED only when reverting turned the test green and restoring (sha256-verified)
    turned it red again; otherwise NOT-ATTRIBUTED with the direction(s) that failed."""
    c = first_bad[:12]
    if not changed:
        return "NOT-ATTRIBUTED", f"reverting {c}'s changes changed no file at bad"
    reasons = []
    for name, leg in (("revert", revert), ("restore", restore)):
        if leg.get("verdict") in MACHINE:
            reasons.append(
                f"{name} direction proves nothing: it is {leg['verdict']}"
                + (f" ({leg['signal']})" if leg.get("signal") else "")
            )
    if reasons:
        return "NOT-ATTRIBUTED", "; ".join(reasons)
    if revert.get("compile_rc") not in (None, 0):
        reasons.append(
            f"revert direction failed: the build fails with {c} reverted "
            f"(compile_rc {revert['compile_rc']}), which proves nothing"
        )
    elif revert.get("run_rc") != 0:
        rc = "timed out" if revert.get("run_rc") is None else f"run_rc {revert['run_rc']}"
        reasons.append(f"revert direction failed: with {c} reverted the test still fails ({rc})")
    if not restore.get("verified"):
        reasons.append("restore direction failed: the restored files' sha256 differ from bad's")
    elif restore.get("compile_rc") not in (None, 0):
        reasons.append(
            f"restore direction failed: the build fails once {c} is restored "
            f"(compile_rc {restore['compile_rc']})"
        )
    elif restore.get("run_rc") == 0:
        reasons.append(
            f"restore direction failed: with {c} restored the test passes (run_rc 0), "
            "so the failure at bad does not come back"
        )
    elif restore.get("run_rc") is None:
        reasons.append("restore direction failed: the test timed out once restored")
    if reasons:
        return "NOT-ATTRIBUTED", "; ".join(reasons)
    return "ATTRIBUTED", None


def _phase(runner: _Runner) -> tuple[dict[str, Any], Classification]:
    """Build and test one direction of the proof: its record, whose ``verdict`` names a
    machine verdict (KILLED, EMPTY, ENV-FAULT) that makes this direction prove nothing, and
    its classification (:func:`~tools.mutate.arm_result.classify`)."""
    b = runner.build()
    t = None if b is not None and (b.timed_out or b.rc != 0) else runner.test()
    out: dict[str, Any] = {
        "compile_rc": None if b is None else b.rc,
        "run_rc": None if t is None else t.rc,
        "tail": (t.tail if t is not None else b.tail if b is not None else ""),
        "verdict": None,
        "signal": (t.signal if t is not None else b.signal if b is not None else None),
    }
    seen = ArmResult(
        "phase",
        applied=True,
        build=None if b is None else _observed(b),
        tests=() if t is None else (_observed(t),),
        test_command=runner.job.test,
        empty_when=runner.job.empty_when,
    )
    got = classify(seen)
    out["verdict"] = got.verdict.value if got.verdict in MACHINE else None
    if runner.job.artifacts and (b is None or b.rc == 0):
        out["artifacts"] = hash_artifacts(runner.tree, runner.job.artifacts)
    return out, got


def _observed(step: StepResult) -> Step:
    return Step(step.rc, step.timed_out, step.signal, step.tail, step.seconds)


def _artifact_map(arts: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    return None if not arts else {str(a["path"]): a["sha256"] for a in arts}


def run(
    job: Job,
    git: Git,
    *,
    timeout: float,
    note: Callable[[str], None],
    kill_grace_s: float | None = None,
) -> dict[str, Any]:
    """Bisect and prove; the ``attribution`` payload. ``kill_grace_s``: how long a step's
    process group has after SIGTERM before SIGKILL (``mutate.kill_grace_s``; None: its
    default)."""
    from tools.mutate.worktree import Worktrees

    registry = Registry() if kill_grace_s is None else Registry(kill_grace_s=kill_grace_s)
    payload: dict[str, Any] = {
        "plan": f"attribute:{job.good[:12]}..{job.bad[:12]}",
        "good": job.good,
        "bad": job.bad,
        "first_bad": None,
        "test": job.test,
        "build": job.build,
        "paths": list(job.paths or []),
        "revert": {"run_rc": None, "targets": []},
        "restore": {"run_rc": None, "targets": []},
        "verdict": "NOT-ATTRIBUTED",
        "reason": None,
        "spec": job.spec,
        "steps": [],
        "candidates": [],
        "timeout": timeout,
    }
    steps: list[dict[str, Any]] = payload["steps"]
    wts = Worktrees(git.root, git.tools_dir())
    try:
        tree = wts.add("attribute", job.bad)
        runner = _Runner(job, tree, timeout, registry)
        payload["reason"] = _check_ends(runner, steps, note)
        if payload["reason"] is not None:
            return payload
        first_bad, candidates, reason = _bisect(runner, job, steps, note)
        run_git(tree, "bisect", "reset", "--quiet", ok=(0, 1))
        _checkout(tree, job.bad)
        payload["candidates"] = candidates
        if first_bad is None:
            payload["reason"] = reason
            return payload
        payload["first_bad"] = first_bad
        paths = list(job.paths) if job.paths else _changed_paths(tree, first_bad)
        payload["paths"] = paths
        note(f"first bad: {first_bad[:12]}; proving both ways on {len(paths)} path(s)")
        payload["revert"], payload["restore"], changed = _prove(
            runner, first_bad, paths, steps, note
        )
        payload["verdict"], payload["reason"] = judge(
            payload["revert"], payload["restore"], changed=changed, first_bad=first_bad
        )
        return payload
    finally:
        wts.close()


def _check_ends(
    runner: _Runner, steps: list[dict[str, Any]], note: Callable[[str], None]
) -> str | None:
    """The test must pass at ``good`` and fail at ``bad``; the reason when it does not."""
    job = runner.job
    for sha, want in ((job.good, "good"), (job.bad, "bad")):
        _checkout(runner.tree, sha)
        label, info = runner.step()
        info["check"] = want
        steps.append(info)
        said = f" ({info['verdict']})" if info.get("verdict") else ""
        note(f"check: {sha[:12]} ({want}) is {label}{said}")
        if label != want:
            return _precheck_reason(want, info)
    return None


def _prove(
    runner: _Runner,
    first_bad: str,
    paths: list[str],
    steps: list[dict[str, Any]],
    note: Callable[[str], None],
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """At bad: revert ``first_bad``'s changes to ``paths`` and test, then restore them
    (sha256-verified) and test again. (revert leg, restore leg, whether reverting changed
    a file)."""
    tree = runner.tree
    before = {p: ap.read_state(tree, p) for p in paths}
    method = _revert(tree, first_bad, paths)
    reverted = {p: ap.read_state(tree, p) for p in paths}
    changed = any(reverted[p].data != before[p].data for p in paths)
    revert: dict[str, Any] = {"compile_rc": None, "run_rc": None, "tail": ""}
    if changed:
        revert, own = _phase(runner)
        at_bad = next((st.get("artifacts") for st in steps if st.get("check") == "bad"), None)
        # bad's build is the control: a build that did not pick the revert up ran bad's
        # binaries again (STALE).
        control = Control("bad", Verdict.RED, _artifact_map(at_bad), ran_with=False)
        got = against_control(
            own,
            arm="revert",
            applied=True,
            artifacts=_artifact_map(revert.get("artifacts")),
            control=control,
        )
        if got.verdict is Verdict.STALE:
            revert["verdict"] = got.verdict.value
    after_revert = {p: ap.read_state(tree, p) for p in paths}
    note(f"revert: run_rc {revert['run_rc']}")
    for p in paths:
        ap.write_state(tree, p, before[p])
    restored = {p: ap.read_state(tree, p) for p in paths}
    verified = all(restored[p].data == before[p].data for p in paths)
    restore = _phase(runner)[0] if changed else {"compile_rc": None, "run_rc": None, "tail": ""}
    note(f"restore: run_rc {restore['run_rc']}")
    revert_leg = {
        **revert,
        "method": method,
        "targets": [ap.target_record(p, before[p], reverted[p], after_revert[p]) for p in paths],
    }
    restore_leg = {
        **restore,
        "verified": verified,
        "targets": [ap.target_record(p, before[p], reverted[p], restored[p]) for p in paths],
    }
    return revert_leg, restore_leg, changed


def _precheck_reason(want: str, info: dict[str, Any]) -> str:
    at = info["commit"][:12]
    verdict = info.get("verdict")
    if verdict in MACHINE:
        return f"the {want} check at {at} is {verdict}, which proves nothing" + _detail(info)
    if info["compile_rc"] not in (None, 0):
        return f"the build fails at {want} {at} (compile_rc {info['compile_rc']})"
    if info["timed_out"]:
        return f"a step timed out at {want} {at}"
    if want == "good":
        return f"the test does not pass at good {at} (run_rc {info['run_rc']})"
    return f"the test does not fail at bad {at} (run_rc {info['run_rc']})"


def _detail(info: dict[str, Any]) -> str:
    if info.get("matched"):
        return f" ({info['matched']['line']})"
    if info.get("signal"):
        return f" ({info['signal']})"
    if info.get("stale_of"):
        return f" (its artifacts are those of {info['stale_of'][:12]})"
    return ""


def describe(payload: dict[str, Any]) -> list[str]:
    """The text report of an attribution."""
    lines = [f"attribute {payload['good'][:12]}..{payload['bad'][:12]}: {payload['verdict']}"]
    if payload["first_bad"]:
        lines.append(f"  first bad: {payload['first_bad']}")
    if payload["candidates"]:
        lines.append("  candidates: " + ", ".join(c[:12] for c in payload["candidates"]))
    if payload["paths"]:
        lines.append("  paths: " + ", ".join(payload["paths"]))
    for phase in ("revert", "restore"):
        part = payload[phase]
        if part.get("targets"):
            rcs = [part.get("compile_rc"), part.get("run_rc")]
            compile_rc, run_rc = ("—" if rc is None else str(rc) for rc in rcs)
            lines.append(f"  {phase}: compile_rc {compile_rc}, run_rc {run_rc}")
    if payload["reason"]:
        lines.append(f"  reason: {payload['reason']}")
    return lines
