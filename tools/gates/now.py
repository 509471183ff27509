"""now: the resume digest ``.agents/NOW.md`` (SPEC §4.7)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from tools import markdown
from tools.config_model import NowConfig
from tools.git import decode
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "now"
NOW_MISSING = Rule(
    "now-missing",
    "error",
    "the digest file does not exist",
    example=".agents/NOW.md does not exist in the working tree",
    fix=(
        "Create the digest: `tools init` writes a stamped one with the required "
        "headings. Or point `now.path` at yours, or leave `now` out of "
        "`preflight.gates`."
    ),
)

NOW_STAMP = Rule(
    "now-stamp",
    "error",
    "no valid <!-- now-updated: YYYY-MM-DD --> stamp",
    example="stamp '2026-13-40' is not a date YYYY-MM-DD",
    fix=(
        "Keep exactly one `<!-- now-updated: YYYY-MM-DD -->` line with a real date, "
        "outside fenced code."
    ),
)

NOW_STALE = Rule(
    "now-stale",
    "error",
    "the stamp is older than max_age_days before HEAD's committer date",
    example=(
        "stamp 2026-01-01 is 8 days older than HEAD's committer date 2026-01-09 (max_age_days 7)"
    ),
    fix=(
        "Bring the digest up to date and set its stamp `<!-- now-updated: YYYY-MM-DD "
        "-->` to today, in the same change."
    ),
)

NOW_HEADING = Rule(
    "now-heading",
    "error",
    "a required heading is absent",
    example="required heading 'live claims' is absent",
    fix=(
        "Add the heading (any level, any case, numbering allowed: `## 1. Live "
        "claims`), outside fenced code."
    ),
)

NOW_BUDGET = Rule(
    "now-budget",
    "error",
    "more than max_lines lines",
    example="21 lines, over the budget of 20",
    fix=(
        "Trim the digest to `now.max_lines`: it says where things stand now; history "
        "belongs in specs, the issue index or the commit log."
    ),
)

NOW_LONG_ENTRY = Rule(
    "now-long-entry",
    "error",
    "a list item or table row longer than max_entry characters",
    example="entry of 74 characters, over max_entry 60",
    fix="Split the item or row, or move the detail to a spec or issue and link it.",
)

RULES = declare(NAME, [NOW_MISSING, NOW_STAMP, NOW_STALE, NOW_HEADING, NOW_BUDGET, NOW_LONG_ENTRY])

_STAMP_OPEN, _STAMP_KEY, _STAMP_CLOSE = "<!--", "now-updated:", "-->"
_SPACE = " \t\n\r\f\v"


def stamps(line: str) -> list[str]:
    """The value of each ``<!-- now-updated: VALUE -->`` on ``line`` (string scanning, linear
    in the line's length whatever it holds)."""
    found: list[str] = []
    n = len(line)
    at = line.find(_STAMP_OPEN)
    while at >= 0:
        i = at + len(_STAMP_OPEN)
        while i < n and line[i] in _SPACE:
            i += 1
        if line.startswith(_STAMP_KEY, i):
            close = line.find(_STAMP_CLOSE, i)
            if close < 0:
                break  # no comment closes after this one: none can after any later one
            found.append(line[i + len(_STAMP_KEY) : close].strip(_SPACE))
            at = line.find(_STAMP_OPEN, close + len(_STAMP_CLOSE))
        else:
            at = line.find(_STAMP_OPEN, i)
    return found


def _is_date(value: str) -> bool:
    parts = value.split("-")
    return [len(p) for p in parts] == [4, 2, 2] and all(p.isascii() and p.isdigit() for p in parts)


def headings(doc: markdown.Document) -> list[str]:
    """Heading titles (ATX and setext, anywhere GitHub renders one), lower-cased, numbering
    dropped."""
    return [h.title for h in doc.headings]


def entries(doc: markdown.Document) -> list[tuple[int, int]]:
    """(line number, length in characters) of each list item (its first line and the lines
    of its own text, trimmed and joined with one space, as rendered) and each table row (the
    header row included); code blocks hold neither."""
    lines = doc.lines
    found = [
        (item.line, len(" ".join(ln.strip() for ln in lines[item.line - 1 : item.end])))
        for item in doc.items
    ]
    for table in doc.tables:
        found.extend((row.line, len(lines[row.line - 1].strip())) for row in table.rows)
    found.sort()
    return found


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config.now
    path = cfg.path
    raw = ctx.read_current(path)
    if raw is None:
        where = "the index" if ctx.opts.staged else "the working tree"
        result.add(NOW_MISSING.id, f"{path} does not exist in {where}", path=path)
        return result
    lines = markdown.split_lines(decode(raw))
    doc = markdown.parse_lines(lines, where=path)
    result.stats["lines"] = len(lines)
    # A stamp is an HTML comment: one in code (a span or a block) is text, not a stamp.
    found = [(line, v) for line, piece in doc.html for v in stamps(piece)]
    stamp_date = _stamp_date(result, path, found)
    if stamp_date is not None and cfg.max_age_days is not None:
        _judge_age(ctx, result, path, stamp_date, found[0][0], cfg.max_age_days)
    _judge_shape(result, cfg, doc, len(lines))
    return result


def _stamp_date(result: GateResult, path: str, found: list[tuple[int, str]]) -> dt.date | None:
    """The date of the one stamp (None: no valid single stamp, reported on ``result``)."""
    if not found:
        result.add(NOW_STAMP.id, "no <!-- now-updated: YYYY-MM-DD --> stamp", path=path)
        return None
    if len(found) > 1:
        result.add(
            NOW_STAMP.id,
            f"{len(found)} now-updated stamps; keep exactly one",
            path=path,
            line=found[1][0],
        )
        return None
    line_no, value = found[0]
    try:
        if not _is_date(value):
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        result.add(
            NOW_STAMP.id,
            f"stamp {value!r} is not a date YYYY-MM-DD",
            path=path,
            line=line_no,
        )
        return None


def _judge_age(
    ctx: Context, result: GateResult, path: str, stamp_date: dt.date, line: int, max_age: int
) -> None:
    head = ctx.git.head()
    if head is None:
        result.add(
            NOW_STALE.id,
            "max_age_days is set but there is no HEAD commit to count from; not judged",
            severity="info",
            path=path,
        )
        return
    head_day = dt.datetime.fromtimestamp(ctx.git.committer_time(head), dt.timezone.utc).date()
    age = (head_day - stamp_date).days
    result.stats["age_days"] = age
    if age > max_age:
        result.add(
            NOW_STALE.id,
            f"stamp {stamp_date} is {age} days older than HEAD's committer date "
            f"{head_day} (max_age_days {max_age})",
            path=path,
            line=line,
        )


def _judge_shape(result: GateResult, cfg: NowConfig, doc: markdown.Document, lines: int) -> None:
    """The required headings, the line budget and the longest entry."""
    path = cfg.path
    present = set(headings(doc))
    for heading in cfg.headings:
        if heading.strip().lower() not in present:
            result.add(NOW_HEADING.id, f"required heading {heading!r} is absent", path=path)
    if lines > cfg.max_lines:
        result.add(
            NOW_BUDGET.id,
            f"{lines} lines, over the budget of {cfg.max_lines}",
            path=path,
            line=cfg.max_lines + 1,
        )
    for line_no, length in entries(doc):
        if length > cfg.max_entry:
            result.add(
                NOW_LONG_ENTRY.id,
                f"entry of {length} characters, over max_entry {cfg.max_entry}",
                path=path,
                line=line_no,
            )
