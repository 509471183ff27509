"""The files the package ships in ``tools/data/`` (schemas, defaults, the starter config).

They are read as the plain files pip installs beside the modules: every command with a
cached config still fingerprints the schema and the defaults, and reading them through
``importlib.resources`` cost it about 5 ms more (its import and its readers).
"""

from __future__ import annotations

from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data"


def data_text(name: str) -> str:
    """The text of ``tools/data/<name>`` (UTF-8)."""
    return (_DATA / name).read_text(encoding="utf-8")
