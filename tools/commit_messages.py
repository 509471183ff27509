"""What the two commit gates (``trailers`` and ``style``) judge, in one place.

- Sources: the range's commits (the context's one ``git log`` pass), one ``--commit``, and/or
  the message about to be committed (``--message-file PATH|-``, the commit-msg hook).
- git's cleanup: a message file is judged as git will store it. The commit-msg hook runs
  before git cleans the message, so the file may still hold the editor's instructions, a
  scissors line and the diff below it, or (``git commit -m`` / ``-F``) ``#`` lines that git
  keeps. Which cleanup applies follows ``commit.cleanup`` and ``core.commentChar``.
- Merges: a merge commit (two or more parents), or the message of a merge in progress
  (``MERGE_HEAD`` exists), is a merge's message.
- Exceptions (``trailers.exceptions``): (commit, rule) pairs turned into ``debt`` warnings.
- The marker paragraph, which the trailers gate requires and the style gate stops the body at.
"""

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from tools import message_reading
from tools.errors import UsageError
from tools.gates.commit_range import range_commits
from tools.git import Commit, decode
from tools.report import GateResult, Severity

if TYPE_CHECKING:
    from tools.config_model import ProtocolConfig
    from tools.context import Context
    from tools.git import Git
    from tools.message_reading import Reading

# The gates whose rule ids an exception may name.

SPACE = " \t\n\r"  # git's isspace()
CLEANUP_MODES = ("default", "strip", "whitespace", "verbatim", "scissors")
_SCISSORS_BODY = " ------------------------ >8 ------------------------\n"
_INSTRUCTIONS = " Please enter"  # git's editor template: "# Please enter the commit message…"


# -- what is judged --------------------------------------------------------------------------


class Cleaned(NamedTuple):
    """A cleaned message and, for each of its lines, the line of the original it came from."""

    text: str
    origin: tuple[int, ...] = ()
    mode: str = "verbatim"

    def original_line(self, line: int | None) -> int | None:
        if line is None or not 1 <= line <= len(self.origin):
            return line
        return self.origin[line - 1]


class Subject(NamedTuple):
    """One message to judge: a commit's, or the message file's (cleaned, lines mapped back)."""

    text: str
    commit: Commit | None = None
    path: str | None = None
    cleaned: Cleaned | None = None
    merge_in_progress: bool = False
    # The run's one reading of a commit's message, which both message gates share.
    reading: "Reading | None" = None

    @property
    def sha(self) -> str | None:
        return self.commit.sha if self.commit is not None else None

    @property
    def is_merge(self) -> bool:
        """A merge commit, or the message of the merge now being concluded."""
        if self.commit is not None:
            return self.commit.is_merge
        return self.merge_in_progress


def read_message_file(ctx: "Context") -> bytes:
    """The bytes of ``--message-file`` (``-``: stdin), read once per invocation."""
    if ctx.message_bytes is None:
        name = ctx.opts.message_file
        assert name is not None
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read() if stream is not None else sys.stdin.read().encode()
        else:
            from tools import file_reads

            if Path(name).is_dir():
                raise UsageError("is a directory, expected a commit message file", where=name)
            data = file_reads.read_file(Path(name), name)
        ctx.message_bytes = data
    return ctx.message_bytes


# ``trailers.exceptions`` resolved: (sha, rule) -> reason (:func:`exceptions`).
Debt = dict[tuple[str, str], str]
# What a commit gate does with the messages it judges: (ctx, result, subjects, debt).
JudgeAll = Callable[["Context", GateResult, list[Subject], Debt], None]


def gate(
    name: str,
    enabled: Callable[["ProtocolConfig"], bool],
    judge_all: JudgeAll,
    *,
    first_parent: Callable[["ProtocolConfig"], bool] = lambda config: False,
) -> tuple[Callable[["Context"], None], Callable[["Context"], GateResult]]:
    """A commit gate's ``prefetch(ctx)`` and ``run(ctx)`` (:mod:`tools.gates`), the gate on
    when ``enabled(config)``. The prefetch starts the range's read unless the gate is off or
    judges the message file alone. The run is a skip when the gate is off, else
    ``judge_all`` over the messages it judges (the range's first-parent chain only when
    ``first_parent(config)``) and the exceptions resolved against them (:func:`exceptions`)."""

    def prefetch(ctx: "Context") -> None:
        opts = ctx.opts
        if enabled(ctx.config) and not (opts.message_file is not None and opts.message_only):
            ctx.prefetch_range()

    def run(ctx: "Context") -> GateResult:
        opts = ctx.opts
        result = GateResult(name)
        if not enabled(ctx.config):
            return result.skip("disabled in config")
        subjects = messages(ctx, result)
        if first_parent(ctx.config):
            subjects = first_parent_chain(subjects, result)
        judge_all(ctx, result, subjects, exceptions(ctx, subjects))
        if opts.range_memo:
            from tools import range_memo

            return range_memo.keep(ctx, name, result)
        return result

    return prefetch, run


def messages(ctx: "Context", result: GateResult) -> list[Subject]:
    """The messages this invocation judges; records range facts (skip, empty) on ``result``."""
    opts = ctx.opts
    out: list[Subject] = []
    if not (opts.message_file is not None and opts.message_only):
        commits = range_commits(ctx, result)
        for commit in commits or ():
            reading = message_reading.of(ctx, commit)
            out.append(Subject(reading.text, commit, reading=reading))
    if opts.message_file is not None:
        cleaned = as_git_will_store(decode(read_message_file(ctx)), ctx.git)
        out.append(
            Subject(
                cleaned.text,
                path=opts.message_file,
                cleaned=cleaned,
                merge_in_progress=ctx.git.in_merge(),
            )
        )
        result.stats["messages"] = 1
        result.stats["cleanup"] = cleaned.mode
    return out


def first_parent_chain(subjects: list[Subject], result: GateResult) -> list[Subject]:
    """``subjects`` less the range's commits that are not on the first-parent chain of its
    head (what side branches brought in by merges), counted in ``stats.side_commits``. Every
    commit of a range ``M..head`` is an ancestor of head, so the head is the one commit no
    other names as a parent; the chain follows first parents while they are in the range."""
    commits = {s.commit.sha: s.commit for s in subjects if s.commit is not None}
    named = {p for c in commits.values() for p in c.parents}
    tips = [sha for sha in commits if sha not in named]
    if len(tips) != 1:
        return subjects  # not one range's commits (none, or a --commit run): nothing to leave out
    chain: set[str] = set()
    sha: str | None = tips[0]
    while sha is not None and sha in commits and sha not in chain:
        chain.add(sha)
        parents = commits[sha].parents
        sha = parents[0] if parents else None
    kept = [s for s in subjects if s.commit is None or s.commit.sha in chain]
    side = len(subjects) - len(kept)
    if side:
        result.stats["side_commits"] = side
    return kept


# -- git's cleanup ---------------------------------------------------------------------------


def _config(git: "Git", key: str) -> str | None:
    return git.config_value(key)


def comment_prefix(text: str, configured: str | None) -> str:
    """The comment character git uses: ``core.commentChar`` (default ``#``); with ``auto``,
    the one its editor template in ``text`` starts with."""
    if configured in (None, ""):
        return "#"
    if configured != "auto":
        return configured
    for line in text.split("\n"):
        at = line.find(_INSTRUCTIONS)
        if at > 0 and line[:at].strip(SPACE):
            return line[:at]
    return "#"


def scissors_line(comment: str) -> str:
    return comment + _SCISSORS_BODY


def _scissors_at(text: str, comment: str) -> int:
    """Where git's scissors line starts in ``text``, or -1."""
    line = scissors_line(comment)
    if text.startswith(line):
        return 0
    at = text.find("\n" + line)
    return at + 1 if at >= 0 else -1


def edited(text: str, comment: str) -> bool:
    """Whether ``text`` carries what git writes for the editor: its instructions or its
    scissors line (``git commit -m`` and ``-F`` write neither)."""
    if _scissors_at(text, comment) >= 0:
        return True
    marker = comment + _INSTRUCTIONS
    return text.startswith(marker) or ("\n" + marker) in text


def effective_mode(configured: str | None, is_edited: bool) -> str:
    """git's cleanup for ``commit.cleanup`` = ``configured``: ``default`` strips comments only
    when the editor ran, ``scissors`` cuts only then; otherwise both are ``whitespace``."""
    mode = (configured or "default").lower()
    if mode not in CLEANUP_MODES:
        mode = "default"
    if mode == "default":
        return "strip" if is_edited else "whitespace"
    if mode == "scissors":
        return "scissors" if is_edited else "whitespace"
    return mode


def clean(text: str, mode: str, comment: str = "#") -> Cleaned:
    """``text`` cleaned as git cleans it in ``mode`` (``strip``, ``whitespace``,
    ``scissors`` or ``verbatim``): the scissors part cut (strip, scissors), comment lines
    dropped (strip), trailing whitespace of each line dropped, runs of blank lines collapsed
    to one, leading and trailing blank lines dropped."""
    if mode == "verbatim":
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        return Cleaned(text, tuple(range(1, n + 1)), mode)
    if mode in ("strip", "scissors"):
        cut = _scissors_at(text, comment)
        if cut >= 0:
            text = text[:cut]
    drop_comments = mode == "strip"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out: list[str] = []
    origin: list[int] = []
    empties = 0
    first_empty = 0
    for number, line in enumerate(lines, start=1):
        if drop_comments and line.startswith(comment):
            continue
        line = line.rstrip(SPACE)
        if not line:
            if not empties:
                first_empty = number
            empties += 1
            continue
        if empties and out:
            out.append("")
            origin.append(first_empty)
        empties = 0
        out.append(line)
        origin.append(number)
    return Cleaned("\n".join(out) + "\n" if out else "", tuple(origin), mode)


def as_git_will_store(text: str, git: "Git") -> Cleaned:
    """The message file ``text`` as ``git commit`` will store it in this repository."""
    comment = comment_prefix(text, _config(git, "core.commentChar"))
    mode = effective_mode(_config(git, "commit.cleanup"), edited(text, comment))
    return clean(text, mode, comment)


# -- fixups ---------------------------------------------------------------------------------

# The subjects `git commit --fixup/--squash` writes; `rebase --autosquash` folds such commits.
FIXUP_PREFIXES = ("fixup! ", "squash! ", "amend! ")


def fixup_subject(text: str) -> str | None:
    """The subject of a ``fixup!`` / ``squash!`` / ``amend!`` message, else None."""
    text = text.lstrip(SPACE)  # the message itself when nothing leads it: no copy
    return text.split("\n", 1)[0] if text.startswith(FIXUP_PREFIXES) else None


def fixup_left_out(subject: Subject, fixups: str) -> bool:
    """Whether a commit gate judges this message by none of its rules: a fixup message about
    to be committed while ``trailers.fixups`` is ``allow`` (the rebase that folds it is
    judged), or a fixup commit of a range (the trailers gate reports it as
    ``fixup-pending``)."""
    if fixup_subject(subject.text) is None:
        return False
    return subject.commit is not None or fixups == "allow"


def judged(
    result: GateResult,
    subjects: list[Subject],
    fixups: str,
    *,
    skip_merges: bool = True,
    left_out: Callable[[Subject], object] = lambda subject: None,
) -> Iterator[Subject]:
    """The messages a commit gate judges, in order. A fixup that :func:`fixup_left_out` leaves
    out goes to ``left_out`` instead and is counted in ``stats.fixups``; a merge, when
    ``skip_merges``, in ``stats.merges_skipped``. After the last, :func:`left_out_skip`."""
    skipped = fixed = count = 0
    for subject in subjects:
        if skip_merges and subject.is_merge:
            skipped += 1
        elif fixup_left_out(subject, fixups):
            fixed += 1
            left_out(subject)
        else:
            count += 1
            yield subject
    if fixed:
        result.stats["fixups"] = fixed
    if skipped:
        result.stats["merges_skipped"] = skipped
    left_out_skip(result, subjects, count)


def left_out_skip(result: GateResult, subjects: list[Subject], judged: int) -> None:
    """When the one message of a message-file run is left out, say why as a skip (never a
    silent pass); the hook still lets the commit through (exit 0)."""
    if judged or not subjects or any(s.commit is not None for s in subjects):
        return
    if all(s.is_merge for s in subjects):
        result.skip("a merge is in progress (MERGE_HEAD): its message is a merge's, not judged")
    else:
        result.skip(
            "a fixup!/squash!/amend! message (trailers.fixups: allow): the rebase that "
            "folds it is judged"
        )


# -- the marker paragraph --------------------------------------------------------------------


def marker_lines(text: str, marker: str) -> list[int]:
    """1-based lines that are the marker (surrounding whitespace ignored), wherever they are."""
    found: list[int] = []
    line, counted = 1, 0  # line numbers counted incrementally: linear however many hits
    pos = text.find(marker)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if text[start:end].strip(SPACE) == marker:
            line += text.count("\n", counted, start)
            counted = start
            found.append(line)
        pos = text.find(marker, end)
    return found


def _blank(line: str) -> bool:
    return not line.strip(SPACE)


def is_own_paragraph(lines: list[str], line: int) -> bool:
    """Whether the 1-based ``line`` is a paragraph of its own (blank or nothing around it)."""
    before = line < 2 or _blank(lines[line - 2])
    after = line >= len(lines) or _blank(lines[line])
    return before and after


# -- exceptions (debt) -----------------------------------------------------------------------


def config_where(ctx: "Context", key: str) -> str:
    return f"{ctx.config_source or 'config'}: {key}"


def exceptions(ctx: "Context", subjects: list[Subject]) -> Debt:
    """``trailers.exceptions`` resolved against the judged commits: (sha, rule) -> reason.

    An entry names a commit by full sha or by a prefix that is unambiguous among the judged
    commits, or an author by email (every judged commit it authors). Each entry's rule id was
    checked with the config (:mod:`tools.severities`).
    """
    entries = ctx.config.trailers.exceptions
    if not entries:
        return {}
    by_head: dict[str, list[str]] = {}
    for s in subjects:
        if s.sha is not None:
            by_head.setdefault(s.sha[:4], []).append(s.sha)
    table: Debt = {}
    if any(entry.author is not None for entry in entries):
        _author_exceptions(ctx, [s.sha for s in subjects if s.sha is not None], table)
    for i, entry in enumerate(entries):
        if entry.commit is None:
            continue
        prefix = entry.commit.lower()
        found = {sha for sha in by_head.get(prefix[:4], ()) if sha.startswith(prefix)}
        if len(found) > 1:
            raise UsageError(
                f"commit prefix {prefix!r} is ambiguous ({len(found)} judged commits match)",
                where=config_where(ctx, f"trailers.exceptions[{i}].commit"),
                expected="a full sha or an unambiguous prefix",
            )
        for sha in found:
            table[(sha, entry.rule)] = entry.reason
    return table


def _author_exceptions(ctx: "Context", shas: list[str], table: Debt) -> None:
    """The author entries of ``trailers.exceptions`` over the judged commits ``shas``: their
    authors' emails read in one ``git log`` pass, asked only when some entry names one."""
    wanted: dict[str, list[tuple[str, str]]] = {}
    for entry in ctx.config.trailers.exceptions:
        if entry.author is not None:
            wanted.setdefault(entry.author.lower(), []).append((entry.rule, entry.reason))
    if not shas:
        return
    listed = "".join(f"{sha}\n" for sha in shas).encode("ascii")
    raw = ctx.git.out("log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%ae", input=listed)
    for line in raw.decode("utf-8", "replace").splitlines():
        sha, _, email = line.partition("\0")
        for rule, reason in wanted.get(email.lower(), ()):
            table[(sha, rule)] = reason


Emit = Callable[[str, str, int | None], None]


def emitter(
    result: GateResult,
    subject: Subject,
    debt: Debt,
    severity: Callable[[str], Severity | None] = lambda rule: None,
) -> Emit:
    """A function ``emit(rule, message, line)`` that files a finding for ``subject``: line
    mapped back to the message file, the severity ``severity(rule)`` (None: the declared
    one), an excepted (commit, rule) turned into a debt warning."""

    def emit(rule: str, message: str, line: int | None = None) -> None:
        sev = severity(rule)
        if subject.cleaned is not None:
            line = subject.cleaned.original_line(line)
        sha = subject.sha
        reason = debt.get((sha, rule)) if sha is not None else None
        if reason is not None:
            sev = "warning"
            message = f"debt: {reason}: {message}"
        result.add(rule, message, severity=sev, commit=sha, path=subject.path, line=line)

    return emit
