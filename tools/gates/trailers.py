"""trailers: the commit trailer contract (SPEC §4.2).

What is judged (range, ``--commit``, message file, git's cleanup, merges, exceptions) comes
from :mod:`tools.commit_messages`, shared with the style gate.
"""

from __future__ import annotations

import functools
import re
from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tools import commit_messages, verdict_cache
from tools.bounded import ConfigPattern, config_pattern
from tools.commit_messages import (
    Debt,
    Emit,
    Subject,
    config_where,
    emitter,
    fixup_subject,
    is_own_paragraph,
    judged,
    marker_lines,
)
from tools.config_model import TrailersConfig
from tools.errors import UsageError
from tools.gates.commit_range import RANGE_EMPTY
from tools.git import Commit
from tools.lines import split_lines
from tools.message_reading import READING_MODULES, Reading
from tools.plain_message import plain_trailers
from tools.report import GateResult, Rule, declare
from tools.trailer_block import SPACE, Block, Trailer, find_block, is_blank

if TYPE_CHECKING:
    from tools.context import Context

NAME = "trailers"
EMPTY_MESSAGE = Rule(
    "empty-message",
    "error",
    "the commit message is empty",
    example="the commit message is empty",
    fix=(
        "Write a message: a subject, a body, and the marker paragraph and trailers "
        "your protocol requires."
    ),
)

MARKER_MISSING = Rule(
    "marker-missing",
    "error",
    "the marker paragraph is absent",
    example="no FOLLOWING_AGENTS_PROTOCOL paragraph (a line that is the marker)",
    fix=(
        "Add the marker (`trailers.marker`) on a line of its own with a blank line "
        "before and after it, above the trailers. A marker right above the trailers, "
        "with no blank line between, shares their paragraph and is no marker "
        "paragraph (the message then says so). For history written before the "
        "protocol, see `trailers.cutover` and `trailers.exceptions` in the "
        "[guide](guide.md#adopting-the-gates-in-an-existing-repository-with-a-long-history)."
    ),
)

MARKER_DUPLICATE = Rule(
    "marker-duplicate",
    "error",
    "the marker appears more than once",
    example="FOLLOWING_AGENTS_PROTOCOL again (first at line 5)",
    fix=(
        "Keep the marker once, as a paragraph of its own right above the trailer "
        "block, and delete the other occurrences."
    ),
)

MARKER_LAST = Rule(
    "marker-last",
    "error",
    "the marker paragraph is the last paragraph",
    example=(
        "FOLLOWING_AGENTS_PROTOCOL is the last paragraph: the trailers must follow "
        "it as a paragraph of their own"
    ),
    fix=(
        "Put the trailers below the marker paragraph, after a blank line: subject, "
        "body, marker, trailers."
    ),
)

FRAMING = Rule(
    "framing",
    "error",
    "a `---` line (git's patch divider) truncates what `git am` keeps",
    example="a `---` line is git's patch divider: `git am` drops it and everything below",
    fix=(
        "Replace the `---` line (a markdown rule, a YAML separator) with something "
        "else, such as `***` or an indented `---`: `git am` and `git format-patch` "
        "treat it as the start of the patch and drop the trailers below it."
    ),
)

TRAILER_MISSING = Rule(
    "trailer-missing",
    "error",
    "a required trailer is absent from the trailer block",
    example=(
        "no `AI-Assisted:` trailer in the trailer block (line 6 has one, but the "
        "trailer block is the last paragraph only)"
    ),
    fix=(
        "Add `Key: value` for every key of `trailers.required` to the message's last "
        "paragraph. Only the last paragraph is the trailer block (as `git "
        "interpret-trailers` reads it): a trailer above a blank line, or a URL line "
        "after the trailers, leaves the key outside it."
    ),
)

TRAILER_DUPLICATE = Rule(
    "trailer-duplicate",
    "error",
    "a required trailer appears more than once",
    example="`Following-Agents-Protocol:` again (first at line 7)",
    fix="Keep one line per required key in the trailer block.",
)

TRAILER_VALUE = Rule(
    "trailer-value",
    "error",
    "a required trailer's value is not one of the allowed ones",
    example="`Following-Agents-Protocol: True`: the value must be 'true'",
    fix=(
        "Use one of the allowed values exactly, case included (by default "
        "`Following-Agents-Protocol: true` and `AI-Assisted: true` or `false`)."
    ),
)

ASSISTED_BY_MISSING = Rule(
    "assisted-by-missing",
    "error",
    "`AI-Assisted: true` without an `Assisted-by` trailer",
    example="`AI-Assisted: true` needs an `Assisted-by:` trailer",
    fix=(
        "Add `Assisted-by: ID:MODEL [TOOL]` to the trailer block, or set "
        "`AI-Assisted: false` if no AI helped with the commit."
    ),
)

ASSISTED_BY_FORBIDDEN = Rule(
    "assisted-by-forbidden",
    "error",
    "`AI-Assisted: false` with an `Assisted-by` trailer",
    example="`AI-Assisted: false` with an `Assisted-by:` trailer",
    fix=(
        "Say one thing: if an AI helped, set `AI-Assisted: true` and keep "
        "`Assisted-by`; if not, delete the `Assisted-by` line."
    ),
)

ASSISTED_BY_FORMAT = Rule(
    "assisted-by-format",
    "error",
    "`Assisted-by` is not `ID:MODEL [TOOL]…`",
    example=(
        "`Assisted-by: claude opus-4`: expected `ID:MODEL [TOOL]…` (ID of letters, "
        "digits, _ . -; a model without spaces; at least one bracketed tool)"
    ),
    fix=(
        "Write `Assisted-by: ID:MODEL [TOOL]…`: an ID, a colon, the model without "
        "spaces, then one or more bracketed tools, e.g. `Assisted-by: claude:opus-4 "
        "[claude-code] [ripgrep]`."
    ),
)

AI_AUTHORSHIP = Rule(
    "ai-authorship",
    "error",
    "a sign-off or co-author names an AI identity",
    example=(
        "`Signed-off-by: Codex Bot <codex-bot@example.com>` names the AI identity "
        "'bot': an AI is credited with `Assisted-by`, never as an author or signer"
    ),
    fix=(
        "Credit the model in `Assisted-by: ID:MODEL [TOOL]` (with `AI-Assisted: "
        "true`) and keep `Signed-off-by` and `Co-authored-by` for people. Reword the "
        "message (`git commit --amend`, or `reword` in `git rebase -i` for an older "
        "commit). A `Co-authored-by` at `@users.noreply.github.com` is exempt; if a "
        "person's name trips a word of `trailers.ai_identities`, narrow that list in "
        "the config."
    ),
)

PLACEHOLDER_RULE = Rule(
    "placeholder",
    "error",
    "the template `AGENT:MODEL [TOOL]` was left unfilled",
    example="the template 'AGENT:MODEL [TOOL]' was not filled in",
    fix=(
        "Replace `AGENT:MODEL [TOOL]` with the real ID, model and tools, e.g. "
        "`claude:opus-4 [claude-code]`."
    ),
)

FIXUP_PENDING = Rule(
    "fixup-pending",
    "warning",
    "a `fixup!`/`squash!`/`amend!` commit not yet folded",
    example=(
        "'fixup! Add a' is not folded yet: `git rebase -i --autosquash` folds it into its target"
    ),
    fix=(
        "Fold the fixup into the commit it names before the branch lands: `git "
        "rebase -i --autosquash <base>`. With `trailers.fixups: allow` (the default) "
        "this is a warning and the commit-msg hook lets `git commit "
        "--fixup/--squash` through; `fixups: check` makes it an error, so CI refuses "
        "a branch with unfolded fixups."
    ),
)

RULES = declare(
    NAME,
    [
        EMPTY_MESSAGE,
        MARKER_MISSING,
        MARKER_DUPLICATE,
        MARKER_LAST,
        FRAMING,
        TRAILER_MISSING,
        TRAILER_DUPLICATE,
        TRAILER_VALUE,
        ASSISTED_BY_MISSING,
        ASSISTED_BY_FORBIDDEN,
        ASSISTED_BY_FORMAT,
        AI_AUTHORSHIP,
        PLACEHOLDER_RULE,
        FIXUP_PENDING,
        RANGE_EMPTY,
    ],
)

AI_ASSISTED = "AI-Assisted"
ASSISTED_BY = "Assisted-by"
SIGNED_OFF_BY = "Signed-off-by"
CO_AUTHORED_BY = "Co-authored-by"
PLACEHOLDER = "AGENT:MODEL [TOOL]"

_NOREPLY = "@users.noreply.github.com"


# -- cutover ---------------------------------------------------------------------------------


def strict_commits(ctx: Context, commits: list[Commit]) -> set[str] | None:
    """The judged commits that are the cutover or its descendants; None: no cutover set."""
    ref = ctx.config.trailers.cutover
    if ref is None:
        return None
    cut = ctx.git.resolve(ref)
    if cut is None:
        raise UsageError(
            f"cutover {ref!r} does not resolve to a commit",
            where=config_where(ctx, "trailers.cutover"),
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


# -- the rules (every parser here scans strings: linear on any input) --------------------------


def _paragraph_starts(lines: list[str]) -> list[int]:
    """1-based first line of each paragraph."""
    return [
        n
        for n in range(1, len(lines) + 1)
        if not is_blank(lines[n - 1]) and (n == 1 or is_blank(lines[n - 2]))
    ]


def framing_lines(text: str) -> list[int]:
    """1-based lines that are git's patch divider: ``---`` then whitespace or the end."""
    found: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("---") and (len(line) == 3 or line[3] in " \t\r"):
            found.append(number)
    return found


# Runs of letters and digits: one character class, so the scan is linear on any input.
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lower-cased words: runs of letters and digits (split on everything else)."""
    return _WORD.findall(text.lower())


def contains_words(haystack: list[str], needle: list[str]) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as consecutive whole words."""
    if not needle or len(needle) > len(haystack):
        return False
    # Words hold no NUL: joined with NUL sentinels, a substring search finds whole words only.
    return ("\0" + "\0".join(needle) + "\0") in ("\0" + "\0".join(haystack) + "\0")


def bracketed(value: str) -> tuple[list[str], int]:
    """The contents of ``[…]`` groups of ``value`` (no nested brackets), and where the first
    one starts (-1 when there is none)."""
    out: list[str] = []
    first = -1
    i = value.find("[")
    while i >= 0:
        close = value.find("]", i + 1)
        if close < 0:
            break
        inner = value[i + 1 : close]
        nested = inner.rfind("[")
        if nested >= 0:
            i += 1 + nested  # the innermost "[" before this "]" opens the group
            continue
        if first < 0:
            first = i
        out.append(inner)
        i = value.find("[", close + 1)
    return out, first


@functools.lru_cache(maxsize=4096)
def assisted_by_parts(value: str) -> tuple[str, ...]:
    """ID, model and tools of an ``Assisted-by`` value, read leniently (even if malformed)."""
    tools, first = bracketed(value)
    head = value if first < 0 else value[:first]
    ident, sep, rest = head.partition(":")
    parts = [ident.strip(SPACE)]
    if sep:
        model = rest.split()
        if model:
            parts.append(model[0])
    parts += [t.strip(SPACE) for t in tools]
    return tuple(p for p in parts if p)


# ``ID:MODEL [TOOL]…``. ``\s`` is str.isspace()'s whitespace (both are CPython's
# Py_UNICODE_ISSPACE); every repeat is possessive, so a value is read once, whatever its shape.
_TOOL = r"\[\s*+[^\[\]\s][^\[\]]*+\]"
_ASSISTED_BY = re.compile(
    rf"[A-Za-z0-9][A-Za-z0-9_.\-]*+:[^\s\[\]]++\s++{_TOOL}(?:\s*+{_TOOL})*+\s*+"
)


def assisted_by_ok(value: str) -> bool:
    """``ID:MODEL [TOOL]…``: ID ``[A-Za-z0-9][A-Za-z0-9_.-]*``, a model without spaces or
    brackets, whitespace, then one or more ``[TOOL]`` (a tool holds a non-space and no
    brackets) separated by optional whitespace, nothing else."""
    return _ASSISTED_BY.fullmatch(value) is not None


def judge(
    text: str,
    cfg: TrailersConfig,
    emit: Emit,
    *,
    strict: bool = True,
    filled: bool = False,
    clean: set[str] | None = None,
    reading: Reading | None = None,
) -> None:
    """File every trailer-contract finding of one message through ``emit``; ``reading``:
    the run's shared reading of ``text`` (:mod:`tools.message_reading`), else one is made.

    ``clean``: the last paragraphs of plain-shaped messages already found clean with ``cfg``
    in this run; a plain message that ends in one of them is not read again (its block, and
    so every finding of :func:`_block_rules`, is that paragraph's alone), and each new clean
    one is added."""
    # A message of the plain shape meets the marker and framing rules as it stands, and its
    # block is its last paragraph: the rest of the reading is for every other message.
    if reading is None:
        reading = Reading(text)
    block = None
    plain_last = None
    if strict and cfg.marker and cfg.marker_placement == "paragraph":
        parts = reading.plain(cfg.marker)
        if parts is not None:
            if clean is not None and parts[0] in clean:
                if filled:
                    _placeholders(text, emit)
                return
            block = plain_trailers(*parts)
            if block is not None:
                plain_last = parts[0]
    if block is None:
        block = _shape(reading, cfg, emit, strict=strict)
        if block is None:
            return
    found = _block_rules(text, block, cfg, emit)
    if not found and plain_last is not None and clean is not None:
        clean.add(plain_last)
    if filled:
        _placeholders(text, emit)


def _block_rules(text: str, block: Block, cfg: TrailersConfig, emit: Emit) -> int:
    """The findings of the trailer block: required trailers, Assisted-by, authorship (the
    one set of trailer rules). Returns how many were filed."""
    filed = 0

    def counted(rule: str, message: str, line: int | None = None) -> None:
        nonlocal filed
        filed += 1
        emit(rule, message, line)

    _required(text, block, cfg, counted)
    if cfg.assisted_by:
        _assisted_by(block, cfg.assisted_by_format, counted)
    _authorship(block, cfg, counted)
    return filed


def _placeholders(text: str, emit: Emit) -> None:
    if PLACEHOLDER not in text:
        return
    for n, line in enumerate(split_lines(text), start=1):
        if PLACEHOLDER in line:
            emit(PLACEHOLDER_RULE.id, f"the template {PLACEHOLDER!r} was not filled in", n)


def _shape(reading: Reading, cfg: TrailersConfig, emit: Emit, *, strict: bool) -> Block | None:
    """The findings of an empty message, of the marker and of ``---`` lines; the trailer
    block as git reads it (None: nothing more to judge)."""
    text, lines = reading.text, reading.lines
    marker = cfg.marker
    if all(is_blank(line) for line in lines):
        if strict:
            emit(EMPTY_MESSAGE.id, "the commit message is empty", None)
        elif marker is not None:
            emit(MARKER_MISSING.id, f"the message is empty: no {marker} paragraph", None)
        return None
    glued: int | None = None
    if marker is not None:
        if cfg.marker_placement == "line":
            glued = _marker_line(lines, text, marker, emit, strict=strict)
        else:
            _marker(lines, text, marker, emit, strict=strict)
    if not strict:
        return None
    if "---" in text:
        for line_no in framing_lines(text):
            emit(
                FRAMING.id,
                "a `---` line is git's patch divider: `git am` drops it and everything below",
                line_no,
            )
    return reading.block() if glued is None else _block_without(lines, glued)


def _marker(lines: list[str], text: str, marker: str, emit: Emit, *, strict: bool) -> None:
    found = marker_lines(text, marker)
    own = [n for n in found if is_own_paragraph(lines, n)]
    if not own:
        if found:
            emit(
                MARKER_MISSING.id,
                f"{marker} shares its paragraph with other lines, so it is no marker "
                "paragraph: put a blank line before and after it",
                found[0],
            )
        else:
            emit(MARKER_MISSING.id, f"no {marker} paragraph (a line that is the marker)", None)
        return
    for line in found:
        if line != own[0]:
            emit(MARKER_DUPLICATE.id, f"{marker} again (first at line {own[0]})", line)
    if strict:
        starts = _paragraph_starts(lines)
        if starts and own[0] >= starts[-1]:
            emit(
                MARKER_LAST.id,
                f"{marker} is the last paragraph: the trailers must follow it as a paragraph "
                "of their own",
                own[0],
            )


def _marker_line(
    lines: list[str], text: str, marker: str, emit: Emit, *, strict: bool
) -> int | None:
    """``marker_placement: line``: the marker is a line of its own anywhere after the subject,
    glued to the trailers below it or not. Returns the line of a glued marker (one that shares
    its paragraph), whose trailer block is read with that line removed; else None."""
    subject = next((n for n, line in enumerate(lines, start=1) if not is_blank(line)), 0)
    found = [n for n in marker_lines(text, marker) if n > subject]
    if not found:
        emit(
            MARKER_MISSING.id,
            f"no {marker} line after the subject (a line that is the marker)",
            None,
        )
        return None
    for line in found[1:]:
        emit(MARKER_DUPLICATE.id, f"{marker} again (first at line {found[0]})", line)
    first = found[0]
    if strict and all(is_blank(line) for line in lines[first:]):
        emit(MARKER_LAST.id, f"{marker} is the last line: the trailers must follow it", first)
    return None if is_own_paragraph(lines, first) else first


def _block_without(lines: list[str], drop: int) -> Block:
    """The trailer block as git reads the message without line ``drop``; lines mapped back."""
    rest = lines[: drop - 1] + lines[drop:]
    block = find_block("\n".join(rest) + "\n")

    def back(n: int | None) -> int | None:
        return None if n is None else n + 1 if n >= drop else n

    moved = tuple(t._replace(line=back(t.line) or t.line) for t in block.trailers)
    return Block(moved, back(block.start), back(block.end), block.squash)


def _required(text: str, block: Block, cfg: TrailersConfig, emit: Emit) -> None:
    strays: dict[str, int] | None = None  # read once, at the first missing key
    for key, allowed in cfg.required.items():
        found = block.get(key)
        if not found:
            if strays is None:
                strays = _keyed_lines(split_lines(text), block)
            emit(
                TRAILER_MISSING.id,
                f"no `{key}:` trailer{_stray_hint(strays, block, key)}",
                block.start,
            )
            continue
        for extra in found[1:]:
            emit(
                TRAILER_DUPLICATE.id, f"`{key}:` again (first at line {found[0].line})", extra.line
            )
        for t in found:
            if t.value not in allowed:
                want = " or ".join(repr(a) for a in allowed)
                emit(TRAILER_VALUE.id, f"`{t.key}: {t.value}`: the value must be {want}", t.line)


def _keyed_lines(lines: list[str], block: Block) -> dict[str, int]:
    """The first line outside the trailer block of each key written ``Key:`` (the key
    lower-cased, blanks before the colon allowed): one pass, whatever the number of required
    keys looked up in it."""
    out: dict[str, int] = {}
    for n, line in enumerate(lines, start=1):
        if block.start is not None and block.start <= n <= (block.end or n):
            continue
        key, colon, _ = line.partition(":")
        if colon:
            out.setdefault(key.rstrip(" \t").lower(), n)
    return out


def _stray_hint(strays: dict[str, int], block: Block, key: str) -> str:
    """Point at a ``Key:`` line outside the block (``strays``: :func:`_keyed_lines`): the
    usual cause is a paragraph after it."""
    n = strays.get(key.lower())
    if n is not None:
        return (
            f" in the trailer block (line {n} has one, but the trailer block is the last "
            "paragraph only)"
        )
    if block.start is None:
        return " (the message has no trailer block: the last paragraph is not trailers)"
    return ""


def _assisted_by(block: Block, pattern: str | None, emit: Emit) -> None:
    flags = block.get(AI_ASSISTED)
    notes = block.get(ASSISTED_BY)
    flag = flags[0].value if flags else None
    if flag == "true" and not notes:
        emit(
            ASSISTED_BY_MISSING.id,
            "`AI-Assisted: true` needs an `Assisted-by:` trailer",
            flags[0].line,
        )
    if flag == "false":
        for t in notes:
            emit(
                ASSISTED_BY_FORBIDDEN.id,
                "`AI-Assisted: false` with an `Assisted-by:` trailer",
                t.line,
            )
    if pattern is not None:
        regex = _format_regex(pattern)
        for t in notes:
            if regex.fullmatch(t.value) is None:
                emit(
                    ASSISTED_BY_FORMAT.id,
                    f"`Assisted-by: {t.value}` does not match trailers.assisted_by_format "
                    f"{pattern!r}",
                    t.line,
                )
        return
    for t in notes:
        if not assisted_by_ok(t.value):
            emit(
                ASSISTED_BY_FORMAT.id,
                f"`Assisted-by: {t.value}`: expected `ID:MODEL [TOOL]…` (ID of letters, digits, "
                "_ . -; a model without spaces; at least one bracketed tool)",
                t.line,
            )


def _format_regex(pattern: str) -> ConfigPattern:
    return config_pattern(pattern, "trailers.assisted_by_format")


_ABSENT = 1 << 62  # the rank of no phrase


class Phrases:
    """Phrases of whole words (as :func:`words` reads them), looked for in word sequences all
    at once: an Aho–Corasick automaton over words. Each sequence is read once, word by word,
    whatever the number of phrases, so judging n people against m names costs n + m, not
    n × m (SPEC §10: 12,000 Assisted-by against 12,000 Co-authored-by lines)."""

    __slots__ = ("_goto", "_fail", "_best")

    def __init__(self, phrases: Iterable[list[str]]) -> None:
        goto: list[dict[str, int]] = [{}]  # per state: word -> next state (0 is the root)
        best: list[int] = [_ABSENT]  # per state: the lowest rank of a phrase ending there
        for rank, phrase in enumerate(phrases):
            state = 0
            for word in phrase:
                follow = goto[state].get(word)
                if follow is None:
                    follow = len(goto)
                    goto[state][word] = follow
                    goto.append({})
                    best.append(_ABSENT)
                state = follow
            if state:  # an empty phrase is found nowhere
                best[state] = min(best[state], rank)
        # Breadth first: each state falls back to the longest proper suffix of its words that
        # is a state too, and ends every phrase that suffix ends.
        fail = [0] * len(goto)
        queue = deque(goto[0].values())
        while queue:
            state = queue.popleft()
            for word, child in goto[state].items():
                back = fail[state]
                while back and word not in goto[back]:
                    back = fail[back]
                fail[child] = goto[back].get(word, 0)
                best[child] = min(best[child], best[fail[child]])
                queue.append(child)
        self._goto, self._fail, self._best = goto, fail, best

    def first(self, found: list[str]) -> int | None:
        """The rank (order given) of the first phrase that occurs in ``found`` as consecutive
        whole words, or None."""
        goto, fail, best = self._goto, self._fail, self._best
        state, lowest = 0, _ABSENT
        for word in found:
            while state and word not in goto[state]:
                state = fail[state]
            state = goto[state].get(word, 0)
            if best[state] < lowest:
                lowest = best[state]
        return None if lowest == _ABSENT else lowest


@functools.lru_cache(maxsize=8)
def _identity_phrases(identities: tuple[str, ...]) -> tuple[list[str], Phrases]:
    """The configured AI identities as phrases (empty ones dropped), and as shown."""
    phrases = [w for w in (words(i) for i in identities) if w]
    return [" ".join(w) for w in phrases], Phrases(phrases)


def _authorship(block: Block, cfg: TrailersConfig, emit: Emit) -> None:
    people: list[Trailer] = block.get(SIGNED_OFF_BY) + block.get(CO_AUTHORED_BY)
    if not people:  # most messages: nobody to judge
        return
    shown, identities = _identity_phrases(cfg.ai_identities)
    names = sorted({p for t in block.get(ASSISTED_BY) for p in assisted_by_parts(t.value)})
    named = [(p, w) for p in names if (w := words(p))]
    parts = Phrases(w for _, w in named) if named else None
    for t in sorted(people, key=lambda t: t.line):
        value = t.value.strip(SPACE)
        if t.has_key(CO_AUTHORED_BY) and value.rstrip(">").lower().endswith(_NOREPLY):
            continue  # GitHub's own noreply co-author lines (squash merges) are exempt
        found = words(value)
        rank = identities.first(found)
        hit = None if rank is None else shown[rank]
        part = None
        if hit is None and parts is not None:
            rank = parts.first(found)
            part = None if rank is None else named[rank][0]
        if hit is None and part is None:
            continue
        why = f"the AI identity {hit!r}" if hit else f"{part!r} of an `Assisted-by` trailer"
        emit(
            AI_AUTHORSHIP.id,
            f"`{t.key}: {t.value}` names {why}: an AI is credited with `Assisted-by`, "
            "never as an author or signer",
            t.line,
        )


def _fixup_pending(result: GateResult, commit: Commit, mode: str) -> None:
    subject = fixup_subject(commit.text) or ""
    result.add(
        FIXUP_PENDING.id,
        f"{subject!r} is not folded yet: `git rebase -i --autosquash` folds it into its target"
        + (" (trailers.fixups: check)" if mode == "check" else ""),
        severity="error" if mode == "check" else "warning",
        commit=commit.sha,
        line=1,
    )


def _merge_hint(emit: Emit) -> Emit:
    """A merge's message judged by the trailer rules says how to leave merges out."""

    def hinted(rule: str, message: str, line: int | None = None) -> None:
        hint = "(a merge's message; `trailers.merges: skip` leaves merges out)"
        emit(rule, f"{message} {hint}", line)

    return hinted


# -- the gate --------------------------------------------------------------------------------


# What the verdict cache leaves out of its key: the parts of the section applied to a commit's
# verdict after it is computed, or that choose the commits judged and how (the cutover is in
# each unit). Every other key of the section, present or future, is in the key.
_APPLIED_AFTER = frozenset({"enabled", "merges", "fixups", "first_parent", "cutover", "exceptions"})
# The modules whose code computes a verdict: their source is in the key.
JUDGING_MODULES = (__name__, *READING_MODULES)


def open_cache(ctx: Context, subjects: list[Subject]) -> verdict_cache.VerdictCache | None:
    """The gate's verdict cache (SPEC §12), keyed by what :func:`judge` reads of the config
    and the command line; None when nothing judged is a commit, or the cache is off."""
    if all(s.commit is None for s in subjects):
        return None
    section = ctx.config_data.get("trailers", {})
    inputs = {
        "trailers": {k: v for k, v in section.items() if k not in _APPLIED_AFTER},
        "filled": ctx.opts.filled,
    }
    return verdict_cache.open_for(ctx, NAME, inputs, JUDGING_MODULES, (r.id for r in RULES))


def _judge_all(ctx: Context, result: GateResult, subjects: list[Subject], debt: Debt) -> None:
    cfg = ctx.config.trailers
    strict_set = strict_commits(ctx, [s.commit for s in subjects if s.commit is not None])
    filled = ctx.opts.filled
    lenient = 0
    clean: set[str] = set()
    cache = open_cache(ctx, subjects)

    def pending(subject: Subject) -> None:
        if subject.commit is not None:
            _fixup_pending(result, subject.commit, cfg.fixups)

    walk = judged(result, subjects, cfg.fixups, skip_merges=cfg.merges == "skip", left_out=pending)
    for subject in walk:
        # The message about to be committed is always judged strictly: the cutover
        # grandfathers history, not new work.
        strict = strict_set is None or subject.sha is None or subject.sha in strict_set
        lenient += not strict
        emit = emitter(result, subject, debt)
        if subject.is_merge:
            emit = _merge_hint(emit)
        verdict_cache.through(
            cache,
            None if subject.sha is None else f"{subject.sha} {'strict' if strict else 'lenient'}",
            functools.partial(
                judge,
                subject.text,
                cfg,
                strict=strict,
                filled=filled,
                clean=clean,
                reading=subject.reading,
            ),
            emit,
        )
    if cache is not None:
        cache.save()
    if strict_set is not None:
        result.stats["before_cutover"] = lenient


prefetch, run = commit_messages.gate(
    NAME,
    lambda config: config.trailers.enabled,
    _judge_all,
    first_parent=lambda config: config.trailers.first_parent,
)
