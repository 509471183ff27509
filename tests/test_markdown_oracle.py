"""tools.markdown against GitHub's own renderer (cmark-gfm, through cmarkgfm) as the oracle:
headings (level, rendered text, anchor), local link and image targets, and table cells, on
generated documents (hypothesis, bounded) and on this repository's markdown files."""

from __future__ import annotations

import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.markdown_documents import documents
from tools import markdown
from tools.git import decode
from tools.mdlinks import is_external

cmarkgfm = pytest.importorskip("cmarkgfm")

ROOT = Path(__file__).resolve().parents[1]


class _Oracle(HTMLParser):
    """What GitHub's HTML holds: headings' text, link and image targets, table cells."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.targets: list[str] = []
        self.rows: list[list[str]] = []
        self._heading: tuple[int, list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._heading = (int(tag[1]), [])
        elif tag == "a" and values.get("href") is not None:
            self.targets.append(values["href"] or "")
        elif tag == "img" and values.get("src") is not None:
            self.targets.append(values["src"] or "")
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if self._heading is not None and tag == f"h{self._heading[0]}":
            self.headings.append((self._heading[0], "".join(self._heading[1])))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[1].append(data)
        if self._cell is not None:
            self._cell.append(data)


def oracle(text: str) -> _Oracle:
    found = _Oracle()
    found.feed(cmarkgfm.github_flavored_markdown_to_html(text))
    found.close()
    return found


def _local(targets: list[str]) -> list[str]:
    return sorted(unquote(t) for t in targets if t and not is_external(t) and "@" not in t)


def compare(text: str) -> None:
    want = oracle(text)
    doc = markdown.parse(text)
    assert [(h.level, h.plain) for h in doc.headings] == want.headings
    # GitHub's anchor of each heading is the slug of that same rendered text.
    names = markdown.anchor_names(doc.headings)
    oracle_names = markdown.anchor_names(
        [markdown.Heading(0, level, "", plain) for level, plain in want.headings]
    )
    assert names == oracle_names
    ours = [link.target for link in doc.links if link.kind != "definition"]
    definitions = {link.target for link in doc.links if link.kind == "definition"}
    mine = _local(ours)
    theirs = _local(want.targets)
    # GitHub renders each use of a reference definition; the gate checks the definition.
    extra = [t for t in theirs if t not in mine]
    assert all(t in {unquote(d) for d in definitions} for t in extra), (extra, mine)
    assert all(t in theirs for t in mine), (mine, theirs)
    assert [list(row.plain) for t in doc.tables for row in t.rows] == want.rows


# -- generated documents -----------------------------------------------------------------------
_WORD = st.sampled_from(
    ["a", "Now", "x_y", "C++", "6.", "é", "tools", "&amp;", "&#x41;", "Box<T>", "1.2", "--", "!"]
)
_INLINE = st.one_of(
    _WORD,
    _WORD.map(lambda w: f"`{w}`"),
    _WORD.map(lambda w: f"*{w}*"),
    _WORD.map(lambda w: f"_{w}_"),
    _WORD.map(lambda w: f"[{w}](t-{len(w)}.md)"),
    _WORD.map(lambda w: f"![{w}](i{len(w)}.png)"),
    _WORD.map(lambda w: f'<a id="{w}"></a>'),
    st.sampled_from(["`", "\\*", "\\|", "<!-- c -->", "[r]", "&copy;", "<br>"]),
)
_DOC = documents(_INLINE)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOC)
def test_generated_documents_read_as_github(text: str) -> None:
    compare(text)


# -- this repository ---------------------------------------------------------------------------
def _repository_markdown() -> list[str]:
    if not (ROOT / ".git").exists():
        return []
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "*.md"], capture_output=True, check=True
    ).stdout
    return [p for p in decode(out).split("\0") if p]


@pytest.mark.parametrize("path", _repository_markdown() or ["(no checkout)"])
def test_repository_markdown_reads_as_github(path: str) -> None:
    full = ROOT / path
    if not full.is_file():
        pytest.skip("needs this repository's checkout")
    compare(full.read_text(encoding="utf-8", errors="replace"))
