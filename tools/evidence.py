"""Evidence blocks in specs: ledger records rendered as markdown tables between markers.

The one module that writes or reads evidence blocks; ``tools spec check`` / ``render``,
``tools mutate`` and ``tools attribute`` all call it. A block sits in a spec's ``Now`` section::

    <!-- tools:evidence id=<64-hex record id> plan=<plan value> -->
    | arm | mutation | applied | … |
    |---|---|---|…|
    | control | none | yes | … |
    <!-- /tools:evidence -->

Its text is a pure function of the ledger record it names (and, for a ``mutation-run``, of
the arm records that record lists), so a check re-renders it and compares: a hand-edited
number, a marker naming a record not in the ledger or a missing arm record cannot pass.

Markdown is parsed with :mod:`tools.markdown` (string scanning, linear in the input); marker
lines inside fenced code blocks are examples, not blocks.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from tools import ledger, markdown
from tools.errors import UsageError

OPEN_PREFIX = "<!-- tools:evidence "
CLOSE_MARKER = "<!-- /tools:evidence -->"
_COMMENT_END = "-->"
_MARK_ID, _MARK_PLAN = "id=", " plan="
_HEX = frozenset("0123456789abcdef")
NONE_CELL = "—"
ARROW = "→"

RUN_KIND, ARM_KIND, ATTRIBUTION_KIND = "mutation-run", "mutation-arm", "attribution"
KINDS = (RUN_KIND, ATTRIBUTION_KIND)  # the kinds that have a table

RUN_HEADER = (
    "arm",
    "mutation",
    "applied",
    f"sha256 before {ARROW} after",
    "compile_rc",
    "run_rc",
    "verdict",
    "restored",
)
# Run records with ``table_format`` 2 (SPEC §6, "Evidence columns"); records without it keep
# RUN_HEADER, so tables rendered before re-render byte for byte.
RUN_HEADER_2 = (
    "arm",
    "mutation",
    "applied",
    f"sha256 before {ARROW} mutated {ARROW} after",
    "compile_rc",
    "run_rc",
    "verdict",
    "restored",
)
ATTRIBUTION_HEADER = (
    "first bad",
    "paths",
    f"revert {ARROW} run_rc",
    f"restore {ARROW} run_rc",
    f"sha256 before {ARROW} after",
    "verdict",
)

Lookup = Callable[[str], "dict[str, Any] | None"]
# A record id -> the principal whose valid attestation vouches for it, or None (SPEC §11).
Vouched = Callable[[str], "str | None"]
VOUCHED_COLUMN = "vouched"


# -- blocks in a spec ---------------------------------------------------------------------------
class Block(NamedTuple):
    """One evidence block: the record ``id`` and ``plan`` its opening marker names, the
    1-based lines of its opening (``start``) and closing (``end``) markers, and ``body``, the
    text between them (lines joined with ``\\n``, each ending in one; ``\\r`` dropped)."""

    id: str
    plan: str
    start: int
    end: int
    body: str


class Problem(NamedTuple):
    """A marker that does not make a well-formed block (1-based ``line``)."""

    line: int
    message: str


def is_record_id(value: str) -> bool:
    return len(value) == 64 and all(ch in _HEX for ch in value)


def parse_open_marker(line: str) -> tuple[str, str] | str | None:
    """``(id, plan)`` if ``line`` (stripped) is an opening marker, a message saying what is
    wrong if it starts like one, None if it is not a marker at all."""
    text = line.strip()
    if not text.startswith(OPEN_PREFIX):
        return None
    if text != line:
        return "an evidence marker stands alone on its line, from its first column"
    if not text.endswith(_COMMENT_END) or len(text) < len(OPEN_PREFIX) + len(_COMMENT_END):
        return "an evidence marker must end with `-->` on its own line"
    inner = text[len(OPEN_PREFIX) : -len(_COMMENT_END)]
    if not inner.endswith(" "):
        return "an evidence marker ends with ` -->` (a space before it)"
    inner = inner[:-1]
    if not inner.startswith(_MARK_ID):
        return "an evidence marker starts `<!-- tools:evidence id=`"
    rid = inner[len(_MARK_ID) : len(_MARK_ID) + 64]
    rest = inner[len(_MARK_ID) + 64 :]
    if not is_record_id(rid) or not rest.startswith(_MARK_PLAN):
        return "the marker's id is not a 64-hex record id followed by ` plan=`"
    plan = rest[len(_MARK_PLAN) :]
    if not plan or plan != plan.strip() or _COMMENT_END in plan:
        return "the marker's plan value is empty, padded, or holds `-->`"
    return rid, plan


def is_close_marker(line: str) -> bool:
    return line == CLOSE_MARKER


def _mentions_marker(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(OPEN_PREFIX.rstrip()) or stripped.startswith("<!-- /tools:evidence")


def scan_blocks(spec_text: str) -> tuple[list[Block], list[Problem]]:
    """Every well-formed block of ``spec_text``, and every marker that makes none (an
    opening marker without a closing one, a closing marker without an opening one, a marker
    that is malformed, a second block for the same plan). Marker lines inside fenced code are
    not markers."""
    lines = markdown.split_lines(spec_text)
    mask = markdown.code_mask(lines)
    blocks: list[Block] = []
    problems: list[Problem] = []
    open_at: tuple[int, str, str] | None = None  # (line, id, plan)
    for i, line in enumerate(lines):
        if mask[i] or not _mentions_marker(line):
            continue
        if is_close_marker(line):
            if open_at is None:
                problems.append(Problem(i + 1, "a closing evidence marker without an opening one"))
                continue
            start, rid, plan = open_at
            body = "".join(ln + "\n" for ln in lines[start:i])
            blocks.append(Block(rid, plan, start, i + 1, body))
            open_at = None
            continue
        parsed = parse_open_marker(line)
        if parsed is None:
            problems.append(Problem(i + 1, f"a malformed evidence marker: {line.strip()[:80]!r}"))
            continue
        if isinstance(parsed, str):
            problems.append(Problem(i + 1, parsed))
            continue
        if open_at is not None:
            problems.append(
                Problem(open_at[0], "an evidence block not closed before the next one opens")
            )
        open_at = (i + 1, parsed[0], parsed[1])
    if open_at is not None:
        problems.append(Problem(open_at[0], f"an evidence block without `{CLOSE_MARKER}`"))
    seen: dict[str, int] = {}
    for block in blocks:
        if block.plan in seen:
            problems.append(
                Problem(
                    block.start,
                    f"a second block for plan {block.plan!r} (the first at line "
                    f"{seen[block.plan]}): one block per plan in a spec",
                )
            )
        else:
            seen[block.plan] = block.start
    problems.sort(key=lambda p: p.line)
    return blocks, problems


def find_blocks(spec_text: str) -> list[Block]:
    """The well-formed evidence blocks of ``spec_text``, in order (see :func:`scan_blocks`
    for the markers that make none)."""
    return scan_blocks(spec_text)[0]


def now_section(lines: list[str]) -> markdown.Section | None:
    """The spec's ``Now`` section (the first heading titled Now, numbered or not), or None."""
    for section in markdown.sections(lines):
        if section.heading.title == "now":
            return section
    return None


# -- cells --------------------------------------------------------------------------------------
def cell(value: str) -> str:
    """A table cell's text: ``|`` escaped as ``\\|``, line breaks turned into spaces."""
    return value.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("|", "\\|")


def code(text: str) -> str:
    """``text`` as an inline code span (a longer fence when it holds backticks)."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _header(columns: tuple[str, ...] | list[str]) -> list[str]:
    return [_row(columns), "|" + "---|" * len(columns)]


def _rc(value: Any) -> str:
    return NONE_CELL if value is None else str(value)


def _short(sha: Any) -> str:
    return NONE_CELL if sha is None else str(sha)[:12]


def _targets_cell(targets: list[dict[str, Any]]) -> str:
    if not targets:
        return NONE_CELL
    parts = []
    for target in targets:
        before = target.get("sha256_before")
        after = target.get("sha256_after")
        parts.append(
            f"{code(str(target.get('path')))} "
            f"{'absent' if before is None else str(before)[:12]} {ARROW} "
            f"{'absent' if after is None else str(after)[:12]}"
        )
    return "<br>".join(parts)


def _sha_or_absent(sha: Any) -> str:
    return "absent" if sha is None else str(sha)[:12]


def _targets_cell_3(targets: list[dict[str, Any]]) -> str:
    """Each target's sha256 before, mutated and after (the restore proof around the
    mutated content)."""
    if not targets:
        return NONE_CELL
    return "<br>".join(
        f"{code(str(t.get('path')))} {_sha_or_absent(t.get('sha256_before'))} {ARROW} "
        f"{_sha_or_absent(t.get('sha256_mutated'))} {ARROW} "
        f"{_sha_or_absent(t.get('sha256_after'))}"
        for t in targets
    )


def _artifacts_cell(arm: dict[str, Any]) -> str:
    arts = arm.get("artifacts")
    if not isinstance(arts, list) or not arts:
        return NONE_CELL
    parts = []
    for a in arts:
        if not isinstance(a, dict):
            continue
        sha = a.get("sha256")
        parts.append(f"{code(str(a.get('path')))} {'missing' if sha is None else str(sha)[:12]}")
    return "<br>".join(parts) or NONE_CELL


def _gib(n: Any) -> str:
    return f"{n / 2**30:.1f} GiB"


def _conditions_line(arms: list[dict[str, Any]]) -> str | None:
    """One line over the arms' recorded conditions: CPUs, the highest load averages and the
    lowest available memory and free disk at start and end, the tool versions; None when no
    arm recorded any."""
    conds = [a["conditions"] for a in arms if isinstance(a.get("conditions"), dict)]
    if not conds:
        return None
    parts = []
    cpus = sorted({c["cpus"] for c in conds if isinstance(c.get("cpus"), int)})
    if cpus:
        n = str(cpus[0]) if len(cpus) == 1 else f"{cpus[0]}–{cpus[-1]}"
        parts.append(f"{n} CPU{'s' if cpus[-1] != 1 else ''}")

    def moments(key: str) -> list[dict[str, Any]]:
        return [c[key] for c in conds if isinstance(c.get(key), dict)]

    loads = []
    for when in ("start", "end"):
        rows = [m["load"] for m in moments(when) if isinstance(m.get("load"), list)]
        rows = [r for r in rows if len(r) == 3 and all(isinstance(x, int | float) for x in r)]
        if rows:
            top = "/".join(f"{max(r[i] for r in rows):.2f}" for i in range(3))
            loads.append(f"{top} at {when}")
    if loads:
        scope = ", the highest of the arms" if len(conds) > 1 else ""
        parts.append(f"load average (1/5/15 min{scope}) " + ", ".join(loads))
    mems = []
    for when in ("start", "end"):
        vals = [
            m["mem_available"] for m in moments(when) if isinstance(m.get("mem_available"), int)
        ]
        if vals:
            mems.append(f"{_gib(min(vals))} at {when}")
    scope = " (the lowest of the arms)" if len(conds) > 1 else ""
    if mems:
        parts.append(f"available memory{scope} " + ", ".join(mems))
    disks = [c["disk_free"] for c in conds if isinstance(c.get("disk_free"), int)]
    if disks:
        parts.append(f"free disk{scope} {_gib(min(disks))}")
    seen: dict[str, list[str]] = {}
    for c in conds:
        for v in c.get("versions") or []:
            if not isinstance(v, dict):
                continue
            out = str(v.get("output") or "").strip().split("\n", 1)[0].strip()
            if v.get("rc") not in (0, None) and not out:
                out = f"exit {v.get('rc')}"
            said = seen.setdefault(str(v.get("command")), [])
            if out not in said:
                said.append(out)
    for command, outs in seen.items():
        parts.append(f"{code(command)}: " + " / ".join(outs or [NONE_CELL]))
    return "Conditions: " + "; ".join(parts) + "."


def _applied(arm: dict[str, Any]) -> str:
    applied = arm.get("applied")
    if applied is None:
        return NONE_CELL
    if not applied:
        return "no"
    numstat = arm.get("numstat") or []
    if not numstat:
        return "yes"
    added = sum(int(item.get("added") or 0) for item in numstat)
    deleted = sum(int(item.get("deleted") or 0) for item in numstat)
    return f"yes (+{added}/-{deleted})"


def _yes_no(value: Any) -> str:
    if value is None:
        return NONE_CELL
    return "yes" if value else "no"


def _run_rc(arm: dict[str, Any]) -> str:
    runs = arm.get("run_rcs") or []
    if len(runs) > 1:
        return ",".join(_rc(rc) for rc in runs)
    return _rc(arm.get("run_rc"))


def describe_mutation(entry: dict[str, Any]) -> str:
    """A plan mutation or overlay entry described for a table, the way arm records describe
    theirs: ``revert P to REV``, ``replace 'OLD'→'NEW' ×N in P``, ``patch FILE``. Takes either
    the plan's shape (``{"patch": "f.diff"}``, ``{"revert": {"path", "to"}}``) or a record's
    (``{"kind": "revert", "path", "to"}``)."""
    kind = entry.get("kind")
    fields: Any = entry
    if kind is None:
        for key in ("revert", "replace", "patch"):
            if key in entry:
                kind, fields = key, entry[key]
                break
    if kind == "patch":
        if isinstance(fields, dict):
            fields = fields.get("path", fields.get("patch", fields.get("file")))
        return f"patch {fields}"
    if kind == "revert" and isinstance(fields, dict):
        return f"revert {fields.get('path')} to {fields.get('to')}"
    if kind == "replace" and isinstance(fields, dict):
        count = fields.get("count")
        times = f" ×{count}" if count is not None else ""
        return (
            f"replace '{fields.get('old')}'{ARROW}'{fields.get('new')}'{times} "
            f"in {fields.get('path')}"
        )
    # A shape this version does not know: shown whole rather than guessed at.
    return json.dumps(entry, sort_keys=True, ensure_ascii=False)


# -- record checks ------------------------------------------------------------------------------
def _where(where: str, record: dict[str, Any]) -> str:
    rid = record.get("id")
    return f"{where}: record {str(rid)[:12]}…" if rid else where


def _need(record: dict[str, Any], key: str, types: tuple[type, ...], where: str) -> Any:
    value = record.get(key)
    if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
        names = "/".join("null" if t is type(None) else t.__name__ for t in types)
        raise UsageError(
            f"field `{key}` is missing or not {names} ({record.get('kind')} record)",
            where=_where(where, record),
        )
    return value


def _need_targets(record: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    targets: list[dict[str, Any]] = _need(record, key, (list,), where)
    for target in targets:
        if not isinstance(target, dict) or not isinstance(target.get("path"), str):
            raise UsageError(
                f"field `{key}` holds a target that is not {{path, sha256_before, sha256_after}}",
                where=_where(where, record),
            )
    return targets


def _check_arm(arm: dict[str, Any], where: str) -> None:
    _need(arm, "arm", (str,), where)
    _need(arm, "mutation", (str,), where)
    _need(arm, "applied", (bool, type(None)), where)
    numstat = arm.get("numstat")
    if numstat is not None:
        _need(arm, "numstat", (list,), where)
        for item in numstat:
            ok = isinstance(item, dict) and all(
                isinstance(item.get(k, 0), int) or item.get(k) is None for k in ("added", "deleted")
            )
            if not ok:
                raise UsageError(
                    "field `numstat` holds an entry that is not {path, added, deleted}",
                    where=_where(where, arm),
                )
    _need_targets(arm, "targets", where)
    _need(arm, "compile_rc", (int, type(None)), where)
    _need(arm, "run_rc", (int, type(None)), where)
    runs = arm.get("run_rcs")
    if runs is not None and (
        not isinstance(runs, list) or not all(isinstance(rc, int) for rc in runs)
    ):
        raise UsageError("field `run_rcs` is not a list of integers", where=_where(where, arm))
    _need(arm, "verdict", (str,), where)
    _need(arm, "restored", (bool, type(None)), where)


# -- tables -------------------------------------------------------------------------------------
def _run_table(
    record: dict[str, Any], lookup: Lookup, where: str, vouched: Vouched | None = None
) -> list[str]:
    arm_ids = _need(record, "arms", (list,), where)
    verdicts = record.get("verdicts") or {}
    if not isinstance(verdicts, dict):
        raise UsageError("field `verdicts` is not an object", where=_where(where, record))
    overlay = record.get("overlay") or []
    if not isinstance(overlay, list):
        raise UsageError("field `overlay` is not a list", where=_where(where, record))
    fmt = record.get("table_format")
    if fmt not in (None, 2):
        raise UsageError(f"table_format {fmt!r} is not one this version renders", where=where)
    columns = list(RUN_HEADER if fmt is None else RUN_HEADER_2)
    if overlay:
        columns.insert(2, "overlay")
        overlay_cell = "; ".join(
            describe_mutation(e) if isinstance(e, dict) else str(e) for e in overlay
        )
    arms = []
    for arm_id in arm_ids:
        arm = lookup(arm_id) if isinstance(arm_id, str) else None
        if arm is None:
            raise UsageError(
                f"its arm record {str(arm_id)[:12]}… is not in the ledger",
                where=_where(where, record),
            )
        if arm.get("kind") != ARM_KIND:
            raise UsageError(
                f"its arm {str(arm_id)[:12]}… is a {arm.get('kind')} record, not a {ARM_KIND}",
                where=_where(where, record),
            )
        _check_arm(arm, where)
        arms.append(arm)
    with_signal = fmt is not None and any(a.get("signal") for a in arms)
    with_artifacts = fmt is not None and any(a.get("artifacts") for a in arms)
    if with_artifacts:
        columns.insert(columns.index(RUN_HEADER_2[3]) + 1, "artifacts")
    if with_signal:
        columns.insert(columns.index("run_rc") + 1, "signal")
    if vouched is not None:
        columns.append(VOUCHED_COLUMN)
    lines = _header(columns)
    for arm in arms:
        name = arm["arm"]
        verdict = verdicts.get(name, arm["verdict"])  # the run's word wins (UNANCHORED)
        cells = [name, arm["mutation"]]
        if overlay:
            cells.append(overlay_cell)
        cells.append(_applied(arm))
        if fmt is None:
            cells.append(_targets_cell(arm["targets"]))
        else:
            cells.append(_targets_cell_3(arm["targets"]))
        if with_artifacts:
            cells.append(_artifacts_cell(arm))
        cells += [_rc(arm["compile_rc"]), _run_rc(arm)]
        if with_signal:
            cells.append(str(arm.get("signal") or NONE_CELL))
        cells += [str(verdict), _yes_no(arm["restored"])]
        if vouched is not None:
            cells.append(_vouched_cell(vouched, arm.get("id")))
        lines.append(_row(cells))
    if fmt is not None:
        conditions = _conditions_line(arms)
        if conditions:
            # A blank line first: a line right under a table would render as one more row.
            lines += ["", " ".join(conditions.splitlines())]
    return lines


def _vouched_cell(vouched: Vouched, rid: Any) -> str:
    principal = vouched(rid) if isinstance(rid, str) else None
    return principal or NONE_CELL


def _attribution_table(
    record: dict[str, Any], where: str, vouched: Vouched | None = None
) -> list[str]:
    first_bad = _need(record, "first_bad", (str, type(None)), where)
    paths = _need(record, "paths", (list,), where)
    legs = []
    for key in ("revert", "restore"):
        leg = _need(record, key, (dict,), where)
        rc = leg.get("run_rc")
        if rc is not None and (not isinstance(rc, int) or isinstance(rc, bool)):
            raise UsageError(
                f"field `{key}.run_rc` is not an integer or null", where=_where(where, record)
            )
        legs.append(leg)
    targets = _need_targets(legs[1], "targets", where)
    verdict = _need(record, "verdict", (str,), where)
    reason = _need(record, "reason", (str, type(None)), where)
    cells = [
        _short(first_bad),
        "<br>".join(code(str(p)) for p in paths) if paths else NONE_CELL,
        _rc(legs[0].get("run_rc")),
        _rc(legs[1].get("run_rc")),
        _targets_cell(targets),
        verdict,
    ]
    columns = list(ATTRIBUTION_HEADER)
    if vouched is not None:
        columns.append(VOUCHED_COLUMN)
        cells.append(_vouched_cell(vouched, record.get("id")))
    lines = [*_header(columns), _row(cells)]
    if reason:
        # A blank line first: a line right under a table would render as one more row.
        lines += ["", "Reason: " + " ".join(reason.splitlines())]
    return lines


def _table_lines(
    record: dict[str, Any], lookup: Lookup, where: str, vouched: Vouched | None = None
) -> list[str]:
    kind = record.get("kind")
    if kind == RUN_KIND:
        return _run_table(record, lookup, where, vouched)
    if kind == ATTRIBUTION_KIND:
        return _attribution_table(record, where, vouched)
    raise UsageError(f"no evidence table for kind {kind}", where=_where(where, record))


def render_table(
    record: dict[str, Any],
    lookup: Lookup,
    *,
    where: str = "evidence",
    vouched: Vouched | None = None,
) -> str:
    """The block's body for ``record``: the table (and an attribution's ``Reason:`` line),
    each line ending in ``\\n``. ``lookup(id)`` returns a ledger record or None. A record of a
    kind without a table, a malformed record or a missing arm record raises UsageError naming
    ``where`` (the spec). ``vouched`` (SPEC §11): a last ``vouched`` column, each row's
    principal or ``—``; None: no such column (the tables rendered before it)."""
    return "".join(line + "\n" for line in _table_lines(record, lookup, where, vouched))


def open_marker(record: dict[str, Any], where: str = "evidence") -> str:
    rid = record.get("id")
    plan = record.get("plan")
    if not isinstance(rid, str) or not is_record_id(rid):
        raise UsageError("the record has no 64-hex id", where=where)
    if (
        not isinstance(plan, str)
        or not plan
        or plan != plan.strip()
        or _COMMENT_END in plan
        or "\n" in plan
        or "\r" in plan
    ):
        raise UsageError(
            f"field `plan` {plan!r} cannot be a marker's plan value",
            where=_where(where, record),
            expected="a non-empty one-line string without `-->` or surrounding blanks",
        )
    return f"{OPEN_PREFIX}id={rid} plan={plan} -->"


def render_block(
    record: dict[str, Any],
    lookup: Lookup,
    *,
    where: str = "evidence",
    vouched: Vouched | None = None,
) -> str:
    """The whole block for ``record``: opening marker, table, closing marker (``\\n`` ends
    each line)."""
    marker = open_marker(record, where)
    body = render_table(record, lookup, where=where, vouched=vouched)
    return marker + "\n" + body + CLOSE_MARKER + "\n"


# -- writing a block into a spec ----------------------------------------------------------------
def _raw_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` with their ``\\r`` kept (matching :func:`markdown.split_lines`
    one for one), so untouched lines keep their bytes."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def render_into(
    spec_text: str,
    record: dict[str, Any],
    lookup: Lookup,
    *,
    where: str,
    vouched: Vouched | None = None,
) -> str:
    """``spec_text`` with the block of ``record`` written into it: replacing the block of the
    same plan where there is one, else appended at the end of the ``Now`` section (one blank
    line before it, and one after it when a heading follows). A second call with the same
    record returns the text unchanged. Raises UsageError naming ``where`` for a spec without
    a ``Now`` section, malformed markers, or a record that cannot be rendered."""
    block_lines = markdown.split_lines(render_block(record, lookup, where=where, vouched=vouched))
    blocks, problems = scan_blocks(spec_text)
    if problems:
        first = problems[0]
        raise UsageError(
            f"line {first.line}: {first.message}; fix the markers before rendering", where=where
        )
    lines = markdown.split_lines(spec_text)
    raw = _raw_lines(spec_text)
    section = now_section(lines)
    if section is None:
        raise UsageError(
            "the spec has no `Now` section to hold evidence", where=where, expected="## Now"
        )
    eol = "\r" if raw[section.heading.line - 1].endswith("\r") else ""  # the section's endings
    new = [ln + eol for ln in block_lines]
    plan = record["plan"]
    existing = next((b for b in blocks if b.plan == plan), None)
    if existing is not None:
        if not section.start <= existing.start <= section.end:
            raise UsageError(
                f"line {existing.start}: the block of plan {plan!r} lies outside the `Now` "
                "section; move it there before rendering",
                where=where,
            )
        out = raw[: existing.start - 1] + new + raw[existing.end :]
    else:
        last = section.heading.line  # the last non-blank line of the section
        for i in range(section.end, section.start - 1, -1):
            if lines[i - 1].strip():
                last = i
                break
        tail = raw[last:]
        after = [eol] if tail and lines[last].strip() else []  # a heading right after
        out = raw[:last] + [eol] + new + after + tail
    result = "\n".join(out) + "\n"
    placed = [b for b in find_blocks(result) if b.plan == plan]
    if len(placed) != 1 or placed[0].id != record["id"]:
        raise UsageError(
            "the rendered block would not be found again (does the `Now` section end inside "
            "an unclosed code fence?)",
            where=where,
        )
    return result


def has_vouched_column(body: str) -> bool:
    """Whether a block's table has the ``vouched`` column (its header's last cell)."""
    header = body.split("\n", 1)[0].rstrip("\r")
    return header.endswith(f"| {VOUCHED_COLUMN} |")


def _split_last(line: str) -> tuple[str, str] | None:
    if not (line.startswith("| ") and line.endswith(" |")):
        return None
    head, _, last = line[2:-2].rpartition(" | ")
    return head, last


def _vouched_body(
    record: dict[str, Any], lookup: Lookup, where: str, vouched: Vouched | None, have: str
) -> str:
    """The body with the ``vouched`` column that ``have`` may be: as ``vouched`` renders it,
    where a row may say ``—`` for a principal (vouching for less is no false claim; an
    attestation merged since leaves the table true). Without ``vouched`` every row is ``—``."""
    want = render_table(record, lookup, where=where, vouched=vouched or (lambda rid: None))
    have_lines = have.split("\n")
    out = []
    for k, line in enumerate(want.split("\n")):
        mine = _split_last(line)
        theirs = _split_last(have_lines[k].rstrip("\r")) if k < len(have_lines) else None
        if k > 1 and mine and theirs and theirs == (mine[0], NONE_CELL):
            line = f"| {mine[0]} | {NONE_CELL} |"
        out.append(line)
    return "\n".join(out)


def unbacked(
    block: Block, lookup: Lookup, *, where: str, vouched: Vouched | None = None
) -> str | None:
    """Why ``block`` does not re-render byte for byte from the ledger record it names, or
    None when it does. A block with a ``vouched`` column re-renders with the principals
    ``vouched`` gives (a row may under-claim with ``—``, never name another principal)."""
    record = lookup(block.id)
    if record is None:
        return f"record {block.id[:12]}… (plan {block.plan!r}) is not in the ledger"
    problem = ledger.verify_record(record)
    if problem:
        return f"record {block.id[:12]}… does not verify: {problem}"
    try:
        open_marker(record, where)
        body = render_table(record, lookup, where=where)
        if body != block.body and has_vouched_column(block.body):
            body = _vouched_body(record, lookup, where, vouched, block.body)
    except UsageError as exc:
        return exc.render()
    if record.get("plan") != block.plan:
        return (
            f"the marker says plan {block.plan!r} but record {block.id[:12]}… is of plan "
            f"{record.get('plan')!r}"
        )
    if body != block.body:
        want = markdown.split_lines(body)
        have = markdown.split_lines(block.body)
        for k in range(max(len(want), len(have))):
            w = want[k] if k < len(want) else None
            h = have[k] if k < len(have) else None
            if w != h:
                return (
                    f"line {block.start + 1 + k} differs from what record {block.id[:12]}… "
                    f"renders (expected {w!r:.120}, found {h!r:.120}); re-render it with "
                    f"`tools spec render {where} --id {block.id}`"
                )
    return None


# -- reading the ledger for the records blocks name ---------------------------------------------
_ID_JSON, _PLAN_JSON = b'"id":"', b'"plan":"'  # as a canonical line spells them


def candidate_ids(raw: bytes) -> list[str]:
    """The 64-hex values a line holds after ``"id":"`` (the record's own id among them)."""
    found = []
    at = raw.find(_ID_JSON)
    while at >= 0:
        value = raw[at + 6 : at + 70]
        if len(value) == 64 and raw[at + 70 : at + 71] == b'"':
            found.append(value.decode("ascii", "replace"))
        at = raw.find(_ID_JSON, at + 6)
    return found


def _names_wanted(raw: bytes, ids: set[bytes], plans: set[bytes]) -> bool:
    """Whether a canonical ledger line may be a record asked for: an ``"id":"`` followed by a
    wanted id, or a ``"plan":`` whose JSON string is a wanted plan's (a plan spelled with an
    escape is a candidate too). Candidates are parsed and confirmed by the caller."""
    if ids:
        at = raw.find(_ID_JSON)
        while at >= 0:
            if raw[at + 6 : at + 70] in ids:
                return True
            at = raw.find(_ID_JSON, at + 6)
    if plans:
        at = raw.find(_PLAN_JSON)
        while at >= 0:
            end = raw.find(b'"', at + 8)
            if end < 0:
                return False
            value = raw[at + 7 : end + 1]
            if value in plans or b"\\" in value:
                return True
            at = raw.find(_PLAN_JSON, end)
    return False


def collect_records(
    lines: Iterable[bytes], ids: set[str], arm_plans: set[str] | None = None
) -> dict[str, dict[str, Any]]:
    """One streaming pass over ledger ``lines``: the records whose id is in ``ids``, plus the
    ``mutation-arm`` records whose plan is in ``arm_plans`` (the arms a run names usually come
    before it, so they are kept on the way). Only candidate lines are parsed (found by byte
    search: a canonical line spells ids and plans one way); a line in another form (no
    ``"id":"``) is parsed to be sure. Malformed lines are skipped here: ``tools ledger
    verify`` judges them."""
    wanted_ids = {i.encode("ascii", "replace") for i in ids}
    plans = {ledger.canonical_json(p) for p in arm_plans or ()}
    plan_strs = set(arm_plans or ())
    out: dict[str, dict[str, Any]] = {}
    for raw in lines:
        if _ID_JSON in raw and not _names_wanted(raw, wanted_ids, plans):
            continue
        parsed = ledger.parse_line(raw)
        if isinstance(parsed, ledger.LineError):
            continue
        rid = parsed["id"]
        if rid in ids or (parsed.get("kind") == ARM_KIND and parsed.get("plan") in plan_strs):
            out.setdefault(rid, parsed)
    return out


def iter_lines(data: bytes) -> Iterator[bytes]:
    """The lines of an in-memory ledger (a blob), each with its ``\\n``."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            yield data[start:]
            return
        yield data[start : end + 1]
        start = end + 1
