"""``tools numerics topp-count``: the D/K rule, the safety checks, and the issue's edge rows.

CPU independence: the native comparator and stock sum fp32 probabilities whose rounding
depends on the CPU's vector width, and the plan's logits come from torch's ``randn``, whose
vectorised form differs in the last ulp too. So no assertion here rests on where fp32 rounding
puts a cut. Rows built by hand (flat rows, ties, forced tokens, ``-inf`` rows) have fp32
arithmetic that is exact or one correctly rounded operation on identical operands, the same on
every CPU; a test that asserts a verdict on random rows first checks, with
``margins.assert_clear_of_the_cut``, that the exact cumulative mass on both sides of every such
row's cut lies ten times further from ``1 - p`` than any fp32 discrepancy measured between
vector widths. ``test_cpu_independence.py`` reruns the key cases under every vector width.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from tests.conftest import Repo
from tests.numerics.margins import (
    FLAT_N,
    FLAT_P,
    FP32_SPREAD,
    assert_clear_of_the_cut,
    boundary_margins,
    plan_logits,
)
from tools import ledger
from tools.numerics.topp import count_rule, native, reference_count, stable_order

ROOT = Path(__file__).resolve().parents[2]
P95 = 0.949999988079071  # float32(0.95)
STOCK = "kernels.sampling:top_p_stock"
SPLIT = "kernels.sampling:top_p_split"


def run_plan(
    repo: Repo,
    cases: list[dict],
    kernels: dict[str, str],
    *extra: str,
    captured: dict | None = None,
) -> tuple[int, dict]:
    plan = {"comparator": {"device": "cpu"}, "kernels": kernels, "cases": cases}
    if captured is not None:
        plan["captured"] = captured
    repo.write("plan.yaml", yaml.safe_dump(plan, sort_keys=False))
    run = repo.tools(
        "--format",
        "json",
        "numerics",
        "topp-count",
        str(repo.path / "plan.yaml"),
        "--no-record",
        *extra,
    )
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def errors(gate: dict, kernel: str | None = None) -> set[str]:
    return {
        f["rule"]
        for f in gate["findings"]
        if f["severity"] == "error" and (kernel is None or f", kernel {kernel}:" in f["message"])
    }


def verdicts(gate: dict, case: int = 0) -> dict[str, dict]:
    return gate["stats"]["cases"][case]["kernels"]


# -- the count rule -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "native_counts,kernel_counts,d,k,ok",
    [
        ([800, 10], [804, 10], 4, 800, False),  # 200*4 = 800 is not < 800
        ([1000, 10], [1004, 10], 4, 1000, True),  # 800 < 1000
        ([7, 5], [10, 2], 3, 7, True),  # D <= 3 passes whatever K is
        ([5, 0], [5, 0], 0, 5, False),  # a zero native count cannot be judged
        ([], [], 0, 0, False),  # nor an empty batch
    ],
)
def test_count_rule(native_counts, kernel_counts, d, k, ok) -> None:
    assert count_rule(native_counts, kernel_counts) == (d, k, ok)


def _flat(batch: int, vocab: int, p: float) -> dict:
    # scale 0: every logit is +-0.0, so each native probability is 1/vocab
    return {
        "name": f"flat-{vocab}",
        "batch": batch,
        "vocab": vocab,
        "seed": 1,
        "scale": 0.0,
        "p": p,
    }


def test_k_800_d_4_fails_through_the_cli(repo: Repo) -> None:
    # 1/1000 each; 1 - p = 0.2005 drops the 200 lowest: K = 800
    code, gate = run_plan(repo, [_flat(1, 1000, 0.7995)], {"plus4": "tests.numerics.ops:plus_four"})
    v = verdicts(gate)["plus4"]
    assert (v["D"], v["K"], code) == (4, 800, 1)
    assert errors(gate) == {"topp-count-rule"}


def test_k_1000_d_4_passes_through_the_cli(repo: Repo) -> None:
    # 1/1250 each; 1 - p = 0.2004 drops the 250 lowest: K = 1000
    code, gate = run_plan(repo, [_flat(1, 1250, 0.7996)], {"plus4": "tests.numerics.ops:plus_four"})
    v = verdicts(gate)["plus4"]
    assert (v["D"], v["K"], code) == (4, 1000, 0)
    assert errors(gate) == set()


# -- the edge rows ----------------------------------------------------------------------
def test_an_all_neg_inf_row_has_zero_native_count_and_fails(repo: Repo) -> None:
    case = {
        "name": "dead-row",
        "batch": 2,
        "vocab": 64,
        "seed": 3,
        "p": P95,
        "fill": [{"row": 1, "value": float("-inf")}],
    }
    assert_clear_of_the_cut(case, [0])
    code, gate = run_plan(repo, [case], {"stock": STOCK, "split": SPLIT})
    assert code == 1
    assert errors(gate) == {"topp-zero-count"}
    c = gate["stats"]["cases"][0]
    assert c["native_counts"][1] == 0 and c["binary64_counts"][1] == 0
    assert all(v["rows"][1]["kernel"] == 0 for v in c["kernels"].values())


def test_a_p_1_row_with_fp32_underflow(repo: Repo) -> None:
    # Token 5 sits 200 below the rest: its fp32 probability underflows to 0, its binary64 one
    # (about e^-203) does not. At p = 1 the native algorithm drops it (cum 0 <= 1 - p = 0);
    # exact top-p keeps every token of positive probability.
    case = {
        "name": "p1",
        "batch": 2,
        "vocab": 256,
        "seed": 4,
        "p": [P95, 1.0],
        "forced": [{"row": 1, "token": 5, "value": -200.0}],
    }
    assert_clear_of_the_cut(case, [0])  # row 1: e^-200 underflows fp32 on any CPU
    code, gate = run_plan(repo, [case], {"stock": STOCK, "split": SPLIT})
    c = gate["stats"]["cases"][0]
    assert (c["native_counts"][1], c["binary64_counts"][1]) == (255, 256)
    stock, split = c["kernels"]["stock"], c["kernels"]["split"]
    assert stock["rows"][1]["kernel"] == 255 and not stock["rows"][1]["containment"]
    assert split["rows"][1]["kernel"] == 256 and split["rows"][1]["containment"]
    assert errors(gate, "stock") == {"topp-containment"}
    assert errors(gate, "split") == set() and (split["D"], split["verdict"]) == (1, "pass")
    assert code == 1


def test_a_tie_at_the_maximum_with_tiny_p(repo: Repo) -> None:
    case = {
        "name": "tie",
        "batch": 1,
        "vocab": 64,
        "seed": 5,
        "p": 1e-6,
        "forced": [{"row": 0, "token": t, "value": 10.0} for t in (7, 3)],
    }
    kernels = {"stock": STOCK, "split": SPLIT, "last": "tests.numerics.ops:keep_highest_id_tie"}
    code, gate = run_plan(repo, [case], kernels)
    c = gate["stats"]["cases"][0]
    assert c["native_counts"] == [1] and c["binary64_counts"] == [1]
    assert c["kernels"]["stock"]["rows"][0]["kernel"] == 1  # the lower id of the tie
    assert c["kernels"]["split"]["rows"][0]["kernel"] == 2  # keeps the tie whole: D = 1
    assert errors(gate, "stock") == errors(gate, "split") == set()
    # keeping the tie's higher id is not a prefix of the stable order, and misses token 3
    assert errors(gate, "last") == {"topp-canonical-prefix", "topp-containment"}
    assert code == 1


def test_stock_can_drop_a_boundary_token_the_binary64_reference_keeps(repo: Repo) -> None:
    q = np.float32(1) / np.float32(FLAT_N)
    t = float(np.float32(1) - np.float32(FLAT_P))  # 1 - p, as the native algorithm computes it
    assert Fraction(float(q)) < Fraction(1, FLAT_N)
    assert float(np.float32(2 * float(q))) <= t < Fraction(2, FLAT_N)
    assert float(np.float32(3 * float(q))) > t and Fraction(1, FLAT_N) <= t
    # So the fp32 mass of the two lowest tokens is <= 1 - p (dropped) while their exact mass,
    # 2 / FLAT_N, is above it: the reference drops one token, the native algorithm two.
    case = {**_flat(1, FLAT_N, FLAT_P), "name": "boundary"}
    code, gate = run_plan(repo, [case], {"stock": STOCK, "split": SPLIT})
    c = gate["stats"]["cases"][0]
    assert (c["native_counts"], c["binary64_counts"]) == ([FLAT_N - 2], [FLAT_N - 1])
    assert errors(gate, "stock") == {"topp-containment"}
    assert c["kernels"]["stock"]["D"] == 0  # the count rule alone would not see it
    # split never cuts a tie: it keeps all FLAT_N, D = 2, and contains the reference set
    assert errors(gate, "split") == set() and c["kernels"]["split"]["D"] == 2
    assert code == 1


def test_forced_rows_at_full_vocabulary(repo: Repo) -> None:
    case = {
        "name": "forced-b4-v154856",
        "batch": 4,
        "vocab": 154856,
        "seed": 58232,
        "p": P95,
        "forced": [
            {"row": 0, "token": 154842, "value": 1.0e9},
            {"row": 1, "token": 154842, "value": 1.0e9 / 0.6},
        ],
    }
    # Rows 2 and 3 are random: stock's containment there rests on the kept side of the cut.
    assert_clear_of_the_cut(case, [2, 3], kept_side_only=True)
    kernels = {"stock": STOCK, "split": SPLIT, "two": "tests.numerics.ops:keeps_two"}
    code, gate = run_plan(repo, [case], kernels)
    c = gate["stats"]["cases"][0]
    assert c["native_counts"][:2] == [1, 1] and c["binary64_counts"][:2] == [1, 1]
    assert min(c["native_counts"][2:]) > 100000
    assert errors(gate, "stock") == errors(gate, "split") == set()
    assert "topp-forced" in errors(gate, "two")
    assert code == 1


def test_stock_is_not_in_the_shipped_plan_because_its_verdict_there_rests_on_fp32() -> None:
    # The shipped batch-64 case has a row whose first kept token's exact cumulative mass lies
    # closer to 1 - p than fp32 sums differ between vector widths: whether stock (the native
    # algorithm) keeps it depends on the CPU. Split keeps it by construction; the plan gates
    # only split.
    plan = yaml.safe_load((ROOT / "numerics" / "topp-plan.yaml").read_text())
    assert set(plan["kernels"]) == {"split"}
    [case] = [c for c in plan["cases"] if c["batch"] == 64]
    logits, ps = plan_logits(case)
    above = min(boundary_margins(logits[r], ps[r])[1] for r in range(case["batch"]))
    assert 0 < above < FP32_SPREAD


# -- the other safety checks ---------------------------------------------------------------------
SMALL = {"name": "small", "batch": 3, "vocab": 2048, "seed": 9, "p": P95}


def test_the_small_case_is_clear_of_its_cuts() -> None:
    # The verdicts the tests below assert on SMALL's random rows hold on every CPU.
    assert_clear_of_the_cut(SMALL, range(SMALL["batch"]))


@pytest.mark.parametrize(
    "kernel,rule",
    [
        ("mutates_input", "topp-input-mutated"),
        ("finite_sentinel", "topp-bits-changed"),
        ("nan_tail", "topp-nonfinite-output"),
        ("raises", "topp-bad-output"),
        ("wrong_shape", "topp-bad-output"),
    ],
)
def test_each_safety_rule_fires(repo: Repo, kernel: str, rule: str) -> None:
    code, gate = run_plan(repo, [SMALL], {"bad": f"tests.numerics.ops:{kernel}", "stock": STOCK})
    assert code == 1
    assert rule in errors(gate, "bad")
    assert errors(gate, "stock") == set()
    rows = verdicts(gate)["bad"]["rows"]
    if rule == "topp-bits-changed":
        assert not any(r["bits_preserved"] for r in rows)
    if rule == "topp-nonfinite-output":
        assert not any(r["excluded_are_neg_inf"] for r in rows)


def test_each_kernel_gets_its_batch_summary(repo: Repo) -> None:
    # topp-batch (info): one line per case and kernel, carrying the same D, K and verdict as
    # the stats; a kernel whose rows fail is summarised as FAIL.
    kernels = {"stock": STOCK, "bad": "tests.numerics.ops:finite_sentinel"}
    code, gate = run_plan(repo, [SMALL], kernels)
    assert code == 1
    batch = [f["message"] for f in gate["findings"] if f["rule"] == "topp-batch"]
    assert len(batch) == 2
    for name, v in verdicts(gate).items():
        (line,) = [m for m in batch if f", kernel {name}:" in m]
        assert f"D={v['D']}, K={v['K']}" in line
    assert ": pass (" in next(m for m in batch if "kernel stock:" in m)
    assert ": FAIL (" in next(m for m in batch if "kernel bad:" in m)


def test_the_clean_kernels_pass_every_check(repo: Repo) -> None:
    code, gate = run_plan(repo, [SMALL], {"stock": STOCK, "split": SPLIT})
    assert code == 0 and errors(gate) == set()
    for v in verdicts(gate).values():
        assert all(r["containment"] and r["canonical_prefix"] for r in v["rows"])
        assert all(r["bits_preserved"] and r["excluded_are_neg_inf"] for r in v["rows"])
        assert v["diagnostics"]["input_unchanged"] is True
    assert gate["stats"]["comparator"]["device"] == "cpu"
    assert gate["stats"]["comparator"]["dtype"] == "float32"


def test_captured_outputs_are_judged_like_kernels(repo: Repo) -> None:
    gen = torch.Generator().manual_seed(SMALL["seed"])
    logits = torch.randn(3, 2048, generator=gen)
    out = native(logits, torch.full((3,), P95), "cpu")
    np.save(repo.path / "cap.npy", out.numpy())
    other = {**SMALL, "name": "other"}
    code, gate = run_plan(
        repo, [SMALL, other], {"stock": STOCK}, captured={"cuda": {"small": "cap.npy"}}
    )
    assert code == 0, gate["findings"]
    assert verdicts(gate)["cuda"]["verdict"] == "pass"
    assert [f["rule"] for f in gate["findings"] if f["severity"] == "info"].count(
        "topp-captured-missing"
    ) == 1


# -- refusals: exit 2 ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit,needle",
    [
        (lambda p: p.pop("cases"), "cases"),
        (lambda p: p["cases"][0].update(p=1.5), "cases[0].p"),
        (lambda p: p["cases"][0].update(p=0.0), "cases[0].p"),
        (lambda p: p["cases"][0].update(batch=0), "cases[0].batch"),
        (
            lambda p: p["cases"][0].update(forced=[{"row": 0, "token": 2048, "value": 1.0}]),
            "cases[0].forced[0].token",
        ),
        (
            lambda p: p["cases"][0].update(forced=[{"row": 0, "token": 1, "value": float("nan")}]),
            "NaN and +inf inputs are refused",
        ),
        (
            lambda p: p["cases"][0].update(forced=[{"row": 0, "token": 1, "value": float("inf")}]),
            "NaN and +inf inputs are refused",
        ),
        (lambda p: p.update(kernels={"x": "kernels.sampling:nothing_here"}), "kernels.x"),
        (lambda p: p.update(kernels={"x": "no_such_module:f"}), "cannot import"),
        (lambda p: p.update(extra=1), "unknown key"),
        (lambda p: p.update(comparator={"device": "tpu"}), "comparator.device"),
    ],
)
def test_a_malformed_plan_is_exit_2(repo: Repo, edit, needle: str) -> None:
    plan = {"kernels": {"stock": STOCK}, "cases": [dict(SMALL)]}
    edit(plan)
    repo.write("plan.yaml", yaml.safe_dump(plan))
    run = repo.tools("numerics", "topp-count", str(repo.path / "plan.yaml"))
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith("error: plan.yaml") and needle in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_a_duplicate_key_in_a_plan_is_exit_2(repo: Repo) -> None:
    plan = {"kernels": {"stock": STOCK}, "cases": [dict(SMALL)]}
    text = yaml.safe_dump(plan, sort_keys=False)
    repo.write("plan.yaml", text + "kernels: {split: " + SPLIT + "}\n")
    run = repo.tools("numerics", "topp-count", str(repo.path / "plan.yaml"))
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith("error: plan.yaml") and "duplicate key 'kernels'" in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_numbers_written_as_yaml_strings_are_still_numbers(repo: Repo) -> None:
    # YAML 1.1 reads `1e0` as a string; the plan accepts a string that is a plain number.
    plan = {"kernels": {"stock": STOCK}, "cases": [{**SMALL, "scale": "1e0"}]}
    repo.write("plan.yaml", yaml.safe_dump(plan))
    run = repo.tools("numerics", "topp-count", str(repo.path / "plan.yaml"), "--no-record")
    assert run.exit_code == 0, run.stderr


# -- the record -----------------------------------------------------------------------------------
def test_the_topp_count_record_carries_the_input_sha256s(repo: Repo) -> None:
    plan = {"kernels": {"split": SPLIT}, "cases": [SMALL]}
    repo.write("plan.yaml", yaml.safe_dump(plan))
    run = repo.tools("numerics", "topp-count", str(repo.path / "plan.yaml"))
    assert run.exit_code == 0, run.stderr
    [(_, record)] = list(ledger.read_records(repo.path / ".agents/ledger.jsonl"))
    assert record["kind"] == "topp-count" and record["verdict"] == "pass"
    # The contract's generation: scale * randn(batch, vocab) from a seeded generator, fp32.
    logits = torch.randn(3, 2048, generator=torch.Generator().manual_seed(9))
    [case] = record["cases"]
    assert case["logits_sha256"] == hashlib.sha256(logits.numpy().tobytes()).hexdigest()
    p = np.full(3, P95, dtype=np.float32)
    assert case["p_sha256"] == hashlib.sha256(p.tobytes()).hexdigest()
    assert record["comparator"]["device"] == "cpu" and record["rule"] == "D <= 3 or 200*D < K"
    assert case["kernels"]["split"]["verdict"] == "pass"
    assert ledger.verify_record(record) is None


# -- the binary64 reference ---------------------------------------------------------------------
def test_reference_breaks_an_exact_tie_with_integers() -> None:
    # Two equal logits at p = 0.5: S_1 = 1 and (1 - p) * Z = 1 exactly, so cum <= 1 - p drops
    # one of them; the float comparison is within rounding, the exact one decides.
    row = np.array([2.0, 2.0], dtype=np.float32)
    count, exact = reference_count(row, 0.5, stable_order(row))
    assert (count, exact) == (1, 1)
    out = native(torch.tensor(row)[None], torch.tensor([0.5]), "cpu")
    assert int(torch.isfinite(out).sum()) == 1


def test_reference_on_an_all_neg_inf_row_and_neg_inf_tokens() -> None:
    dead = np.full(8, -np.inf, dtype=np.float32)
    assert reference_count(dead, P95, stable_order(dead))[0] == 0
    row = np.array([1.0, -np.inf, 0.5, -np.inf], dtype=np.float32)
    assert reference_count(row, 1.0, stable_order(row))[0] == 2  # p = 1 keeps all finite


def test_stable_order_is_descending_then_ascending_id() -> None:
    row = np.array([0.0, 3.0, -0.0, 3.0, 1.0], dtype=np.float32)
    assert stable_order(row).tolist() == [1, 3, 4, 0, 2]


def test_native_masks_the_lower_tail_by_hand() -> None:
    logits = torch.log(torch.tensor([[0.3, 0.5, 0.05, 0.15]]))
    out = native(logits, torch.tensor([0.7]), "cpu")
    assert torch.isfinite(out).tolist() == [[True, True, False, False]]
    assert torch.equal(out[0, :2], logits[0, :2])


def test_a_plan_that_is_not_yaml_names_its_line(repo: Repo) -> None:
    repo.write("plan.yaml", "kernels:\n  stock: [\n")
    run = repo.tools("numerics", "topp-count", str(repo.path / "plan.yaml"))
    assert run.exit_code == 2, run.stdout
    assert run.stderr.startswith("error: plan.yaml:3: invalid YAML")
