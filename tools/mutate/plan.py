"""The mutation plan (YAML): validated by ``tools/data/mutate-plan.schema.json``, then related
to the repository: paths stay inside it, revisions resolve, patch files exist, arm names are
unique, ``expect`` names arms. Every problem is a UsageError naming the key path (exit 2)."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.errors import UsageError
from tools.mutate.apply import patch_paths
from tools.mutate.arm_result import Verdict
from tools.mutate.mutation import Mutation

if TYPE_CHECKING:
    from tools.git import Git

SCHEMA = "mutate-plan.schema.json"
DEFAULT_TIMEOUT_S = 1800.0
KINDS = ("revert", "replace", "patch")
# The words an ``expect`` may name (the schema lists the same).
VERDICTS = tuple(v.value for v in Verdict)


@dataclass(frozen=True)
class Quiet:
    """``quiet: {max_load, wait_s}``: the 1-minute load per CPU an arm waits for."""

    max_load: float
    wait_s: float


@dataclass(frozen=True)
class Arm:
    name: str
    mutations: list[Mutation]
    where: str

    @property
    def is_control(self) -> bool:
        return not self.mutations


@dataclass
class Plan:
    path: str  # repo-relative
    sha256: str
    base: str  # 40-hex
    base_rev: str  # as written
    test: str
    build: str | None
    timeout: float
    repeat: int
    arms: list[Arm]
    spec: str | None = None
    expect: dict[str, str] = field(default_factory=dict)
    overlay: list[Mutation] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    empty_when: re.Pattern[str] | None = None
    quiet: Quiet | None = None
    versions: list[str] = field(default_factory=list)

    @property
    def control(self) -> Arm | None:
        return next((a for a in self.arms if a.is_control), None)

    def overlay_entries(self) -> list[dict[str, Any]]:
        return [m.plan_entry() for m in self.overlay]

    def arm(self, name: str) -> Arm | None:
        return next((a for a in self.arms if a.name == name), None)


def repo_relative(path: Path, root: Path, what: str) -> str:
    """``path`` (absolute or relative to the cwd) as a repo-relative posix path; a path
    outside the repository is a UsageError."""
    full = Path(path).resolve()
    try:
        rel = full.relative_to(root)
    except ValueError:
        raise UsageError(f"{what} lies outside the repository {root}", where=str(path)) from None
    return rel.as_posix()


def check_inside(root: Path, rel: str, where: str) -> Path:
    """The full path of repo-relative ``rel``; refuses a ``.git`` component and a path that a
    symbolic link leads outside the repository."""
    parts = rel.split("/")
    if ".git" in parts:
        raise UsageError(f"{rel!r} reaches into .git", where=where, expected="a path in the tree")
    full = root / rel
    real = Path(os.path.realpath(full))
    if real != root and root not in real.parents:
        raise UsageError(
            f"{rel!r} leads outside the repository through a symbolic link", where=where
        )
    return full


def load(git: Git, plan_path: Path) -> Plan:
    """Read, validate and resolve the plan file ``plan_path``."""
    from tools.schema import validate_against
    from tools.yaml_files import parse_yaml

    root = git.root
    rel = repo_relative(plan_path, root, "the plan")
    src = rel
    from tools import file_reads

    raw = file_reads.read_file(root / rel, src, root=root)
    data = parse_yaml(raw, src)
    validate_against(data, SCHEMA, src, exact_integers=True)

    reader = _Reader(git, src)
    base_rev = data.get("base", "HEAD")
    base = reader.resolve(base_rev, f"{src}: base")
    arms = reader.arms(data["arms"])
    expect = _expect(data, arms, src)
    reader.owner = "the overlay"
    overlay = [
        reader.one(m, f"{src}: overlay[{j}]") for j, m in enumerate(data.get("overlay") or [])
    ]
    _check_paths_at_base(git, base, base_rev, overlay, arms)

    spec_rel = _spec(data, root, src)
    artifacts = list(data.get("artifacts") or [])
    for j, art in enumerate(artifacts):
        check_inside(root, art, f"{src}: artifacts[{j}]")
    quiet = data.get("quiet")
    return Plan(
        path=rel,
        sha256=hashlib.sha256(raw).hexdigest(),
        base=base,
        base_rev=base_rev,
        test=data["test"],
        build=data.get("build"),
        timeout=float(data.get("timeout", DEFAULT_TIMEOUT_S)),
        repeat=int(data.get("repeat", 1)),
        arms=arms,
        spec=spec_rel,
        expect=expect,
        overlay=overlay,
        artifacts=artifacts,
        empty_when=_empty_when(data, src),
        quiet=None if quiet is None else Quiet(float(quiet["max_load"]), float(quiet["wait_s"])),
        versions=list(data.get("versions") or []),
    )


class _Reader:
    """Turns the plan's arms and mutations into :class:`Arm` and :class:`Mutation`, resolving
    revisions and reading patch files; ``owner`` names whose mutation it reads, for messages."""

    def __init__(self, git: Git, src: str) -> None:
        self.git = git
        self.root = git.root
        self.src = src
        self.owner = "the overlay"

    def resolve(self, rev: str, where: str, what: str = "") -> str:
        sha = self.git.resolve(rev)
        if sha is None:
            raise UsageError(
                f"{what}revision {rev!r} does not resolve", where=where, expected="a commit"
            )
        return sha

    def mutation(self, kind: str, value: Any, where: str) -> Mutation:
        if kind == "patch":
            return Mutation("patch", {"patch": value}, where, patch_bytes=self.patch(value, where))
        check_inside(self.root, value["path"], f"{where}.path")
        commit = None
        if kind == "revert":
            commit = self.resolve(
                value["to"], f"{where}.to", f"{self.owner}: the revert of {value['path']}: "
            )
        return Mutation(kind, dict(value), where, commit=commit)

    def patch(self, value: str, where: str) -> bytes:
        """The bytes of a patch file, read once: what is applied is what is recorded."""
        from tools import file_reads

        full = check_inside(self.root, value, where)
        if full.is_dir():
            raise UsageError("is a directory, expected a patch file", where=where)
        data = file_reads.read_optional(full, f"{where} ({value})", root=self.root)
        if data is None:
            raise UsageError(f"patch file {value!r} not found", where=where)
        return data

    def one(self, entry: dict[str, Any], where: str) -> Mutation:
        ((kind, value),) = entry.items()
        return self.mutation(kind, value, f"{where}.{kind}")

    def arms(self, specs: list[dict[str, Any]]) -> list[Arm]:
        """The arms in plan order: unique names, one kind of mutation each, one control."""
        arms: list[Arm] = []
        seen: dict[str, int] = {}
        control: str | None = None
        for i, spec in enumerate(specs):
            where = f"{self.src}: arms[{i}]"
            name = spec["name"]
            if name in seen:
                raise UsageError(
                    f"arm name {name!r} repeats arms[{seen[name]}]",
                    where=f"{where}.name",
                    expected="unique arm names",
                )
            seen[name] = i
            self.owner = f"arm {name!r}"
            mutations = self.arm_mutations(spec, where)
            if not mutations:
                if control is not None:
                    raise UsageError(
                        f"a second arm without mutations (the control is {control!r})",
                        where=where,
                        expected="one control arm at most",
                    )
                control = name
            arms.append(Arm(name, mutations, where))
        return arms

    def arm_mutations(self, spec: dict[str, Any], where: str) -> list[Mutation]:
        given = [k for k in (*KINDS, "mutations") if k in spec]
        if len(given) > 1:
            raise UsageError(
                f"gives both {given[0]} and {given[1]}",
                where=where,
                expected="one of revert, replace, patch, or a list under mutations",
            )
        if not given:
            return []
        if given[0] == "mutations":
            return [self.one(m, f"{where}.mutations[{j}]") for j, m in enumerate(spec["mutations"])]
        return [self.mutation(given[0], spec[given[0]], f"{where}.{given[0]}")]


def _expect(data: dict[str, Any], arms: list[Arm], src: str) -> dict[str, str]:
    """``expect``: a verdict per named arm; the control is never NOT-APPLIED."""
    expect = dict(data.get("expect") or {})
    names = {a.name for a in arms}
    control = next((a.name for a in arms if a.is_control), None)
    for name in expect:
        if name not in names:
            raise UsageError("names no arm of the plan", where=f"{src}: expect.{name}")
        if expect[name] == "NOT-APPLIED" and name == control:
            raise UsageError("the control arm is never NOT-APPLIED", where=f"{src}: expect.{name}")
    return expect


def _spec(data: dict[str, Any], root: Path, src: str) -> str | None:
    """``spec``: the spec whose ``Now`` section gets the table, an existing file."""
    from tools.repo_paths import is_repo_relative

    spec_rel: str | None = data.get("spec")
    if spec_rel is not None:
        assert is_repo_relative(spec_rel)
        full = check_inside(root, spec_rel, f"{src}: spec")
        if not full.is_file():
            raise UsageError(f"spec {spec_rel!r} not found", where=f"{src}: spec")
    return spec_rel


def _empty_when(data: dict[str, Any], src: str) -> re.Pattern[str] | None:
    """``empty_when``: the pattern of a test run that ran nothing (EMPTY)."""
    if data.get("empty_when") is None:
        return None
    try:
        return re.compile(data["empty_when"], re.MULTILINE)
    except re.error as exc:
        raise UsageError(
            f"not a regular expression: {exc}",
            where=f"{src}: empty_when",
            expected="a Python regular expression",
        ) from None


def _check_paths_at_base(
    git: Git, base: str, base_rev: str, overlay: list[Mutation], arms: list[Arm]
) -> None:
    """Every ``revert`` and ``replace`` path exists at ``base`` (or is one the overlay's patches
    create): a mutation of a file the base does not have tests nothing."""
    created: set[str] = set()
    for m in overlay:
        if m.kind == "patch" and m.patch_bytes is not None:
            created.update(patch_paths(git.root, m.patch_bytes))
    owners: list[tuple[str, Mutation]] = [("the overlay", m) for m in overlay]
    owners += [(f"arm {a.name!r}", m) for a in arms for m in a.mutations]
    wanted = [(who, m) for who, m in owners if m.kind != "patch" and m.path not in created]
    if not wanted:
        return
    present = _present_at(git, base, sorted({m.path for _, m in wanted}))
    for who, m in wanted:
        if m.path not in present:
            raise UsageError(
                f"{who}: {m.path} does not exist at base {base_rev!r} ({base[:12]})",
                where=f"{m.where}.path",
                expected="a path the base commit holds",
            )


def _present_at(git: Git, commit: str, paths: list[str]) -> set[str]:
    """Which of ``paths`` ``commit``'s tree holds (as a file, link, folder or submodule)."""
    from tools.git import decode

    found: set[str] = set()
    for i in range(0, len(paths), 500):
        chunk = paths[i : i + 500]
        out = git.out("--literal-pathspecs", "ls-tree", "-z", "--name-only", commit, "--", *chunk)
        found.update(decode(name) for name in out.split(b"\0") if name)
    return found & set(paths)
