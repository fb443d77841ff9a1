"""The embedded model, in process: real llama.cpp runs of SmolLM2-135M-Instruct."""

from __future__ import annotations

import asyncio

import pytest
from support.streaming import assert_streamed

from convtui.core.models import Attempt, ChatMessage, GenerationParams, ModelError, open_backend
from convtui.core.models.llama_local import LlamaLocalBackend, load_model

pytestmark = pytest.mark.slow

PROMPT = [
    ChatMessage("system", "You are a helpful coding assistant."),
    ChatMessage("user", "Write a Python function that returns the sum of a list of numbers."),
]
PARAMS = GenerationParams(temperature=0.0, max_tokens=96, seed=0)


@pytest.fixture(scope="module")
def local(smollm2_gguf):
    backend = open_backend("local:smollm2")
    asyncio.run(backend.check())
    return backend


def test_completes_a_chat_with_usage_and_latency(local):
    attempts: list[Attempt] = []
    completion = asyncio.run(local.complete(PROMPT, PARAMS, on_attempt=attempts.append))
    assert completion.text.strip()  # what it writes is its own; that it answers is not
    assert completion.finish_reason in ("stop", "length")
    assert completion.input_tokens > 10
    assert 0 < completion.output_tokens <= PARAMS.max_tokens
    assert completion.latency_s > 0
    assert completion.attempts == 1
    assert completion.model == "smollm2"
    assert [a.status for a in attempts] == ["ok"]


def test_same_prompt_twice_gives_the_same_text(local):
    async def twice():
        return await local.complete(PROMPT, PARAMS), await local.complete(PROMPT, PARAMS)

    first, second = asyncio.run(twice())
    assert first.text == second.text
    assert first.output_tokens == second.output_tokens


def test_streaming_grows_to_the_completion(local):
    seen: list[str] = []
    streamed = asyncio.run(local.complete(PROMPT, PARAMS, on_text=seen.append))
    plain = asyncio.run(local.complete(PROMPT, PARAMS))
    assert len(seen) > 3
    # Token counts come from llama.cpp's usage when plain, from our meter when streamed.
    assert_streamed(seen, streamed, plain)


def test_stop_strings_and_max_tokens(local):
    short = asyncio.run(local.complete(PROMPT, GenerationParams(max_tokens=5)))
    assert short.finish_reason == "length"
    assert short.output_tokens == 5
    stopped = asyncio.run(local.complete(PROMPT, GenerationParams(max_tokens=96, stop=("def",))))
    assert "def" not in stopped.text


def test_concurrent_calls_queue_for_the_one_model(local):
    async def many():
        return await local.complete_many([PROMPT] * 3, GenerationParams(max_tokens=8))

    results = asyncio.run(many())
    assert len({r.text for r in results}) == 1
    assert local.limiter.peak == 1


def test_prompt_longer_than_the_context_is_a_context_length_error(smollm2_gguf):
    small = open_backend("local:smollm2", n_ctx=256)
    long_prompt = [ChatMessage("user", "word " * 400)]
    with pytest.raises(ModelError) as caught:
        asyncio.run(small.complete(long_prompt, PARAMS))
    assert caught.value.kind == "context_length"
    assert caught.value.attempts == 1


def test_a_timed_out_generation_stops_and_frees_the_model(smollm2_gguf):
    from convtui.core.models import Retrier, RetryPolicy

    # This prompt makes SmolLM2 write about 500 tokens (several seconds) before it stops.
    essay = [
        ChatMessage(
            "user",
            "Write a very long, detailed essay about the history of computing, with many sections.",
        )
    ]
    impatient = open_backend(
        "local:smollm2",
        retrier=Retrier(RetryPolicy(max_retries=0, attempt_timeout_s=0.3)),
    )
    assert isinstance(impatient, LlamaLocalBackend)
    attempts: list[Attempt] = []
    with pytest.raises(ModelError) as caught:
        asyncio.run(
            impatient.complete(essay, GenerationParams(max_tokens=1000), on_attempt=attempts.append)
        )
    assert caught.value.kind == "timeout"
    assert [a.status for a in attempts] == ["timeout"]
    # The abandoned generation stops at its next token instead of writing the whole essay:
    # once the model (shared by every backend on the file, one call at a time) is free
    # again, its meter shows how far the abandoned generation got. Compared in tokens with
    # the same request left to finish, not in seconds, so no machine's speed decides it.
    loaded = load_model(impatient.path, impatient.n_ctx, impatient.n_threads)
    assert loaded.lock.acquire(timeout=120), "the abandoned generation never let go"
    try:
        assert loaded.meter.cancel.is_set()
        abandoned = loaded.meter.output_tokens
    finally:
        loaded.lock.release()
    patient = open_backend("local:smollm2")
    whole = asyncio.run(patient.complete(essay, GenerationParams(max_tokens=1000)))
    assert abandoned < whole.output_tokens
    quick = asyncio.run(patient.complete(PROMPT, GenerationParams(max_tokens=3)))
    assert quick.output_tokens == 3
