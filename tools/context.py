"""The per-invocation context: one repository, one config, one range read, shared by gates.

Gates ask the context for facts (the range's commits, the base point, blobs, the staged
change); the context reads git once and caches, so preflight shares one read across gates.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools import config as config_mod
from tools import file_reads, severities
from tools.background import Background
from tools.config_model import ProtocolConfig, protocol_config
from tools.errors import UsageError
from tools.git import Change, Commit, Git
from tools.options import Options

if TYPE_CHECKING:
    from tools.message_reading import Reading
    from tools.range_memo import Earlier

__all__ = ["Context", "Options", "RangeSelection"]


class RangeSelection:
    """Which commits a range gate judges, or why it cannot judge any."""

    __slots__ = (
        "mode",
        "head",
        "base_ref",
        "base",
        "merge_base",
        "skip_reason",
        "commits",
        "prior",
    )

    def __init__(
        self, mode: str, *, head: str | None = None, commits: list[Commit] | None = None
    ) -> None:
        self.mode = mode  # "range" | "commit" | "staged"
        self.head = head
        self.base_ref: str | None = None
        self.base: str | None = None  # the base tip B
        self.merge_base: str | None = None  # M
        self.skip_reason: str | None = None
        self.commits: list[Commit] = commits if commits is not None else []  # oldest first
        # The range before ``commits``, judged by an earlier run (tools.range_memo): then
        # ``commits`` are only the ones after it.
        self.prior: Earlier | None = None

    @property
    def count(self) -> int:
        """How many commits the range holds (read now, or judged before)."""
        return len(self.commits) + (self.prior.count if self.prior is not None else 0)


def has_protocol(opts: Options) -> bool:
    """Whether a protocol file judges what ``opts`` ask (``--require-protocol``, SPEC §9.3),
    rather than the defaults alone: ``--config`` names one, or the tree the config is read
    from holds ``.agents/protocol.yaml`` (a bare repository's HEAD, the working tree, and
    under ``--config-from base`` the merge base's tree where the working tree has none)."""
    if opts.config is not None:
        return True
    git = Git(opts.repo, bare_ok=True)
    if git.bare:
        head = git.resolve("HEAD")
        return head is not None and git.blob_header(head, config_mod.DEFAULT_PATH) is not None
    full = git.root / config_mod.DEFAULT_PATH
    if full.exists() or full.is_symlink():
        return True
    return opts.config_from == "base" and Context(opts).config_source is not None


class Context:
    """One invocation's repository, options and effective config.

    ``config`` is the typed config (:class:`~tools.config_model.ProtocolConfig`);
    ``config_data`` the merged mapping it was built from (what ``config show`` prints and
    the report's ``config_sha256`` hashes).
    """

    def __init__(self, opts: Options, git: Git | None = None):
        """``git``: the repository ``opts.repo`` names, already opened by the caller (a hook
        run opens it first); None: opened here."""
        self.opts = opts
        self._pending_range: Background[RangeSelection] | None = None
        self._pending_staged: Background[list[Change]] | None = None
        # What a gate's prefetch (tools.gates.prefetch) started, by gate, for its run to take.
        self.prefetched: dict[str, object] = {}
        # The bytes of --message-file, read once for every gate (commit_messages).
        self.message_bytes: bytes | None = None
        # Each judged commit's message as both message gates read it (tools.message_reading).
        self.readings: dict[str, Reading] = {}
        self.git = git if git is not None else Git(opts.repo, bare_ok=opts.bare_ok)
        if opts.range_memo:
            # A kept range's key names the repository's i18n settings: listed meanwhile.
            self.git.prefetch_config()
        self.root: Path = self.git.root
        if opts.commit and (opts.staged or opts.base or opts.head):
            raise UsageError("--commit cannot be combined with --staged, --base or --head")
        # The commit whose tree holds the config and baselines (None: the judged tree's).
        self.config_rev: str | None = None
        if self.git.bare and (opts.staged or opts.message_file is not None):
            raise UsageError(
                "a bare repository has no index or commit in progress: judge a range "
                "(--base/--head) or one --commit"
            )
        self.config_source: str | None
        self.config_data: dict[str, Any]
        base_rev = self._config_base() if opts.config_from == "base" else None
        if base_rev is not None and self.git.blob_header(base_rev, config_mod.DEFAULT_PATH):
            self.config_rev = base_rev
            self.config_data, self.config_source = self._config_at(self.config_rev)
            # What git reads besides the config decides what is judged too (SPEC §10).
            self.git.use_attributes_from(self.config_rev)
        # A base without a protocol: the range introduces it, and the head's config (and
        # baselines) judge, as without --config-from base (SPEC §9.3).
        elif self.git.bare:
            self.config_data, self.config_source = self._bare_config()
        else:
            self.config_data, self.config_source = config_mod.load(
                self.root, opts.config, tools_dir=self.git.tools_dir(), no_cache=opts.no_cache
            )
        self.config: ProtocolConfig = protocol_config(self.config_data)
        config_mod.apply_limits(self.config)
        severities.check(self.config, self.config_source)
        if opts.range_run and not opts.commit and not opts.staged:
            # Its base and its head resolved by one git process; the objects' reader started
            # for the protocol pseudo-gate, which reads the merge base's config at the end.
            self.git.resolve_ahead([opts.base or self.config.base, opts.head or "HEAD"])
            self.git.prefetch_objects()
        # A ref the user named explicitly must resolve, whichever gates end up running.
        for flag, ref in (("--base", opts.base), ("--head", opts.head), ("--commit", opts.commit)):
            if ref is not None and self.git.resolve(ref) is None:
                raise UsageError(f"{flag} {ref!r} does not resolve to a commit")

    def _config_base(self) -> str:
        """The commit whose tree judges under ``--config-from base``: the merge base of
        ``--base`` and the head (HEAD with --staged, the first parent with --commit). The base
        ref must be named: the config that would name it is the one being judged."""
        opts, git = self.opts, self.git
        if opts.config is not None:
            raise UsageError("--config cannot be combined with --config-from base")
        if opts.commit:
            sha = git.resolve(opts.commit)
            parent = git.resolve(f"{sha}^") if sha else None
            if parent is None:
                raise UsageError(
                    f"--config-from base: --commit {opts.commit!r} has no parent to read the "
                    "config from"
                )
            return parent
        if opts.staged or opts.message_file is not None:
            head = git.head()
            if head is None:
                raise UsageError("--config-from base: HEAD is unborn, there is no base tree")
            return head
        if not opts.base:
            raise UsageError(
                "--config-from base needs --base: the base ref cannot come from the config "
                "being judged"
            )
        base = git.resolve(opts.base)
        head = git.resolve(opts.head or "HEAD")
        if base is None or head is None:
            flag, ref = ("--base", opts.base) if base is None else ("--head", opts.head or "HEAD")
            raise UsageError(f"{flag} {ref!r} does not resolve to a commit")
        merge_base = git.merge_base(base, head)
        if merge_base is None:
            why = (
                "the merge base is not in this shallow clone (git fetch --unshallow)"
                if git.is_shallow()
                else "they share no history"
            )
            raise UsageError(
                f"--config-from base: no merge base of {opts.base} and {opts.head or 'HEAD'} "
                f"to read the config from: {why}"
            )
        return merge_base

    def _config_at(self, rev: str) -> tuple[dict[str, Any], str | None]:
        """The effective config as ``rev``'s tree holds it (defaults when it has none)."""
        raw = self.git.blob(rev, config_mod.DEFAULT_PATH)
        display = f"{rev[:12]}:{config_mod.DEFAULT_PATH}"
        return self._merged(raw, display), None if raw is None else display

    def _merged(self, raw: bytes | None, display: str) -> dict[str, Any]:
        """A revision's config bytes (None: it has none) merged, through the cache the
        working config keeps and never written in its place."""
        cache = config_mod.validation_cache(self.git.tools_dir(), no_cache=self.opts.no_cache)
        return config_mod.load_merged(raw, display=display, cache=cache, remember=False)

    def _bare_config(self) -> tuple[dict[str, Any], str | None]:
        """A bare repository's config: ``--config``, else the one committed at HEAD (the
        default branch a server-side hook judges against), else the defaults."""
        if self.opts.config is not None:
            return config_mod.load(self.root, self.opts.config)
        head = self.git.resolve("HEAD")
        raw = self.git.blob(head, config_mod.DEFAULT_PATH) if head else None
        display = f"HEAD:{config_mod.DEFAULT_PATH}"
        return self._merged(raw, display), None if raw is None else display

    # -- range --------------------------------------------------------------------------------
    def prefetch_range(self) -> None:
        """Start reading the range on a thread, for a run whose gates will ask for it:
        ``git log`` then works while the gates before the first range gate judge.
        :attr:`range` waits for it, and raises what reading it raised."""
        if "range" not in self.__dict__ and self._pending_range is None:
            self._pending_range = Background(self._read_range)

    @cached_property
    def range(self) -> RangeSelection:
        """The commits judged, read in one ``git log`` pass, oldest first."""
        pending, self._pending_range = self._pending_range, None
        return pending.result() if pending is not None else self._read_range()

    def _read_range(self) -> RangeSelection:
        opts, git = self.opts, self.git
        if opts.commit:
            sha = git.resolve(opts.commit)
            if sha is None:
                raise UsageError(f"--commit {opts.commit!r} does not resolve to a commit")
            commits = git.log([sha], paths=opts.range_paths, max_count=1)
            return RangeSelection("commit", head=sha, commits=commits)
        head_ref = opts.head or "HEAD"
        head = git.resolve(head_ref)
        sel = RangeSelection("staged" if opts.staged else "range", head=head)
        if head is None:
            if opts.head:
                raise UsageError(f"--head {opts.head!r} does not resolve to a commit")
            sel.skip_reason = "the repository has no commits yet (HEAD is unborn)"
            return sel
        base_ref = opts.base or self.config.base
        sel.base_ref = base_ref
        sel.base = git.resolve(base_ref)
        if sel.base is None:
            if opts.base:
                raise UsageError(f"--base {opts.base!r} does not resolve to a commit")
            sel.skip_reason = (
                f"base {base_ref!r} (config `base`) does not resolve; fetch it or pass --base"
            )
            return sel
        # Under --staged the range's commits are judged by their messages alone (docs and index
        # judge the staged change): no changed paths, so git detects no renames for them.
        paths = opts.range_paths and not opts.staged
        if opts.range_memo and not paths:
            from tools import range_memo

            sel.prior = range_memo.find(self, sel.base, head)
            if sel.prior is not None:
                sel.merge_base = sel.prior.merge_base
                later = f"{sel.prior.head}..{head}"
                sel.commits = git.log([later], paths=False)[::-1] if sel.prior.head != head else []
                return sel
        sel.merge_base, commits = git.log_from_merge_base(sel.base, head, paths=paths)
        if sel.merge_base is None:
            if git.is_shallow():
                sel.skip_reason = (
                    f"shallow clone: the merge base of {base_ref} and {head_ref} is not in the "
                    "fetched history; deepen the clone (git fetch --unshallow)"
                )
            else:
                sel.skip_reason = f"{base_ref} and {head_ref} share no history (no merge base)"
            return sel
        sel.commits = commits[::-1]
        return sel

    def describe(self) -> dict[str, object]:
        """What a report says it judged (SPEC §3.2's extensions): the tool, the effective
        config's sha256 and, when a range gate read one, the range."""
        import hashlib
        import json

        from tools import __version__

        canonical = json.dumps(self.config_data, sort_keys=True, separators=(",", ":"))
        out: dict[str, object] = {
            "tool": {"name": "tools", "version": __version__},
            "config_sha256": hashlib.sha256(canonical.encode()).hexdigest(),
        }
        sel = self.__dict__.get("range")  # only if a gate asked for it: never computed here
        if isinstance(sel, RangeSelection) and sel.mode != "commit" and sel.base and sel.head:
            out["range"] = {
                "base": sel.base,
                "head": sel.head,
                "merge_base": sel.merge_base,
                "commits": sel.count,
            }
        return out

    # -- contents -----------------------------------------------------------------------------
    def read_current(self, path: str) -> bytes | None:
        """``path`` as the gate should judge it now: the staged blob or the working tree file."""
        if self.opts.staged:
            return self.git.staged_blob(path)
        # A regular file inside the repository, within limits.max_file_bytes (SPEC §10).
        return file_reads.read_optional(self.git.worktree_path(path), path, root=self.root)

    def has_path(self, path: str) -> bool:
        """Whether the tree the gates judged holds ``path``, a file or a folder: the index under
        ``--staged``; else the working tree, or the commit of ``--head`` / ``--commit``."""
        if self.opts.staged:
            return bool(self.git.index_entries_under(path))
        if os.path.lexists(self.git.worktree_path(path)):
            return True
        rev = self.opts.commit or self.opts.head
        if rev is None:
            return False
        listed = self.git.out(
            "--literal-pathspecs", "ls-tree", "--full-tree", "--name-only", "-z", rev, "--", path
        )
        return bool(listed)

    def prefetch_staged_changes(self) -> None:
        """Start reading the staged change on a thread; :attr:`staged_changes` waits for it."""
        if "staged_changes" not in self.__dict__ and self._pending_staged is None:
            self._pending_staged = Background(self.git.staged_changes)

    @cached_property
    def staged_changes(self) -> list[Change]:
        """The staged change against HEAD, read once."""
        pending, self._pending_staged = self._pending_staged, None
        return pending.result() if pending is not None else self.git.staged_changes()
