"""trailers: the commit trailer contract (SPEC §4.2).

What is judged (shared with the style gate, see :func:`messages`): the range's commits read
in the context's one ``git log`` pass, or one ``--commit``, and/or the message about to be
committed (``Options.message_file``; with ``opts.extra["message_only"]`` it is judged alone,
without touching the range). A message file gets git's default cleanup first.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.context import RANGE_EMPTY, Context
from tools.errors import UsageError
from tools.git import Commit, decode
from tools.report import GateResult, Rule, Severity, declare
from tools.trailers import (
    SPACE,
    Block,
    Cleaned,
    Trailer,
    cleanup,
    find_block,
    is_blank,
    split_lines,
)

NAME = "trailers"
RULES = declare(
    NAME,
    [
        Rule("empty-message", "error", "the commit message is empty"),
        Rule("marker-missing", "error", "the marker paragraph is absent"),
        Rule("marker-duplicate", "error", "the marker appears more than once"),
        Rule("marker-last", "error", "the marker paragraph is the last paragraph"),
        Rule(
            "framing", "error", "a `---` line (git's patch divider) truncates what `git am` keeps"
        ),
        Rule("trailer-missing", "error", "a required trailer is absent from the trailer block"),
        Rule("trailer-duplicate", "error", "a required trailer appears more than once"),
        Rule("trailer-value", "error", "a required trailer's value is not one of the allowed ones"),
        Rule(
            "assisted-by-missing", "error", "`AI-Assisted: true` without an `Assisted-by` trailer"
        ),
        Rule(
            "assisted-by-forbidden", "error", "`AI-Assisted: false` with an `Assisted-by` trailer"
        ),
        Rule("assisted-by-format", "error", "`Assisted-by` is not `ID:MODEL [TOOL]…`"),
        Rule("ai-authorship", "error", "a sign-off or co-author names an AI identity"),
        Rule("placeholder", "error", "the template `AGENT:MODEL [TOOL]` was left unfilled"),
        RANGE_EMPTY,
    ],
)

AI_ASSISTED = "AI-Assisted"
ASSISTED_BY = "Assisted-by"
SIGNED_OFF_BY = "Signed-off-by"
CO_AUTHORED_BY = "Co-authored-by"
PLACEHOLDER = "AGENT:MODEL [TOOL]"
# Rules a commit before the cutover is still judged by.
LENIENT_RULES = frozenset({"marker-missing", "marker-duplicate"})

_FRAMING = re.compile(r"^---(?:[ \t\r][^\n]*)?$", re.MULTILINE)
_TOOL = r"\[[^\[\]]*[^\[\]\s][^\[\]]*\]"
_ASSISTED_FORMAT = re.compile(
    rf"(?P<id>[A-Za-z0-9][A-Za-z0-9_.-]*):(?P<model>[^\s\[\]]+)\s+(?P<tools>{_TOOL}(?:\s*{_TOOL})*)"
)
_TOOLS = re.compile(r"\[([^\[\]]*)\]")
_WORDS = re.compile(r"[^\W_]+")
_NOREPLY = re.compile(r"@users\.noreply\.github\.com>?$", re.IGNORECASE)


# -- what is judged --------------------------------------------------------------------------


@dataclass
class Subject:
    """One message to judge: a commit's, or the message file's (cleaned, lines mapped back)."""

    text: str
    commit: Commit | None = None
    path: str | None = None
    cleaned: Cleaned | None = None

    @property
    def sha(self) -> str | None:
        return self.commit.sha if self.commit is not None else None

    @property
    def is_merge(self) -> bool:
        return self.commit is not None and self.commit.is_merge


def read_message_file(ctx: Context) -> bytes:
    """The bytes of ``--message-file`` (``-``: stdin), read once per invocation."""
    cache = ctx.opts.extra
    if "message_bytes" not in cache:
        name = ctx.opts.message_file
        assert name is not None
        if name == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read() if stream is not None else sys.stdin.read().encode()
        else:
            path = Path(name)
            try:
                data = path.read_bytes()
            except IsADirectoryError:
                raise UsageError(
                    "is a directory, expected a commit message file", where=name
                ) from None
            except OSError as exc:
                raise UsageError(f"cannot read message file: {exc.strerror}", where=name) from None
        cache["message_bytes"] = data
    return cache["message_bytes"]


def messages(ctx: Context, result: GateResult) -> list[Subject]:
    """The messages this invocation judges; records range facts (skip, empty) on ``result``."""
    opts = ctx.opts
    out: list[Subject] = []
    if not (opts.message_file is not None and opts.extra.get("message_only")):
        commits = ctx.range_commits(result)
        out += [Subject(c.text, commit=c) for c in commits or ()]
    if opts.message_file is not None:
        cleaned = cleanup(decode(read_message_file(ctx)))
        out.append(Subject(cleaned.text, path=opts.message_file, cleaned=cleaned))
        result.stats["messages"] = 1
    return out


# -- exceptions (debt) -----------------------------------------------------------------------


def _config_where(ctx: Context, key: str) -> str:
    return f"{ctx.config_source or 'config'}: {key}"


def known_rules() -> set[str]:
    from tools.gates import style

    return {r.id for r in RULES} | {r.id for r in style.RULES}


def exceptions(ctx: Context, subjects: list[Subject]) -> dict[tuple[str, str], str]:
    """``trailers.exceptions`` resolved against the judged commits: (sha, rule) -> reason.

    An entry names a commit by full sha or by a prefix that is unambiguous among the judged
    commits; a rule id that no commit gate fires is a config error (a typo must not hide).
    """
    entries = ctx.config["trailers"]["exceptions"]
    if not entries:
        return {}
    rules = known_rules()
    by_head: dict[str, list[str]] = {}
    for s in subjects:
        if s.sha is not None:
            by_head.setdefault(s.sha[:4], []).append(s.sha)
    table: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(entries):
        if entry["rule"] not in rules:
            raise UsageError(
                f"unknown rule {entry['rule']!r}",
                where=_config_where(ctx, f"trailers.exceptions[{i}].rule"),
                expected="a rule id of the trailers or style gate",
            )
        prefix = entry["commit"].lower()
        found = {sha for sha in by_head.get(prefix[:4], ()) if sha.startswith(prefix)}
        if len(found) > 1:
            raise UsageError(
                f"commit prefix {prefix!r} is ambiguous ({len(found)} judged commits match)",
                where=_config_where(ctx, f"trailers.exceptions[{i}].commit"),
                expected="a full sha or an unambiguous prefix",
            )
        for sha in found:
            table[(sha, entry["rule"])] = entry["reason"]
    return table


Emit = Callable[[str, str, int | None], None]


def emitter(
    result: GateResult,
    subject: Subject,
    debt: dict[tuple[str, str], str],
    severity: Callable[[str], Severity],
) -> Emit:
    """A function ``emit(rule, message, line)`` that files a finding for ``subject``: line
    mapped back to the message file, an excepted (commit, rule) turned into a debt warning."""

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


# -- cutover ---------------------------------------------------------------------------------


def strict_commits(ctx: Context, commits: list[Commit]) -> set[str] | None:
    """The judged commits that are the cutover or its descendants; None: no cutover set."""
    ref = ctx.config["trailers"]["cutover"]
    if ref is None:
        return None
    cut = ctx.git.resolve(ref)
    if cut is None:
        raise UsageError(
            f"cutover {ref!r} does not resolve to a commit",
            where=_config_where(ctx, "trailers.cutover"),
            expected="a commit of this repository",
        )
    by_sha = {c.sha: c for c in commits}
    memo: dict[str, bool] = {}

    def outside(sha: str) -> bool:
        # A parent outside the range: one ancestry question to git, cached.
        if sha not in memo:
            memo[sha] = sha == cut or ctx.git.is_ancestor(cut, sha)
        return memo[sha]

    strict: dict[str, bool] = {}
    # Iterative post-order over the in-range parents: git log's default order is by date, so
    # a child may precede its parent when clocks are skewed.
    for root in commits:
        stack = [root.sha]
        while stack:
            sha = stack[-1]
            if sha in strict:
                stack.pop()
                continue
            pending = [p for p in by_sha[sha].parents if p in by_sha and p not in strict]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            strict[sha] = sha == cut or any(
                strict[p] if p in by_sha else outside(p) for p in by_sha[sha].parents
            )
    return {sha for sha, yes in strict.items() if yes}


# -- the rules -------------------------------------------------------------------------------


def marker_lines(text: str, marker: str) -> list[int]:
    """1-based lines that are the marker (surrounding whitespace ignored)."""
    found: list[int] = []
    pos = text.find(marker)
    while pos >= 0:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if text[start:end].strip(SPACE) == marker:
            found.append(text.count("\n", 0, start) + 1)
        pos = text.find(marker, end)
    return found


def _last_paragraph_start(lines: list[str]) -> int:
    """1-based first line of the last paragraph (0 when every line is blank)."""
    n = len(lines)
    while n and is_blank(lines[n - 1]):
        n -= 1
    while n > 1 and not is_blank(lines[n - 2]):
        n -= 1
    return n


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> list[str]:
    return _WORDS.findall(text.lower())


def _contains_words(haystack: list[str], needle: list[str]) -> bool:
    k = len(needle)
    return k > 0 and any(haystack[i : i + k] == needle for i in range(len(haystack) - k + 1))


# Agent commits repeat the same few Assisted-by values and identities: parse each once.
@functools.lru_cache(maxsize=4096)
def assisted_by_parts(value: str) -> tuple[str, ...]:
    """ID, model and tools of an ``Assisted-by`` value, read leniently (even if malformed)."""
    parts: list[str] = []
    head = _TOOLS.sub(" ", value)
    ident, sep, rest = head.partition(":")
    parts.append(ident.strip(SPACE))
    if sep:
        model = rest.split()
        if model:
            parts.append(model[0])
    parts += [t.strip(SPACE) for t in _TOOLS.findall(value)]
    return tuple(p for p in parts if p)


def judge(
    text: str,
    cfg: dict[str, Any],
    emit: Emit,
    *,
    strict: bool = True,
    filled: bool = False,
) -> None:
    """File every trailer-contract finding of one message through ``emit``."""
    marker = cfg["marker"]
    lines = split_lines(text)
    if all(is_blank(line) for line in lines):
        if strict:
            emit("empty-message", "the commit message is empty", None)
        elif marker is not None:
            emit("marker-missing", f"the message is empty: no {marker} paragraph", None)
        return
    if marker is not None:
        found = marker_lines(text, marker)
        if not found:
            emit("marker-missing", f"no {marker} paragraph (a line that is the marker)", None)
        for line in found[1:]:
            emit("marker-duplicate", f"{marker} again (first at line {found[0]})", line)
        if strict:
            last = _last_paragraph_start(lines)
            for line in found:
                if line >= last:
                    emit(
                        "marker-last",
                        f"{marker} is in the last paragraph: the trailers must follow it "
                        "as a paragraph of their own",
                        line,
                    )
    if not strict:
        return
    if "---" in text:
        for m in _FRAMING.finditer(text):
            emit(
                "framing",
                "a `---` line is git's patch divider: `git am` drops it and everything below",
                _line_of(text, m.start()),
            )
    block = find_block(text)
    _required(lines, block, cfg, emit)
    if cfg["assisted_by"]:
        _assisted_by(block, emit)
    _authorship(block, cfg, emit)
    if filled:
        for n, line in enumerate(lines, start=1):
            if PLACEHOLDER in line:
                emit("placeholder", f"the template {PLACEHOLDER!r} was not filled in", n)


def _required(lines: list[str], block: Block, cfg: dict[str, Any], emit: Emit) -> None:
    for key, allowed in cfg["required"].items():
        found = block.get(key)
        if not found:
            emit(
                "trailer-missing",
                f"no `{key}:` trailer{_stray_hint(lines, block, key)}",
                block.start,
            )
            continue
        for extra in found[1:]:
            emit("trailer-duplicate", f"`{key}:` again (first at line {found[0].line})", extra.line)
        for t in found:
            if t.value not in allowed:
                want = " or ".join(repr(a) for a in allowed)
                emit("trailer-value", f"`{t.key}: {t.value}`: the value must be {want}", t.line)


def _stray_hint(lines: list[str], block: Block, key: str) -> str:
    """Point at a ``Key:`` line outside the block: the usual cause is a paragraph after it."""
    pattern = re.compile(rf"{re.escape(key)}[ \t]*:", re.IGNORECASE)
    for n, line in enumerate(lines, start=1):
        inside = block.start is not None and block.start <= n <= (block.end or n)
        if not inside and pattern.match(line):
            return (
                f" in the trailer block (line {n} has one, but the trailer block is the last "
                "paragraph only)"
            )
    if block.start is None:
        return " (the message has no trailer block: the last paragraph is not trailers)"
    return ""


def _assisted_by(block: Block, emit: Emit) -> None:
    flags = block.get(AI_ASSISTED)
    notes = block.get(ASSISTED_BY)
    flag = flags[0].value if flags else None
    if flag == "true" and not notes:
        emit(
            "assisted-by-missing",
            "`AI-Assisted: true` needs an `Assisted-by:` trailer",
            flags[0].line,
        )
    if flag == "false":
        for t in notes:
            emit(
                "assisted-by-forbidden",
                "`AI-Assisted: false` with an `Assisted-by:` trailer",
                t.line,
            )
    for t in notes:
        if not _ASSISTED_FORMAT.fullmatch(t.value):
            emit(
                "assisted-by-format",
                f"`Assisted-by: {t.value}`: expected `ID:MODEL [TOOL]…` (ID of letters, digits, "
                "_ . -; a model without spaces; at least one bracketed tool)",
                t.line,
            )


@functools.lru_cache(maxsize=8)
def _identity_words(identities: tuple[str, ...]) -> list[list[str]]:
    return [w for w in (_words(i) for i in identities) if w]


def _authorship(block: Block, cfg: dict[str, Any], emit: Emit) -> None:
    identities = _identity_words(tuple(cfg["ai_identities"]))
    parts = {p.lower() for t in block.get(ASSISTED_BY) for p in assisted_by_parts(t.value)}
    people: list[Trailer] = block.get(SIGNED_OFF_BY) + block.get(CO_AUTHORED_BY)
    for t in sorted(people, key=lambda t: t.line):
        if t.has_key(CO_AUTHORED_BY) and _NOREPLY.search(t.value.strip(SPACE)):
            continue  # GitHub's own noreply co-author lines (squash merges) are exempt
        words = _words(t.value)
        hit = next((" ".join(i) for i in identities if _contains_words(words, i)), None)
        low = t.value.lower()
        part = next((p for p in sorted(parts) if p in low), None)
        if hit is None and part is None:
            continue
        why = f"the AI identity {hit!r}" if hit else f"{part!r} of an `Assisted-by` trailer"
        emit(
            "ai-authorship",
            f"`{t.key}: {t.value}` names {why}: an AI is credited with `Assisted-by`, "
            "never as an author or signer",
            t.line,
        )


# -- the gate --------------------------------------------------------------------------------


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config["trailers"]
    if not cfg["enabled"]:
        return result.skip("disabled in config")
    subjects = messages(ctx, result)
    strict_set = strict_commits(ctx, [s.commit for s in subjects if s.commit is not None])
    debt = exceptions(ctx, subjects)
    filled = bool(ctx.opts.extra.get("filled"))
    skipped = lenient = 0
    for subject in subjects:
        if subject.is_merge and cfg["merges"] == "skip":
            skipped += 1
            continue
        # The message about to be committed is always judged strictly: the cutover
        # grandfathers history, not new work.
        strict = strict_set is None or subject.sha is None or subject.sha in strict_set
        lenient += not strict
        judge(
            subject.text,
            cfg,
            emitter(result, subject, debt, lambda rule: "error"),
            strict=strict,
            filled=filled,
        )
    if skipped:
        result.stats["merges_skipped"] = skipped
    if strict_set is not None:
        result.stats["before_cutover"] = lenient
    return result
