"""Regexes compiled on first use (tools/lazy_regex.py)."""

from __future__ import annotations

import re
import subprocess
import sys

from tools.lazy_regex import LazyRegex


def test_a_lazy_regex_compiles_once_on_first_use_with_its_flags() -> None:
    lazy = LazyRegex(r"^b+$", re.MULTILINE)
    assert "compiled" not in vars(lazy)
    first = lazy.compiled
    assert first is lazy.compiled
    assert first.pattern == r"^b+$" and first.flags & re.MULTILINE
    assert first.findall("a\nbb\nb") == ["bb", "b"]
    assert LazyRegex(rb"\\(.)").compiled.sub(rb"\1", b"a\\|b") == b"a|b"


def test_importing_a_module_leaves_its_lazy_regexes_uncompiled() -> None:
    # In a fresh interpreter: the module's import compiles none of them; a first use does.
    code = (
        "from tools import index_table as t\n"
        "before = 'compiled' in vars(t._PIPE_RUN)\n"
        "escaped = t.escape_cell('a\\\\\\\\|b')\n"  # two backslashes before the pipe
        "print(before, 'compiled' in vars(t._PIPE_RUN), escaped)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True", "a" + "\\" * 5 + "|b"]
