"""``tools evidence sign`` and ``tools ledger verify --require-attested``: DSSE envelopes signed
by ``ssh-keygen -Y sign`` over the pre-authentication encoding, checked offline against an
``allowed_signers`` file; forged records, unknown and revoked keys and edited payloads
refused; attestations that survive a real union merge of two branches' ledgers."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

from tests.conftest import Repo
from tests.evidence.conftest import (
    Key,
    c_plan,
    c_repo,
    findings,
    forge,
    ledger,
    record_arms,
    replace_record,
    rules,
)

SIGNERS = "ci/allowed_signers"


def _sign(repo: Repo, key: Key, *args: str) -> dict:
    run = repo.tools(
        "--format", "json", "evidence", "sign", "--key", str(key.path), "--base", "main", *args
    )
    assert run.exit_code in (0, 1), run.stderr
    return run.json()


def _verify(repo: Repo, signers: Path | str, *args: str) -> tuple[int, dict]:
    run = repo.tools(
        "--format", "json", "ledger", "verify", "--base", "main",
        "--require-attested", "mutation-arm", "--allowed-signers", str(signers), *args,
    )  # fmt: skip
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()


def _signers(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "allowed_signers"
    path.write_text("".join(lines))
    return path


def test_pae_is_the_dsse_encoding() -> None:
    from tools.replay.dsse import pae

    # The DSSE protocol's own worked example.
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    )
    assert pae("application/vnd.in-toto+json", "é".encode()) == (
        b"DSSEv1 28 application/vnd.in-toto+json 2 " + "é".encode()
    )


def test_signed_records_verify_and_unsigned_ones_do_not(
    repo: Repo, keys: dict, tmp_path: Path
) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    signers = _signers(tmp_path, keys["ci"].signer_line("ci@example.org"))
    code, data = _verify(repo, signers)
    assert code == 1
    assert rules(data, "attestations") == ["evidence-unattested"] * 3
    assert rules(data, "ledger") == []
    signed = _sign(repo, keys["ci"])
    assert rules(signed, "evidence") == ["evidence-reproduced"] * 3
    atts = [r for r in ledger(repo) if r["kind"] == "attestation"]
    assert sorted(a["attests"] for a in atts) == sorted(r["id"] for r in arms)
    env = atts[0]["envelope"]
    assert env["payloadType"] == "application/vnd.in-toto+json"
    assert base64.b64decode(env["signatures"][0]["sig"]).startswith(
        b"-----BEGIN SSH SIGNATURE-----"
    )
    code, data = _verify(repo, signers)
    assert code == 0, data
    assert rules(data, "attestations") == []
    # ssh-keygen alone checks it: the signature is over DSSE's PAE of type and payload.
    payload = base64.b64decode(env["payload"])
    (tmp_path / "sig").write_bytes(base64.b64decode(env["signatures"][0]["sig"]))
    pae = b"DSSEv1 28 application/vnd.in-toto+json %d %s" % (len(payload), payload)
    check = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", "ci@example.org",
         "-n", "agent-protocol-gates", "-s", str(tmp_path / "sig")],
        input=pae, capture_output=True, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    shown = repo.tools("--format", "json", "ledger", "show", "--attested")
    assert shown.exit_code == 0
    assert {r["id"] for r in json.loads(shown.stdout)} == {r["id"] for r in arms}
    unshown = repo.tools(
        "--format", "json", "ledger", "show", "--unattested", "--kind", "mutation-arm"
    )
    assert json.loads(unshown.stdout) == []
    # An attestation filed under another record than its statement names.
    moved = forge(atts[0], attests=next(r["id"] for r in arms if r["id"] != atts[0]["attests"]))
    replace_record(repo, atts[0], moved)
    code, data = _verify(repo, signers)
    (bad,) = [f for f in findings(data, "attestations") if f["rule"] == "attestation-invalid"]
    assert "does not name record" in bad["message"] and moved["id"][:12] in bad["message"]
    assert [f["rule"] for f in findings(data, "attestations")].count("evidence-unattested") == 1


def test_a_forged_record_is_never_signed_and_stays_unattested(
    repo: Repo, keys: dict, tmp_path: Path
) -> None:
    c_repo(repo)
    arms = {r["arm"]: r for r in record_arms(repo, c_plan())}
    forged = forge(arms["B"], run_rc=0, run_rcs=[0], verdict="GREEN", observed="GREEN")
    replace_record(repo, arms["B"], forged)
    repo.commit("Improve the evidence\n\nBody.\n")
    signed = _sign(repo, keys["ci"])
    assert sorted(rules(signed, "evidence")) == ["evidence-reproduced"] * 2 + [
        "evidence-unreproduced"
    ]
    assert forged["id"] not in {r.get("attests") for r in ledger(repo)}
    code, data = _verify(repo, _signers(tmp_path, keys["ci"].signer_line("ci@example.org")))
    assert code == 1
    (f,) = findings(data, "attestations")
    assert f["rule"] == "evidence-unattested" and forged["id"][:12] in f["message"]


def test_unknown_and_revoked_keys_and_an_edited_payload_are_invalid(
    repo: Repo, keys: dict, tmp_path: Path
) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    first = arms[0]["id"]
    signers = _signers(
        tmp_path,
        keys["ci"].signer_line("ci@example.org"),
        keys["old"].signer_line("old@example.org"),
    )
    _sign(repo, keys["rogue"], "--id", first)  # a key no allowed_signers line names
    code, data = _verify(repo, signers)
    assert code == 1
    bad = [f for f in findings(data, "attestations") if f["rule"] == "attestation-invalid"]
    assert len(bad) == 1 and "no principal" in bad[0]["message"]
    # A revoked key: allowed by name, listed in the revocation file (git's revocationKeyring).
    _sign(repo, keys["old"], "--id", arms[1]["id"])
    revoked = tmp_path / "revoked"
    revoked.write_text(keys["old"].public + "\n")
    code, data = _verify(repo, signers, "--revoked-signers", str(revoked))
    msgs = [
        f["message"] for f in findings(data, "attestations") if f["rule"] == "attestation-invalid"
    ]
    assert len(msgs) == 2, msgs
    (gone,) = [m for m in msgs if arms[1]["id"][:12] in m]
    assert "old@example.org" in gone and "revoked" in gone.lower(), gone
    code, data = _verify(repo, signers)  # without the revocation the old key still vouches
    assert (
        len([f for f in findings(data, "attestations") if f["rule"] == "attestation-invalid"]) == 1
    )
    # An edited payload, its record id recomputed: the signature no longer holds.
    _sign(repo, keys["ci"], "--id", arms[2]["id"])
    att = next(
        r for r in ledger(repo) if r["kind"] == "attestation" and r["attests"] == arms[2]["id"]
    )
    statement = json.loads(base64.b64decode(att["envelope"]["payload"]))
    statement["predicate"]["observed"]["run_rc"] = 7
    edited_env = {
        **att["envelope"],
        "payload": base64.b64encode(json.dumps(statement).encode()).decode(),
    }
    edited = forge(att, envelope=edited_env)
    replace_record(repo, att, edited)
    code, data = _verify(repo, signers)
    invalid = [
        f["message"] for f in findings(data, "attestations") if f["rule"] == "attestation-invalid"
    ]
    assert any(edited["id"][:12] in m and "does not verify" in m for m in invalid), invalid
    assert any(
        arms[2]["id"][:12] in f["message"]
        for f in findings(data, "attestations")
        if f["rule"] == "evidence-unattested"
    )
    # A payload that does not parse.
    garbled = forge(edited, envelope={**edited_env, "payload": "not base64!"})
    replace_record(repo, edited, garbled)
    code, data = _verify(repo, signers)
    assert any("does not parse" in f["message"] for f in findings(data, "attestations"))


def test_attestations_survive_a_union_merge(repo: Repo, keys: dict, tmp_path: Path) -> None:
    c_repo(repo)
    left = record_arms(repo, c_plan(), branch="left", name="plans/left.yml")
    _sign(repo, keys["ci"])
    repo.commit("Sign left\n\nBody.\n")
    right_plan = c_plan()
    right_plan["arms"] = right_plan["arms"][:2]
    right_plan["expect"] = {"control": "GREEN", "B": "RED"}
    right_plan["repeat"] = 1
    right_plan["timeout"] = 61
    right = record_arms(repo, right_plan, branch="right", name="plans/right.yml")
    _sign(repo, keys["ci"])
    repo.commit("Sign right\n\nBody.\n")
    repo.checkout("left")
    repo.git("merge", "-q", "--no-edit", "right")
    merged = ledger(repo)
    want = {r["id"] for r in left} | {r["id"] for r in right}
    assert want <= {r.get("attests") for r in merged if r["kind"] == "attestation"}
    code, data = _verify(repo, _signers(tmp_path, keys["ci"].signer_line("ci@example.org")))
    assert code == 0, data
    assert rules(data, "ledger") == [] and rules(data, "attestations") == []


def test_config_from_base_reads_the_signers_of_the_merge_base(repo: Repo, keys: dict) -> None:
    c_repo(repo)
    repo.commit(
        "Trust CI\n\nBody.\n",
        {
            ".agents/protocol.yaml": f"ledger:\n  allowed_signers: {SIGNERS}\n",
            SIGNERS: keys["ci"].signer_line("ci@example.org"),
        },
    )
    record_arms(repo, c_plan())
    _sign(repo, keys["rogue"])
    # The branch trusts its own key: under --config-from base that changes nothing.
    repo.write(SIGNERS, keys["ci"].signer_line("ci@example.org") + keys["rogue"].signer_line("me"))
    repo.commit("Trust me too\n\nBody.\n")
    head = repo.tools(
        "--format",
        "json",
        "ledger",
        "verify",
        "--base",
        "main",
        "--require-attested",
        "mutation-arm",
    )
    assert head.exit_code == 0, head.stdout
    base = repo.tools(
        "--format", "json", "--config-from", "base", "ledger", "verify", "--base", "main",
        "--require-attested", "mutation-arm",
    )  # fmt: skip
    assert base.exit_code == 1
    data = base.json()
    assert set(rules(data, "attestations")) == {"attestation-invalid", "evidence-unattested"}


def test_a_key_inside_the_repository_or_missing_signers_is_exit_2(repo: Repo, keys: dict) -> None:
    c_repo(repo)
    record_arms(repo, c_plan())
    inside = Key(repo.path / "keys", "committed")
    run = repo.tools("evidence", "sign", "--key", str(inside.path), "--base", "main")
    assert run.exit_code == 2 and "inside the repository" in run.stderr
    not_a_key = keys["ci"].path.parent / "not-a-key"
    not_a_key.write_text("hello\n")
    run = repo.tools("evidence", "sign", "--key", str(not_a_key), "--base", "main")
    assert run.exit_code == 2 and "--key" in run.stderr
    run = repo.tools("evidence", "sign", "--key", str(not_a_key) + ".missing", "--base", "main")
    assert run.exit_code == 2 and "no such key file" in run.stderr
    run = repo.tools("ledger", "verify", "--base", "main", "--require-attested", "mutation-arm")
    assert run.exit_code == 2 and "allowed_signers" in run.stderr
    run = repo.tools("ledger", "verify", "--base", "main", "--allowed-signers", "x")
    assert run.exit_code == 2 and "--require-attested" in run.stderr


def test_sharded_like_arms_matrix_receipts_merge(repo: Repo, keys: dict, tmp_path: Path) -> None:
    c_repo(repo)
    arms = record_arms(repo, c_plan())
    run = repo.tools("--format", "json", "evidence", "matrix", "--base", "main")
    assert run.exit_code == 0, run.stderr
    ids = json.loads(run.stdout)["record"]
    assert sorted(ids) == sorted(r["id"] for r in arms)
    receipts = []
    for i, rid in enumerate(ids):  # one CI job per record
        out = tmp_path / f"att-{i}.json"
        signed = _sign(repo, keys["ci"], "--id", rid, "--receipt", str(out))
        assert rules(signed, "evidence") == ["evidence-reproduced"]
        receipts.append(str(out))
    assert not [r for r in ledger(repo) if r["kind"] == "attestation"]  # receipts only
    merged = repo.tools("ledger", "merge", *receipts)
    assert merged.exit_code == 0, merged.stderr
    code, data = _verify(repo, _signers(tmp_path, keys["ci"].signer_line("ci@example.org")))
    assert code == 0 and rules(data, "attestations") == []


def test_an_inconclusive_replay_is_never_signed(repo: Repo, keys: dict, tmp_path: Path) -> None:
    from tests.mutate.conftest import C_TEST_CMD

    c_repo(repo)
    trap = tmp_path / "oom-now"
    record_arms(repo, c_plan(test=f"if [ -e {trap} ]; then kill -KILL $$; fi; {C_TEST_CMD}"))
    trap.write_text("the OOM killer, standing in\n")
    signed = _sign(repo, keys["ci"])
    assert signed["status"] == "skip"
    assert set(rules(signed, "evidence")) == {"evidence-replay-inconclusive"}
    assert not [r for r in ledger(repo) if r["kind"] == "attestation"]


def test_an_unknown_kind_to_require_is_exit_2(repo: Repo, keys: dict, tmp_path: Path) -> None:
    c_repo(repo)
    record_arms(repo, c_plan())
    signers = _signers(tmp_path, keys["ci"].signer_line("ci@example.org"))
    for kinds, bad in (
        ("mutaton-arm", "mutaton-arm"),
        ("attribution,mutation-run", "mutation-run"),
    ):
        run = repo.tools(
            "ledger", "verify", "--base", "main",
            "--require-attested", kinds, "--allowed-signers", str(signers),
        )  # fmt: skip
        assert run.exit_code == 2, run.stdout + run.stderr
        (line,) = run.stderr.strip().splitlines()
        assert line.startswith("error: --require-attested: ") and f"unknown kind {bad!r}" in line
        assert "mutation-arm, attribution" in line
    # Spaces around the names are no kind of their own: the arms are judged (unattested).
    run = repo.tools(
        "--format", "json", "ledger", "verify", "--base", "main",
        "--require-attested", " mutation-arm , attribution ", "--allowed-signers", str(signers),
    )  # fmt: skip
    assert run.exit_code == 1, run.stderr
    assert rules(run.json(), "attestations") == ["evidence-unattested"] * 3
