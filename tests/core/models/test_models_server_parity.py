"""A real OpenAI-compatible server: llama.cpp's (``python -m llama_cpp.server``) serving the
same SmolLM2 file. What the model writes is its own (and the server's prompt cache may take
another numerical path than the in-process model), so these tests check what it cannot
change: the server gets the same prompt as the in-process model (the same number of prompt
tokens after the chat template) and answers it, plainly and streamed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from support.llama_server import running_llama_server
from support.streaming import assert_streamed

from convtui.core.models import ChatMessage, GenerationParams, open_backend

pytestmark = pytest.mark.slow

# Both sides must run with the same context size (see llama_local.DEFAULT_N_CTX).
N_CTX = 2048
PARAMS = GenerationParams(temperature=0.0, max_tokens=160, seed=0)
CONVERSATIONS = [
    [
        ChatMessage("system", "You are a helpful coding assistant."),
        ChatMessage("user", "Write a Python function that returns the sum of a list of numbers."),
    ],
    [ChatMessage("user", "Write a Python function is_prime(n).")],
    [
        ChatMessage("system", "Answer with code only."),
        ChatMessage("user", "Reverse a string in Python."),
        ChatMessage("assistant", "s[::-1]"),
        ChatMessage("user", "Now reverse the order of the words of a sentence."),
    ],
]


@pytest.fixture(scope="module")
def llama_server(smollm2_gguf, tmp_path_factory) -> Iterator[str]:
    """The server on a free loopback port, up until the module's tests are done."""
    with running_llama_server(smollm2_gguf, N_CTX, tmp_path_factory.mktemp("llama")) as url:
        yield url


def test_server_and_in_process_take_the_same_prompt_and_both_answer(llama_server):
    async def both():
        server = open_backend(llama_server)
        local = open_backend("local:smollm2", n_ctx=N_CTX)
        try:
            await server.check()
            pairs = []
            for conversation in CONVERSATIONS:
                pairs.append(
                    (
                        await server.complete(conversation, PARAMS),
                        await local.complete(conversation, PARAMS),
                    )
                )
            return server.model, pairs
        finally:
            await server.aclose()

    model, pairs = asyncio.run(both())
    assert model.endswith(".gguf")  # no --model-name: the first model the server lists
    for over_http, in_process in pairs:
        assert over_http.input_tokens == in_process.input_tokens > 0
        for completion in (over_http, in_process):
            assert completion.text.strip() and completion.output_tokens > 0
            assert completion.finish_reason in ("stop", "length")
        assert over_http.resolved_model == model


def test_streaming_from_the_server_grows_to_its_answer(llama_server):
    conversation = CONVERSATIONS[0]

    async def streamed():
        server = open_backend(llama_server)
        seen: list[str] = []
        try:
            return await server.complete(conversation, PARAMS, on_text=seen.append), seen
        finally:
            await server.aclose()

    completion, seen = asyncio.run(streamed())
    assert len(seen) >= 2 and completion.text.strip()
    assert_streamed(seen, completion)
    assert completion.finish_reason in ("stop", "length")
