"""Comparing two versions of the issue index without a row object per row.

Two versions of a large index differ in a few lines: an edit, a row removed, rows appended.
Both are walked in step from the start of their rows: a run of identical bytes is skipped in C,
whole lines at a time, and only the lines where the two differ are parsed. That decides every
base row exactly, as :func:`tools.appendonly.losses` would:

- Same key on both sides: the row is kept (its cells may differ in alignment only) or altered.
- Otherwise, a base key that the other side lacks is a removed row; a current key that the base
  lacks is a new row (its place is the ordinary-commit rule's business, not this one's).
- Anything else is a row out of the base's order: what is left of both sides is handed to the
  full comparison. The rows walked in step before that point are in order and come before
  every row left, so they take no part in deciding which rows left are out of place.

This needs tables without repeated issue numbers or malformed lines (then the rows are the
consecutive lines of each body) and with the same frame; otherwise the callers fall back to
the full comparison (the functions here return None).
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.appendonly import Loss, losses
from tools.git import decode
from tools.index_table import Row, Table, parse_row

_STEP = 1 << 20


def common_prefix(a: bytes, ia: int, a_end: int, b: bytes, ib: int, b_end: int) -> int:
    """The length of the common prefix of ``a[ia:a_end]`` and ``b[ib:b_end]`` (compared a
    chunk at a time in C, then bisected)."""
    limit = min(a_end - ia, b_end - ib)
    done = 0
    while done < limit:
        step = min(_STEP, limit - done)
        if a[ia + done : ia + done + step] == b[ib + done : ib + done + step]:
            done += step
            continue
        lo, hi = 0, step  # the matching length within this chunk is in [lo, hi)
        while hi - lo > 64:
            mid = (lo + hi) // 2
            if a[ia + done + lo : ia + done + mid] == b[ib + done + lo : ib + done + mid]:
                lo = mid
            else:
                hi = mid
        while lo < hi and a[ia + done + lo] == b[ib + done + lo]:
            lo += 1
        return done + lo
    return done


def comparable(old: Table, new: Table) -> bool:
    return old.clean and new.clean and old.frame == new.frame and old.body_start == new.body_start


def _line(raw: bytes, at: int, end: int, line_no: int) -> tuple[Row, int]:
    """The row on the line at ``at`` and where the next line starts."""
    nl = raw.find(b"\n", at, end)
    stop = end if nl < 0 else nl
    row = parse_row(decode(raw[at:stop]), line_no)
    assert isinstance(row, Row), "a clean table's body lines are rows"
    return row, stop + 1


def _rows(raw: bytes, at: int, end: int, line_no: int) -> list[Row]:
    out = []
    while at < end:
        row, at = _line(raw, at, end, line_no)
        out.append(row)
        line_no += 1
    return out


def base_losses(old: Table, new: Table) -> list[Loss] | None:
    """The rows of ``old`` removed, altered or moved in ``new``, in ``old``'s order; None when
    the tables are not :func:`comparable`."""
    if not comparable(old, new):
        return None
    a, b = old.raw, new.raw
    ia = ib = old.body_start
    a_end, b_end = old.body_end, new.body_end
    first = len(old.frame) + 1
    i = j = 0  # rows walked on each side
    out: list[Loss] = []
    keys: tuple[set[int], set[int]] | None = None
    while ia < a_end:
        same = common_prefix(a, ia, a_end, b, ib, b_end)
        cut = a.rfind(b"\n", ia, ia + same) + 1
        if cut > 0:  # whole identical lines: the same rows, in order
            k = a.count(b"\n", ia, cut)
            i, j, ib, ia = i + k, j + k, ib + cut - ia, cut
        if ia >= a_end:
            break
        if ib >= b_end:  # nothing left of ``new``: the rest of ``old`` is gone
            out += [Loss("removed", r.entry(), None) for r in _rows(a, ia, a_end, first + i)]
            break
        ra, na = _line(a, ia, a_end, first + i)
        rb, nb = _line(b, ib, b_end, first + j)
        if ra.key == rb.key:
            if ra.identity != rb.identity:
                out.append(Loss("altered", ra.entry(), rb.entry()))
            ia, ib, i, j = na, nb, i + 1, j + 1
            continue
        if keys is None:
            keys = (set(old.row_keys), set(new.row_keys))
        if ra.key not in keys[1]:
            out.append(Loss("removed", ra.entry(), None))
            ia, i = na, i + 1
        elif rb.key not in keys[0]:
            ib, j = nb, j + 1  # a row new in ``new``
        else:  # out of the base's order: the full comparison of what is left
            rest_old = [r.entry() for r in _rows(a, ia, a_end, first + i)]
            rest_new = [r.entry() for r in _rows(b, ib, b_end, first + j)]
            out += losses(rest_old, rest_new)
            break
    return out


def inserted(parent: Table, child: Table) -> list[tuple[Row, Row]] | None:
    """(row, anchor) per row of ``child`` new since ``parent`` that comes before ``anchor``,
    the last row of ``child`` that ``parent`` had already; None when the tables are not
    :func:`comparable`."""
    if not comparable(parent, child):
        return None
    keys: Sequence[int] = child.row_keys
    new = set(keys).difference(parent.row_keys)
    last_old = len(keys) - 1
    while last_old >= 0 and keys[last_old] in new:
        last_old -= 1  # appended rows: new, but after every old one
    if last_old < 0 or len(new) == len(keys) - 1 - last_old:
        return []
    anchor = child.row_at(last_old)
    return [(child.row_at(x), anchor) for x in range(last_old) if keys[x] in new]
