"""What the user asked for on the command line; kept free of heavy imports so that the CLI
starts fast (the context, git and config modules load only when a command runs)."""

from pathlib import Path
from typing import NamedTuple


class RatchetRequest(NamedTuple):
    """What ``tools ratchet check|tighten`` asked for."""

    names: tuple[str, ...] = ()  # the ratchets judged, in this order (empty: all)
    rev: str | None = None  # the tree counted (None: the judged tree)
    report: bool = False  # add the per-file table


# Where the config and baselines are read from (``--config-from``, ``TOOLS_CONFIG_FROM``).
CONFIG_FROM = ("base", "head")


class Options(NamedTuple):
    """What the user asked for on the command line (already merged: global + local). A
    command that sets an option of its own judges a changed copy (``opts._replace``)."""

    repo: Path | None = None
    config: Path | None = None
    # "head": the config and baselines as the judged tree holds them; "base": as the merge
    # base's tree holds them, so a pull request cannot relax the gates that judge it.
    config_from: str = "head"
    fmt: str = "text"
    fail_on_skip: bool = False
    # True: a tree without .agents/protocol.yaml fails the command (exit 1) instead of being
    # judged by the defaults (CI, SPEC §9.3).
    require_protocol: bool = False
    base: str | None = None
    head: str | None = None
    commit: str | None = None
    staged: bool = False
    message_file: str | None = None
    require_commits: bool = False
    # True: the command judges a range (the ``protocol`` pseudo-gate reports with it).
    range_run: bool = False
    # False: the range is read without changed paths (commands that judge messages only).
    range_paths: bool = True
    # The message gates of this run that keep a range memo (tools.range_memo): only the
    # commands that run one message gate alone set it.
    range_memo: tuple[str, ...] = ()
    # The text format: findings per gate (0: all), or one line per rule instead.
    max_findings: int = 50
    statistics: bool = False
    # True: a bare repository may be judged (commands that read only commit messages).
    bare_ok: bool = False
    # --message-file judges that message alone (no range is read).
    message_only: bool = False
    # trailers: also refuse the unfilled template AGENT:MODEL [TOOL].
    filled: bool = False
    ratchet: RatchetRequest | None = None
    # True: the range gates' verdict cache is neither read nor written (``--no-cache``).
    no_cache: bool = False
