"""Where the benchmark data lives, and the skips for a machine without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# $CONVTUI_DATA_DIR (CI sets ../shared/data, relative to the repository root), else the
# shared folder beside the checkout.
DATA = Path(os.environ.get("CONVTUI_DATA_DIR") or ROOT.parent / "shared" / "data").resolve()
BIGCODEBENCH = DATA / "BigCodeBench-v0.1.0.jsonl.gz"

needs_bigcodebench = pytest.mark.skipif(
    not BIGCODEBENCH.exists(), reason=f"no BigCodeBench data in {DATA}"
)


def data_file(name: str) -> Path:
    """``DATA / name``, or skip the test where it is missing."""
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} not found: set CONVTUI_DATA_DIR to the folder holding it")
    return path
