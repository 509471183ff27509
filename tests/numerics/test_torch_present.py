"""The numerics tests run wherever torch is installed, and CI requires it.

CPU independence: no numerics are computed here."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.numerics.conftest import NEEDS_TORCH


def test_torch_is_installed_for_the_numerics_tests() -> None:
    if importlib.util.find_spec("torch") is not None:
        return
    message = (
        f"torch (the numerics extra) is not installed: {', '.join(NEEDS_TORCH)} were not "
        "collected (pip install torch==2.13.0, then the numerics extra, to run them)"
    )
    if os.environ.get("TOOLS_REQUIRE_NUMERICS"):
        pytest.fail(message)
    pytest.skip(message)
