"""The spec evidence table's ``vouched`` column (SPEC §11): ``evidence sign`` refreshes it with
the principal ``ledger.allowed_signers`` maps the signing key to, ``spec render`` renders it,
the spec gate accepts it (and tables without it, as before), a row may under-claim with ``—``
but never name a principal that did not sign."""

from __future__ import annotations

import json

from tests.conftest import Repo
from tests.evidence.conftest import PLAN, Key, c_plan, c_repo, ledger, record_arms, rules

SPEC = "specs/scale.md"
SPEC_TEXT = (
    "# Scale\n\n## Owed\n\n- nothing\n\n## Now\n\nThe scaler doubles.\n\n## Later\n\nMore.\n"
)
SIGNERS = "ci/allowed_signers"


def _setup(repo: Repo, keys: dict, **plan: str) -> list[dict]:
    c_repo(repo)
    repo.commit(
        "Add the spec and trust CI\n\nBody.\n",
        {
            SPEC: SPEC_TEXT,
            ".agents/protocol.yaml": f"ledger:\n  allowed_signers: {SIGNERS}\n",
            SIGNERS: keys["ci"].signer_line("ci@example.org"),
        },
    )
    return record_arms(repo, c_plan(spec=SPEC, **plan))


def _spec_check(repo: Repo) -> dict:
    run = repo.tools("--format", "json", "spec", "check")
    assert run.exit_code in (0, 1), run.stderr
    return run.json()


def _table_rows(repo: Repo) -> list[str]:
    text = (repo.path / SPEC).read_text()
    return [line for line in text.splitlines() if line.startswith("| ")]


def test_sign_fills_the_vouched_column_and_the_spec_gate_accepts_it(
    repo: Repo, keys: dict[str, Key]
) -> None:
    _setup(repo, keys)
    assert "vouched" not in _table_rows(repo)[0]  # mutate run's table: as before
    assert rules(_spec_check(repo), "spec") == []
    signed = repo.tools("evidence", "sign", "--key", str(keys["ci"].path), "--base", "main")
    assert signed.exit_code == 0, signed.stderr
    assert f"the evidence table of {SPEC} refreshed" in signed.stderr
    header, *rows = _table_rows(repo)
    assert header.endswith("| vouched |")
    assert all(row.endswith("| ci@example.org |") for row in rows), rows
    assert rules(_spec_check(repo), "spec") == []
    shown = repo.tools("--format", "json", "ledger", "show", "--attested")
    assert {r["kind"] for r in json.loads(shown.stdout)} == {"mutation-arm"}
    # Vouching for less is no false claim: a row may say — (an attestation merged since).
    text = (repo.path / SPEC).read_text()
    under = text.replace("| ci@example.org |", "| — |", 1)
    repo.write(SPEC, under)
    assert rules(_spec_check(repo), "spec") == []
    # Naming a principal that did not sign is.
    repo.write(SPEC, text.replace("| ci@example.org |", "| mallory@example.org |", 1))
    data = _spec_check(repo)
    assert rules(data, "spec") == ["spec-evidence-unbacked"]
    repo.write(SPEC, text)


def test_spec_render_renders_the_column_and_without_signers_every_row_is_a_dash(
    repo: Repo, keys: dict[str, Key]
) -> None:
    arms = _setup(repo, keys)
    run_record = next(r for r in ledger(repo) if r["kind"] == "mutation-run")
    rendered = repo.tools("spec", "render", SPEC, "--id", run_record["id"][:12])
    assert rendered.exit_code == 0, rendered.stderr
    header, *rows = _table_rows(repo)
    assert header.endswith("| vouched |") and all(r.endswith("| — |") for r in rows)
    assert rules(_spec_check(repo), "spec") == []
    repo.tools("evidence", "sign", "--key", str(keys["ci"].path), "--id", arms[0]["id"])
    rows = _table_rows(repo)[1:]
    assert sum(r.endswith("| ci@example.org |") for r in rows) == 1
    # The signers file gone: the principal can no longer be shown to have signed.
    (repo.path / SIGNERS).unlink()
    data = _spec_check(repo)
    assert rules(data, "spec") == ["spec-evidence-unbacked"]


def test_mutate_collect_and_run_keep_the_column_they_find(repo: Repo, keys: dict[str, Key]) -> None:
    _setup(repo, keys, base="main")  # the arms' base stays put while the branch moves on
    signed = repo.tools("evidence", "sign", "--key", str(keys["ci"].path), "--base", "main")
    assert signed.exit_code == 0, signed.stderr
    # collect re-renders the table from the same (signed) arm records: column and values stay.
    collected = repo.tools("mutate", "collect", str(repo.path / PLAN))
    assert collected.exit_code == 0, collected.stderr
    header, *rows = _table_rows(repo)
    assert header.endswith("| vouched |") and len(rows) == 3
    assert all(row.endswith("| ci@example.org |") for row in rows), rows
    assert rules(_spec_check(repo), "spec") == []
    # A new run's arms are new records nobody signed yet: the column stays, every row `—`.
    ran = repo.tools("mutate", "run", str(repo.path / PLAN))
    assert ran.exit_code == 0, ran.stderr
    header, *rows = _table_rows(repo)
    assert header.endswith("| vouched |") and len(rows) == 3
    assert all(row.endswith("| — |") for row in rows), rows
    assert rules(_spec_check(repo), "spec") == []
    # Signing them fills it in again; a table without the column is rendered without it.
    repo.tools("evidence", "sign", "--key", str(keys["ci"].path), "--base", "main")
    assert all(row.endswith("| ci@example.org |") for row in _table_rows(repo)[1:])
    text = (repo.path / SPEC).read_text()
    plain = "\n".join(
        ln.rsplit(" | ", 1)[0] + " |" if ln.startswith("| ") else ln for ln in text.split("\n")
    )
    repo.write(SPEC, plain)
    ran = repo.tools("mutate", "run", str(repo.path / PLAN))
    assert ran.exit_code == 0, ran.stderr
    assert "vouched" not in _table_rows(repo)[0]
