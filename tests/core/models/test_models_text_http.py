"""Raw-text calls (``complete_text``) over HTTP, against the scripted fake server of
fault_server.py: which endpoint and body each flavour sends, and retries, timeouts, dropped
connections and context-length errors. The fake server is used for fault injection and to
see the request a client sends (a hosted API is not reachable from the tests); real answers
to text calls come from llama.cpp in test_models_text_real.py."""

from __future__ import annotations

import asyncio

import pytest
from support.fault_server import (
    FakeServer,
    RecordedSleeps,
    Request,
    Writer,
    drop_mid_answer,
    hang,
    logged_call,
    server_backend,
    status,
    text_ok,
)

from convtui.core.models import (
    ChatMessage,
    GenerationParams,
    ModelError,
    Retrier,
    RetryPolicy,
    open_backend,
)
from convtui.core.models.base import ModelBackend

PROMPT = "Question: add one to x.\n\n---\n\nAnswer:"
PARAMS = GenerationParams(max_tokens=2048, stop=("\n\n---\n\n",))


async def text_logged(backend: ModelBackend, **kwargs: object):
    return await logged_call(backend, PROMPT, PARAMS, **kwargs)


def completions_requests(server: FakeServer) -> list[Request]:
    return [r for r in server.requests if r.path.endswith("/v1/completions")]


# --- what each flavour sends --------------------------------------------------------------


def test_a_server_gets_the_raw_prompt_on_the_completions_endpoint(fake_server):
    """The fake server records the request (a real server's answer is tested elsewhere)."""
    fake_server.then(text_ok("x + 1"))
    completion, attempts = asyncio.run(text_logged(server_backend(fake_server)))
    assert completion.text == "x + 1" and completion.finish_reason == "stop"
    assert (completion.input_tokens, completion.output_tokens) == (11, 4)
    assert completion.resolved_model == "fake-model-2024" and completion.model == "fake-model"
    assert [a.status for a in attempts] == ["ok"]
    [request] = fake_server.requests
    assert request.path == "/v1/completions"
    assert request.body == {
        "model": "fake-model",
        "prompt": PROMPT,
        "temperature": 0.0,
        "max_tokens": 2048,
        "stop": ["\n\n---\n\n"],
        "seed": 0,
    }


def test_a_streamed_text_call_grows_to_its_answer(fake_server):
    fake_server.then(text_ok("def f(): pass"))
    seen: list[str] = []
    completion, _ = asyncio.run(text_logged(server_backend(fake_server), on_text=seen.append))
    assert seen == ["def f(", "def f(): pass"] and completion.text == "def f(): pass"
    assert completion.finish_reason == "length"
    assert (completion.input_tokens, completion.output_tokens) == (11, 4)
    [request] = fake_server.requests
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}


def test_openai_gets_the_raw_prompt_as_one_user_chat_message(fake_server, monkeypatch):
    """OpenAI serves chat models only: the documented rule sends the prompt as the one user
    message. The fake server stands in for api.openai.com to record the request."""
    from support.fault_server import ok

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.url)
    fake_server.then(ok("chat answer"))
    backend = open_backend("openai:gpt-4o-mini", retrier=Retrier(RetryPolicy()))
    completion, _ = asyncio.run(text_logged(backend))
    assert completion.text == "chat answer"
    [request] = fake_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"] == [{"role": "user", "content": PROMPT}]
    assert request.body["stop"] == ["\n\n---\n\n"]
    assert request.body["max_completion_tokens"] == 2048 and "prompt" not in request.body


def test_azure_gets_the_raw_prompt_as_one_user_chat_message(fake_server, monkeypatch):
    """As for OpenAI; the fake server stands in for the Azure endpoint."""
    from support.fault_server import ok

    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-test")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", fake_server.url.removesuffix("/v1"))
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")
    fake_server.then(ok("chat answer"))
    completion, _ = asyncio.run(text_logged(open_backend("azure:my-deployment")))
    assert completion.text == "chat answer"
    [request] = fake_server.requests
    assert request.path.startswith("/openai/deployments/my-deployment/chat/completions")
    assert request.body["messages"] == [{"role": "user", "content": PROMPT}]


# --- faults -------------------------------------------------------------------------------


def test_a_429_on_a_text_call_waits_as_told_then_succeeds(fake_server):
    """Fault injection: a 429 with Retry-After, then a normal answer."""
    fake_server.then(status(429, "slow down", headers={"Retry-After": "7"}), text_ok("fine"))
    sleeps = RecordedSleeps()
    completion, attempts = asyncio.run(text_logged(server_backend(fake_server, sleeps)))
    assert completion.text == "fine" and completion.attempts == 2
    assert [a.status for a in attempts] == ["rate_limit", "ok"]
    assert sleeps.delays == [7]
    assert len(completions_requests(fake_server)) == 2


def test_a_hanging_text_call_times_out_each_attempt_then_gives_up(fake_server):
    """Fault injection: a server that accepts requests and never answers."""
    fake_server.default = hang()
    backend = server_backend(fake_server, max_retries=1, attempt_timeout_s=0.3)
    with pytest.raises(ModelError) as caught:
        asyncio.run(text_logged(backend))
    assert caught.value.kind == "timeout" and caught.value.attempts == 2
    assert len(completions_requests(fake_server)) == 2


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
def test_a_text_call_dropped_mid_answer_is_retried(fake_server, streaming):
    """Fault injection: the server hangs up halfway through its answer."""
    fake_server.then(drop_mid_answer(), text_ok("whole answer"))
    seen: list[str] = []
    completion, attempts = asyncio.run(
        text_logged(server_backend(fake_server), on_text=seen.append if streaming else None)
    )
    assert completion.text == "whole answer"
    assert [a.status for a in attempts] == ["transient", "ok"]
    if streaming:
        assert seen[-1] == "whole answer"


@pytest.mark.parametrize(
    "message",
    [
        # vLLM's server
        "This model's maximum context length is 2048 tokens. However, you requested 2100 "
        "tokens (52 in the messages, 2048 in the completion).",
        # llama-cpp-python's server
        "This model's maximum context length is 2048 tokens, however you requested 3065 tokens",
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
    ],
)
def test_a_400_about_context_length_is_a_context_length_error_not_retried(fake_server, message):
    """Fault injection: a 400 saying the prompt does not fit."""
    fake_server.then(status(400, message))
    sleeps = RecordedSleeps()
    with pytest.raises(ModelError) as caught:
        asyncio.run(text_logged(server_backend(fake_server, sleeps)))
    assert caught.value.kind == "context_length" and caught.value.attempts == 1
    assert len(completions_requests(fake_server)) == 1 and sleeps.delays == []


def test_a_server_without_stream_options_is_asked_again_without_them(fake_server):
    """Fault injection: a server that rejects the stream_options field."""
    rejection = status(400, "Unrecognized request argument supplied: stream_options")
    fake_server.then(rejection, text_ok("hello"))
    completion, attempts = asyncio.run(
        text_logged(server_backend(fake_server), on_text=lambda text: None)
    )
    assert completion.text == "hello" and [a.status for a in attempts] == ["ok"]
    first, second = completions_requests(fake_server)
    assert "stream_options" in first.body and "stream_options" not in second.body


def test_text_and_chat_calls_share_the_endpoint_s_concurrency_bound(fake_server):
    """Fault injection: a slow server, to hold calls in flight and count them there."""
    from support.fault_server import ok

    chat, text = ok("slow chat", delay_s=0.2), text_ok("slow text", delay_s=0.2)

    async def by_path(server: FakeServer, request: Request, writer: Writer) -> None:
        await (chat if request.path.endswith("/chat/completions") else text)(
            server, request, writer
        )

    fake_server.default = by_path
    backend = server_backend(fake_server, concurrency=2)

    async def flood():
        try:
            return await asyncio.gather(
                backend.complete_many([[ChatMessage("user", "hi")]] * 3, PARAMS),
                backend.complete_text_many([PROMPT] * 3, PARAMS),
            )
        finally:
            await backend.aclose()

    chats, texts = asyncio.run(flood())
    assert [c.text for c in chats if not isinstance(c, ModelError)] == ["slow chat"] * 3
    assert [c.text for c in texts if not isinstance(c, ModelError)] == ["slow text"] * 3
    assert fake_server.max_in_flight == 2
