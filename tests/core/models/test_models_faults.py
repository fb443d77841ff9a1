"""Retries, timeouts and concurrency bounds of the HTTP backend, against the scripted fake
server of fault_server.py. Each test injects faults a real server will not produce on demand;
real answers are tested against llama.cpp in test_models_server_parity.py."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from support.fault_server import (
    HELLO,
    PARAMS,
    RecordedSleeps,
    drop_mid_answer,
    hang,
    logged_call,
    ok,
    server_backend,
    status,
)

from convtui.core.models import (
    Attempt,
    ModelError,
    open_backend,
)
from convtui.core.models.base import ModelBackend


async def complete_logged(backend: ModelBackend, **kwargs: object):
    return await logged_call(backend, HELLO, PARAMS, **kwargs)


def test_429_with_retry_after_waits_as_told_then_succeeds(fake_server):
    """Fault injection: a 429 with Retry-After, then a normal answer."""
    fake_server.then(status(429, "slow down", headers={"Retry-After": "7"}), ok("fine"))
    sleeps = RecordedSleeps()
    completion, attempts = asyncio.run(complete_logged(server_backend(fake_server, sleeps)))
    assert completion.text == "fine"
    assert completion.attempts == 2
    assert [a.status for a in attempts] == ["rate_limit", "ok"]
    assert attempts[0].retry_after_s == 7
    assert "429" in attempts[0].error
    assert sleeps.delays == [7]  # the server's wait, longer than the 1 s backoff
    assert (completion.input_tokens, completion.output_tokens) == (7, 3)
    assert completion.resolved_model == "fake-model-2024"
    assert completion.model == "fake-model"


def test_rate_limit_reset_header_is_honoured(fake_server):
    """Fault injection: a 429 that says when the exhausted request budget resets."""
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "12.5s",
        "x-ratelimit-remaining-tokens": "900",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    fake_server.then(status(429, "rate limited", headers=headers), ok())
    sleeps = RecordedSleeps()
    completion, _ = asyncio.run(complete_logged(server_backend(fake_server, sleeps)))
    assert completion.attempts == 2
    assert sleeps.delays == [12.5]


def test_server_errors_are_retried_with_growing_backoff(fake_server):
    """Fault injection: two 5xx answers, then success."""
    fake_server.then(status(500, "boom"), status(503, "busy"), ok("third time"))
    sleeps = RecordedSleeps()
    completion, attempts = asyncio.run(complete_logged(server_backend(fake_server, sleeps)))
    assert completion.text == "third time"
    assert completion.attempts == 3
    assert [a.status for a in attempts] == ["transient", "transient", "ok"]
    assert [a.number for a in attempts] == [1, 2, 3]
    assert sleeps.delays == [1.0, 2.0]  # half of 2 s, then half of 4 s


def test_hanging_server_times_out_each_attempt_then_gives_up(fake_server):
    """Fault injection: a server that accepts requests and never answers."""
    fake_server.default = hang()
    sleeps = RecordedSleeps()
    backend = server_backend(fake_server, sleeps, max_retries=2, attempt_timeout_s=0.3)
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete_logged(backend))
    error = caught.value
    assert error.kind == "timeout"
    assert error.attempts == 3
    assert "gave up after 3 attempts" in str(error)
    # The server's thread may record the last request a moment after the client gave up on
    # it (under load, in the middle of a parallel suite).
    deadline = time.monotonic() + 5
    while len(fake_server.chat_requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(fake_server.chat_requests) == 3
    assert len(sleeps.delays) == 2


def test_every_attempt_is_reported_when_a_call_fails(fake_server):
    """Fault injection: a hang, a 502, a hang; the caller hears of all three attempts."""
    fake_server.then(hang(), status(502, "bad gateway"), hang())
    attempts: list[Attempt] = []
    backend = server_backend(fake_server, RecordedSleeps(), max_retries=2, attempt_timeout_s=0.3)

    async def call() -> None:
        try:
            await backend.complete(HELLO, PARAMS, on_attempt=attempts.append)
        finally:
            await backend.aclose()

    with pytest.raises(ModelError) as caught:
        asyncio.run(call())
    assert caught.value.kind == "timeout"
    assert [a.status for a in attempts] == ["timeout", "transient", "timeout"]
    assert all(a.latency_s >= 0 for a in attempts)


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
def test_connection_dropped_mid_answer_is_retried(fake_server, streaming):
    """Fault injection: the server hangs up halfway through its answer."""
    fake_server.then(drop_mid_answer(), ok("whole answer"))
    seen: list[str] = []
    on_text = seen.append if streaming else None
    completion, attempts = asyncio.run(
        complete_logged(server_backend(fake_server, RecordedSleeps()), on_text=on_text)
    )
    assert completion.text == "whole answer"
    assert [a.status for a in attempts] == ["transient", "ok"]
    if streaming:
        # The broken attempt streamed a piece before it died; the retry starts over.
        assert seen[0] == "par"
        assert seen[-1] == "whole answer"


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streamed"])
def test_a_server_that_gives_no_usage_leaves_the_token_counts_unknown(fake_server, streaming):
    """Fault injection (a server that counts nothing, as llama.cpp's streams): the counts are
    None, not a 0 that a report would read as a real count."""
    fake_server.then(ok("no counts", usage=False))
    on_text = [].append if streaming else None
    completion, _ = asyncio.run(
        complete_logged(server_backend(fake_server, RecordedSleeps()), on_text=on_text)
    )
    assert completion.text == "no counts"
    assert (completion.input_tokens, completion.output_tokens) == (None, None)


def test_context_length_error_is_not_retried(fake_server):
    """Fault injection: a 400 saying the prompt does not fit."""
    message = "This model's maximum context length is 2048 tokens. However, you requested 9000"
    fake_server.then(status(400, message, error_code="context_length_exceeded"))
    sleeps = RecordedSleeps()
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete_logged(server_backend(fake_server, sleeps)))
    assert caught.value.kind == "context_length"
    assert caught.value.attempts == 1
    assert len(fake_server.chat_requests) == 1
    assert sleeps.delays == []


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_client_errors_are_fatal_at_once(fake_server, code):
    """Fault injection: 4xx answers that no retry can fix (BigCodeBench looped on these)."""
    fake_server.then(status(code, "no"))
    sleeps = RecordedSleeps()
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete_logged(server_backend(fake_server, sleeps)))
    assert caught.value.kind == "fatal"
    assert caught.value.attempts == 1
    assert f"HTTP {code}" in str(caught.value)
    assert len(fake_server.chat_requests) == 1
    assert sleeps.delays == []


def test_quota_exhausted_429_is_fatal(fake_server):
    """Fault injection: OpenAI's 429 for an empty account, which waiting does not fix."""
    fake_server.then(
        status(429, "You exceeded your current quota", error_code="insufficient_quota")
    )
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete_logged(server_backend(fake_server, RecordedSleeps())))
    assert caught.value.kind == "fatal"
    assert caught.value.attempts == 1


def test_persistent_errors_end_after_max_retries_never_hot_looping(fake_server):
    """Fault injection: a server that only ever answers 500."""
    fake_server.default = status(500, "down")
    sleeps = RecordedSleeps()
    with pytest.raises(ModelError) as caught:
        asyncio.run(complete_logged(server_backend(fake_server, sleeps, max_retries=4)))
    assert caught.value.kind == "transient"
    assert caught.value.attempts == 5
    assert len(fake_server.chat_requests) == 5
    assert sleeps.delays == [1.0, 2.0, 4.0, 8.0]


def test_server_without_stream_options_is_asked_again_without_them(fake_server):
    """Fault injection: a server that rejects the stream_options field."""
    fake_server.then(status(400, "Unrecognized request argument supplied: stream_options"), ok())
    seen: list[str] = []
    completion, attempts = asyncio.run(
        complete_logged(server_backend(fake_server, RecordedSleeps()), on_text=seen.append)
    )
    assert completion.text == "hello"
    assert [a.status for a in attempts] == ["ok"]
    first, second = fake_server.chat_requests
    assert "stream_options" in first.body
    assert "stream_options" not in second.body


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_check_reports_an_unreachable_server_in_one_line():
    backend = open_backend(f"http://127.0.0.1:{free_port()}/v1")

    async def check() -> None:
        try:
            await backend.check()
        finally:
            await backend.aclose()

    with pytest.raises(ModelError) as caught:
        asyncio.run(check())
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("cannot reach the model server at http://127.0.0.1:")
    assert "(connection error" in message
    assert "start it or fix the URL" in message
    assert caught.value.kind == "fatal"


def test_server_model_defaults_to_the_first_listed(fake_server):
    """Fault-injection server standing in for /v1/models (a real one is used in parity)."""
    backend = open_backend(fake_server.url)
    completion, _ = asyncio.run(complete_logged(backend))
    assert backend.model == "fake-model"
    assert fake_server.chat_requests[0].body["model"] == "fake-model"
    assert completion.model == "fake-model"


def test_check_rejects_a_model_the_server_does_not_serve(fake_server):
    """Fault-injection server standing in for /v1/models."""
    backend = open_backend(fake_server.url, model_name="other-model")
    with pytest.raises(ModelError, match="does not serve 'other-model'; it serves: fake-model"):
        asyncio.run(backend.check())


def test_concurrency_is_bounded_per_endpoint_across_backends(fake_server):
    """Fault injection: a slow server, to hold calls in flight and count them there."""
    fake_server.default = ok("slow", delay_s=0.2)
    first = server_backend(fake_server, RecordedSleeps(), concurrency=3)
    second = server_backend(fake_server, RecordedSleeps())  # same endpoint: same limiter

    async def flood():
        try:
            return await asyncio.gather(
                first.complete_many([HELLO] * 6, PARAMS),
                second.complete_many([HELLO] * 6, PARAMS),
            )
        finally:
            await first.aclose()
            await second.aclose()

    results = asyncio.run(flood())
    assert [c.text for batch in results for c in batch] == ["slow"] * 12
    assert fake_server.max_in_flight == 3
    assert first.connection_key() == second.connection_key()


def test_complete_many_keeps_failures_in_their_slots(fake_server):
    """Fault injection: the second of three calls gets a 401."""
    fake_server.then(ok("a"), status(401, "no"), ok("c"))
    backend = server_backend(fake_server, RecordedSleeps(), concurrency=1)

    async def batch():
        try:
            return await backend.complete_many([HELLO] * 3, PARAMS)
        finally:
            await backend.aclose()

    first, second, third = asyncio.run(batch())
    assert (first.text, third.text) == ("a", "c")
    assert isinstance(second, ModelError)
    assert second.kind == "fatal"
