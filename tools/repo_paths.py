"""Repo-relative paths as the config and the plans name them."""

from __future__ import annotations

import posixpath
import re


def is_repo_relative(path: str) -> bool:
    """True when ``path`` is relative and stays inside the repository once normalised."""
    if not path or path.startswith("/") or "\\" in path or re.match(r"^[A-Za-z]:", path):
        return False
    norm = posixpath.normpath(path)
    return norm != ".." and not norm.startswith("../")
