"""The links gate's light pass (:func:`tools.markdown.parse_links`) finds the same links and
anchors as the full parse every other gate reads (SPEC §12: one light pass per file): on every
markdown file of this repository, on generated documents, and on every hostile document of
tests/hostile.py (where both refuse the same nesting)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import hostile
from tests.markdown_documents import documents
from tools import markdown
from tools.errors import UsageError
from tools.git import decode

ROOT = Path(__file__).resolve().parents[1]


def _seen(text: str, parse: object) -> object:
    try:
        doc = parse(text, where="doc.md")  # type: ignore[operator]
    except UsageError as exc:
        return ("refused", str(exc))
    return (doc.links, doc.anchors(), doc.headings)


def _same(text: str) -> None:
    markdown.forget()
    assert _seen(text, markdown.parse_links) == _seen(text, markdown.parse)


def _repository_markdown() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "*.md"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return sorted(p for p in decode(out).split("\0") if p)


def test_every_markdown_file_of_this_repository() -> None:
    files = _repository_markdown()
    assert len(files) > 20
    for path in files:
        _same(decode((ROOT / path).read_bytes()))


_WORD = st.sampled_from(
    ["a", "Now", "C++", "6.", "é", "&amp;", "Box<T>", "x_y", "!", "R", "\u0416"]
)
_INLINE = st.one_of(
    _WORD,
    _WORD.map(lambda w: f"`{w}`"),
    _WORD.map(lambda w: f"*{w}*"),
    _WORD.map(lambda w: f"[{w}](t-{len(w)}.md#{w})"),
    _WORD.map(lambda w: f"![{w}](i{len(w)}.png)"),
    _WORD.map(lambda w: f"[![{w}](b.svg)](l.md)"),
    _WORD.map(lambda w: f'<a id="{w}"></a>'),
    _WORD.map(lambda w: f'<span name="{w}">'),
    _WORD.map(lambda w: f"[{w}][r]"),
    _WORD.map(lambda w: f"<https://e.org/{w}>"),
    st.sampled_from(["`", "\\*", "\\|", "<!-- c -->", "[r]", "&copy;", "<br>", "[^1]"]),
)
_TEXT = st.lists(_INLINE, min_size=1, max_size=5).map(" ".join)
# Besides the shared blocks: nested containers, links in code and comments, anchors in HTML
# blocks, footnotes, a definition whose target is on the next line.
_DOC = documents(
    _INLINE,
    _TEXT.map(lambda t: f"> ## {t}\n> {t}"),
    _TEXT.map(lambda t: f"- {t}\n- ## {t}\n  - {t}"),
    _TEXT.map(lambda t: f"1. {t}\n   ```\n   [x](in-code.md)\n   ```"),
    _TEXT.map(lambda t: f"<!--\n## {t}\n[x](in-comment.md)\n-->"),
    _TEXT.map(lambda t: f'<div id="d">\n<a name="n"></a>\n{t}\n</div>'),
    _TEXT.map(lambda t: f"[^1]: {t}"),
    st.just("[r]: ref-target.md#part"),
    st.just("[R]:\n  <next line.md>"),
    blocks=8,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOC)
def test_generated_documents(text: str) -> None:
    _same(text)


@pytest.mark.parametrize(
    "case",
    [c for c in hostile.cases() if c.judge is hostile._judge_markdown],  # noqa: SLF001
    ids=lambda c: f"{c.family}-{c.name}",
)
def test_hostile_documents(case: hostile.Case) -> None:
    _same(case.data)


@pytest.mark.parametrize("opener", [">", "- ", "* ", "1. ", "[", "*"])
def test_nesting_past_the_bound_is_refused_by_both(opener: str) -> None:
    text = opener * (markdown.MAX_DEPTH + 10) + "x\n"
    _same(text)
    if opener in (">", "- ", "* ", "1. "):  # containers: past the bound, exit 2
        with pytest.raises(UsageError, match="nested deeper"):
            markdown.parse_links(text, where="doc.md")
