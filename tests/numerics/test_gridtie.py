"""``tools numerics grid-tie``: regression cases built as explicitly synthetic top-20 evidence
from bf16 logits on a grid, the one-step readings, and every STOP reason.

CPU independence: the synthetic evidence comes from torch's fp32 log-softmax, whose normaliser
may differ in the last ulp between vector widths; but each logprob is one fp32 rounding of
``logit - c`` for one ``c`` per prompt, and the gate's tolerance ``ulp32(a) + ulp32(b)``
absorbs exactly that, so every verdict asserted here is the same on every CPU. The other cases
are written as literal numbers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Repo
from tools import ledger
from tools.numerics.gridtie import synthetic_prompt, tolerance, ulp32
from tools.numerics.rules import STOP_REASONS

FILLER = [40.0] * 12  # more vocabulary, far below the top-20


def grid(top: float, step: float, n: int) -> list[float]:
    return [top - i * step for i in range(n)]


def evidence(prompts: list[dict[str, Any]], *, top_n: int = 20, max_div: int = 3) -> dict:
    return {
        "schema": "tools.grid-tie/1",
        "top_n": top_n,
        "max_divergent": max_div,
        "prompts": prompts,
        "note": "synthetic regression evidence",
    }


def judge(repo: Repo, data: dict | str, *extra: str) -> tuple[int, dict]:
    text = data if isinstance(data, str) else json.dumps(data)
    repo.write("evidence.json", text)
    run = repo.tools(
        "--format", "json", "numerics", "grid-tie", str(repo.path / "evidence.json"), *extra
    )
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def reasons(gate: dict) -> set[str]:
    return {f["rule"] for f in gate["findings"] if f["severity"] == "error"}


def prompt_with(values: list[float], exp: int = 0, ref: int = 1, **over: Any) -> dict:
    """A divergent prompt whose top lists ``values`` as the logprobs of ids 0, 1, 2, ..."""
    p = {
        "prompt": over.pop("prompt", 0),
        "diverged": True,
        "experiment_token": exp,
        "reference_token": ref,
        "experiment_tokens": 256,
        "reference_tokens": 256,
        "top": [{"id": i, "logprob": v} for i, v in enumerate(values)],
    }
    p.update(over)
    return p


# -- the historical margins, from bf16 logits on a grid ------------------------------------------
@pytest.mark.parametrize(
    "logits,step,steps",
    [
        # margin 0.0 nats: experiment and reference tied at the top, magnitudes in [64, 128)
        ([100.0, 100.0, *grid(99.5, 0.5, 18)], 0.5, 0.0),
        # margin 0.5 nats: one bf16 step in [64, 128)
        (grid(100.0, 0.5, 20), 0.5, 1.0),
        # margin 1.0 nats: one bf16 step in [128, 256)
        (grid(200.0, 1.0, 20), 1.0, 1.0),
        # crossing a binade: 128 on the 1.0 grid, the rest below it on the 0.5 grid
        ([128.0, *grid(127.5, 0.5, 19)], 0.5, 1.0),
    ],
)
def test_historical_margins_pass(
    repo: Repo, logits: list[float], step: float, steps: float
) -> None:
    prompt = synthetic_prompt(0, logits + FILLER, 0, 1)
    assert prompt["note"].startswith("synthetic")
    code, gate = judge(repo, evidence([prompt]))
    assert code == 0, gate["findings"]
    [derived] = gate["stats"]["prompts"]
    assert derived["verdict"] == "PASS" and derived["step"] == step
    assert derived["reference_gap_steps"] == pytest.approx(steps, abs=1e-5)
    assert derived["experiment_to_top_gap"] == 0.0
    assert derived["worst_residual_over_tolerance"] <= 1.0


def test_a_one_nat_margin_across_the_binade_is_two_steps(repo: Repo) -> None:
    # 129 and 128 are one step apart in [128, 256), but the top-20 reaches into [64, 128)
    # where the grid is 0.5: the measured step is 0.5 and the 1.0 gap is two steps.
    prompt = synthetic_prompt(0, [129.0, 128.0, *grid(127.5, 0.5, 18)] + FILLER, 0, 1)
    code, gate = judge(repo, evidence([prompt]))
    assert code == 1
    assert reasons(gate) == {"gap-over-step"}
    assert gate["stats"]["prompts"][0]["reference_gap_steps"] == pytest.approx(2.0, abs=1e-5)


# -- the one-step readings ----------------------------------------------------------------------
BELOW = grid(-1.75, 0.5, 18)


def test_a_gap_read_as_0_5000000596_is_one_step(repo: Repo) -> None:
    ref = -(0.75 + 2.0**-24)  # an fp32 value: the gap to -0.25 reads 0.5000000596
    assert -0.25 - ref == pytest.approx(0.5000000596, abs=1e-10)
    code, gate = judge(repo, evidence([prompt_with([-0.25, ref, *BELOW])]))
    assert code == 0, gate["findings"]
    d = gate["stats"]["prompts"][0]
    assert d["step"] == 0.5 and d["reference_gap"] == -0.25 - ref
    assert d["reference_gap_steps"] > 1.0  # over one step by less than the tolerance


def test_a_gap_of_0_52_is_rejected(repo: Repo) -> None:
    code, gate = judge(repo, evidence([prompt_with([-0.25, -0.77, *BELOW])]))
    assert code == 1
    assert {"gap-over-step", "off-grid"} <= reasons(gate)
    assert gate["stats"]["verdict"] == "STOP"


def test_a_step_read_as_0_4999999_across_a_binade_edge_is_the_step_0_5(repo: Repo) -> None:
    ref = -1.25 + 2.0**-23  # in [1, 2): the gap to -0.75 reads 0.49999988
    values = [-0.75, ref, *grid(-1.75, 0.5, 18)]
    assert abs((-0.75 - ref) - 0.5) <= tolerance(-0.75, ref)
    code, gate = judge(repo, evidence([prompt_with(values)]))
    assert code == 0, gate["findings"]
    d = gate["stats"]["prompts"][0]
    assert d["step"] == 0.5 and d["measured_step"] < 0.5


def test_ulp32() -> None:
    assert ulp32(-0.75) == 2.0**-24 and ulp32(1.25) == 2.0**-23 and ulp32(100.0) == 2.0**-17


# -- every STOP reason --------------------------------------------------------------------------
GOOD = grid(-0.5, 0.5, 20)


@pytest.mark.parametrize(
    "prompt,rule",
    [
        (prompt_with(GOOD[:19]), "too-few-values"),
        (prompt_with([*GOOD[:19], -9999.0]), "clamped"),
        (prompt_with(GOOD, ref=77), "token-absent"),
        (prompt_with(GOOD, exp=1, ref=2), "not-top"),
        (prompt_with([-3.0] * 20), "no-grid"),
        (prompt_with(grid(-0.3, 0.3, 20)), "step-not-power-of-two"),
        (prompt_with([*GOOD[:19], GOOD[19] - 0.1]), "off-grid"),
        (prompt_with(GOOD, ref=2), "gap-over-step"),
        (prompt_with(GOOD, reference_tokens=255), "length-mismatch"),
    ],
)
def test_each_stop_reason_fires(repo: Repo, prompt: dict, rule: str) -> None:
    code, gate = judge(repo, evidence([prompt]))
    assert code == 1
    assert rule in reasons(gate)
    assert gate["stats"]["reasons"] == sorted(reasons(gate), key=list(STOP_REASONS).index)


def test_the_clean_twin_passes_with_no_stop(repo: Repo) -> None:
    quiet = {"prompt": 1, "diverged": False, "experiment_tokens": 9, "reference_tokens": 9}
    code, gate = judge(repo, evidence([prompt_with(GOOD), quiet]))
    assert code == 0 and reasons(gate) == set()
    assert gate["stats"]["divergent"] == 1


def test_a_nan_token_in_the_json_is_evidence_not_malformation(repo: Repo) -> None:
    text = json.dumps(evidence([prompt_with([*GOOD[:19], float("nan")])]))
    assert "NaN" in text
    code, gate = judge(repo, text)
    assert code == 1 and "nonfinite" in reasons(gate)
    assert json.loads(json.dumps(gate))  # the report stays strict JSON


def test_too_many_divergent(repo: Repo) -> None:
    prompts = [prompt_with(GOOD, prompt=i) for i in range(4)]
    code, gate = judge(repo, evidence(prompts, max_div=3))
    assert code == 1 and reasons(gate) == {"too-many-divergent"}
    code, gate = judge(repo, evidence(prompts, max_div=4))
    assert code == 0


def test_a_length_mismatch_on_a_prompt_that_did_not_diverge_still_stops(repo: Repo) -> None:
    quiet = {"prompt": 1, "diverged": False, "experiment_tokens": 9, "reference_tokens": 8}
    code, gate = judge(repo, evidence([quiet]))
    assert code == 1 and reasons(gate) == {"length-mismatch"}


# -- malformed evidence: exit 2 ---------------------------------------------------------------
@pytest.mark.parametrize(
    "text,needle",
    [
        ("{not json", "not JSON"),
        (json.dumps({**evidence([]), "schema": "tools.grid-tie/2"}), "unknown schema"),
        (json.dumps({**evidence([]), "top_n": "20"}), "top_n"),
        (json.dumps({k: v for k, v in evidence([]).items() if k != "prompts"}), "prompts"),
        (
            json.dumps(evidence([{k: v for k, v in prompt_with(GOOD).items() if k != "top"}])),
            "prompts[0]",
        ),
        (json.dumps(evidence([prompt_with(GOOD, diverged="yes")])), "prompts[0].diverged"),
        ('{"schema": "tools.grid-tie/1", "schema": "x"}', "duplicate key"),
    ],
)
def test_malformed_evidence_is_exit_2(repo: Repo, text: str, needle: str) -> None:
    repo.write("evidence.json", text)
    run = repo.tools("numerics", "grid-tie", str(repo.path / "evidence.json"))
    assert run.exit_code == 2
    assert run.stderr.startswith("error: evidence.json") and needle in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_a_missing_file_is_exit_2(repo: Repo) -> None:
    run = repo.tools("numerics", "grid-tie", str(repo.path / "nope.json"))
    assert run.exit_code == 2 and "no such file" in run.stderr


# -- the ledger record ----------------------------------------------------------------------------
def test_a_grid_tie_record_is_appended_unless_told_not_to(repo: Repo) -> None:
    path = repo.path / ".agents/ledger.jsonl"
    judge(repo, evidence([prompt_with(GOOD)]), "--no-record")
    assert not path.exists()
    code, gate = judge(repo, evidence([prompt_with(GOOD, ref=2)]))
    assert code == 1
    [(_, record)] = list(ledger.read_records(path))
    assert record["kind"] == "grid-tie" and record["verdict"] == "STOP"
    assert record["reasons"] == ["gap-over-step"]
    assert record["evidence"] == "evidence.json" and len(record["evidence_sha256"]) == 64
    assert gate["stats"]["ledger_record"]["id"] == record["id"]
    assert ledger.verify_record(record) is None


def test_text_output_lists_the_derived_values(repo: Repo) -> None:
    path = repo.write("evidence.json", json.dumps(evidence([prompt_with(GOOD)])))
    run = repo.tools("numerics", "grid-tie", str(path), "--no-record")
    assert run.exit_code == 0
    assert "info[grid-tie-derived] evidence.json: prompt 0: PASS" in run.stdout
    assert "step 0.5 (measured 0.5), reference gap 1.0 steps" in run.stdout
