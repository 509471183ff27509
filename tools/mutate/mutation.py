"""One mutation of a plan (revert, replace or patch) as loaded: what the plan wrote and what
loading resolved. Its own module so that applying (``apply.py``) and loading (``plan.py``)
both use it while the loader alone depends on the applier."""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple


class Mutation(NamedTuple):
    """One mutation as the plan wrote it (``fields``), with what loading resolved: the
    commit a ``revert`` names and the bytes of a ``patch`` (applied as read here, so the
    recorded sha256 is what ran)."""

    kind: str
    fields: dict[str, Any]
    where: str
    commit: str | None = None
    patch_bytes: bytes | None = None

    @property
    def path(self) -> str:
        """The file a revert or replace changes; the patch file of a patch."""
        return str(self.fields["path"] if self.kind != "patch" else self.fields["patch"])

    def plan_entry(self) -> dict[str, Any]:
        """The mutation as the plan spells it (``{"revert": {...}}``, ``{"patch": "p.diff"}``)."""
        if self.kind == "patch":
            return {"patch": self.fields["patch"]}
        return {self.kind: dict(self.fields)}

    def record(self) -> dict[str, Any]:
        """``{"kind": …, …the plan's fields}`` plus the resolved commit / the patch's sha256."""
        out: dict[str, Any] = {"kind": self.kind, **self.fields}
        if self.commit is not None:
            out["commit"] = self.commit
        if self.patch_bytes is not None:
            out["sha256"] = hashlib.sha256(self.patch_bytes).hexdigest()
        return out

    def describe(self) -> str:
        f = self.fields
        if self.kind == "revert":
            return f"revert {f['path']} to {f['to']}"
        if self.kind == "replace":
            times = f" ×{f['count']}" if "count" in f else ""
            return f"replace {f['old']!r}→{f['new']!r}{times} in {f['path']}"
        return f"patch {f['patch']}"


def describe_all(mutations: list[Mutation]) -> str:
    return "; ".join(m.describe() for m in mutations) or "none"
