"""The ``protocol`` pseudo-gate: what a range changes in the rules that judge it (SPEC §10).

In every range run, whichever tree the config is read from (``--config-from``), a change to
``.agents/protocol.yaml`` between the merge base and the head is reported key path by key path
(``protocol-changed``, a warning: a reviewer sees it), and a ratchet baseline bucket that grows
is ``baseline-raised`` (an error: baselines only ever go down, §4.5), as is an entry added
to the findings baseline (§3.3).

A range whose merge base has no protocol introduces it (adoption, SPEC §9.3): one
``protocol-introduced`` warning names the keys it sets, and a findings baseline the range
adds is ``baseline-introduced`` (a warning: debt recorded where there was none to shrink).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from tools import config as config_mod
from tools.appendonly import head_explicit, read_now
from tools.config_model import protocol_config
from tools.errors import UsageError, key_path
from tools.ratchets import baseline as baseline_mod
from tools.report import GateResult, Rule, declare

if TYPE_CHECKING:
    from tools.context import Context
    from tools.findings_baseline import Entry

NAME = "protocol"
PROTOCOL_CHANGED = Rule(
    "protocol-changed",
    "warning",
    "the range changes the config that judges it",
    example='preflight.gates: ["index", "ledger", "ratchet"] → ["now"]',
    fix=(
        "Nothing to fix when the change is meant (a warning): a reviewer reads each "
        "changed key path. CI that runs with `--config-from base` judges the change "
        "by the merge base's config, so the new config takes effect only once it is "
        "merged."
    ),
)

BASELINE_RAISED = Rule(
    "baseline-raised",
    "error",
    "a ratchet baseline bucket or the findings baseline grows between base and head",
    example=(
        "device-leakage.kcuda: the baseline rises from 1 to 2; baselines only go "
        "down (`tools ratchet tighten device-leakage` lowers them)"
    ),
    fix=(
        "Remove the new sites, or exempt them with an allow marker or "
        "`exempt_files`, and restore the baseline; a baseline is only ever lowered, "
        'with `tools ratchet tighten`. For the findings baseline ("the findings '
        'baseline gains 1 entry"): fix the new finding and drop the entry; `tools '
        "baseline write --add` is for adoption, not for a pull request. This rule "
        "cannot be turned off."
    ),
)

PROTOCOL_INTRODUCED = Rule(
    "protocol-introduced",
    "warning",
    "the range introduces the protocol: its merge base has no config",
    example=(
        "the range introduces .agents/protocol.yaml (the merge base has none): it sets "
        "base, trailers.marker, trailers.required; it judges this range and what follows"
    ),
    fix=(
        "Nothing to fix when the adoption is meant (a warning): a reviewer reads the keys it "
        "sets. Where the merge base has no protocol, the head's config judges the range even "
        "under `--config-from base` (there are no earlier rules to keep); CI that must never "
        "judge a tree without one runs with `--require-protocol`."
    ),
)

BASELINE_INTRODUCED = Rule(
    "baseline-introduced",
    "warning",
    "the range adds the findings baseline: the merge base has none",
    example=(
        "the range introduces .agents/baselines/findings.json with 2 entries (links/"
        "link-broken 2): recorded as debt, shown on every run"
    ),
    fix=(
        "Nothing to fix when the debt is meant (a warning): `tools baseline write` "
        "creates the baseline from today's findings where none exists, and `tools init "
        "--adopt` writes it. A reviewer reads the entries; from then on they only go down."
    ),
)

RULES = declare(NAME, [PROTOCOL_CHANGED, PROTOCOL_INTRODUCED, BASELINE_RAISED, BASELINE_INTRODUCED])

_VALUE_MAX = 80  # characters of a value quoted in a message
_MISSING = object()


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _VALUE_MAX else text[: _VALUE_MAX - 1] + "…"


def changed_keys(old: Any, new: Any, path: tuple[Any, ...] = ()) -> list[tuple[str, Any, Any]]:
    """Each key path whose value differs between two configs, with both values (mappings
    are compared key by key, anything else whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in list(old) + [k for k in new if k not in old]:
            out += changed_keys(old.get(key, _MISSING), new.get(key, _MISSING), path + (key,))
        return out
    if old == new and type(old) is type(new):
        return []
    return [(key_path(path), old, new)]


def _load(ctx: Context, raw: bytes | None, display: str) -> dict[str, Any]:
    # The bytes the command's own config load validated skip the YAML parser and the
    # validator; another revision's config is read and not remembered in their place.
    cache = config_mod.validation_cache(ctx.git.tools_dir(), no_cache=ctx.opts.no_cache)
    return config_mod.load_merged(raw, display=display, cache=cache, remember=False)


def _baselines(data: dict[str, Any]) -> dict[str, str]:
    """Ratchet name -> its baseline path, for every ratchet of a config."""
    ratchets = protocol_config(data).ratchets
    return {name: r.baseline or baseline_mod.default_path(name) for name, r in ratchets.items()}


def run(ctx: Context) -> GateResult | None:
    """The pseudo-gate's result for a range run; None when there is nothing to report (no
    range could be computed, or neither the config nor a baseline grew)."""
    sel = ctx.range
    if sel.mode != "range" or sel.merge_base is None:
        return None
    result = GateResult(NAME)
    path = config_mod.DEFAULT_PATH
    base_raw = ctx.git.blob(sel.merge_base, path)
    base_cfg = _load(ctx, base_raw, f"{sel.merge_base[:12]}:{path}")
    head_cfg: dict[str, Any] | None = None
    if _head_is_link(ctx, path):
        # Its target is never read nor quoted (SPEC §10): it may be a file of the machine.
        result.add(
            PROTOCOL_CHANGED.id,
            f"the range makes {path} a symbolic link: its target is not read, and the "
            "config it would give is not compared",
            path=path,
        )
    elif base_raw != (head_raw := read_now(ctx, path)):
        try:
            head_cfg = _load(ctx, head_raw, path)
        except UsageError as exc:
            result.add(
                PROTOCOL_CHANGED.id,
                f"the range changes {path}, which no longer loads: {exc.render()}",
                path=path,
            )
        else:
            if base_raw is None and head_raw is not None:
                _introduced(result, path, base_cfg, head_cfg)
            else:
                for key, old, new in changed_keys(base_cfg, head_cfg):
                    message = f"{key}: {_show(old)} → {_show(new)}"
                    result.add(PROTOCOL_CHANGED.id, message, path=path)
    else:
        head_cfg = base_cfg
    head_paths = _baselines(head_cfg) if head_cfg is not None else {}
    for name, base_path in _baselines(base_cfg).items():
        _raised(ctx, result, name, base_path, head_paths.get(name, base_path))
    _findings_raised(ctx, result)
    return result if result.findings else None


def _introduced(
    result: GateResult, path: str, defaults: dict[str, Any], head: dict[str, Any]
) -> None:
    """protocol-introduced: the head's config, where the merge base has none, and the keys it
    sets to other than their defaults (read from the merged config, which the validation
    cache keeps: the YAML is not parsed again)."""
    keys = list(dict.fromkeys(key for key, _, _ in changed_keys(defaults, head)))
    sets = (
        f"it sets {', '.join(keys)}"
        if keys
        else "it sets no key to other than its default (the defaults judge)"
    )
    result.add(
        PROTOCOL_INTRODUCED.id,
        f"the range introduces {path} (the merge base has none): {sets}; it judges this "
        "range and what follows",
        path=path,
    )


def _head_is_link(ctx: Context, path: str) -> bool:
    """Whether the judged tree's ``path`` is a symbolic link (or lies below one)."""
    if ctx.opts.staged or head_explicit(ctx):
        rev = "" if ctx.opts.staged else (ctx.range.head or "")
        if not ctx.opts.staged and not rev:
            return False
        entry = ctx.git.entry(rev, path)
        if entry is not None:
            return entry.is_symlink
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        above = ctx.git.entry(rev, folder) if folder else None
        return above is not None and above.is_symlink
    full = ctx.git.worktree_path(path)
    top = os.path.realpath(ctx.root)
    return full.is_symlink() or os.path.realpath(full) != os.path.join(top, *path.split("/"))


def _raised(ctx: Context, result: GateResult, name: str, base_path: str, head_path: str) -> None:
    sel = ctx.range
    assert sel.merge_base is not None
    base_raw = ctx.git.blob(sel.merge_base, base_path)
    if base_raw is None:
        return  # no baseline at the base: creating one is `tools ratchet tighten`'s job
    head_raw = read_now(ctx, head_path)
    if head_raw is None:
        return  # gone: the ratchet gate reports a missing baseline
    before = baseline_mod.parse(base_raw, f"{sel.merge_base[:12]}:{base_path}", name)
    after = baseline_mod.parse(head_raw, head_path, name)
    moved = f" (moved from {base_path})" if head_path != base_path else ""
    for bucket, was in before.items():
        now = after.get(bucket)
        if now is not None and now > was:
            result.add(
                BASELINE_RAISED.id,
                f"{name}.{bucket}: the baseline rises from {was} to {now}{moved}; baselines "
                f"only go down (`tools ratchet tighten {name}` lowers them)",
                path=head_path,
            )


def _findings_raised(ctx: Context, result: GateResult) -> None:
    """An entry of the head's findings baseline that the base's lacks: debt only ever shrinks
    (SPEC §3.3). A baseline the base has none of is created, not raised (as a ratchet's)."""
    from tools import findings_baseline as fb

    sel = ctx.range
    assert sel.merge_base is not None
    base_raw = ctx.git.blob(sel.merge_base, fb.PATH)
    head_raw = read_now(ctx, fb.PATH)
    if base_raw is None and head_raw is not None:
        _baseline_introduced(result, fb.parse(head_raw, fb.PATH))
        return
    if base_raw is None or head_raw is None or base_raw == head_raw:
        return
    before = {
        (e.gate, e.fingerprint) for e in fb.parse(base_raw, f"{sel.merge_base[:12]}:{fb.PATH}")
    }
    grown = [e for e in fb.parse(head_raw, fb.PATH) if (e.gate, e.fingerprint) not in before]
    if grown:
        rules = sorted({f"{e.gate}/{e.rule}" for e in grown})
        result.add(
            BASELINE_RAISED.id,
            f"the findings baseline gains {len(grown)} entr{'y' if len(grown) == 1 else 'ies'} "
            f"({', '.join(rules)}); recorded debt only goes down (a new finding is fixed, not "
            "recorded)",
            path=fb.PATH,
        )


def _baseline_introduced(result: GateResult, entries: list[Entry]) -> None:
    """baseline-introduced: a findings baseline where the merge base has none (SPEC §3.3):
    debt recorded from today's findings, not raised."""
    from tools import findings_baseline as fb

    counts: dict[str, int] = {}
    for e in entries:
        counts[f"{e.gate}/{e.rule}"] = counts.get(f"{e.gate}/{e.rule}", 0) + 1
    listed = ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()))
    n = len(entries)
    result.add(
        BASELINE_INTRODUCED.id,
        f"the range introduces {fb.PATH} with {n} entr{'y' if n == 1 else 'ies'}"
        f"{f' ({listed})' if listed else ''}: recorded as debt, shown on every run",
        path=fb.PATH,
    )
