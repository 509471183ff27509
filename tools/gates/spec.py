"""spec: spec structure and ledger-backed evidence (SPEC §4.8).

Every markdown file under ``specs.dir`` is a spec: it has an ``Owed`` and a ``Now`` section
(numbered or not); every issue its ``Owed`` section cites (``#N``, outside code) is a row of
the issue index; every evidence block re-renders byte for byte from the ledger record its
marker names (:mod:`tools.evidence` does the rendering). Files are read from the working tree,
or from the index with ``--staged`` (specs, issue index and ledger alike).

The ledger is streamed once, keeping only the records the blocks name and the arm records of
their plans; a second pass runs only when a run names an arm record that the first pass did
not keep (a missing arm, or one filed under another plan).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from tools import evidence, file_reads, index_table, markdown
from tools.background import Background
from tools.errors import UsageError
from tools.git import decode
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "spec"
SPEC_SECTION_MISSING = Rule(
    "spec-section-missing",
    "error",
    "a spec has no `Owed` or no `Now` section",
    example="no `Now` section (a heading `## Now`, numbered or not)",
    fix=(
        "Add the missing `Owed` or `Now` heading (any level, numbered or not: `## 6. "
        "Now`), even if its section is empty for now."
    ),
)

SPEC_OWED_UNKNOWN = Rule(
    "spec-owed-unknown",
    "error",
    "an issue cited under `Owed` is not in the issue index",
    example="#7 is cited under `Owed` but it is not a row of .agents/issue-index.md",
    fix=(
        "Add the issue to the index (`tools index append --issue N --row ID --title "
        "T --kind K`), or correct the number."
    ),
)

SPEC_EVIDENCE_UNBACKED = Rule(
    "spec-evidence-unbacked",
    "error",
    "an evidence block does not re-render byte for byte from the ledger record it names",
    example="record 71837d0a0c8f… (plan 'specs/plans/p.yaml') is not in the ledger",
    fix=(
        "Evidence tables are rendered, never typed: `tools spec render SPEC --id ID` "
        "writes the table its record says (the message names the command when a cell "
        "differs). A record that is not in the ledger is merged into it (`tools "
        "ledger merge`) or the experiment is run again."
    ),
)

SPEC_EVIDENCE_MALFORMED = Rule(
    "spec-evidence-malformed",
    "error",
    (
        "an evidence marker that makes no block, a second block for one plan, or a "
        "block outside the `Now` section"
    ),
    example=(
        "the block of plan 'attribute:111111111111..222222222222' lies outside the `Now` section"
    ),
    fix=(
        "Repair the markers by hand: each alone on its line, one `<!-- "
        "tools:evidence id=… plan=… -->` … `<!-- /tools:evidence -->` pair per plan, "
        "inside the `Now` section. Then `tools spec render SPEC --id ID` refreshes "
        "the table."
    ),
)

SPEC_ABSENT = Rule(
    "spec-absent",
    "info",
    "no specs folder (or no markdown in it): nothing to judge",
    example="specs/ does not exist in the working tree: nothing to judge",
    fix=(
        "Nothing to fix (an info finding). Write specs under `specs.dir`, or point the key at them."
    ),
)

RULES = declare(
    NAME,
    [
        SPEC_SECTION_MISSING,
        SPEC_OWED_UNKNOWN,
        SPEC_EVIDENCE_UNBACKED,
        SPEC_EVIDENCE_MALFORMED,
        SPEC_ABSENT,
    ],
)

MARKDOWN_SUFFIXES = (".md", ".markdown")
_NOT_BEFORE = frozenset("_&#/\\")  # a word, an HTML entity (&#35;), a repo ref (o/r#1), ##1


def citations(text: str) -> list[tuple[int, int]]:
    """``(issue number, column)`` of each ``#N`` citation of ``text`` (a line of prose: code
    and raw HTML already blanked, see :meth:`tools.markdown.Document.prose`).

    ``#N`` counts when nothing word-like is glued to it: not after a letter, digit, ``_``,
    ``&``, ``#``, ``/`` or ``\\``, and not followed by a letter, digit, ``_`` or ``-`` and a
    letter/digit (so a heading anchor such as ``#6-now`` is not a citation). One linear scan.
    """
    found: list[tuple[int, int]] = []
    n = len(text)
    at = text.find("#")
    while at >= 0:
        j = at + 1
        while j < n and "0" <= text[j] <= "9":
            j += 1
        if j > at + 1:
            before = text[at - 1] if at else " "
            after = text[j] if j < n else " "
            glued_before = before.isalnum() or before in _NOT_BEFORE
            glued_after = after.isalnum() or after == "_"
            anchor = after == "-" and j + 1 < n and text[j + 1].isalnum()
            if not (glued_before or glued_after or anchor):
                found.append((int(text[at + 1 : j]), at + 1))
        at = text.find("#", j)
    return found


def is_spec(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def _under(folder: str, path: str) -> bool:
    folder = folder.strip("/")
    return folder in ("", ".") or path == folder or path.startswith(folder + "/")


class _Spec:
    """A spec file being judged: its path, its lines, and the evidence blocks read from them."""

    __slots__ = ("path", "lines", "blocks")

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.blocks: list[evidence.Block] = []


def prefetch(ctx: Context) -> None:
    """Under ``--staged``, start listing the spec folder's index entries."""
    if ctx.opts.staged:
        listing = functools.partial(ctx.git.index_entries_under, ctx.config.specs.dir)
        ctx.prefetched[NAME] = Background(listing)


def _spec_paths(ctx: Context, folder: str) -> tuple[bool, list[str]]:
    """(whether the folder exists, the markdown files under it) as judged now."""
    git = ctx.git
    if ctx.opts.staged:
        started = ctx.prefetched.pop(NAME, None)
        listed = started.result() if isinstance(started, Background) else None
        entries = [
            e
            for e in (listed if listed is not None else git.index_entries_under(folder))
            if _under(folder, e.path) and not e.is_symlink and not e.is_submodule
        ]
        return bool(entries), sorted(e.path for e in entries if is_spec(e.path))
    full = git.worktree_path(folder)
    if not full.is_dir():
        return False, []
    paths = []
    for path in git.worktree_files_under(folder):
        where = git.worktree_path(path)
        if is_spec(path) and _under(folder, path) and where.is_file() and not where.is_symlink():
            paths.append(path)
    return True, paths


def _index_keys(ctx: Context) -> tuple[str, set[int] | None]:
    path = ctx.config.index.path
    raw = ctx.read_current(path)
    if raw is None:
        return path, None
    return path, index_table.parse(decode(raw)).keys()


def _ledger_lines(ctx: Context) -> Iterator[bytes]:
    """The current ledger's lines, streamed from the working tree (or the staged blob)."""
    path = ctx.config.ledger.path
    if ctx.opts.staged:
        data = ctx.git.staged_blob(path)
        if data:
            yield from io.BytesIO(data)
        return
    stream = file_reads.open_stream(ctx.git.worktree_path(path), path, root=ctx.root)
    if stream is None:
        return
    try:
        with stream as handle:
            yield from file_reads.lines(handle, path)
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror}", where=path) from None


def load_records(read: Any, blocks: Iterable[evidence.Block]) -> dict[str, dict[str, Any]]:
    """The records ``blocks`` need, by id: one pass over ``read()`` (an iterable of ledger
    lines) for the named records and the arm records of their plans, and a second pass only
    for arm ids a run names that the first did not keep."""
    blocks = list(blocks)
    ids = {b.id for b in blocks}
    plans = {b.plan for b in blocks}
    records = evidence.collect_records(read(), ids, plans)
    missing: set[str] = set()
    for rid in ids:
        record = records.get(rid)
        if record is not None and record.get("kind") == evidence.RUN_KIND:
            arms = record.get("arms")
            if isinstance(arms, list):
                missing.update(a for a in arms if isinstance(a, str) and a not in records)
    if missing:
        records.update(evidence.collect_records(read(), missing))
    return records


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    folder = ctx.config.specs.dir
    exists, paths = _spec_paths(ctx, folder)
    where_now = "the index" if ctx.opts.staged else "the working tree"
    if not paths:
        why = (
            f"{folder}/ holds no markdown spec" if exists else f"{folder}/ does not exist"
        ) + f" in {where_now}: nothing to judge"
        result.add(SPEC_ABSENT.id, why, path=folder)
        result.stats.update(specs=0, citations=0, blocks=0)
        return result
    specs: list[_Spec] = []
    cited: list[tuple[str, int, int]] = []  # (spec, line, issue)
    for path in paths:
        raw = ctx.read_current(path)
        if raw is not None:
            specs.append(_judge_spec(result, path, markdown.split_lines(decode(raw)), cited))
    if cited:
        _judge_citations(ctx, result, cited, where_now)
    all_blocks = [b for s in specs for b in s.blocks]
    if all_blocks:
        records = load_records(lambda: _ledger_lines(ctx), all_blocks)
        vouched = None
        if any(evidence.has_vouched_column(b.body) for b in all_blocks):
            from tools.replay.vouched import for_gate  # SPEC §11: only for such a table

            vouched = for_gate(ctx, list(records))
        for spec_file in specs:
            for block in spec_file.blocks:
                unbacked = evidence.unbacked(
                    block, records.get, where=spec_file.path, vouched=vouched
                )
                if unbacked is not None:
                    result.add(
                        SPEC_EVIDENCE_UNBACKED.id,
                        unbacked,
                        path=spec_file.path,
                        line=block.start,
                        end_line=block.end,
                    )
    result.stats.update(specs=len(specs), citations=len(cited), blocks=len(all_blocks))
    return result


def _judge_spec(
    result: GateResult, path: str, lines: list[str], cited: list[tuple[str, int, int]]
) -> _Spec:
    """One spec's sections and evidence blocks; its `Owed` citations are added to ``cited``."""
    spec = _Spec(path, lines)
    doc = markdown.parse_lines(lines, where=path)
    sections = doc.sections()
    owed = next((s for s in sections if s.heading.title == "owed"), None)
    now = next((s for s in sections if s.heading.title == "now"), None)
    for title, section in (("Owed", owed), ("Now", now)):
        if section is None:
            result.add(
                SPEC_SECTION_MISSING.id,
                f"no `{title}` section (a heading `## {title}`, numbered or not)",
                path=path,
            )
    if owed is not None:
        heading_lines = {h.line for h in doc.headings}
        prose = doc.prose()
        for line_no in range(owed.start, owed.end + 1):
            if line_no in heading_lines:
                continue
            for issue, _ in citations(prose[line_no - 1]):
                cited.append((path, line_no, issue))
    blocks, problems = evidence.scan_blocks("\n".join(lines) + "\n")
    for problem in problems:
        result.add(SPEC_EVIDENCE_MALFORMED.id, problem.message, path=path, line=problem.line)
    for block in blocks:
        if now is None or not now.start <= block.start <= now.end:
            result.add(
                SPEC_EVIDENCE_MALFORMED.id,
                f"the block of plan {block.plan!r} lies outside the `Now` section",
                path=path,
                line=block.start,
                end_line=block.end,
            )
    spec.blocks = blocks
    return spec


def _judge_citations(
    ctx: Context, result: GateResult, cited: list[tuple[str, int, int]], where_now: str
) -> None:
    """An issue cited under `Owed` must be a row of the issue index."""
    index_path, keys = _index_keys(ctx)
    unknown: dict[tuple[str, int], list[int]] = {}  # (spec, issue) -> lines citing it
    for path, line_no, issue in cited:
        if keys is None or issue not in keys:
            unknown.setdefault((path, issue), []).append(line_no)
    for (path, issue), at in unknown.items():
        times = f" ({len(at)} citations, the first here)" if len(at) > 1 else ""
        where = (
            f"there is no issue index ({index_path} does not exist in {where_now})"
            if keys is None
            else f"it is not a row of {index_path}"
        )
        result.add(
            SPEC_OWED_UNKNOWN.id,
            f"#{issue} is cited under `Owed` but {where}{times}",
            path=path,
            line=at[0],
        )
