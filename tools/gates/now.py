"""now: the resume digest ``.agents/NOW.md`` (SPEC §4.7)."""

from __future__ import annotations

import datetime as dt
import re

from tools.context import Context
from tools.git import decode
from tools.report import GateResult, Rule, declare

NAME = "now"
RULES = declare(
    NAME,
    [
        Rule("now-missing", "error", "the digest file does not exist"),
        Rule("now-stamp", "error", "no valid <!-- now-updated: YYYY-MM-DD --> stamp"),
        Rule(
            "now-stale",
            "error",
            "the stamp is older than max_age_days before HEAD's committer date",
        ),
        Rule("now-heading", "error", "a required heading is absent"),
        Rule("now-budget", "error", "more than max_lines lines"),
        Rule(
            "now-long-entry", "error", "a list item or table row longer than max_entry characters"
        ),
    ],
)

_STAMP = re.compile(r"<!--\s*now-updated:\s*(\S*?)\s*-->")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NUMBERING = re.compile(r"^\d+(?:\.\d+)*\.?\s+")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])(?:\s+|$)")


def headings(lines: list[str]) -> list[str]:
    """Heading texts (ATX and setext), lower-cased, with any section numbering dropped."""
    out: list[str] = []
    prev = ""
    for line in lines:
        m = _ATX.match(line)
        if m:
            out.append(m.group(2) or "")
        elif _SETEXT.match(line) and prev.strip() and not _ITEM.match(prev):
            out.append(prev.strip())
        prev = line
    return [_NUMBERING.sub("", h.strip()).strip().lower() for h in out]


def entries(lines: list[str]) -> list[tuple[int, int]]:
    """(line number, length in characters) of each list item (with its continuation lines)
    and each table row."""
    found: list[tuple[int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("|"):
            found.append((i + 1, len(stripped)))
            i += 1
            continue
        m = _ITEM.match(line)
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        length = len(stripped)
        j = i + 1
        while j < n:
            nxt = lines[j]
            if not nxt.strip() or _ITEM.match(nxt) or nxt.strip().startswith("|"):
                break
            if len(nxt) - len(nxt.lstrip()) <= indent and _ATX.match(nxt):
                break
            length += 1 + len(nxt.strip())  # joined with one space, as rendered
            j += 1
        found.append((i + 1, length))
        i = j
    return found


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    cfg = ctx.config["now"]
    path = cfg["path"]
    raw = ctx.read_current(path)
    if raw is None:
        where = "the index" if ctx.opts.staged else "the working tree"
        result.add("now-missing", f"{path} does not exist in {where}", path=path)
        return result
    text = decode(raw)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    result.stats["lines"] = len(lines)

    stamps = [(i + 1, m) for i, ln in enumerate(lines) for m in _STAMP.finditer(ln)]
    stamp_date: dt.date | None = None
    if not stamps:
        result.add("now-stamp", "no <!-- now-updated: YYYY-MM-DD --> stamp", path=path)
    elif len(stamps) > 1:
        result.add(
            "now-stamp",
            f"{len(stamps)} now-updated stamps; keep exactly one",
            path=path,
            line=stamps[1][0],
        )
    else:
        line_no, m = stamps[0]
        value = m.group(1)
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                raise ValueError
            stamp_date = dt.date.fromisoformat(value)
        except ValueError:
            result.add(
                "now-stamp",
                f"stamp {value!r} is not a date YYYY-MM-DD",
                path=path,
                line=line_no,
            )
    max_age = cfg["max_age_days"]
    if stamp_date is not None and max_age is not None:
        head = ctx.git.head()
        if head is None:
            result.add(
                "now-stale",
                "max_age_days is set but there is no HEAD commit to count from; not judged",
                severity="info",
                path=path,
            )
        else:
            head_day = dt.datetime.fromtimestamp(
                ctx.git.committer_time(head), dt.timezone.utc
            ).date()
            age = (head_day - stamp_date).days
            result.stats["age_days"] = age
            if age > max_age:
                result.add(
                    "now-stale",
                    f"stamp {stamp_date} is {age} days older than HEAD's committer date "
                    f"{head_day} (max_age_days {max_age})",
                    path=path,
                    line=stamps[0][0],
                )

    present = set(headings(lines))
    for heading in cfg["headings"]:
        if heading.strip().lower() not in present:
            result.add("now-heading", f"required heading {heading!r} is absent", path=path)

    if len(lines) > cfg["max_lines"]:
        result.add(
            "now-budget",
            f"{len(lines)} lines, over the budget of {cfg['max_lines']}",
            path=path,
            line=cfg["max_lines"] + 1,
        )
    for line_no, length in entries(lines):
        if length > cfg["max_entry"]:
            result.add(
                "now-long-entry",
                f"entry of {length} characters, over max_entry {cfg['max_entry']}",
                path=path,
                line=line_no,
            )
    return result
