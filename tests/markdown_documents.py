"""Generated markdown documents (hypothesis strategies) shared by the tests that hold a reader
to an oracle: GitHub's renderer (test_markdown_oracle.py) and the full parse
(test_markdown_light_pass.py). Each gives its own inline pieces; the blocks around them are
the same: headings, setext, quotes, lists, fences, comments, HTML blocks, indented code,
tables, reference definitions."""

from __future__ import annotations

from hypothesis import strategies as st


def table(cells: list[list[str]]) -> str:
    """A GFM table of ``cells`` (the first row the header); every other body row leaves out
    its closing pipe."""
    width = len(cells[0])
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row) + (" |" if k % 2 else "") for k, row in enumerate(cells[1:])]
    return "\n".join(lines)


def documents(
    inline: st.SearchStrategy[str], *extra: st.SearchStrategy[str], blocks: int = 6
) -> st.SearchStrategy[str]:
    """Documents of up to ``blocks`` blocks made of ``inline`` pieces (and the ``extra``
    blocks given)."""
    text = st.lists(inline, min_size=1, max_size=5).map(" ".join)
    cell = st.lists(inline.filter(lambda s: "|" not in s), min_size=1, max_size=2).map(" ".join)
    block = st.one_of(
        st.tuples(st.integers(1, 6), text).map(lambda p: "#" * p[0] + " " + p[1]),
        text.map(lambda t: f"{t}\n---"),
        text.map(lambda t: f"> ## {t}"),
        text.map(lambda t: f"- {t}\n- ## {t}"),
        text.map(lambda t: f"1. {t}\n   ```\n   {t}\n   ```"),
        text.map(lambda t: f"```\n## {t}\n```"),
        text.map(lambda t: f"<!--\n## {t}\n-->"),
        text.map(lambda t: f"<div>\n{t}\n</div>"),
        text.map(lambda t: f"    ## {t}"),
        text,
        st.lists(st.lists(cell, min_size=2, max_size=2), min_size=1, max_size=3).map(table),
        st.just("[r]: ref-target.md"),
        *extra,
    )
    return st.lists(block, min_size=1, max_size=blocks).map("\n\n".join)
