"""Running arms: each in its own worktree of ``base`` (up to ``jobs`` at once, the control
arm first) or, with ``--in-place``, one after another in the working tree.

Per arm: the targets' states before; the overlay, then the arm's mutations; the proof of
application (numstat against the starting state, sha256 changed); the build (``compile_rc``);
the test ``repeat`` times (``run_rcs``); the restore and its sha256 proof; the verdict.
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from tools.git import GitError
from tools.mutate import apply as ap
from tools.mutate.arm_result import ArmResult, Step, Target, Verdict, classify
from tools.mutate.plan import Arm, Plan
from tools.mutate.proc import Registry, StepResult, run_step
from tools.mutate.records import arm_payload

if TYPE_CHECKING:
    from tools.mutate.inplace import Conflict, InPlace
    from tools.mutate.worktree import Pool


class Progress:
    """Where arm states go: plain lines by default (see :class:`LiveProgress` for rich)."""

    COUNTDOWN_EVERY_S = 30.0  # plain lines: one per this many seconds of a quiet wait

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self._lock = threading.Lock()
        self._arms: list[str] = []
        self._finished: set[str] = set()
        self._last_tick: dict[str, float] = {}

    def queued(self, names: list[str]) -> None:
        self._arms = list(names)
        self._line(f"queued: {', '.join(names)}")

    def state(self, name: str, what: str) -> None:
        self._line(f"{name}: {what}")

    def countdown(self, name: str, left: float, load: float | None) -> None:
        """A quiet wait in progress: ``left`` seconds to go, the load per CPU now."""
        now = time.monotonic()
        last = self._last_tick.get(name)
        if last is None or now - last >= self.COUNTDOWN_EVERY_S:
            self._last_tick[name] = now
            self.state(name, _waiting(left, load))

    def done(self, name: str, payload: dict[str, Any]) -> None:
        self._finished.add(name)
        self._line(f"{name}: {payload['observed']} ({summary(payload)})")

    def interrupted(self) -> list[str]:
        """Say ``interrupted`` for every arm that had not finished; their names."""
        stopped = [n for n in self._arms if n not in self._finished]
        for name in stopped:
            self._finished.add(name)
            self._mark_interrupted(name)
        return stopped

    def _mark_interrupted(self, name: str) -> None:
        self._line(f"{name}: interrupted")

    def close(self) -> None:
        pass

    def _line(self, text: str) -> None:
        with self._lock:
            self.stream.write(f"mutate: {text}\n")
            self.stream.flush()


class LiveProgress(Progress):
    """A live table of arms (queued, running with the current step, done with the verdict) on
    a terminal."""

    def __init__(self, stream: TextIO | None = None):
        super().__init__(stream)
        from rich.console import Console
        from rich.live import Live

        self._rows: dict[str, list[str]] = {}
        self._started: dict[str, float] = {}
        self._live = Live(
            self, console=Console(file=self.stream), refresh_per_second=8, transient=False
        )
        self._live.start()

    def __rich__(self) -> Any:
        from rich.table import Table

        table = Table(box=None, pad_edge=False)
        for col in ("arm", "state", "verdict", "time"):
            table.add_column(col)
        now = time.monotonic()
        with self._lock:
            for name, (state, verdict, took) in self._rows.items():
                if not took and name in self._started:
                    took = f"{now - self._started[name]:.1f} s"
                table.add_row(name, state, verdict, took)
        return table

    def queued(self, names: list[str]) -> None:
        self._arms = list(names)
        with self._lock:
            for name in names:
                self._rows[name] = ["queued", "", ""]

    def state(self, name: str, what: str) -> None:
        with self._lock:
            self._started.setdefault(name, time.monotonic())
            self._rows[name] = [what, "", ""]

    def countdown(self, name: str, left: float, load: float | None) -> None:
        self.state(name, _waiting(left, load))  # redrawn live, every tick

    def done(self, name: str, payload: dict[str, Any]) -> None:
        self._finished.add(name)
        with self._lock:
            took = payload["durations"]["total"]
            self._rows[name] = ["done", payload["observed"], f"{took:.1f} s"]

    def _mark_interrupted(self, name: str) -> None:
        with self._lock:
            self._rows[name] = ["interrupted", "", ""]

    def close(self) -> None:
        self._live.stop()


def _waiting(left: float, load: float | None) -> str:
    seen = "unknown" if load is None else f"{load:g}"
    return f"waiting for a quiet machine: load per CPU {seen}, {left:.0f} s left"


def summary(payload: dict[str, Any]) -> str:
    parts = []
    if payload.get("compile_rc") is not None:
        parts.append(f"compile_rc {payload['compile_rc']}")
    rcs = payload.get("run_rcs") or []
    if rcs:
        parts.append("run_rc " + ",".join(str(r) for r in rcs))
    parts.append(f"{payload['durations']['total']:.1f} s")
    return ", ".join(parts)


def _rounded(seconds: float) -> float:
    return round(seconds, 3)


def hash_artifacts(tree: Path, paths: list[str]) -> list[dict[str, Any]]:
    """sha256 of each artifact (null: missing, or not a regular file)."""
    import hashlib

    out = []
    for rel in paths:
        full = tree / rel
        sha = None
        try:
            if full.is_file():
                with open(full, "rb") as fh:
                    sha = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError:
            sha = None
        out.append({"path": rel, "sha256": sha})
    return out


def _versions(plan: Plan, tree: Path, registry: Registry) -> list[dict[str, Any]]:
    from tools.mutate.conditions import VERSION_CHARS, VERSION_TIMEOUT_S

    found = []
    for command in plan.versions:
        step = run_step(
            command, tree, timeout=min(plan.timeout, VERSION_TIMEOUT_S), registry=registry
        )
        found.append(
            {"command": command, "rc": step.rc, "output": step.tail.strip()[:VERSION_CHARS]}
        )
    return found


@dataclass
class _ArmRun:
    """What one arm's run has found so far, step by step; :meth:`result` freezes it into an
    :class:`~tools.mutate.arm_result.ArmResult`, and the classifier says after each step
    whether the arm is decided (then no further step runs)."""

    plan: Plan
    arm: Arm
    tree: Path
    registry: Registry
    note: Callable[[str], None]
    started: float = field(default_factory=time.monotonic)
    quiet: dict[str, Any] | None = None
    error: str | None = None
    not_applied: str | None = None
    applied: bool = False
    build: Step | None = None
    tests: list[Step] = field(default_factory=list)
    artifacts: list[dict[str, Any]] | None = None
    conditions: dict[str, Any] | None = None
    names: list[str] = field(default_factory=list)
    before: dict[str, ap.FileState] = field(default_factory=dict)
    mutated: dict[str, ap.FileState] = field(default_factory=dict)
    after: dict[str, ap.FileState] = field(default_factory=dict)
    restored: bool | None = None
    conflicts: list[Conflict] = field(default_factory=list)
    durations: dict[str, Any] = field(default_factory=dict)

    def result(self, *, whole: bool = True) -> ArmResult:
        """What the arm has observed so far, frozen. ``whole``: with the targets' hashes and
        numstat (a diff per target), which no verdict reads."""
        plan = self.plan
        arts = self.artifacts
        return ArmResult(
            arm=self.arm.name,
            is_control=self.arm.is_control,
            quiet=self.quiet,
            error=self.error,
            not_applied=self.not_applied,
            applied=self.applied,
            build=self.build,
            tests=tuple(self.tests),
            test_command=plan.test,
            repeat=plan.repeat,
            timeout=plan.timeout,
            empty_when=plan.empty_when,
            artifacts=None if arts is None else tuple((a["path"], a["sha256"]) for a in arts),
            targets=self.targets() if whole else (),
            restored=self.restored,
            numstat=tuple(self.numstat()) if whole else (),
            conditions=self.conditions,
            durations=dict(self.durations),
            conflicts=tuple(c.record() for c in self.conflicts),
        )

    def decided(self) -> bool:
        """Whether what the arm has observed decides its verdict (no further step runs)."""
        return classify(self.result(whole=False)).verdict is not None

    def wait_for_quiet(self, countdown: Callable[[float, float | None], None] | None) -> None:
        """``quiet:``: wait for the machine; an arm that never gets a quiet window never runs."""
        from tools.mutate import conditions as cond

        q = self.plan.quiet
        if q is None:
            return
        self.note(f"waiting for a quiet machine (load per CPU ≤ {q.max_load:g})")
        self.quiet = cond.wait_quiet(
            q.max_load,
            q.wait_s,
            tick=countdown or (lambda left, load: None),
            cancelled=self.registry.cancelled.is_set,
        )
        self.registry.check()

    def apply(self, guard: InPlace | None) -> None:
        """The overlay, then the arm's mutations, with the targets' states before and after."""
        plan, tree = self.plan, self.tree
        mutations = [*plan.overlay, *self.arm.mutations]
        for m in mutations:
            for path in ap.targets(tree, m):
                if path not in self.names:
                    self.names.append(path)
        self.before = {p: ap.read_state(tree, p) for p in self.names}
        if guard is not None:
            guard.expect(self.arm.name, ap.preview(tree, mutations, self.before))
        self.note("applying")
        current = "the overlay"
        try:
            for m in plan.overlay:
                current = f"the overlay's {m.describe()}"
                ap.apply(tree, m)
            current = "the arm"
            for m in self.arm.mutations:
                ap.apply(tree, m)
            self.applied = True
        except ap.NotApplied as exc:
            # The overlay is the experiment's own setup: its failing is an ERROR.
            if current != "the arm":
                self.error = f"{current} did not apply: {exc}"
            else:
                self.not_applied = str(exc)
        self.mutated = {p: ap.read_state(tree, p) for p in self.names}
        if guard is not None:
            guard.also({p: st.sha256 for p, st in self.mutated.items()})

    def run_build(self, command: str) -> None:
        self.note("building")
        step = run_step(command, self.tree, timeout=self.plan.timeout, registry=self.registry)
        self.build = _observed(step)
        self.durations["build"] = step.seconds

    def hash_artifacts(self) -> None:
        """The plan's artifacts after the build (a missing one: NO-BUILD)."""
        self.artifacts = hash_artifacts(self.tree, self.plan.artifacts)

    def test(self) -> None:
        """The test up to ``repeat`` times, until a run decides the arm (a timeout, a
        machine verdict) or every run has ended."""
        plan = self.plan
        for i in range(plan.repeat):
            self.note("testing" + (f" ({i + 1}/{plan.repeat})" if plan.repeat > 1 else ""))
            step = run_step(plan.test, self.tree, timeout=plan.timeout, registry=self.registry)
            self.tests.append(_observed(step))
            self.durations["test"].append(step.seconds)
            if self.decided():
                return

    def restore(self, guard: InPlace | None) -> None:
        if guard is None:
            self.restored, self.after = _restore(self.tree, self.names, self.before)
        else:
            self.restored, self.after, self.conflicts = _guarded_restore(
                self.tree, self.names, self.before, guard
            )
        if self.conflicts:
            self.restored = False  # the table must never say `restored yes` for a file left

    def targets(self) -> tuple[Target, ...]:
        before, mutated, after = self.before, self.mutated, self.after
        return tuple(
            Target(
                p,
                before[p].sha256,
                mutated.get(p, before[p]).sha256,
                after.get(p, before[p]).sha256,
            )
            for p in self.names
            if p in before
        )

    def numstat(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for p in self.names:
            if (
                p in self.before
                and p in self.mutated
                and self.mutated[p].data != self.before[p].data
            ):
                added, deleted, binary = ap.numstat(self.before[p], self.mutated[p])
                entry: dict[str, Any] = {"path": p, "added": added, "deleted": deleted}
                if binary:
                    entry["binary"] = True
                out.append(entry)
        return out


def _observed(step: StepResult) -> Step:
    return Step(step.rc, step.timed_out, step.signal, step.tail, step.seconds)


def observe_arm(
    plan: Plan,
    arm: Arm,
    tree: Path,
    registry: Registry,
    note: Callable[[str], None],
    *,
    setup_s: float = 0.0,
    countdown: Callable[[float, float | None], None] | None = None,
    guard: InPlace | None = None,
) -> ArmResult:
    """Run one arm in ``tree``, each step only while no earlier one decided the verdict,
    and return what it observed (:func:`~tools.mutate.arm_result.classify` gives the
    verdict). The tree is restored (and the restore proven) on every path out, an interrupt
    included. ``guard`` (in place): the recovery record learns the arm's mutants before
    they are written, and the restore rewrites only a file that still holds one (a file
    changed since is a conflict, left as it is)."""
    from tools.mutate import conditions as cond

    run = _ArmRun(plan, arm, tree, registry, note)
    run.durations = {"setup": _rounded(setup_s), "build": None, "test": []}
    run.conditions = conditions = cond.start(tree)
    run.wait_for_quiet(countdown)
    if not run.decided() and plan.versions:
        conditions["versions"] = _versions(plan, tree, registry)
    try:
        try:
            if not run.decided():
                run.apply(guard)
        except (ap.ApplyError, GitError, OSError) as exc:
            run.error = f"{type(exc).__name__}: {exc}"
        run.durations["apply"] = _rounded(time.monotonic() - run.started)
        if not run.decided() and plan.build:
            run.run_build(plan.build)
        if not run.decided() and plan.artifacts:
            run.hash_artifacts()
        if not run.decided():
            run.test()
    finally:
        # The restore runs on every way out (Cancelled, KeyboardInterrupt included).
        run.restore(guard)
        cond.finish(conditions)
    run.durations["total"] = _rounded(time.monotonic() - run.started + setup_s)
    return run.result()


def execute_arm(
    plan: Plan,
    arm: Arm,
    tree: Path,
    registry: Registry,
    note: Callable[[str], None],
    *,
    mode: str,
    setup_s: float = 0.0,
    countdown: Callable[[float, float | None], None] | None = None,
    guard: InPlace | None = None,
) -> dict[str, Any]:
    """Run one arm in ``tree`` (:func:`observe_arm`) and return its ``mutation-arm``
    payload (before the control's outcome is known)."""
    result = observe_arm(
        plan, arm, tree, registry, note, setup_s=setup_s, countdown=countdown, guard=guard
    )
    return arm_payload(plan, arm, result, classify(result), mode)


def _restore(
    tree: Path, names: list[str], before: dict[str, ap.FileState]
) -> tuple[bool | None, dict[str, ap.FileState]]:
    """Put every target back as it was; (restored, states after). ``None``: nothing had
    changed, so nothing was restored."""
    after: dict[str, ap.FileState] = {}
    changed = False
    ok = True
    for p in names:
        if p not in before:
            continue
        try:
            now = ap.read_state(tree, p)
            if now != before[p]:
                changed = True
                ap.write_state(tree, p, before[p])
                now = ap.read_state(tree, p)
            after[p] = now
            ok = ok and now.data == before[p].data
        except (ap.ApplyError, OSError):
            ok, changed = False, True
    return (ok if changed else None), after


def _guarded_restore(
    tree: Path, names: list[str], before: dict[str, ap.FileState], guard: InPlace
) -> tuple[bool | None, dict[str, ap.FileState], list[Conflict]]:
    """The in-place restore: a file goes back only while it holds a mutant the arm wrote;
    (restored, states after, conflicts). The record learns the outcome at once."""
    from tools.mutate.inplace import Conflict, restore_file

    after: dict[str, ap.FileState] = {}
    conflicts: list[Conflict] = []
    done: list[str] = []
    changed = False
    ok = True
    for p in names:
        if p not in before:
            continue
        mutants = guard.mutants(p)
        try:
            outcome, now, kept = restore_file(tree, p, before[p], mutants, folder=guard.dir)
        except (ap.ApplyError, OSError):
            ok, changed = False, True
            continue
        after[p] = now
        if outcome == "unchanged":
            done.append(p)
        elif outcome == "restored":
            done.append(p)
            changed = True
        elif outcome == "conflict":
            changed, ok = True, False
            last = mutants[-1] if mutants else None
            saved = guard.save(p)
            conflicts.append(Conflict(p, before[p].sha256, last, now.sha256, saved, kept))
        else:
            changed, ok = True, False
    guard.settle(conflicts, done)
    return (ok if changed else None), after, conflicts


def error_payload(plan: Plan, arm: Arm, reason: str, mode: str, setup_s: float) -> dict[str, Any]:
    """The record of an arm that could not even start (its worktree could not be made)."""
    durations: dict[str, Any] = {
        "setup": _rounded(setup_s),
        "apply": 0.0,
        "build": None,
        "test": [],
    }
    durations["total"] = _rounded(setup_s)
    result = ArmResult(
        arm=arm.name,
        is_control=arm.is_control,
        error=reason,
        test_command=plan.test,
        repeat=plan.repeat,
        timeout=plan.timeout,
        durations=durations,
    )
    return arm_payload(plan, arm, result, classify(result), mode)


def order(plan: Plan, names: list[str] | None) -> list[Arm]:
    """The arms to run: the control first, then the others in plan order."""
    arms = [a for a in plan.arms if names is None or a.name in names]
    return sorted(arms, key=lambda a: not a.is_control)


def run_in_worktrees(
    plan: Plan,
    arms: list[Arm],
    *,
    repo_root: Path,
    tools_dir: Path,
    jobs: int,
    registry: Registry,
    progress: Progress,
    trees: Pool | None = None,
) -> list[dict[str, Any]]:
    """Each arm in a detached worktree of ``plan.base`` of its own while it runs, ``jobs``
    at a time; a worktree an arm gave back clean (reset to ``base``, nothing else in it) is
    reused by the next arm. Every worktree is removed before this returns or raises, but
    those of ``trees`` when given (a pool at ``plan.base``, these arms' takes announced to
    it), which its owner removes."""
    from tools.mutate.worktree import Pool, Worktrees

    wts = Worktrees(repo_root, tools_dir) if trees is None else None
    pool_of_trees = Pool(wts, plan.base) if wts is not None else trees
    assert pool_of_trees is not None and pool_of_trees.base == plan.base
    results: dict[str, dict[str, Any]] = {}

    def one(arm: Arm) -> None:
        registry.check()
        progress.state(arm.name, "creating worktree")
        t0 = time.monotonic()
        payload: dict[str, Any] | None = None
        try:
            tree, reused = pool_of_trees.take(arm.name)
        except (GitError, OSError) as exc:
            payload = error_payload(plan, arm, f"worktree: {exc}", "worktree", 0.0)
        else:
            try:
                payload = execute_arm(
                    plan,
                    arm,
                    tree,
                    registry,
                    lambda what: progress.state(arm.name, what),
                    mode="worktree",
                    setup_s=time.monotonic() - t0,
                    countdown=lambda left, load: progress.countdown(arm.name, left, load),
                )
            finally:
                # Reused only after an arm that ran to its end and restored what it changed.
                clean_end = (
                    payload is not None
                    and payload.get("restored") is not False
                    and payload.get("verdict") not in (Verdict.ERROR, Verdict.TIMEOUT)
                    and not registry.cancelled.is_set()
                )
                pool_of_trees.give_back(tree, reusable=clean_end)
            payload["worktree"] = "reused" if reused else "new"
        results[arm.name] = payload
        progress.done(arm.name, payload)

    progress.queued([a.name for a in arms])
    if wts is not None:
        pool_of_trees.expect(len(arms))
    try:
        _on_threads(arms, one, jobs, registry)
    finally:
        if wts is not None:
            wts.close()
    return [results[a.name] for a in arms]


def _on_threads(arms: list[Arm], one: Callable[[Arm], None], jobs: int, registry: Registry) -> None:
    """``one(arm)`` for each arm, ``jobs`` at a time; the first error or interrupt cancels
    the rest and is raised once every running arm has ended."""
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="arm")
    try:
        pending = {pool.submit(one, arm) for arm in arms}
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for fut in done:
                fut.result()
        pool.shutdown(wait=True)
    except BaseException:
        # Each running arm ends its step (SIGTERM, the grace, SIGKILL), restores and gives its
        # worktree back; a further interrupt meanwhile cuts the grace short, never the rest.
        registry.cancel()
        while True:
            try:
                pool.shutdown(wait=True, cancel_futures=True)
                break
            except BaseException:
                registry.kill()
        raise


def run_in_place(
    plan: Plan,
    arms: list[Arm],
    *,
    repo_root: Path,
    tools_dir: Path,
    registry: Registry,
    progress: Progress,
) -> list[dict[str, Any]]:
    """Each arm in turn in the working tree, under a snapshot and a recovery record."""
    from tools.errors import UsageError
    from tools.git import run_git
    from tools.mutate.inplace import InPlace

    _, head, _ = run_git(repo_root, "rev-parse", "--verify", "-q", "HEAD^{commit}", ok=(0, 1))
    if head.decode().strip() != plan.base:
        raise UsageError(
            f"--in-place runs on the working tree, which is at HEAD, but the plan's base "
            f"{plan.base_rev!r} is {plan.base[:12]}",
            where=f"{plan.path}: base",
            expected="base: HEAD (or the commit HEAD is at)",
        )
    paths: list[str] = []
    for m in plan.overlay + [m for a in arms for m in a.mutations]:
        for p in ap.targets(repo_root, m):
            if p not in paths:
                paths.append(p)
    snapshot = InPlace(repo_root, tools_dir, paths, plan.path)
    snapshot.begin()
    progress.queued([a.name for a in arms])
    results: list[dict[str, Any]] = []
    try:
        for arm in arms:
            payload = execute_arm(
                plan,
                arm,
                repo_root,
                registry,
                functools.partial(progress.state, arm.name),
                mode="in-place",
                countdown=functools.partial(progress.countdown, arm.name),
                guard=snapshot,
            )
            results.append(payload)
            progress.done(arm.name, payload)
            if payload["restored"] is False:
                # A file the restore could not (or must not) rewrite: no further arm may
                # touch it; the record stays for the next invocation and the user.
                snapshot.abandon()
                return results
    except BaseException:
        # The arm's own restore ran on the way out; keep the record only if it did not hold.
        from tools.mutate.inplace import dirty_paths

        if snapshot.conflicts or dirty_paths(repo_root, paths):
            snapshot.abandon()
        else:
            snapshot.finish()
        raise
    snapshot.finish()
    return results
