"""Fixtures for the model-layer tests: the embedded model's file, and a scripted fake HTTP
server used ONLY to inject faults (429s, 5xx, hangs, dropped connections) that a real
server cannot be made to produce on demand. Everything that checks real answers talks to
llama.cpp, in process or through its OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fault_server import FakeServer


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The SmolLM2 GGUF file; the tests that run the model skip without the extra."""
    import importlib.util

    from convtui.core.models.llama_local import smollm2_path
    from convtui.core.models.types import ModelError

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip('llama-cpp-python not installed (pip install -e ".[local]")')
    try:
        return smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.start()
    yield server
    server.stop()
