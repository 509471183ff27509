"""The adopted config: the starter with what the history and the tree show (SPEC §9.2, §9.3),
and one evidence line per choice, for ``tools init --adopt``.

Each learner reads what any repository has (its messages, changed paths and tracked files);
nothing here names a path, macro or file of a particular repository.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import yaml

from tools import config as config_mod
from tools.adopt import detect, state
from tools.adopt.learn_allow import learn_allow, marker_uses
from tools.adopt.learn_bots import learn_bots
from tools.adopt.learn_branches import learn_first_parent
from tools.adopt.learn_docs import learn_docs
from tools.adopt.learn_files import learn_files
from tools.adopt.learn_matrices import learn_matrices
from tools.adopt.learn_moves import learn_moves
from tools.adopt.learn_ratchets import learn_ratchets
from tools.adopt.learn_specs import learn_specs
from tools.adopt.learn_style import learn_style
from tools.errors import UsageError

if TYPE_CHECKING:
    from tools.git import Commit, Git

# The starter's one gates line, inside its ``preflight:`` mapping.
_GATES_LINE = re.compile(r"^preflight:\n  gates: (\[[^\]\n]*\])$", re.MULTILINE)


def _section(name: str, values: dict[str, object]) -> list[str]:
    if not values:
        return [f"{name}: {{}}"]
    if name == "ratchets":  # nested definitions: block style reads better than JSON here
        dumped = yaml.safe_dump({name: values}, sort_keys=False, width=100, allow_unicode=True)
        return dumped.rstrip("\n").split("\n")
    lines = [f"{name}:"]
    for key, value in values.items():
        if isinstance(value, list):
            lines.append(f"  {json.dumps(key)}:")
            lines += [f"    - {json.dumps(item)}" for item in value]
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return lines


def sections_text(text: str, sections: dict[str, dict[str, object] | None]) -> str:
    """``text`` with each section that is not None appended as a top-level mapping (values as
    JSON, which YAML reads as written; an empty one as ``{}``). The starter names none of these
    keys outside comments."""
    lines: list[str] = []
    for name, values in sections.items():
        if values is not None:
            lines += _section(name, values)
    if not lines:
        return text
    head = "\n# Learned by `tools init --adopt` from the history and the tree (docs/adoption.md).\n"
    return text.rstrip("\n") + "\n" + head + "\n".join(lines) + "\n"


def _authored(git: Git, commits: list[Commit]) -> list[tuple[str, str, str]]:
    """(author name, email, message) of ``commits``, their authors read in one pass."""
    if not commits:
        return []
    listed = "".join(f"{c.sha}\n" for c in commits).encode("ascii")
    raw = git.out("log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%an%x00%ae", input=listed)
    who: dict[str, tuple[str, str]] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        sha, name, email = (line.split("\0") + ["", ""])[:3]
        who[sha] = (name, email)
    return [(*who.get(c.sha, ("", "")), c.text) for c in commits]


def _index_tags(raw: bytes | None) -> set[str]:
    """The row ids and issue numbers of the issue index (empty without one)."""
    if raw is None:
        return set()
    from tools import index_table

    table = index_table.parse(raw.decode("utf-8", "replace"))
    return {r.row for r in table.rows if r.row != index_table.NO_ROW} | {
        str(r.key) for r in table.rows
    }


def _docs_section(
    rules: list[dict[str, object]], spec_now: list[dict[str, object]]
) -> dict[str, object] | None:
    section: dict[str, object] = {}
    if rules:
        section["rules"] = rules
    if spec_now:
        section["spec_now"] = spec_now
    return section or None


def _gates_text(text: str, gates: list[str] | None) -> str:
    """The starter's ``preflight.gates`` line replaced by ``gates`` (a second ``preflight:``
    key would be a duplicate key, which the config loader refuses)."""
    if gates is None:
        return text
    found = _GATES_LINE.search(text)
    if found is None:
        raise AssertionError("the starter config has no preflight.gates line")
    return text[: found.start(1)] + json.dumps(gates) + text[found.end(1) :]


def adopted_config(git: Git, starter: str, wanted: set[str]) -> tuple[str, list[str]]:
    """The starter config with the conventions of the last commits and the layout of today's
    tree, and the evidence of each choice; ``wanted`` names the protocol files to keep even
    where the tree has none (``--with``)."""
    if git.head() is None:
        raise UsageError(
            "--adopt: the repository has no commits yet; plain `tools init` sets it up"
        )
    commits = git.log(["--no-merges", "HEAD"], paths=True, max_count=detect.WINDOW)
    messages = [c.message.decode("utf-8", "replace") for c in commits]
    defaults = config_mod.defaults()
    found = detect.detect(messages, defaults["trailers"]["marker"])
    base = git.default_branch()
    evidence = [f"base: {base} (the default branch)" if base else "base: none detected"]
    evidence += found.evidence
    trailers = found.trailers_config()
    chain = git.out("rev-list", "--first-parent", "HEAD").decode("ascii").split()
    branches = learn_first_parent(commits, chain, found.marker)
    if branches.first_parent:
        trailers["first_parent"] = True
    evidence.append(branches.evidence)
    bots = learn_bots(_authored(git, commits), trailers)
    if bots.exceptions:
        trailers["exceptions"] = bots.exceptions
    evidence += bots.evidence
    text = state.config_text(starter, trailers)
    style = learn_style(messages, found.marker, defaults["style"]["subject_max"])
    tracked = set(git.tracked_modes())
    docs = learn_docs(commits, tracked)
    specs = learn_specs(tracked, defaults["specs"]["dir"])
    spec_dir = specs.dir or defaults["specs"]["dir"]
    matrices = learn_matrices(tracked, lambda p: git.blob("HEAD", p), spec_dir)
    moves = learn_moves(matrices.entries, commits, git.blob, tracked, spec_dir)
    files = learn_files(tracked, defaults, wanted)
    evidence += style.evidence + docs.evidence + [specs.evidence] + matrices.evidence
    evidence += moves.evidence
    evidence += files.evidence
    ratchets = files.values.get("ratchets")
    if ratchets is None:
        index = files.values.get("index") or defaults["index"]
        allow = learn_allow(
            marker_uses(git),
            tracked,
            lambda p: git.blob("HEAD", p),
            _index_tags(git.blob("HEAD", index["path"])),
        )
        scoped = learn_ratchets(defaults["ratchets"], tracked, lambda p: git.blob("HEAD", p), allow)
        ratchets = scoped.ratchets
        evidence += scoped.evidence
    text = _gates_text(text, files.values.get("preflight", {}).get("gates"))
    sections: dict[str, dict[str, object] | None] = {
        "style": style.style or None,
        "docs": _docs_section(docs.rules + moves.rules, matrices.entries),
        "specs": {"dir": specs.dir} if specs.dir else None,
        "rules": dict(style.rules) or None,
        "now": files.values.get("now"),
        "index": files.values.get("index"),
        "ratchets": ratchets,
    }
    return sections_text(text, sections), evidence
