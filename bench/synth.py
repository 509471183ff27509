"""Build large synthetic repositories quickly with ``git fast-import`` (shared by benches)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path


def fast_import(
    path: Path,
    commits: Iterator[tuple[str, dict[str, bytes]]],
    *,
    branch: str = "main",
) -> None:
    """Create ``path`` as a repository whose ``branch`` holds ``commits`` (message, files),
    oldest first, each commit a child of the previous one; files are added or replaced."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    w = proc.stdin.write
    for n, (message, files) in enumerate(commits, start=1):
        msg = message.encode()
        w(f"commit refs/heads/{branch}\nmark :{n}\n".encode())
        w(f"committer Bench <bench@example.com> {1_700_000_000 + n} +0000\n".encode())
        w(f"data {len(msg)}\n".encode() + msg + b"\n")
        if n > 1:
            w(f"from :{n - 1}\n".encode())
        for rel, content in files.items():
            w(f"M 100644 inline {rel}\ndata {len(content)}\n".encode() + content + b"\n")
        w(b"\n")
    w(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "-f", branch], cwd=path, check=True)


def many_files(count: int, content: Callable[[int], bytes]) -> dict[str, bytes]:
    return {f"src/d{i // 500:03d}/f{i:05d}.cc": content(i) for i in range(count)}
