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
        ("**/*/", ["a/b", "x/y/z.md"], ["a"]),  # any folder: what is under one
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


# -- the string tests agree with pathspec ------------------------------------------
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tools.globs import simple_shape  # noqa: E402

_SEG = st.sampled_from(["a", "b", "cuda", "x.h", "h", ".h", "docs", "a.md", "md", "tests"])
_PATHS = st.lists(_SEG, min_size=1, max_size=5).map("/".join)
_GLOBS = st.one_of(
    st.sampled_from(["**/*.h", "**/*.md", "**/*h", "**/cuda/**", "**/docs", "docs/**",
                     "a/b/**", "README.md", "a/x.h", "tests/", "/docs", "**/tests/**"]),
    _SEG.map(lambda s: f"**/*{s}"),
    _SEG.map(lambda s: f"**/{s}/**"),
    _PATHS.map(lambda p: f"{p}/**"),
    _PATHS.map(lambda p: f"{p}/"),
    _PATHS,
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(glob=_GLOBS, paths=st.lists(_PATHS, min_size=1, max_size=8))
@example(glob="tests/", paths=["tests", "tests/a"])
@example(glob="**/*.h", paths=["x.h/y", ".h", "a/b.hh"])
@example(glob="**/docs", paths=["docs", "a/docs", "a/docs/b", "adocs"])
def test_string_tests_agree_with_pathspec(glob: str, paths: list[str]) -> None:
    assert simple_shape(glob) is not None
    globs = Globs([glob])
    assert globs.fast
    for path in paths:
        assert globs.match(path) == globs.match_pathspec(path), (glob, path)


@pytest.mark.parametrize("glob", ["src/*.cc", "**/x?.c", "a/**/b", "!x/**", "**/[ab].h", "a*/b"])
def test_other_shapes_take_the_pathspec_path(glob: str) -> None:
    assert simple_shape(glob) is None
    assert not Globs([glob]).fast


@settings(max_examples=300, deadline=None)
@given(globs=st.lists(_GLOBS, min_size=1, max_size=5), paths=st.lists(_PATHS, min_size=1))
def test_a_set_of_simple_globs_agrees_with_pathspec(globs: list[str], paths: list[str]) -> None:
    compiled = Globs(globs)
    assert compiled.fast
    for path in paths:
        assert compiled.match(path) == compiled.match_pathspec(path), (globs, path)


@settings(max_examples=300, deadline=None)
@given(globs=st.lists(_GLOBS, max_size=5), paths=st.lists(_PATHS, max_size=12))
@example(globs=["**/*.h"], paths=["x.h/y", "a/x.h/y", "y"])
@example(globs=["**/docs", "a/b"], paths=["docs", "a/docs", "a/b", "a/b/c", "b"])
@example(globs=["**/cuda/**", "third_party/**"], paths=["a/cuda/x.c", "cuda", "a/cuda", "b/c"])
@example(globs=["**/*.h"], paths=["a.h", "b/c.h", "c.hh", "d.h/e"])
@example(globs=["**/lib", "**/*.c"], paths=["lib", "a/lib", "a/lib/x", "a/libx", "alib/y"])
def test_matching_in_bulk_agrees_with_pathspec(globs: list[str], paths: list[str]) -> None:
    # Folder tests once per folder, the rest as maps over the paths: the same answers.
    compiled = Globs(globs)
    assert compiled.fast
    assert compiled.match_all(paths) == [compiled.match_pathspec(p) for p in paths]


def test_a_folder_regex_is_tried_per_folder_only_when_the_joined_paths_hold_it() -> None:
    # "x.h/" occurs in one path only: every other path's answer must not change with it.
    paths = [f"src/f{i}.cc" for i in range(50)] + ["inc/x.h/y.txt", "inc/x.hh", "x.h"]
    compiled = Globs(["**/*.h"])
    assert compiled.match_all(paths) == [False] * 50 + [True, False, True]
    assert compiled.match_all(paths[:50] + paths[51:]) == [False] * 51 + [True]


def test_matching_in_bulk_takes_pathspec_for_other_shapes() -> None:
    compiled = Globs(["src/*.cc", "!src/x.cc"])
    paths = ["src/a.cc", "src/x.cc", "src/d/a.cc", "a.cc"]
    assert compiled.match_all(paths) == [True, False, False, False]
