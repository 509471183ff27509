"""Re-running ledger records in fresh worktrees at their recorded commits (SPEC §11), with
the mutation runner (its worktrees, verdicts, timeouts and ``-j``) and ``tools attribute``'s
bisect-and-prove, and setting what each run observed beside what its record claims."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError
from tools.mutate.arm_result import MACHINE
from tools.replay import compare

if TYPE_CHECKING:
    from tools.git import Git
    from tools.mutate.plan import Arm, Plan
    from tools.mutate.proc import Registry
    from tools.mutate.runner import Progress
    from tools.mutate.worktree import Pool

    # The records of one plan, plan sha256 and base: the plan, and its arms to run.
    Group = tuple[tuple[str, str, str], list[dict[str, Any]], Plan, list[Arm]]

REPRODUCED, UNREPRODUCED = "reproduced", "unreproduced"
INCONCLUSIVE, UNREPLAYABLE = "inconclusive", "unreplayable"


class Unreplayable(Exception):
    """Why a record cannot be replayed (its plan or commit is gone, its patch changed)."""


@dataclasses.dataclass
class Outcome:
    """One record's replay: its status, why, what was observed and how it differs."""

    record: dict[str, Any]
    status: str
    reason: str | None = None
    observed: dict[str, Any] | None = None
    diffs: list[tuple[str, Any, Any]] = dataclasses.field(default_factory=list)
    commit: str | None = None
    befores: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    conditions: dict[str, Any] | None = None

    def label(self) -> str:
        r = self.record
        what = f"arm {r.get('arm')} of {r.get('plan')}" if "arm" in r else str(r.get("plan"))
        return f"{r['id'][:12]}… ({r['kind']}, {what})"


@dataclasses.dataclass
class Replayer:
    """Replays records in ``git``'s repository; ``note`` hears progress lines."""

    git: Git
    registry: Registry
    progress: Progress
    jobs: int = 1
    ledger_path: Path | None = None
    note: Callable[[str], None] = lambda line: None

    def run(self, records: list[dict[str, Any]]) -> list[Outcome]:
        """Every record's outcome, in the order given."""
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        done: dict[str, Outcome] = {}
        for r in records:
            if r["kind"] == "mutation-arm":
                key = (str(r.get("plan")), str(r.get("plan_sha256")), str(r.get("base")))
                groups.setdefault(key, []).append(r)
            else:
                done[r["id"]] = self.attribution(r)
        ready: list[Group] = []
        for key, members in groups.items():
            try:
                plan = self.plan(*key)
                arms = {str(r["arm"]): self.arm(plan, r) for r in members}
            except Unreplayable as exc:
                done.update({r["id"]: Outcome(r, UNREPLAYABLE, str(exc)) for r in members})
                continue
            ready.append(
                (key, members, plan, sorted(arms.values(), key=lambda a: not a.is_control))
            )
        if ready:
            done.update(self.arm_groups(ready))
        return [done[r["id"]] for r in records]

    # -- mutation arms --------------------------------------------------------------------------
    def _commit(self, sha: str) -> None:
        if not sha or self.git.resolve(sha) != sha:
            raise Unreplayable(
                f"the recorded commit {sha[:12] or '(none)'} is not in this repository "
                "(fetch it: git fetch --unshallow)"
            )

    def plan(self, rel: str, sha: str, base: str) -> Plan:
        """The plan the records name, as it was (same sha256), at the recorded commit."""
        from tools.mutate import plan as plan_mod

        full = self.git.root / rel
        if not full.is_file():
            raise Unreplayable(f"the plan {rel} is not in the working tree")
        actual = hashlib.sha256(full.read_bytes()).hexdigest()
        if actual != sha:
            raise Unreplayable(
                f"the plan {rel} has sha256 {actual[:12]}…, the record names {sha[:12]}…"
            )
        self._commit(base)
        try:
            loaded = plan_mod.load(self.git, full)
        except UsageError as exc:
            raise Unreplayable(f"the plan does not load: {exc.render()}") from None
        return dataclasses.replace(loaded, base=base)

    def arm(self, plan: Plan, record: dict[str, Any]) -> Arm:
        """The record's arm, its reverts pinned to the commits the record resolved and its
        patches checked against the sha256 it applied."""
        arm = plan.arm(str(record.get("arm")))
        if arm is None:
            raise Unreplayable(f"the plan {plan.path} has no arm {record.get('arm')!r}")
        recorded = record.get("mutations") or []
        if len(recorded) != len(arm.mutations):
            raise Unreplayable(f"arm {arm.name}'s mutations differ from the record's")
        pinned = []
        for m, said in zip(arm.mutations, recorded, strict=True):
            if m.kind == "revert" and isinstance(said, dict) and said.get("commit"):
                m = m._replace(commit=str(said["commit"]))
            if m.kind == "patch" and isinstance(said, dict):
                now = m.record().get("sha256")
                if said.get("sha256") != now:
                    raise Unreplayable(
                        f"the patch {m.path} has sha256 {str(now)[:12]}…, the record "
                        f"applied {str(said.get('sha256'))[:12]}…"
                    )
            pinned.append(m)
        return dataclasses.replace(arm, mutations=pinned)

    def arm_groups(self, ready: list[Group]) -> dict[str, Outcome]:
        """The records of each plan and commit, their arms run together (``-j``). The groups
        at one commit share its worktrees: one checkout, reset between arms, whatever plan
        they come from."""
        from tools.mutate.worktree import Pool, Worktrees

        done: dict[str, Outcome] = {}
        wts = Worktrees(self.git.root, self.git.tools_dir())
        try:
            pools: dict[str, Pool] = {}
            for key, _, _, arms in ready:
                pools.setdefault(key[2], Pool(wts, key[2])).expect(len(arms))
            for key, records, plan, arms in ready:
                for outcome in self.arm_group(key, records, plan, arms, pools[key[2]]):
                    done[outcome.record["id"]] = outcome
        finally:
            wts.close()
        return done

    def arm_group(
        self, key: tuple[str, str, str], records: list[dict[str, Any]], plan: Plan,
        selected: list[Arm], pool: Pool,
    ) -> list[Outcome]:  # fmt: skip
        """The records of one plan and commit, their arms run with ``pool``'s worktrees."""
        from tools.mutate import records as rec
        from tools.mutate import runner

        payloads = runner.run_in_worktrees(
            plan,
            selected,
            repo_root=self.git.root,
            tools_dir=self.git.tools_dir(),
            jobs=self.jobs,
            registry=self.registry,
            progress=self.progress,
            trees=pool,
        )
        control = plan.control.name if plan.control else None
        ctrl = next((p for p in payloads if p["arm"] == control), None)
        if ctrl is None and plan.artifacts and self.ledger_path is not None:
            from tools.mutate.receipts import ledger_control

            ctrl = ledger_control(plan, self.ledger_path)
        rec.judge_stale(payloads, ctrl)
        by_arm = {p["arm"]: p for p in payloads}
        return [judge(r, by_arm[r["arm"]], key[2]) for r in records]

    # -- attributions ---------------------------------------------------------------------------
    def attribution(self, record: dict[str, Any]) -> Outcome:
        """Bisect and prove again between the recorded good and bad commits."""
        from tools import attribute as attr

        try:
            for sha in (str(record.get("good") or ""), str(record.get("bad") or "")):
                self._commit(sha)
            if not isinstance(record.get("test"), str):
                raise Unreplayable("the record names no test command")
        except Unreplayable as exc:
            return Outcome(record, UNREPLAYABLE, str(exc))
        paths = [str(p) for p in record.get("paths") or []]
        job = attr.Job(
            good=record["good"],
            bad=record["bad"],
            test=record["test"],
            build=record.get("build"),
            paths=paths or None,
            spec=None,
        )
        timeout = float(record.get("timeout") or 1800.0)
        payload = attr.run(
            job, self.git, timeout=timeout, note=self.note,
            kill_grace_s=self.registry.kill_grace_s,
        )  # fmt: skip
        return judge(record, payload, record["bad"])


def _machine(kind: str, payload: dict[str, Any]) -> str | None:
    """The replay's own machine verdict (and why), if its run is no verdict."""
    if kind == "mutation-arm":
        verdict = payload.get("observed", payload.get("verdict"))
        if verdict in MACHINE:
            return f"{verdict} ({payload.get('observed_reason') or payload.get('reason')})"
        return None
    for leg in ("revert", "restore"):
        part = payload.get(leg) or {}
        if part.get("verdict") in MACHINE:
            return f"{part['verdict']} in the {leg} leg"
    return None


def _befores(kind: str, payload: dict[str, Any]) -> list[tuple[str, str]]:
    if kind == "mutation-arm":
        targets = payload.get("targets")
    else:
        targets = (payload.get("revert") or {}).get("targets")
    return [
        (str(t["path"]), str(t["sha256_before"]))
        for t in targets or []
        if isinstance(t, dict) and t.get("sha256_before")
    ]


def judge(record: dict[str, Any], payload: dict[str, Any], commit: str) -> Outcome:
    """Set the replay's ``payload`` beside ``record``: reproduced, unreproduced (with the
    differing fields), inconclusive (the replay is no verdict) or unreplayable (it errored)."""
    kind = record["kind"]
    observed = compare.fields(kind, payload)
    out = Outcome(
        record, REPRODUCED, observed=observed, commit=commit,
        befores=_befores(kind, payload), conditions=payload.get("conditions"),
    )  # fmt: skip
    machine = _machine(kind, payload)
    if machine is not None:
        out.status, out.reason = INCONCLUSIVE, machine
        return out
    claimed = compare.fields(kind, record)
    if observed.get("verdict") == "ERROR" and claimed.get("verdict") != "ERROR":
        out.status, out.reason = UNREPLAYABLE, f"the replay could not run: {payload.get('reason')}"
        return out
    out.diffs = compare.differences(claimed, observed)
    if out.diffs:
        out.status, out.reason = UNREPRODUCED, compare.said(out.diffs)
    return out
