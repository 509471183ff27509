"""``tools evidence matrix``: the records a range adds, as a GitHub Actions strategy.matrix."""

from __future__ import annotations

import json
from dataclasses import dataclass

from tools.report import RenderOptions, register


@dataclass(frozen=True)
class RecordsMatrix:
    """``{"record": [id…]}``: one CI job per record to replay (and sign)."""

    records: tuple[str, ...]


def _matrix_json(result: RecordsMatrix, options: RenderOptions) -> str:
    return json.dumps({"record": list(result.records)}) + "\n"


register(RecordsMatrix, "json", _matrix_json)
