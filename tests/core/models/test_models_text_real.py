"""Raw-text calls (``complete_text``) on real llama.cpp: SmolLM2 in process and behind
llama-cpp-python's OpenAI-compatible server (``/v1/completions``) on loopback. What SmolLM2
writes is its own; these tests check what it cannot change: an answer comes back with its
finish reason and token counts, the prompt goes in raw (no chat template) and the same on
both paths, stop strings and max_tokens cut the answer, and a prompt past the context is a
context-length error on both paths."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from support.llama_server import running_llama_server
from support.streaming import assert_streamed

from convtui.core.models import ChatMessage, GenerationParams, ModelError, open_backend
from convtui.core.models.base import ModelBackend, prompt_as_chat
from convtui.core.models.llama_local import load_model, smollm2_path
from convtui.core.models.mock import cut_at_stop

pytestmark = pytest.mark.slow

# Both sides run with the same context size (see llama_local.DEFAULT_N_CTX).
N_CTX = 2048
CCW_STOP = "\n\n---\n\n"  # ConvCodeWorld's stop string (DSPy 2.4's field separator)
# A DSPy-shaped prompt: fields separated by CCW_STOP, the answer field left open.
PROMPT = (
    "Write Python code for the task.\n\n---\n\n"
    "Task: Write a function task_func(x) that returns x + 1.\n\n"
    "Code:"
)
PARAMS = GenerationParams(temperature=0.0, max_tokens=96, stop=(CCW_STOP,), seed=0)


@pytest.fixture(scope="module")
def local(smollm2_gguf) -> ModelBackend:
    backend = open_backend("local:smollm2", n_ctx=N_CTX)
    asyncio.run(backend.check())
    return backend


@pytest.fixture(scope="module")
def llama_server(smollm2_gguf, tmp_path_factory) -> Iterator[str]:
    with running_llama_server(smollm2_gguf, N_CTX, tmp_path_factory.mktemp("llama")) as url:
        yield url


def raw_token_count(prompt: str) -> int:
    """The prompt's tokens as llama.cpp's create_completion makes them: the text alone."""
    llama = load_model(smollm2_path(), N_CTX, None).llama
    return len(llama.tokenize(prompt.encode("utf-8"), special=True))


def test_a_text_call_sends_the_prompt_raw_without_the_chat_template(local):
    text = asyncio.run(local.complete_text(PROMPT, PARAMS))
    chat = asyncio.run(local.complete(prompt_as_chat(PROMPT), PARAMS))
    assert text.finish_reason in ("stop", "length")
    assert 0 < text.output_tokens <= PARAMS.max_tokens and text.latency_s > 0
    assert text.input_tokens == raw_token_count(PROMPT)
    # The same words as a chat message gain the template's role markers.
    assert chat.input_tokens > text.input_tokens
    assert (text.model, text.attempts) == ("smollm2", 1)


def test_max_tokens_ends_a_text_call_with_finish_reason_length(local):
    short = asyncio.run(local.complete_text(PROMPT, GenerationParams(max_tokens=4)))
    assert (short.finish_reason, short.output_tokens) == ("length", 4)


@pytest.mark.parametrize("stop", [("\n",), (" ", "\n"), ("(",)])
def test_stop_strings_cut_an_in_process_text_call_where_they_first_appear(local, stop):
    """Greedy and in process, the stopped answer is the unstopped one cut at its first stop
    string (or all of it, when the model never writes one)."""
    whole = asyncio.run(local.complete_text(PROMPT, GenerationParams(max_tokens=48)))
    stopped = asyncio.run(local.complete_text(PROMPT, GenerationParams(max_tokens=48, stop=stop)))
    assert not any(s in stopped.text for s in stop)
    assert stopped.text == cut_at_stop(whole.text, stop)


def test_a_streamed_text_call_grows_to_the_plain_answer(local):
    seen: list[str] = []
    streamed = asyncio.run(local.complete_text(PROMPT, PARAMS, on_text=seen.append))
    plain = asyncio.run(local.complete_text(PROMPT, PARAMS))
    assert len(seen) >= 2
    assert_streamed(seen, streamed, plain)


def test_a_text_prompt_longer_than_the_context_is_a_context_length_error(smollm2_gguf):
    small = open_backend("local:smollm2", n_ctx=256)
    with pytest.raises(ModelError) as caught:
        asyncio.run(small.complete_text("word " * 400, PARAMS))
    assert caught.value.kind == "context_length" and caught.value.attempts == 1
    assert "context window" in str(caught.value)


def test_server_and_in_process_text_calls_take_the_same_prompt_and_both_answer(llama_server, local):
    async def over_http():
        server = open_backend(llama_server)
        try:
            return await server.complete_text(PROMPT, PARAMS), server.model
        finally:
            await server.aclose()

    served, model = asyncio.run(over_http())
    in_process = asyncio.run(local.complete_text(PROMPT, PARAMS))
    assert served.input_tokens == in_process.input_tokens == raw_token_count(PROMPT)
    for completion in (served, in_process):
        assert completion.finish_reason in ("stop", "length")
        assert completion.output_tokens > 0 and CCW_STOP not in completion.text
    assert served.resolved_model == model


def test_the_server_cuts_a_text_call_at_its_stop_strings_and_streams_it(llama_server):
    stop = ("\n", " ")
    seen: list[str] = []

    async def calls():
        server = open_backend(llama_server)
        try:
            stopped = await server.complete_text(PROMPT, GenerationParams(max_tokens=48, stop=stop))
            streamed = await server.complete_text(PROMPT, PARAMS, on_text=seen.append)
            return stopped, streamed
        finally:
            await server.aclose()

    stopped, streamed = asyncio.run(calls())
    assert not any(s in stopped.text for s in stop) and stopped.finish_reason in ("stop", "length")
    assert_streamed(seen, streamed)


def test_the_server_answers_a_too_long_text_prompt_with_a_context_length_error(llama_server):
    """The real server's 400 (llama-cpp-python maps llama.cpp's ValueError to OpenAI's
    context_length_exceeded), not retried."""

    async def too_long():
        server = open_backend(llama_server)
        try:
            return await server.complete_text("word " * (N_CTX + 500), PARAMS)
        finally:
            await server.aclose()

    with pytest.raises(ModelError) as caught:
        asyncio.run(too_long())
    assert caught.value.kind == "context_length" and caught.value.attempts == 1
    assert "HTTP 400" in str(caught.value)


def test_a_chat_call_and_a_text_call_of_the_same_words_differ_on_the_server_too(llama_server):
    """The server's /v1/chat/completions applies the template; /v1/completions does not."""

    async def both():
        server = open_backend(llama_server)
        try:
            two = GenerationParams(max_tokens=2)
            chat = await server.complete([ChatMessage("user", PROMPT)], two)
            text = await server.complete_text(PROMPT, two)
            return chat, text
        finally:
            await server.aclose()

    chat, text = asyncio.run(both())
    assert chat.input_tokens > text.input_tokens == raw_token_count(PROMPT)
