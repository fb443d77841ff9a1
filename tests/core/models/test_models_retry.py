"""The retry layer on its own: header parsing, classification, backoff and the loop's limits,
driven by fake attempts and an injected clock (no network)."""

from __future__ import annotations

import asyncio
import email.utils

import pytest

from convtui.core.models import Attempt, ModelError, Retrier, RetryPolicy
from convtui.core.models.retry import (
    Failure,
    call_with_retries,
    classify_status,
    is_context_length_message,
    retry_after_s,
)


class FakeClock:
    """Time that moves only when the code under test sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def retrier(clock: FakeClock, **policy: float) -> Retrier:
    return Retrier(RetryPolicy(**policy), sleep=clock.sleep, clock=clock, rng=lambda: 1.0)


class Boom(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def scripted(*outcomes: Failure | str):
    """An attempt function that fails or answers as scripted, in order."""
    queue = list(outcomes)

    async def attempt() -> str:
        outcome = queue.pop(0)
        if isinstance(outcome, Failure):
            raise Boom(outcome)
        return outcome

    return attempt


def classify(exc: BaseException) -> Failure | None:
    return exc.failure if isinstance(exc, Boom) else None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"x-ratelimit-reset-requests": "6m0s"}, 360.0),
        ({"x-ratelimit-reset-tokens": "20ms", "x-ratelimit-reset-requests": "2s"}, 0.02),
        (
            {
                "x-ratelimit-reset-tokens": "20ms",
                "x-ratelimit-reset-requests": "1h2m3s",
                "x-ratelimit-remaining-requests": "0",
            },
            3723.0,
        ),
        ({"x-ratelimit-reset": "4"}, 4.0),
        ({}, None),
        ({"Retry-After": "soon"}, None),
    ],
)
def test_retry_after_headers(headers, expected):
    assert retry_after_s(headers) == expected


def test_retry_after_http_date():
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert retry_after_s({"Retry-After": date}, now=now) == pytest.approx(42)
    assert retry_after_s({"Retry-After": email.utils.formatdate(now - 5)}, now=now) == 0


def test_epoch_reset_header_is_read_as_a_time():
    assert retry_after_s({"x-ratelimit-reset": "1700000030"}, now=1_700_000_000) == 30


STATUSES = {
    "rate_limit": [(429, "slow down")],
    "transient": [(500, "oops"), (502, "bad gateway"), (503, "overloaded"), (408, "timeout")],
    "context_length": [
        (400, "maximum context length is 4096 tokens (context_length_exceeded)"),
        (400, "Requested tokens (9000) exceed context window of 2048"),
    ],
    "fatal": [
        (429, "You exceeded your current quota (insufficient_quota)"),
        (400, "bad request"),
        (401, "bad key"),
        (403, "forbidden"),
        (404, "no such model"),
    ],
}


@pytest.mark.parametrize(
    ("code", "message", "kind"),
    [(code, message, kind) for kind, pairs in STATUSES.items() for code, message in pairs],
)
def test_classify_status(code, message, kind):
    assert classify_status(code, message, {}).kind == kind


def test_context_length_phrases():
    assert is_context_length_message(
        "The decoder prompt (length 9000) is longer than the maximum model length of 4096"
    )
    assert not is_context_length_message("invalid temperature")


def test_backoff_is_full_jitter_capped_and_never_zero():
    policy = RetryPolicy(base_delay_s=2, max_delay_s=60, min_delay_s=0.25)
    assert [policy.backoff_s(n, lambda: 1.0) for n in range(1, 8)] == [2, 4, 8, 16, 32, 60, 60]
    assert policy.backoff_s(3, lambda: 0.5) == 4
    assert policy.backoff_s(1, lambda: 0.0) == 0.25


def test_retry_after_longer_than_backoff_wins_shorter_does_not():
    r = Retrier(RetryPolicy(), rng=lambda: 1.0)
    assert r.delay_for(1, Failure("rate_limit", "x", 30)) == 30
    assert r.delay_for(3, Failure("rate_limit", "x", 1)) == 8


def test_success_after_retries_reports_each_attempt():
    clock = FakeClock()
    seen: list[Attempt] = []
    result, last = asyncio.run(
        call_with_retries(
            scripted(Failure("rate_limit", "429", 5), Failure("transient", "500"), "done"),
            classify,
            retrier(clock),
            on_attempt=seen.append,
        )
    )
    assert result == "done"
    assert last.number == 3
    assert [(a.number, a.status) for a in seen] == [(1, "rate_limit"), (2, "transient"), (3, "ok")]
    assert seen[0].retry_after_s == 5
    assert clock.sleeps == [5, 4]


def test_gives_up_after_max_retries():
    clock = FakeClock()
    attempt = scripted(*[Failure("transient", "500")] * 4)
    with pytest.raises(ModelError) as caught:
        asyncio.run(call_with_retries(attempt, classify, retrier(clock, max_retries=3)))
    assert caught.value.kind == "transient"
    assert caught.value.attempts == 4
    assert len(clock.sleeps) == 3


def test_call_timeout_stops_retrying_before_a_wait_that_would_pass_it():
    clock = FakeClock()
    attempt = scripted(*[Failure("rate_limit", "429", 40)] * 10)
    with pytest.raises(ModelError) as caught:
        asyncio.run(call_with_retries(attempt, classify, retrier(clock, call_timeout_s=100)))
    assert caught.value.kind == "timeout"
    assert caught.value.attempts == 3  # waited 40 + 40; a third wait would pass 100 s
    assert clock.sleeps == [40, 40]
    assert "100 s limit" in str(caught.value)


def test_attempt_timeout_abandons_a_hung_attempt():
    calls = 0

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(60)
        return "second"

    seen: list[Attempt] = []
    policy = RetryPolicy(attempt_timeout_s=0.05)
    result, _ = asyncio.run(
        call_with_retries(
            attempt, classify, Retrier(policy, sleep=FakeClock().sleep), on_attempt=seen.append
        )
    )
    assert result == "second"
    assert [a.status for a in seen] == ["timeout", "ok"]


def test_fatal_and_context_length_are_not_retried():
    for kind in ("fatal", "context_length"):
        clock = FakeClock()
        seen: list[Attempt] = []
        with pytest.raises(ModelError) as caught:
            asyncio.run(
                call_with_retries(
                    scripted(Failure(kind, "400")), classify, retrier(clock), on_attempt=seen.append
                )
            )
        assert caught.value.kind == kind
        assert clock.sleeps == []
        assert [a.status for a in seen] == ["fatal"]


def test_unknown_exceptions_propagate_unretried():
    async def attempt() -> str:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        asyncio.run(call_with_retries(attempt, classify, retrier(FakeClock())))
