"""Start llama.cpp's real OpenAI-compatible server (``python -m llama_cpp.server``) on a free
loopback port, for tests that need a real server; shared by the model and bench tests."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Servers kept up for the whole test session on purpose (a session fixture's): the checks that
# nothing a test started is left running (test_hostile.py) leave these out.
SESSION_SERVERS: set[int] = set()


@dataclass(frozen=True)
class LlamaServer:
    """A running server: its ``/v1`` URL and its process, for tests that kill it."""

    url: str
    process: subprocess.Popen[bytes]

    def kill(self) -> None:
        """SIGKILL: the server dies with its connections open, as a crashed replica does."""
        self.process.kill()
        self.process.wait(10)


@contextmanager
def running_llama_server(gguf: Path, n_ctx: int, log_dir: Path) -> Iterator[str]:
    """The server's ``/v1`` URL while the block runs; skips without the server extra."""
    with llama_server(gguf, n_ctx, log_dir) as server:
        yield server.url


@contextmanager
def llama_server(gguf: Path, n_ctx: int, log_dir: Path) -> Iterator[LlamaServer]:
    """The server while the block runs (killed after it, if it still runs); skips without
    the server extra."""
    for module in ("uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f'llama.cpp server needs {module}: pip install -e ".[server]"')
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--verbose", "False",
        # By default the server abandons a running request when the next one arrives, which
        # turns concurrent benchmark calls into empty answers.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    # A file, not a pipe: llama.cpp logs a lot, and a full pipe would stall the server.
    log_path = log_dir / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    try:
        while True:
            if process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"llama.cpp server exited with {process.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                pytest.fail(f"llama.cpp server did not answer /v1/models within 90 s:\n{tail}")
            time.sleep(0.25)
        yield LlamaServer(url, process)
    finally:
        process.kill()
        process.wait(10)
