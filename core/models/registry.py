"""From a spec string to a backend (docs/design.md#models).

Accepted specs:

- ``local:smollm2``: the embedded SmolLM2-135M-Instruct, in process (extra ``local``);
  ``local:/path/to/model.gguf`` for any other GGUF file.
- ``http://host:port/v1`` (or https): any OpenAI-compatible server (``vllm serve``,
  ``python -m llama_cpp.server``, Ollama). ``model_name`` (``--model-name``) picks the
  served model; without it the first model the server lists at ``/v1/models`` is used,
  found by ``check()`` or by the first call. A URL with no path gets ``/v1`` appended. An
  API key, if the server wants one, comes from ``CONVTUI_API_KEY`` (never from
  ``OPENAI_API_KEY``, so a real OpenAI key is not sent to some other server).
- ``http://a:8000/v1,http://b:8000/v1``: replicas of one model, one backend routing each
  call to the least loaded and failing over between them (core/models/replicas.py); every
  one must serve the same model. ``concurrency`` bounds each of them.
- ``openai:<model>``: OpenAI, key from ``OPENAI_API_KEY`` (``OPENAI_BASE_URL`` honoured).
- ``azure:<deployment>``: Azure OpenAI, from ``AZURE_OPENAI_API_KEY``,
  ``AZURE_OPENAI_ENDPOINT`` and ``OPENAI_API_VERSION``.
- ``vllm:<hf-model>``: vLLM's in-process engine on a GPU (extra ``vllm``).
- ``mock:/path/to/script.jsonl``: no model; scripted replies, one JSON row a line, for tests
  that must not depend on what a model writes (core/models/mock.py).

Opening a backend does no network or model work; missing credentials are reported here,
everything else by ``await backend.check()``."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

from convtui.core.models.base import ModelBackend, credential_id
from convtui.core.models.limiter import HOSTED_API_LIMIT, LOCAL_SERVER_LIMIT
from convtui.core.models.retry import Retrier, RetryPolicy
from convtui.core.models.types import ModelError

if TYPE_CHECKING:
    from convtui.core.models.openai_compat import OpenAICompatBackend

ACCEPTED_SPECS = (
    "local:smollm2, local:/path/to/model.gguf, http://host:port/v1 (with --model-name), "
    "http://a/v1,http://b/v1 (replicas of one model), "
    "openai:<model>, azure:<deployment>, vllm:<hf-model>, mock:/path/to/script.jsonl"
)
SERVER_KEY_ENV = "CONVTUI_API_KEY"
# What vLLM's and llama.cpp's servers accept when started without --api-key.
NO_KEY = "EMPTY"
DEFAULT_CALL_TIMEOUT_S = 1800.0


def _is_local_host(host: str) -> bool:
    """Loopback and private addresses: a server of our own, which batches, so it gets the
    larger default bound."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def _server_url(spec: str) -> str:
    parts = urlsplit(spec)
    if not parts.hostname:
        raise ModelError(f"model spec {spec!r} has no host; use e.g. http://127.0.0.1:8000/v1")
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def open_backend(
    spec: str,
    *,
    model_name: str | None = None,
    concurrency: int | None = None,
    timeout_s: float = 300,
    max_retries: int = 8,
    call_timeout_s: float | None = DEFAULT_CALL_TIMEOUT_S,
    n_ctx: int | None = None,
    retrier: Retrier | None = None,
    chat_template: Path | None = None,
) -> ModelBackend:
    """The backend for ``spec`` (see the module docstring for the forms).

    ``timeout_s`` bounds one attempt, ``call_timeout_s`` one call with all its retries and
    waits; ``concurrency`` bounds calls in flight per endpoint (default 8 for hosted APIs,
    32 for servers on loopback or private addresses; in-process models run one call at a
    time). ``n_ctx`` is the context size of ``local:`` models. ``retrier`` replaces the
    retry policy built from the other arguments (tests inject clocks through it). Raises
    ModelError(kind="fatal") for an unknown spec or missing credentials. ``chat_template``
    (``--chat-template``) says where an ``http://`` server's model keeps its chat template
    (other backends know their own, or use none)."""
    spec = spec.strip()
    if concurrency is not None and concurrency < 1:
        raise ModelError(f"concurrency must be at least 1, got {concurrency}")
    if model_name and not spec.startswith(("http://", "https://")):
        raise ModelError(
            f"--model-name applies only to http:// specs; for {spec!r} the model is in the spec"
        )
    if chat_template is not None and not spec.startswith(("http://", "https://")):
        raise ModelError(
            f"--chat-template applies only to http:// specs; {spec!r} knows its own template"
        )
    if retrier is None:
        retrier = Retrier(
            RetryPolicy(
                max_retries=max_retries,
                attempt_timeout_s=timeout_s,
                call_timeout_s=call_timeout_s,
            )
        )
    kind, _, rest = spec.partition(":")
    if spec.startswith(("http://", "https://")) and "," in spec:
        return _open_replicas(spec, model_name, concurrency, retrier, chat_template)
    if spec.startswith(("http://", "https://")):
        return _open_server(spec, model_name, concurrency, retrier, chat_template)
    if kind == "local" and rest:
        return _open_local(spec, rest, n_ctx, retrier)
    if kind == "openai" and rest:
        return _open_openai(spec, rest, concurrency, retrier)
    if kind == "azure" and rest:
        return _open_azure(spec, rest, concurrency, retrier)
    if kind == "vllm" and rest:
        from convtui.core.models.vllm_engine import VllmEngineBackend

        return VllmEngineBackend(spec=spec, model=rest)
    if kind == "mock" and rest:
        from convtui.core.models.mock import MockBackend

        return MockBackend(spec=spec, path=Path(rest).expanduser())
    raise ModelError(f"unknown model spec {spec!r}; use one of: {ACCEPTED_SPECS}")


def _open_local(spec: str, rest: str, n_ctx: int | None, retrier: Retrier) -> ModelBackend:
    from convtui.core.models.llama_local import DEFAULT_N_CTX, LlamaLocalBackend

    path = None if rest == "smollm2" else Path(rest).expanduser()
    model = "smollm2" if path is None else path.stem
    return LlamaLocalBackend(
        spec=spec, path=path, model=model, n_ctx=n_ctx or DEFAULT_N_CTX, retrier=retrier
    )


def _open_server(
    spec: str,
    model_name: str | None,
    concurrency: int | None,
    retrier: Retrier,
    chat_template: Path | None,
) -> OpenAICompatBackend:
    from convtui.core.models.openai_compat import OpenAICompatBackend, make_client

    url = _server_url(spec)
    api_key = os.environ.get(SERVER_KEY_ENV) or NO_KEY
    local = _is_local_host(urlsplit(url).hostname or "")
    credential = credential_id(api_key if api_key != NO_KEY else None)
    client = make_client(
        "server", base_url=url, api_key=api_key, attempt_timeout_s=retrier.policy.attempt_timeout_s
    )
    return OpenAICompatBackend(
        spec=spec,
        model=model_name or "",
        flavour="server",
        client=client,
        credential=credential,
        default_limit=LOCAL_SERVER_LIMIT if local else HOSTED_API_LIMIT,
        concurrency=concurrency,
        retrier=retrier,
        chat_template=chat_template,
    )


def _open_replicas(
    spec: str,
    model_name: str | None,
    concurrency: int | None,
    retrier: Retrier,
    chat_template: Path | None,
) -> ModelBackend:
    """A comma-separated list of server URLs: one backend over all of them."""
    from convtui.core.models.replicas import ReplicaBackend

    urls: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part.startswith(("http://", "https://")):
            raise ModelError(
                f"model spec {spec!r}: replicas are http(s):// URLs of servers of one model, "
                f"and {part!r} is not; use e.g. http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1"
            )
        url = _server_url(part)
        if url in urls:
            raise ModelError(f"model spec {spec!r} lists {url} twice")
        urls.append(url)
    servers = [_open_server(url, model_name, concurrency, retrier, chat_template) for url in urls]
    return ReplicaBackend(spec=spec, replicas=servers, retrier=retrier)


def _open_openai(spec: str, model: str, concurrency: int | None, retrier: Retrier) -> ModelBackend:
    api_key = os.environ.get("OPENAI_API_KEY")
    if not api_key:
        raise ModelError(
            f"{spec} needs OPENAI_API_KEY; export it, or pick another model "
            "(e.g. --model local:smollm2)"
        )
    base_url = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return _open_hosted(spec, model, "openai", base_url, api_key, concurrency, retrier)


def _open_azure(
    spec: str, deployment: str, concurrency: int | None, retrier: Retrier
) -> ModelBackend:
    needed = ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION")
    missing = [name for name in needed if not os.environ.get(name)]
    if missing:
        raise ModelError(f"{spec} needs {', '.join(missing)}; export them first")
    return _open_hosted(
        spec,
        deployment,
        "azure",
        os.environ["AZURE_OPENAI_ENDPOINT"],
        os.environ["AZURE_OPENAI_API_KEY"],
        concurrency,
        retrier,
        azure_api_version=os.environ["OPENAI_API_VERSION"],
    )


def _open_hosted(
    spec: str,
    model: str,
    flavour: Literal["openai", "azure"],
    base_url: str,
    api_key: str,
    concurrency: int | None,
    retrier: Retrier,
    *,
    azure_api_version: str | None = None,
) -> ModelBackend:
    """A hosted chat API (OpenAI, Azure) under its key, with the hosted default bound."""
    from convtui.core.models.openai_compat import OpenAICompatBackend, make_client

    client = make_client(
        flavour,
        base_url=base_url,
        api_key=api_key,
        attempt_timeout_s=retrier.policy.attempt_timeout_s,
        azure_api_version=azure_api_version,
    )
    return OpenAICompatBackend(
        spec=spec,
        model=model,
        flavour=flavour,
        client=client,
        credential=credential_id(api_key),
        default_limit=HOSTED_API_LIMIT,
        concurrency=concurrency,
        retrier=retrier,
    )
