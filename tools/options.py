"""What the user asked for on the command line; kept free of heavy imports so that the CLI
starts fast (the context, git and config modules load only when a command runs)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class RatchetRequest(NamedTuple):
    """What ``tools ratchet check|tighten`` asked for."""

    names: tuple[str, ...] = ()  # the ratchets judged, in this order (empty: all)
    rev: str | None = None  # the tree counted (None: the judged tree)
    report: bool = False  # add the per-file table


class MessageCache:
    """What one invocation read once and shares between its gates."""

    __slots__ = ("message_bytes",)

    def __init__(self) -> None:
        self.message_bytes: bytes | None = None  # the bytes of --message-file (``-``: stdin)


class Options:
    """What the user asked for on the command line (already merged: global + local). A copy
    (``copy.copy``) shares the message cache."""

    __slots__ = (
        "repo",
        "config",
        "config_from",
        "fmt",
        "fail_on_skip",
        "base",
        "head",
        "commit",
        "staged",
        "message_file",
        "require_commits",
        "range_run",
        "range_paths",
        "max_findings",
        "statistics",
        "bare_ok",
        "message_only",
        "filled",
        "ratchet",
        "cache",
    )

    def __init__(
        self,
        *,
        repo: Path | None = None,
        config: Path | None = None,
        config_from: str = "head",
        fmt: str = "text",
        fail_on_skip: bool = False,
        base: str | None = None,
        head: str | None = None,
        commit: str | None = None,
        staged: bool = False,
        message_file: str | None = None,
        require_commits: bool = False,
        range_run: bool = False,
        range_paths: bool = True,
        max_findings: int = 50,
        statistics: bool = False,
        bare_ok: bool = False,
        message_only: bool = False,
        filled: bool = False,
        ratchet: RatchetRequest | None = None,
    ) -> None:
        self.repo = repo
        self.config = config
        # "head": the config and baselines as the judged tree holds them; "base": as the merge
        # base's tree holds them, so a pull request cannot relax the gates that judge it.
        self.config_from = config_from
        self.fmt = fmt
        self.fail_on_skip = fail_on_skip
        self.base = base
        self.head = head
        self.commit = commit
        self.staged = staged
        self.message_file = message_file
        self.require_commits = require_commits
        # True: the command judges a range (the ``protocol`` pseudo-gate reports with it).
        self.range_run = range_run
        # False: the range is read without changed paths (commands that judge messages only).
        self.range_paths = range_paths
        # The text format: findings per gate (0: all), or one line per rule instead.
        self.max_findings = max_findings
        self.statistics = statistics
        # True: a bare repository may be judged (commands that read only commit messages).
        self.bare_ok = bare_ok
        # --message-file judges that message alone (no range is read).
        self.message_only = message_only
        # trailers: also refuse the unfilled template AGENT:MODEL [TOOL].
        self.filled = filled
        self.ratchet = ratchet
        self.cache = MessageCache()
