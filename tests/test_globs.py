"""Config globs: git wildmatch on whole repo-relative paths."""

from __future__ import annotations

import pytest

from tools.globs import Globs


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        ("README.md", ["README.md"], ["docs/README.md"]),
        ("*.md", ["a.md"], ["docs/a.md"]),
        ("**/*.md", ["a.md", "docs/a.md", "x/y/z.md"], ["a.mdx"]),
        ("docs/**", ["docs/a.md", "docs/x/b.py"], ["docs", "src/docs/a.md"]),
        ("docs", ["docs", "docs/a.md"], ["src/docs/a.md"]),
        ("tools/cli/*.py", ["tools/cli/a.py"], ["tools/cli/x/a.py"]),
        ("src/**/test_*.py", ["src/test_a.py", "src/x/y/test_b.py"], ["src/x/a_test.py"]),
    ],
)
def test_patterns_match_the_whole_path(pattern: str, hits: list[str], misses: list[str]) -> None:
    globs = Globs([pattern])
    assert [p for p in hits if not globs.match(p)] == []
    assert [p for p in misses if globs.match(p)] == []


def test_negation_and_empty() -> None:
    globs = Globs(["**/*.md", "!docs/old/**"])
    assert globs.match("docs/a.md") and not globs.match("docs/old/a.md")
    assert not Globs([]).match("a.md") and not Globs([])
