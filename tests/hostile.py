"""Hostile inputs: 1 MiB lines shaped to make a backtracking parser go quadratic.

Commit messages, markdown and ledger lines come from pull requests. Each case names the
parser family it attacks, the function that judges it (exactly what the gates call) and the
input. ``tests/test_hostile_inputs.py`` runs every case under a generous guard;
``bench/bench_hostile.py`` measures them for BENCHMARKS.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from tools import commit_messages, index_table, ledger, markdown, trailer_block
from tools.config import defaults, merge
from tools.config_model import protocol_config
from tools.gates import conflicts, now
from tools.gates import trailers as trailers_gate

MIB = 1 << 20
BS = "\\"
MARKER = "FOLLOWING_AGENTS_PROTOCOL"
_TRAILERS = {
    "marker": MARKER,
    "required": {"Following-Agents-Protocol": ["true"], "AI-Assisted": ["true", "false"]},
    "assisted_by": True,
    "ai_identities": ["ai", "agent", "bot", "claude", "codex", "gpt", "llm"],
    "marker_placement": "paragraph",
    "assisted_by_format": None,
}
_STYLE = {"subject_max": 72, "subject_pattern": None, "require_body": True}
_CONFIG = protocol_config(merge(defaults(), {"trailers": _TRAILERS, "style": _STYLE}))
_TRAILERS_CFG = _CONFIG.trailers
# The marker as a line of its own, glued to its trailers or not, and a configured format.
_TRAILERS_LINE_CFG = _TRAILERS_CFG._replace(marker_placement="line", assisted_by_format=r"\S+")
_STYLE_CFG = _CONFIG.style
_INDEX_HEAD = "# Index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"


def forget() -> None:
    """Clear the parsers' memo caches, so that a repeated run measures the parse itself."""
    from tools import bounded
    from tools.gates import docs

    trailer_block.find_block.cache_clear()
    trailers_gate.assisted_by_parts.cache_clear()
    trailers_gate._identity_phrases.cache_clear()
    bounded._compiled.cache_clear()  # config patterns: each run compiles them again
    docs._link_target.cache_clear()
    markdown.forget()


class Case(NamedTuple):
    family: str
    name: str
    judge: Callable[[Any], Any]
    data: Any


def _judge_message(text: str) -> None:
    from tools.gates import style

    trailers_gate.judge(text, _TRAILERS_CFG, lambda *a: None)
    trailers_gate.judge(text, _TRAILERS_LINE_CFG, lambda *a: None)
    style.judge(text, _STYLE_CFG, MARKER, lambda *a: None)
    commit_messages.clean(text, "strip")


def _judge_markdown(text: str) -> None:
    """Everything a gate reads of one markdown document: its one parse, then headings,
    anchors, sections, links, NOW entries and stamps, prose for citations, ratchet sites, the
    rows of ``spec_now`` (each gate parses once and reads a part of this)."""
    from tools.gates import docs
    from tools.ratchets import markdown_measures as ratchet_md

    markdown.parse_links(text).anchors()  # the links gate's light pass
    doc = markdown.parse(text)
    doc.anchors()
    doc.sections()
    doc.prose()
    now.entries(doc)
    for _, piece in doc.html:
        now.stamps(piece)
    ratchet_md.document_sites(doc)
    docs.table_rows(doc)


def _judge_index(line: str) -> None:
    table = index_table.parse(_INDEX_HEAD + line + "\n")
    for row in table.rows:
        _ = row.title_text
    index_table.quick_keys(line)
    index_table.escape_cell(line)
    index_table.unescape_cell(line)


def _judge_ledger(raw: bytes) -> None:
    list(ledger.scan_bytes(raw))
    ledger.parse_line(raw)


def _judge_assisted(value: str) -> None:
    trailers_gate.assisted_by_ok(value)
    trailers_gate.assisted_by_parts.__wrapped__(value)
    words = trailers_gate.words(value)
    trailers_gate.contains_words(words, ["a"] * 64 + ["b"])


def _judge_c_source(text: str) -> None:
    """A C/C++ file counted by a pattern ratchet with ``outside_guards`` (strip, match,
    track the conditionals), exactly as the engine counts a file's bytes."""
    from tools.bounded import config_pattern
    from tools.ratchets.guards import GuardSet
    from tools.ratchets.literals import required
    from tools.ratchets.pattern import Bucket, Detector

    guards = GuardSet([config_pattern(r"VT_\w+", "g")])
    vt = config_pattern(r"\bVT_\w", "vt")
    buckets = [
        Bucket("vt", r"\bVT_\w", vt, required(r"\bVT_\w"), guards=guards),
        Bucket("any", r"x", config_pattern("x", "any"), required(r"x"), guards=guards),
    ]
    Detector(buckets, None, "c").scan(text.encode("utf-8", "surrogateescape"))


def _render_report(message: str) -> None:
    """A finding quoting hostile text, rendered in every format (text escapes controls, the
    sarif log re-encodes and fingerprints it)."""
    from tools.report import FORMATS, GateResult, Report, render

    gate = GateResult("conflicts")
    gate.add("conflict-marker", message, path=message[:4096], line=1)
    for fmt in FORMATS:
        render(Report([gate]), fmt, color=True)


def cases() -> list[Case]:
    msg = "Subject\n\nBody.\n\n"
    out = [
        # trailer lines (git's block finder, continuation, separators, squash dashes)
        Case("trailer lines", "key without colon", _judge_message, msg + "a" * MIB + "\n"),
        Case("trailer lines", "key then blanks", _judge_message, msg + "K" + " " * MIB + ":v\n"),
        Case(
            "trailer lines", "continuations", _judge_message, msg + "K: v\n" + " x\n" * (MIB // 3)
        ),
        Case("trailer lines", "many trailers", _judge_message, msg + "K: v\n" * (MIB // 5)),
        Case("trailer lines", "comment lines", _judge_message, msg + "#\n" * (MIB // 2) + "K: v\n"),
        Case(
            "trailer lines",
            "dash line",
            _judge_message,
            msg + "K: v\n" + "-" * MIB + "\n\nCo-authored-by: a <b>\n",
        ),
        Case("trailer lines", "patch dividers", _judge_message, msg + "---\n" * (MIB // 4)),
        Case(
            "trailer lines",
            "scissors lines",
            _judge_message,
            msg + "# ------------------------ >8 ------------------------\n" * 20000,
        ),
        Case(
            "trailer lines",
            "blank-looking line",
            _judge_message,
            msg + " \t" * (MIB // 2) + "\nK: v\n",
        ),
        # Assisted-by values and the names compared with sign-offs
        Case("Assisted-by", "unclosed bracket", _judge_assisted, "a:b [" + " x" * (MIB // 2)),
        Case("Assisted-by", "open brackets", _judge_assisted, "a:b " + "[" * MIB),
        Case("Assisted-by", "close brackets", _judge_assisted, "a:b " + "]" * MIB),
        Case("Assisted-by", "nested", _judge_assisted, "a:b " + "[[" * (MIB // 2) + "]"),
        Case("Assisted-by", "many tools", _judge_assisted, "a:b " + "[x]" * (MIB // 3)),
        Case("Assisted-by", "long id", _judge_assisted, "a" * MIB + ":"),
        Case("Assisted-by", "words", _judge_assisted, "a " * (MIB // 2)),
        Case(
            "Assisted-by",
            "in a message",
            _judge_message,
            msg
            + f"{MARKER}\n\nAI-Assisted: true\nAssisted-by: a:"
            + "ab " * (MIB // 6)
            + "[t]\n"
            + "Signed-off-by: "
            + "ab " * (MIB // 6)
            + "\n",
        ),  # fmt: skip
        # markers: the protocol marker, conflict markers
        Case("markers", "marker lines", _judge_message, msg + (MARKER + "\n") * (MIB // 26)),
        Case("markers", "marker words", _judge_message, msg + (MARKER + " x\n") * (MIB // 28)),
        Case(
            "markers",
            "conflict opens",
            lambda s: conflicts.find_markers(s.encode()),
            "<<<<<<< " * (MIB // 8),
        ),
        Case(
            "markers",
            "conflict hunks",
            lambda s: conflicts.find_markers(s.encode()),
            "<<<<<<< x\n=======\n" * (MIB // 18),
        ),
        # headings and entries (NOW.md, specs, links' anchors)
        Case("headings", "spaces inside", _judge_markdown, "# a" + " " * MIB + "b"),
        Case("headings", "hashes", _judge_markdown, "#" * MIB),
        Case("headings", "closing runs", _judge_markdown, "# " + "a #" * (MIB // 3)),
        Case("headings", "numbering", _judge_markdown, "# " + "1." * (MIB // 2) + " x"),
        Case("headings", "link openers", _judge_markdown, "## " + "[x](" * (MIB // 4)),
        Case("headings", "backtick fence", _judge_markdown, "`" * MIB),
        Case("headings", "setext", _judge_markdown, "a\n" + "=" * MIB),
        Case("headings", "list marker", _judge_markdown, "1" * MIB + "."),
        Case("headings", "stamp blanks", _judge_markdown, "<!-- now-updated:" + " " * MIB + "x"),
        Case("headings", "stamp openers", _judge_markdown, "<!--" * (MIB // 4)),
        # links, HTML and tables (links' targets and anchors, the markdown ratchet, spec_now)
        Case("links", "openers", _judge_markdown, "[" * MIB),
        Case("links", "closers", _judge_markdown, "]" * MIB),
        Case("links", "open targets", _judge_markdown, "[x](\n" * (MIB // 5)),
        Case("links", "image openers", _judge_markdown, "![" * (MIB // 2)),
        Case("links", "emphasis and openers", _judge_markdown, "*[a](" * (MIB // 5)),
        Case("links", "reference uses", _judge_markdown, "[a]\n" * (MIB // 4) + "[a]: b\n"),
        Case("links", "reference definitions", _judge_markdown, "[a]: b\n" * (MIB // 7)),
        Case("links", "lone backticks", _judge_markdown, "` a " * (MIB // 4)),
        Case("links", "angle brackets", _judge_markdown, "<" * MIB),
        Case("links", "open tags", _judge_markdown, "<a " * (MIB // 3)),
        Case("links", "anchor tags", _judge_markdown, '<a id="x">' * (MIB // 10)),
        Case("links", "open quote", _judge_markdown, '<a id="' + "x" * MIB),
        Case("links", "comment openers", _judge_markdown, "<!--" * (MIB // 4)),
        Case("links", "entities", _judge_markdown, "&amp;" * (MIB // 5)),
        Case(
            "links",
            "table rows",
            _judge_markdown,
            "| a | b |\n|---|---|\n" + "| x | y |\n" * (MIB // 10),
        ),
        Case("links", "table pipes", _judge_markdown, "a|b\n-|-\n" + "|" * MIB),
        # table rows (the issue index)
        Case("table rows", "no closing pipe", _judge_index, "|" + "a" * MIB),
        Case("table rows", "backslashes", _judge_index, "|" + BS * MIB + "|"),
        Case(
            "table rows",
            "escaped pipes",
            _judge_index,
            "| #1 | A | " + (BS + "|") * (MIB // 2) + " | k |",
        ),
        Case("table rows", "open link", _judge_index, "| [#1](" + "(" * MIB + " | A | t | k |"),
        Case("table rows", "pipes", _judge_index, "|" * MIB),
        Case("table rows", "blanks", _judge_index, "|" + " " * MIB + "#1 | A | t | k"),
        # ledger lines
        Case("ledger lines", "open braces", _judge_ledger, b"{" * MIB + b"\n"),
        Case("ledger lines", "deep nesting", _judge_ledger, b"[" * 100000 + b"\n"),
        Case("ledger lines", "long id", _judge_ledger, b'{"id": "' + b"a" * MIB + b'"}\n'),
        Case(
            "ledger lines", "long created", _judge_ledger, b'{"created": "' + b"1" * MIB + b'"}\n'
        ),
    ]
    out += [
        Case("report rendering", "escape sequences", _render_report, "\x1b[2J" * (MIB // 4)),
        Case("report rendering", "bidi overrides", _render_report, "\u202e\u2066" * (MIB // 2)),
        Case("report rendering", "lines", _render_report, "\n" * MIB),
        Case("report rendering", "not UTF-8", _render_report, "\udcff" * MIB),
    ]
    deep = MIB // 16
    out += [
        # C preprocessor conditionals (the ratchet's outside_guards)
        Case("preprocessor", "deep #ifdef", _judge_c_source, "#ifdef VT_A\nx\n" * (MIB // 14)),
        Case("preprocessor", "deep #if", _judge_c_source, "#if VT_A && B\n" * (MIB // 14) + "x\n"),
        Case("preprocessor", "#elif chain", _judge_c_source, "#if X\n" + "#elif VT_A\nx\n" * deep),
        Case("preprocessor", "stray #endif", _judge_c_source, "#endif\nx\n" * (MIB // 9)),
        Case(
            "preprocessor",
            "parentheses",
            _judge_c_source,
            "#if " + "(" * (MIB // 2) + "VT_A" + ")" * (MIB // 2) + "\nx\n",
        ),
        Case("preprocessor", "conjunctions", _judge_c_source, "#if " + "VT_A && " * deep + "\nx\n"),
        Case("preprocessor", "splices", _judge_c_source, "#if VT_A && \\\n" * deep + "1\nx\n"),
        Case("preprocessor", "defined", _judge_c_source, "#if " + "defined(" * deep + "\nx\n"),
    ]
    out += rule_cases()  # config patterns, ai-authorship, sections, tables
    out.append(
        Case(
            "trailer lines",
            "git reference parser",
            trailer_block.git_trailers,
            msg + "a" * MIB + "\n",
        )
    )
    return out


# -- documents that must be refused (SPEC §10: nesting past 100 levels, alias bombs) ----------
DEEP = 100_000


def _refused(judge: Callable[[Any], Any]) -> Callable[[Any], None]:
    """``judge`` wrapped so that only its refusal (exit 2, or a malformed ledger line) passes."""
    from tools.errors import UsageError

    def run(data: Any) -> None:
        try:
            out = judge(data)
        except UsageError:
            return
        if isinstance(out, ledger.LineError):
            return
        raise AssertionError(f"not refused: {out!r}"[:200])

    return run


def _alias_bomb(levels: int) -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _config(text: str) -> None:
    from tools import config

    config.load_bytes(text.encode(), display=".agents/protocol.yaml")


def _baseline(raw: bytes) -> None:
    from tools.ratchets import baseline

    baseline.parse(raw, ".agents/baselines/x.json", "x")


def _receipt(text: str) -> None:
    from tools.errors import UsageError

    try:
        ledger.strict_loads(text)
    except ValueError as exc:  # what `ledger merge` turns into exit 2
        raise UsageError(str(exc)) from None


def _evidence(text: str) -> None:
    from tools.numerics import gridtie

    gridtie.parse_evidence(text, "evidence.json")


def refusals() -> list[Case]:
    """Each input its parser must refuse, quickly (bench_hostile: ≤ 0.1 s each)."""
    import importlib.util

    nested = "[" * DEEP + "]" * DEEP
    objects = '{"a":' * DEEP + "1" + "}" * DEEP
    out = [
        Case("YAML", "alias bomb, 9 levels (350 bytes)", _refused(_config), _alias_bomb(9)),
        Case("YAML", f"{DEEP:,} levels of flow nesting", _refused(_config), "a: " + nested),
        Case("YAML", f"{DEEP:,} unclosed levels", _refused(_config), "[" * DEEP),
        Case("JSON", f"baseline, {DEEP:,} levels", _refused(_baseline), nested.encode()),
        Case("JSON", f"receipt, {DEEP:,} levels of objects", _refused(_receipt), objects),
        Case("JSON", f"ledger line, {DEEP:,} levels", _refused(ledger.parse_line), nested.encode()),
    ]
    if importlib.util.find_spec("numpy") is not None:  # the numerics commands' dependency
        evidence = '{"schema": ' + nested + "}"
        out.append(
            Case("JSON", f"grid-tie evidence, {DEEP:,} levels", _refused(_evidence), evidence)
        )
    return out


# -- rules that must stay linear: config patterns, ai-authorship, sections, tables -----------
# SPEC §10: patterns from a pull request run in linear time (RE2), and every rule's own
# algorithm is linear in its input: 12,000 Assisted-by against 12,000 Co-authored-by lines, a
# spec of 260,000 headings and a table of 100,000 rows, each about 1 MiB.
def _trailers_with(**changes: Any) -> Any:
    return _TRAILERS_CFG._replace(**changes)


def _judge_trailers_cfg(cfg: Any) -> Callable[[str], None]:
    def judge(text: str) -> None:
        trailers_gate.judge(text, cfg, lambda *a: None)

    return judge


def _judge_subject_pattern(pattern: str) -> Callable[[str], None]:
    def judge(text: str) -> None:
        from tools.gates import style

        style.judge(text, _STYLE_CFG._replace(subject_pattern=pattern), MARKER, lambda *a: None)

    return judge


def _detector(buckets: dict[str, str], marker: str | None, guards: str | None = None) -> Any:
    """A pattern ratchet as the engine builds it from its config (RE2, the prefilter)."""
    from tools.bounded import config_pattern
    from tools.ratchets.guards import GuardSet
    from tools.ratchets.literals import required
    from tools.ratchets.pattern import Bucket, Detector, Marker

    guard = None if guards is None else GuardSet([config_pattern(guards, "outside_guards")])
    made = [
        Bucket(name, p, config_pattern(p, name), required(p), guards=guard)
        for name, p in buckets.items()
    ]
    mark = None if marker is None else Marker(marker, config_pattern(marker, "m"), required(marker))
    return Detector(made, mark, "c" if guards is not None else None)


def _judge_ratchet(
    buckets: dict[str, str], marker: str | None = None, guards: str | None = None
) -> Callable[[str], None]:
    def judge(text: str) -> None:
        _detector(buckets, marker, guards).scan(text.encode("utf-8", "surrogateescape"))

    return judge


def _judge_added_line(pattern: str) -> Callable[[str], None]:
    """``docs.rules[].when_added_line`` against an added line, as the docs gate matches it."""

    def judge(line: str) -> None:
        from tools.config_model import CheckpointRule
        from tools.gates import docs

        cfg = CheckpointRule("r", ("src/**",), ("docs/**",), None, pattern, False, None)
        rule = docs._DocsRule.of(cfg, (), "docs.rules[0]")
        docs._added_matches(rule, [line.encode("utf-8", "surrogateescape")])

    return judge


_STATES = ("t", "d")


def _judge_matrix(spec_link: str) -> Callable[[str], None]:
    """A matrix file of ``docs.spec_now`` in which every row appears with a state: its rows'
    moves, and the spec each moved row links (``spec_link``), as the docs gate reads them."""

    def judge(text: str) -> None:
        from tools.bounded import config_pattern
        from tools.config_model import StatusMatrix
        from tools.gates import docs

        entry = StatusMatrix("docs/m.md", spec_link, _STATES, 1, None)
        link = config_pattern(spec_link, "docs.spec_now[0].spec_link")
        for move in docs.row_moves(None, text, docs.RowSpec(frozenset(_STATES))):
            docs._spec_target(entry, move.row, link)

    return judge


def _judge_spec(text: str) -> None:
    """A spec as the spec gate reads it (its sections, `Owed` citations, evidence blocks)
    and as the docs gate asks whether its `Now` is filled (one parse, shared)."""
    from tools.gates import docs
    from tools.gates import spec as spec_gate
    from tools.report import GateResult

    spec_gate._judge_spec(GateResult("spec"), "specs/s.md", markdown.split_lines(text), [])
    docs.now_is_filled(text)


def _judge_anchors(text: str) -> None:
    """A document's anchors as the links gate reads them (every heading's, de-duplicated)."""
    markdown.parse(text).anchors()


def _message_of(trailers: str) -> str:
    return f"Subject\n\nBody.\n\n{MARKER}\n\n" + trailers


def rule_cases() -> list[Case]:
    """The inputs of the rules SPEC §10 requires linear, each about 1 MiB."""
    import random

    n = 12_000
    names = "".join(f"Assisted-by: i{i}:m{i} [t{i}]\n" for i in range(n))
    people = "".join(f"Co-authored-by: Person {i} <p{i}@x.org>\n" for i in range(n))
    shared = "".join(f"Assisted-by: q:m [a a a a a a a a c{i}]\n" for i in range(n))
    echoes = "Co-authored-by: a a a a a a a a a a a a a\n" * n
    required = {f"K{i}": ["v"] for i in range(20_000)}
    strays = "".join(f"K{i}: v\n\n" for i in range(20_000))
    flags = "Following-Agents-Protocol: true\nAI-Assisted: true\n"
    noise = "".join(random.Random(1).choices("ab", k=MIB))
    link = r"\]\((?P<spec>[^)\s]+)\)"
    out = [
        # a backtracking bomb in each kind of config pattern, against the text that sets it off
        Case(
            "config patterns",
            "assisted_by_format (a|aa)+$",
            _judge_trailers_cfg(_trailers_with(assisted_by_format="(a|aa)+$")),
            _message_of(flags + "Assisted-by: " + "a" * MIB + "b\n"),
        ),
        Case(
            "config patterns",
            r"subject_pattern ^(\w+\s?)*$",
            _judge_subject_pattern(r"^(\w+\s?)*$"),
            "word " * (MIB // 5) + "!\n\nBody.\n",
        ),
        Case(
            "config patterns",
            "bucket (x+x+)+y, marker (x|xx)+z",
            _judge_ratchet({"b": "(x+x+)+y"}, "(?P<tag>(x|xx)+)z"),
            "zy" + "x" * MIB + "\n",
        ),
        Case(
            "config patterns",
            r"outside_guards (X+X+)+Y",
            _judge_ratchet({"b": "x"}, None, "(X+X+)+Y"),
            "#ifdef " + "X" * MIB + "\nx\n#endif\n",
        ),
        Case(
            "config patterns",
            "when_added_line (x+x+)+y",
            _judge_added_line("(x+x+)+y"),
            "x" * MIB,
        ),
        Case(
            "config patterns",
            r"spec_link \]\((?P<spec>(a|aa)+)\)",
            _judge_matrix(r"\]\((?P<spec>(a|aa)+)\)"),
            "| k | s |\n|---|---|\n| r | `d` ](" + "a" * MIB + " |\n",
        ),
        Case(
            "config patterns",
            "the densest program allowed",
            _judge_ratchet({"b": "[ab]*a[ab]{193}x"}),
            "x" + noise + "\n",
        ),
        # ai-authorship: every author line against every Assisted-by name
        Case(
            "ai-authorship",
            "12,000 names x 12,000 authors",
            _judge_message,
            _message_of(flags + names + people),
        ),
        Case("ai-authorship", "shared words", _judge_message, _message_of(flags + shared + echoes)),
        Case(
            "ai-authorship",
            "one long author",
            _judge_message,
            _message_of(flags + shared + "Signed-off-by: " + "a " * (MIB // 4) + "\n"),
        ),
        Case(
            "ai-authorship",
            "20,000 missing keys written above (0.2 MiB)",
            _judge_trailers_cfg(_trailers_with(required=required)),
            _message_of(strays + flags + "Assisted-by: a:b [t]\n"),
        ),
        # sections of a spec
        Case("sections", "260,000 headings", _judge_spec, "# a\n" * 260_000),
        Case("sections", "one heading over all", _judge_spec, "# a\n" + "## b\n" * 200_000),
        Case(
            "sections",
            "levels down",
            _judge_spec,
            "".join(f"{'#' * k} a\n" for k in range(6, 0, -1)) * 25_000,
        ),
        Case(
            "sections",
            "levels up",
            _judge_spec,
            "".join(f"{'#' * k} a\n" for k in range(1, 7)) * 25_000,
        ),
        Case("sections", "Now sections", _judge_spec, "## Now\n### Now\n" * 70_000),
        Case("sections", "260,000 anchors alike", _judge_anchors, "# a\n" * 260_000),
        Case(
            "sections",
            "anchors of numbered names",
            _judge_anchors,
            "".join(f"# a-{i}\n# a\n" for i in range(50_000)) + "# a\n" * 100_000,
        ),
        # a table of 100,000 rows (docs.spec_now), with and without spec links
        Case(
            "tables",
            "100,000 rows (0.8 MiB)",
            _judge_matrix(link),
            "|k|s|\n|-|-|\n" + "|r|`d`|\n" * 100_000,
        ),
        Case(
            "tables",
            "100,000 rows linking one spec",
            _judge_matrix(link),
            "s|\n-|\n" + "`d`[](s)|\n" * 100_000,  # a row needs no leading pipe
        ),
    ]
    return out
