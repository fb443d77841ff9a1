"""The committed store fixtures (tests/fixtures/store-<migration>.sqlite) and the script that
made them, whose values say what each fixture holds."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture_script() -> ModuleType:
    """tests/fixtures/make_store_fixture.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location(
        "make_store_fixture", FIXTURES / "make_store_fixture.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
