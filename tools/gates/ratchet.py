"""ratchet: counts that may only go down (SPEC §4.5).

Counts every configured ratchet over one whole tree (the working tree, the index with
``--staged``, a commit's tree with ``--rev``) and compares each bucket with its baseline file
as that same tree holds it. A rise names the sites that are new relative to the tree at
``merge-base(base, head)``; the base tree is counted only when some bucket rose, and a base
that does not resolve leaves the verdict intact (the new sites are then named unknown, with
the reason): nothing else the gate judges depends on the base.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Any, NamedTuple

from tools import config as config_mod
from tools import report
from tools.background import Background
from tools.errors import UsageError
from tools.options import RatchetRequest
from tools.ratchets import baseline as baseline_mod
from tools.ratchets import engine
from tools.ratchets.engine import Count, Ratchet, Site
from tools.ratchets.tree import Tree
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context

NAME = "ratchet"
RATCHET_REGRESSION = Rule(
    "ratchet-regression",
    "error",
    "a bucket counts more than its baseline",
    example=(
        "device-leakage.vt_macro: counts 2, above its baseline 1 (+1); new since "
        "merge-base ff40a997b29a: src/ops.c:15"
    ),
    fix=(
        "Remove the new sites the message names (move device code into its backend "
        "folder). A site that is justified gets an allow marker whose tag names the "
        "issue-index row recording why. Never raise a baseline to pass; a reviewer "
        "who accepts a rise edits the baseline file by hand, visibly."
    ),
)

RATCHET_STALE = Rule(
    "ratchet-stale",
    "error",
    "a bucket counts less than its baseline: lower it with `tools ratchet tighten`",
    example=(
        "device-leakage.kcuda: counts 1, below its baseline 2; lower the baseline in "
        "this change with `tools ratchet tighten device-leakage`"
    ),
    fix=(
        "Good news: run `tools ratchet tighten NAME` and commit the lowered baseline "
        "in the same change, so the cleanup cannot be undone unnoticed."
    ),
)

BASELINE_MISSING = Rule(
    "baseline-missing",
    "error",
    "no baseline while a bucket counts above zero",
    example=(
        "calls: no baseline .agents/baselines/calls.json while buckets count above "
        "zero (bare_call 2); create it with `tools ratchet tighten calls`"
    ),
    fix=(
        "Run `tools ratchet tighten NAME` to write the baseline at today's counts, "
        "and commit it. From then on the counts may only go down."
    ),
)

ALLOW_TAG_UNKNOWN = Rule(
    "allow-tag-unknown",
    "error",
    "an allow marker whose tag is neither a row id nor an issue number of the index, nor a key "
    "of a matrix the ratchet's `allow_tags_from` names",
    example=(
        "device-leakage: allow marker tag '#99' is neither a row id nor an issue "
        "number of the issue index; the marker exempts nothing"
    ),
    fix=(
        "Tag the marker with the row id or issue number of the issue-index row that "
        "records why the site is allowed (add the row first with `tools index "
        "append`) or with the key of a row of a matrix named in the ratchet's "
        "`allow_tags_from`, or remove the marker and the site."
    ),
)

RATCHET_EXEMPT = Rule(
    "ratchet-exempt",
    "info",
    "a site exempted by an allow marker or by its file's `exempt_files` allowance",
    example=(
        "device-leakage.vt_macro: exempted by the allow marker '#3' (marker on line "
        "10)\n"
        "device-leakage.kcuda: exempted by exempt_files (platforms/interface.h: "
        "{kcuda: 1} in .agents/protocol.yaml: ratchets.device-leakage.exempt_files)"
    ),
    fix=(
        "Nothing to fix: an exempted site, listed on every run so the exemption "
        "stays in sight. Remove the marker, or lower the file's `exempt_files` "
        "allowance, when the site goes away."
    ),
)

RATCHET_UNARMED = Rule(
    "ratchet-unarmed",
    "error",
    "a bucket misses one of its examples or counts a counter example",
    example=(
        "dl.broken does not count its example 'if (x.is_cuda ()) {': its count "
        "cannot be trusted (.agents/protocol.yaml: ratchets.dl.buckets.broken)"
    ),
    fix=(
        "The bucket's regex misses one of its `examples` or counts a "
        "`counter_examples` line: fix the regex (or a wrong example) in the config. "
        "Until then the bucket's count is not judged and `tools ratchet tighten` "
        "writes nothing."
    ),
)

RATCHET_ABSENT = Rule(
    "ratchet-absent",
    "info",
    "nothing to count: no ratchet, or no file in its scope",
    example=(
        "device-leakage: no file of the working tree is in its scope and it has no "
        "baseline (.agents/baselines/device-leakage.json): nothing to count"
    ),
    fix=(
        "Nothing to fix (an info finding). If files should be counted, check the "
        "ratchet's `include` and `exclude` globs."
    ),
)

RULES = declare(
    NAME,
    [
        RATCHET_REGRESSION,
        RATCHET_STALE,
        BASELINE_MISSING,
        ALLOW_TAG_UNKNOWN,
        RATCHET_EXEMPT,
        RATCHET_UNARMED,
        RATCHET_ABSENT,
    ],
)

_LIST_MAX = 20  # sites named in one finding's message; `sites` carries them all


def options(ctx: Context) -> RatchetRequest:
    """What the ratchet command asked for (preflight and the hooks: the defaults)."""
    return ctx.opts.ratchet or RatchetRequest()


def tree_for(ctx: Context) -> Tree:
    """The tree this invocation counts."""
    rev_ref = options(ctx).rev or ctx.opts.commit or ctx.opts.head
    if rev_ref:
        sha = ctx.git.resolve(rev_ref)
        if sha is None:
            raise UsageError(f"--rev {rev_ref!r} does not resolve to a commit")
        return Tree(ctx.git, rev=sha)
    return Tree(ctx.git, staged=ctx.opts.staged)


def read_baseline(tree: Tree, ratchet: Ratchet) -> dict[str, int] | None:
    raw = tree.read(ratchet.baseline)
    if raw is None:
        return None
    return baseline_mod.parse(raw, ratchet.baseline, ratchet.name)


def _sites_text(sites: list[Site]) -> str:
    named = ", ".join(f"{s.path}:{s.line}" for s in sites[:_LIST_MAX])
    more = len(sites) - _LIST_MAX
    return named + (f" … and {more} more" if more > 0 else "")


class _Base:
    """The tree at merge-base(base, head), counted on first need."""

    def __init__(self, ctx: Context, tree: Tree, ratchets: list[Ratchet]):
        self.ctx, self.tree, self.ratchets = ctx, tree, ratchets
        self._done = False
        self.reason: str | None = None
        self.sha: str | None = None
        self.counts: dict[str, Count] = {}

    def _resolve(self) -> None:
        ctx, git = self.ctx, self.ctx.git
        ref = ctx.opts.base or ctx.config.base
        base = git.resolve(ref)
        if base is None:
            self.reason = f"base {ref!r} does not resolve; fetch it or pass --base"
            return
        head = self.tree.rev or git.head()
        if head is None:
            self.reason = "HEAD is unborn: there is no history to compare with"
            return
        merge_base = git.merge_base(base, head)
        if merge_base is None:
            self.reason = (
                f"shallow clone: the merge base of {ref} and the head is not fetched"
                if git.is_shallow()
                else f"{ref} and the head share no history"
            )
            return
        self.sha = merge_base
        base_tree = Tree(git, rev=merge_base)
        self.counts, _ = engine.count(base_tree, self.ratchets, ctx.config.index.path)

    def new_sites(self, ratchet: Ratchet, bucket: str, now: list[Site]) -> list[Site] | None:
        """The sites of ``now`` that the base tree lacks (None: unknown, see ``reason``).
        Sites are matched by path and line text, so a site that only moved is not new."""
        if not self._done:
            self._done = True
            self._resolve()
        if self.sha is None:
            return None
        before = Counter((s.path, s.text) for s in self.counts[ratchet.name].sites.get(bucket, []))
        fresh: list[Site] = []
        for site in now:
            key = (site.path, site.text)
            if before[key] > 0:
                before[key] -= 1
            else:
                fresh.append(site)
        return fresh


def prefetch(ctx: Context) -> None:
    """Start git's search of the counted tree when git holds it (the index, a commit); a
    tree on disk is listed first, by the run."""
    ratchets = engine.load(ctx.config, ctx.config_source, list(options(ctx).names))
    tree = tree_for(ctx) if ratchets else None
    if tree is not None and tree.in_git:
        ctx.prefetched[NAME] = _Started(ratchets, tree, engine.search(tree, ratchets))


class _Started(NamedTuple):
    """What :func:`prefetch` loaded and started, for the run to go on with."""

    ratchets: list[Ratchet]
    tree: Tree
    search: Background[set[str]] | None


def run(ctx: Context) -> GateResult:
    result = GateResult(NAME)
    started = ctx.prefetched.pop(NAME, None)
    if isinstance(started, _Started):
        ratchets, tree, search = started
    else:
        ratchets = engine.load(ctx.config, ctx.config_source, list(options(ctx).names))
        tree, search = None, None
    opts = options(ctx)
    if not ratchets:
        result.add(RATCHET_ABSENT.id, "no ratchet is configured (config `ratchets` is empty)")
        return result
    tree = tree or tree_for(ctx)
    counts, tstats = engine.count(
        tree,
        ratchets,
        ctx.config.index.path,
        keep=[r.baseline for r in ratchets],
        started=search,
    )
    regressed: list[_Regressed] = []
    per_ratchet: dict[str, Any] = {}
    source = ctx.config_source
    config_path = source if source and not os.path.isabs(source) else None
    # Under --config-from base the base tree's baselines bound the counts too: a change that
    # raises its own baseline is still judged by the one it started from.
    guard_tree = Tree(ctx.git, rev=ctx.config_rev) if ctx.config_rev else None
    if guard_tree is not None:
        config_path = config_mod.DEFAULT_PATH
    for ratchet in ratchets:
        res = counts[ratchet.name]
        base = read_baseline(tree, ratchet)
        guard = read_baseline(guard_tree, ratchet) if guard_tree is not None else None
        broken = engine.unarmed(ratchet)
        _report_detector(result, res, broken, config_path)
        per_ratchet[ratchet.name] = {
            "kind": ratchet.kind,
            "files": res.files,
            "counts": dict(res.counts),
            "baseline": base,
            "exempt": len(res.exempt),
        }
        if opts.report:
            per_ratchet[ratchet.name]["per_file"] = res.per_file
        if base is None:
            _judge_unbaselined(result, res, broken, tree.label)
        else:
            regressed += _judge_counts(result, res, base, guard, broken)
    if regressed:
        involved = {r.name: r for r, _, _, _ in regressed}
        base_tree = _Base(ctx, tree, list(involved.values()))
        for ratchet, bucket, n, allowed in regressed:
            _regression(result, base_tree, counts[ratchet.name], bucket, n, allowed)
    result.stats.update(
        {
            "tree": tree.label,
            "files_read": tstats.files,
            "binary_skipped": tstats.binary,
            "symlinks_skipped": tree.skipped_links,
            "ratchets": per_ratchet,
        }
    )
    return result


# (ratchet, bucket, count, allowed): a bucket that counts above what its baselines allow.
_Regressed = tuple[Ratchet, str, int, int]


def _report_detector(
    result: GateResult, res: Count, broken: dict[str, list[str]], config_path: str | None
) -> None:
    """What the detector says of itself: unarmed buckets, unknown tags, exempted sites."""
    ratchet = res.ratchet
    for bucket, problems in broken.items():
        for problem in problems:
            result.add(
                RATCHET_UNARMED.id,
                f"{ratchet.name}.{bucket} {problem}: its count cannot be trusted "
                f"({ratchet.where}.buckets.{bucket})",
                path=config_path,
            )
    matrices = " nor a key of " + ", ".join(p for p, _ in ratchet.tag_sources)
    for use in res.unknown_tags:
        result.add(
            ALLOW_TAG_UNKNOWN.id,
            f"{ratchet.name}: allow marker tag {use.tag!r} is neither a row id nor an "
            f"issue number of the issue index{matrices if ratchet.tag_sources else ''}; "
            "the marker exempts nothing",
            path=use.path,
            line=use.line,
        )
    for ex in res.exempt:
        if ex.by_file:
            allowance = '"*"' if ex.allowance is None else str(ex.allowance)
            why = (
                f"exempted by exempt_files ({ex.site.path}: {{{ex.bucket}: {allowance}}} "
                f"in {ratchet.where}.exempt_files)"
            )
        else:
            why = f"exempted by the allow marker {ex.tag!r} (marker on line {ex.marker_line})"
        result.add(
            RATCHET_EXEMPT.id,
            f"{ratchet.name}.{ex.bucket}: {why}",
            path=ex.site.path,
            line=ex.site.line,
        )


def _judge_unbaselined(
    result: GateResult, res: Count, broken: dict[str, list[str]], label: str
) -> None:
    """A ratchet without a baseline file: nothing to count, or counts with no baseline."""
    ratchet = res.ratchet
    if res.files == 0:
        result.add(
            RATCHET_ABSENT.id,
            f"{ratchet.name}: no file of {label} is in its scope and it has no "
            f"baseline ({ratchet.baseline}): nothing to count",
        )
        return
    over = {b: n for b, n in res.counts.items() if n > 0 and b not in broken}
    if over:
        listed = ", ".join(f"{b} {n}" for b, n in over.items())
        result.add(
            BASELINE_MISSING.id,
            f"{ratchet.name}: no baseline {ratchet.baseline} while buckets count "
            f"above zero ({listed}); create it with `tools ratchet tighten "
            f"{ratchet.name}`",
            path=ratchet.baseline,
        )


def _judge_counts(
    result: GateResult,
    res: Count,
    base: dict[str, int],
    guard: dict[str, int] | None,
    broken: dict[str, list[str]],
) -> list[_Regressed]:
    """Each armed bucket against its baseline (and the base tree's, under ``guard``): a
    missing entry and a stale baseline are reported here, the rises returned."""
    ratchet = res.ratchet
    regressed: list[_Regressed] = []
    for bucket in ratchet.buckets:
        if bucket in broken:
            continue
        n = res.counts[bucket]
        if bucket not in base:
            if n > 0:
                result.add(
                    BASELINE_MISSING.id,
                    f"{ratchet.name}.{bucket}: the baseline has no entry for this bucket, "
                    f"which counts {n}; add it with `tools ratchet tighten {ratchet.name}`",
                    path=ratchet.baseline,
                )
            continue
        allowed = base[bucket]
        if guard is not None and bucket in guard:
            allowed = min(allowed, guard[bucket])
        if n > allowed:
            regressed.append((ratchet, bucket, n, allowed))
        elif n < base[bucket]:
            result.add(
                RATCHET_STALE.id,
                f"{ratchet.name}.{bucket}: counts {n}, below its baseline {base[bucket]}; "
                f"lower the baseline in this change with `tools ratchet tighten "
                f"{ratchet.name}`",
                path=ratchet.baseline,
            )
    return regressed


def _regression(
    result: GateResult, base: _Base, res: Count, bucket: str, n: int, allowed: int
) -> None:
    ratchet = res.ratchet
    head = f"{ratchet.name}.{bucket}: counts {n}, above its baseline {allowed} (+{n - allowed})"
    if ratchet.kind == "markdown" and bucket == "chars":
        result.add(RATCHET_REGRESSION.id, head, path=ratchet.path)
        return
    now = res.sites.get(bucket, [])
    fresh = base.new_sites(ratchet, bucket, now)
    if fresh is None:
        result.add(
            RATCHET_REGRESSION.id, f"{head}; new sites unknown: {base.reason}", path=ratchet.path
        )
        return
    where = f"merge-base {base.sha[:12]}" if base.sha else "the base"
    if fresh:
        result.add(
            RATCHET_REGRESSION.id,
            f"{head}; new since {where}: {_sites_text(fresh)}",
            sites=tuple(report.Site(s.path, s.line) for s in fresh),
        )
    else:
        result.add(
            RATCHET_REGRESSION.id,
            f"{head}; no site is new since {where} (the base tree already counted these); "
            f"the sites: {_sites_text(now)}",
            path=ratchet.path,
        )
