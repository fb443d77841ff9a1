"""Replicas of one model (``--model http://a/v1,http://b/v1``): routing, failover and recovery.

The servers here are the scripted fakes of fault_server.py, for fault injection ONLY: a 500
on demand, a replica that vanishes mid-run and comes back, a replica serving another model.
The clock is injected, so a cooldown passes without waiting. Real answers from two real
servers, one killed during a run, are in tests/benchmarks/test_live_replicas.py."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator

import pytest
from support.fault_server import HELLO, PARAMS, FakeServer, RecordedSleeps, ok, status

from convtui.core.models import (
    Attempt,
    Completion,
    ModelError,
    Retrier,
    RetryPolicy,
    open_backend,
)
from convtui.core.models.base import ModelBackend
from convtui.core.models.replicas import COOLDOWN_S


class Clock:
    """The retrier's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def servers() -> Iterator[tuple[FakeServer, FakeServer]]:
    """Two fake replicas: ``first`` listed first in the spec, so an idle backend tries it
    first; each answers its own name."""
    first, second = FakeServer(default=ok("first")), FakeServer(default=ok("second"))
    first.start()
    second.start()
    yield first, second
    first.stop()
    second.stop()


def replicas(
    *servers: FakeServer, clock: Clock, sleeps: RecordedSleeps, max_retries: int = 4
) -> ModelBackend:
    retrier = Retrier(
        RetryPolicy(max_retries=max_retries, attempt_timeout_s=30.0),
        sleep=sleeps,
        clock=clock,
        rng=lambda: 0.5,
    )
    return open_backend(",".join(s.url for s in servers), retrier=retrier)


async def calls(backend: ModelBackend, n: int) -> list[tuple[Completion, list[Attempt]]]:
    """``n`` calls one after the other, each with its attempts."""
    done = []
    for _ in range(n):
        attempts: list[Attempt] = []
        done.append((await backend.complete(HELLO, PARAMS, on_attempt=attempts.append), attempts))
    return done


def test_a_5xx_fails_over_at_once_and_the_replica_is_used_again_after_its_cooldown(servers):
    """Fault injection: the first replica answers 500 once, then recovers."""
    first, second = servers
    first.then(status(500, "overloaded"))
    clock, sleeps = Clock(), RecordedSleeps()
    backend = replicas(first, second, clock=clock, sleeps=sleeps)

    async def play():
        try:
            await backend.check()
            failed_over = await calls(backend, 3)
            sent_while_out = len(first.chat_requests)
            clock.now += COOLDOWN_S  # the cooldown is over: the next call probes first
            recovered = await calls(backend, 2)
            return failed_over, sent_while_out, recovered
        finally:
            await backend.aclose()

    failed_over, sent_while_out, recovered = asyncio.run(play())
    (completion, attempts), *during = failed_over
    assert completion.text == "second" and completion.endpoint == second.url
    assert completion.attempts == 2 and completion.model == "fake-model"
    assert [(a.status, a.endpoint) for a in attempts] == [
        ("transient", first.url),
        ("ok", second.url),
    ]
    assert "500" in attempts[0].error
    assert sleeps.delays == []  # another replica was up: no backoff before it
    # While the first is cooling down, every call goes to the second.
    assert [c.endpoint for c, _ in during] == [second.url, second.url]
    assert sent_while_out == 1
    # After it, the first answers its models again and takes the next calls: both idle, it
    # has been sent fewer.
    assert [(c.text, c.endpoint) for c, _ in recovered] == [("first", first.url)] * 2
    probes = [r for r in first.requests if r.path.endswith("/models")]
    assert len(probes) == 2  # check() at open, then one probe after the cooldown


def test_a_replica_that_vanishes_is_skipped_and_probed_again_after_each_cooldown(servers):
    """Fault injection: the first replica's server stops (connections refused from then on)
    after the backend was checked; every call is answered by the second; each cooldown ends
    in one probe, and a failed probe doubles the cooldown."""
    first, second = servers
    clock, sleeps = Clock(), RecordedSleeps()
    backend = replicas(first, second, clock=clock, sleeps=sleeps)

    async def play():
        try:
            await backend.check()
            first.stop()
            done = await calls(backend, 2)
            clock.now += COOLDOWN_S  # probed, refused: out for twice as long
            done += await calls(backend, 1)
            clock.now += COOLDOWN_S  # not yet over
            done += await calls(backend, 1)
            return done, backend.replicas[0]
        finally:
            await backend.aclose()

    done, gone = asyncio.run(play())
    assert gone.cooldown_s == 2 * COOLDOWN_S and gone.down_until == clock.now + COOLDOWN_S
    assert [c.endpoint for c, _ in done] == [second.url] * 4
    (_, first_attempts), *rest = done
    assert [(a.status, a.endpoint) for a in first_attempts] == [
        ("transient", first.url),
        ("ok", second.url),
    ]
    assert "connection" in first_attempts[0].error
    assert all(len(attempts) == 1 for _, attempts in rest)
    assert sleeps.delays == []


def test_while_every_replica_fails_the_call_backs_off_and_gives_up_within_its_bound(servers):
    """Fault injection: both replicas answer 503 to everything; no replica is up to fail
    over to, so retries wait out the backoff, and the call ends after max_retries + 1."""
    first, second = servers
    first.default = second.default = status(503, "down for maintenance")
    clock, sleeps = Clock(), RecordedSleeps()
    backend = replicas(first, second, clock=clock, sleeps=sleeps, max_retries=3)

    async def play():
        attempts: list[Attempt] = []
        try:
            await backend.check()
            with pytest.raises(ModelError, match="gave up after 4 attempts") as failed:
                await backend.complete(HELLO, PARAMS, on_attempt=attempts.append)
            return failed.value, attempts
        finally:
            await backend.aclose()

    error, attempts = asyncio.run(play())
    assert error.attempts == 4 and len(attempts) == 4
    assert {a.endpoint for a in attempts} == {first.url, second.url}
    # The first failure fails over at once; then both are out, and each retry waits.
    assert len(sleeps.delays) == 2
    assert len(first.chat_requests) + len(second.chat_requests) == 4


def test_each_replica_has_its_own_concurrency_bound_and_calls_go_to_the_least_loaded(servers):
    """Fault injection only in timing: slow answers, so calls overlap."""
    first, second = servers
    first.default, second.default = ok("first", delay_s=0.3), ok("second", delay_s=0.3)
    retrier = Retrier(RetryPolicy(attempt_timeout_s=30.0))
    backend = open_backend(f"{first.url},{second.url}", retrier=retrier, concurrency=2)

    async def play():
        try:
            return await asyncio.gather(*(backend.complete(HELLO, PARAMS) for _ in range(8)))
        finally:
            await backend.aclose()

    done = asyncio.run(play())
    assert Counter(c.endpoint for c in done) == {first.url: 4, second.url: 4}
    assert first.max_in_flight == second.max_in_flight == 2


async def refusal(backend: ModelBackend) -> str:
    """What ``backend.check()`` refuses with (it must refuse); the backend closed after it."""
    try:
        with pytest.raises(ModelError) as refused:
            await backend.check()
        return str(refused.value)
    finally:
        await backend.aclose()


def test_replicas_serving_different_models_are_refused_in_one_line():
    """Fault injection: a replica that serves another model than the first."""
    first, second = FakeServer(), FakeServer(served=("other-model", "another"))
    first.start()
    second.start()
    backend = open_backend(f"{first.url},{second.url}")
    named = open_backend(f"{first.url},{second.url}", model_name="fake-model")
    try:
        for message in (asyncio.run(refusal(backend)), asyncio.run(refusal(named))):
            assert "\n" not in message
            assert f"{second.url} does not serve 'fake-model'" in message
            assert "it serves: other-model, another" in message
    finally:
        first.stop()
        second.stop()


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("http://127.0.0.1:1/v1,local:smollm2", "'local:smollm2' is not"),
        ("http://127.0.0.1:1/v1,", "'' is not"),
        ("http://127.0.0.1:1/v1,http://127.0.0.1:1", "lists http://127.0.0.1:1/v1 twice"),
    ],
    ids=["not-a-url", "empty", "twice"],
)
def test_a_bad_list_of_replicas_is_refused_when_opened(spec, says):
    with pytest.raises(ModelError, match=says):
        open_backend(spec)


def test_an_unreachable_replica_is_refused_at_open_naming_it(fake_server):
    """Fault injection: the second replica's port has no server."""
    from support.llama_server import free_port

    missing = f"http://127.0.0.1:{free_port()}/v1"
    backend = open_backend(f"{fake_server.url},{missing}")
    message = asyncio.run(refusal(backend))
    assert message.startswith(f"cannot reach the model server at {missing}")
