"""A copy of this repository's working tree as CI checks it out: the files git tracks or would
track (untracked files that are not ignored), without build outputs, virtual environments or
caches. Packaging and hook-framework tests build from it, so they never write into the
working tree and they see the files a clean checkout of this change would hold.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def source_files(root: Path = ROOT) -> list[str]:
    """Repo-relative paths of the files a clean checkout of the working tree would hold."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    paths = sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})
    # A tracked file deleted in the working tree, or a submodule (a directory), is not a file
    # a checkout of this working tree would hold.
    return [p for p in paths if (root / p).is_file() or (root / p).is_symlink()]


def copy_tree(dest: Path, root: Path = ROOT) -> Path:
    """Copy the working tree's files into ``dest`` (created) and return it."""
    for rel in source_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)
    return dest


def git_snapshot(dest: Path, root: Path = ROOT) -> tuple[Path, str]:
    """The working tree as a fresh git repository with one commit: (path, commit sha)."""
    copy_tree(dest, root)
    env_args = ["-c", "user.name=Snapshot", "-c", "user.email=snapshot@example.com"]
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        [*env_args, "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "Snapshot"],
    ):
        subprocess.run(["git", *args], cwd=dest, capture_output=True, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=dest, capture_output=True, check=True, text=True
    ).stdout.strip()
    return dest, sha
