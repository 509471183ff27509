"""The JSON Schemas of the numerics inputs: valid schemas, in step with the code, and satisfied
by the files this repository ships (the real files, read in place).

CPU independence: nothing here computes with floats; schemas and parsing only."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tools.errors import UsageError
from tools.numerics import goldens, gridtie, topp
from tools.numerics.tensors import DTYPES
from tools.schema import load_schema, validate_against
from tools.yaml_files import load_yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ("golden-manifest.schema.json", "topp-plan.schema.json", "grid-tie.schema.json")
MANIFESTS = sorted((ROOT / "goldens").glob("*/manifest.yaml"))


@pytest.mark.parametrize("name", SCHEMAS)
def test_each_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_the_modules_name_their_schemas() -> None:
    assert (goldens.SCHEMA, topp.SCHEMA, gridtie.SCHEMA_FILE) == SCHEMAS


def test_the_manifest_schema_lists_exactly_the_known_dtypes() -> None:
    dtype = load_schema(goldens.SCHEMA)["$defs"]["output"]["properties"]["dtype"]
    assert [d for d in dtype["enum"] if d is not None] == list(DTYPES)


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.parent.name)
def test_every_shipped_manifest_satisfies_its_schema(path: Path) -> None:
    data = load_yaml(path.read_text(encoding="utf-8"))
    validate_against(data, goldens.SCHEMA, str(path), exact_integers=True)
    case = goldens.load_case(path.parent, ROOT)
    assert case.inputs and case.outputs


def test_the_shipped_goldens_are_all_covered() -> None:
    assert len(MANIFESTS) >= 7


def test_the_shipped_topp_plan_satisfies_its_schema() -> None:
    path = ROOT / "numerics" / "topp-plan.yaml"
    data = load_yaml(path.read_text(encoding="utf-8"))
    validate_against(data, topp.SCHEMA, str(path), exact_integers=True)
    plan = topp.load_plan(path, "numerics/topp-plan.yaml")
    assert len(plan.cases) == len(data["cases"])


def _evidence(logprobs: list[float]) -> dict:
    top = [{"id": i, "logprob": v} for i, v in enumerate(logprobs)]
    prompt = {
        "prompt": 0,
        "diverged": True,
        "experiment_token": 0,
        "reference_token": 1,
        "experiment_tokens": 4,
        "reference_tokens": 4,
        "top": top,
    }
    return {"schema": gridtie.SCHEMA, "top_n": 3, "max_divergent": 1, "prompts": [prompt]}


def test_non_finite_logprobs_satisfy_the_grid_tie_schema() -> None:
    text = json.dumps(_evidence([float("nan"), float("inf"), float("-inf")]))
    assert "NaN" in text and "-Infinity" in text
    evidence = gridtie.parse_evidence(text, "e.json")
    assert [v for _, v in evidence.prompts[0].top or []][1:] == [float("inf"), float("-inf")]


def test_an_integer_written_as_a_float_is_refused_in_evidence() -> None:
    data = _evidence([-0.5, -1.0, -1.5])
    data["prompts"][0]["experiment_token"] = 0.0
    with pytest.raises(UsageError, match=r"e\.json: prompts\[0\]\.experiment_token"):
        gridtie.parse_evidence(json.dumps(data), "e.json")
