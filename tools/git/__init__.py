"""The one git access layer every gate uses.

Everything is read as bytes (plumbing where speed needs it): refs, merge bases, a whole range
in one ``git log`` pass (messages, parents and changed paths with rename detection, ``-z``),
blobs at a revision through one persistent ``cat-file --batch``, and the staged tree. Paths
are repo-relative ``str`` decoded with ``surrogateescape`` so that non-UTF-8 names survive a
round trip.

Split by concern: :mod:`tools.git.runner` starts every git process of the package, from one
argv prefix and one allow-list environment (docs/git-environment.md); :mod:`tools.git.parsers`
reads git's output into records; :mod:`tools.git.repository` holds the queries (:class:`Git`);
:mod:`tools.git.text` the codec and git's name unquoting. This layer sits beside gitpython
rather than on its command layer: gitpython builds each child's environment from the whole of
``os.environ`` (only adding to it), so an allow-list cannot go through it, and its persistent
processes are not thread-safe, where the mutation runner works in several worktrees at once.
The repository is found by ``git rev-parse`` through the same runner, so nothing here imports
gitpython or lets it start a process. Callers import from ``tools.git``.
"""

from __future__ import annotations

from tools.git.parsers import (
    SUBMODULE_MODE,
    SYMLINK_MODE,
    Change,
    Commit,
    FilePatch,
    Hunk,
    MergeTree,
    PathPatch,
    RawChange,
    TreeEntry,
    parse_added_lines,
    parse_log,
    parse_name_status,
    parse_patches,
    parse_path_patches,
)
from tools.git.repository import Git
from tools.git.runner import (
    GIT_FORCED,
    GIT_PASSED,
    GIT_REPOSITORY_PASSED,
    GitError,
    MergeTreeUnsupported,
    clean_env,
    git_argv,
    git_env,
    git_popen,
    run_git,
)
from tools.git.text import decode, encode, unquote_c

__all__ = [
    "GIT_FORCED",
    "GIT_PASSED",
    "GIT_REPOSITORY_PASSED",
    "SUBMODULE_MODE",
    "SYMLINK_MODE",
    "Change",
    "Commit",
    "FilePatch",
    "Git",
    "GitError",
    "Hunk",
    "MergeTree",
    "MergeTreeUnsupported",
    "PathPatch",
    "RawChange",
    "TreeEntry",
    "clean_env",
    "decode",
    "encode",
    "git_argv",
    "git_env",
    "git_popen",
    "parse_added_lines",
    "parse_log",
    "parse_name_status",
    "parse_patches",
    "parse_path_patches",
    "run_git",
    "unquote_c",
]
