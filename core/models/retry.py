"""Retrying a model call: classifying failures, backing off, honouring the server's waits.

Every attempt is reported once (to ``on_attempt``) and every retry sleeps first: BigCodeBench
retried some errors without sleeping and hot-looped forever on a 400
(BCB:``bigcodebench/gen/util/openai_request.py``; docs/harness-notes.md#model-access).
Here a 400 is fatal, a retry always waits at least ``min_delay_s``, and a call gives up after
``max_retries`` retries or ``call_timeout_s`` seconds, whichever comes first."""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from convtui.core.models.types import Attempt, AttemptStatus, ErrorKind, ModelError

T = TypeVar("T")

RETRYABLE: frozenset[ErrorKind] = frozenset({"rate_limit", "transient", "timeout"})

# Phrases servers use for a prompt that does not fit: OpenAI's code, vLLM's and llama.cpp's
# messages. Such a call must shrink its prompt, so retrying it as-is would be a hot loop.
_CONTEXT_LENGTH = re.compile(
    r"context_length_exceeded|maximum context length|context window|context length"
    r"|maximum model length|prompt is too long|too many tokens|exceeds? the max(imum)? "
    r"(number of )?tokens",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Failure:
    """What went wrong in one attempt, as the retry loop needs to know it."""

    kind: ErrorKind
    message: str
    retry_after_s: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. ``max_retries`` counts retries, so a call makes at most
    ``max_retries + 1`` attempts."""

    max_retries: int = 8
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0
    min_delay_s: float = 0.25
    attempt_timeout_s: float | None = 300.0
    call_timeout_s: float | None = 1800.0

    def backoff_s(self, retry: int, rng: Callable[[], float]) -> float:
        """Full jitter (uniform up to base·2^(retry-1), capped), so that many callers hit by
        the same 429 do not come back in lockstep; never below ``min_delay_s``."""
        ceiling = min(self.max_delay_s, self.base_delay_s * 2 ** max(retry - 1, 0))
        return max(self.min_delay_s, ceiling * rng())


@dataclass
class Retrier:
    """The policy plus the clock, sleep and randomness it runs on (injectable for tests)."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    rng: Callable[[], float] = random.random

    def delay_for(self, retry: int, failure: Failure) -> float:
        backoff = self.policy.backoff_s(retry, self.rng)
        if failure.retry_after_s is None:
            return backoff
        # The server knows when its window reopens; waiting less only earns another 429.
        return max(failure.retry_after_s, backoff)


def is_context_length_message(text: str) -> bool:
    return bool(_CONTEXT_LENGTH.search(text))


def _duration_s(value: str) -> float | None:
    """OpenAI's reset format ("1s", "6m0s", "250ms", "1h2m3.5s") or plain seconds."""
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    unit_s = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * unit_s[u] for n, u in parts)


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms``, ``Retry-After`` (seconds
    or an HTTP date) or the ``x-ratelimit-reset-*`` headers; None when it says nothing.

    ``now`` is the wall-clock time (epoch seconds) to measure HTTP dates against."""
    lower = {k.lower(): v for k, v in headers.items()}
    if "retry-after-ms" in lower:
        try:
            return max(0.0, float(lower["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    if "retry-after" in lower:
        raw = lower["retry-after"].strip()
        try:
            return max(0.0, float(raw))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError):
                when = None
            if when is not None:
                if when.tzinfo is None:  # "-0000" dates: RFC 5322 says UTC
                    when = when.replace(tzinfo=datetime.UTC)
                current = time.time() if now is None else now
                return max(0.0, when.timestamp() - current)
    # Rate-limit headers name one reset per budget; the exhausted budget is the one that
    # matters (waiting for the 6-minute token reset when only requests ran out is waste).
    resets: dict[str, float] = {}
    for budget in ("requests", "tokens"):
        reset = lower.get(f"x-ratelimit-reset-{budget}")
        seconds = _duration_s(reset) if reset else None
        if seconds is not None:
            resets[budget] = seconds
    exhausted = [s for b, s in resets.items() if lower.get(f"x-ratelimit-remaining-{b}") == "0"]
    if exhausted:
        return max(exhausted)
    if resets:
        return min(resets.values())
    reset = lower.get("x-ratelimit-reset")
    seconds = _duration_s(reset) if reset else None
    if seconds is not None:
        # Some providers send an epoch timestamp here rather than a duration.
        if seconds > 1e9:
            current = time.time() if now is None else now
            return max(0.0, seconds - current)
        return seconds
    return None


def classify_status(status: int, message: str, headers: Mapping[str, str]) -> Failure:
    """Map an HTTP error answer to a failure kind (docs/harness-notes.md#what-convtui-does)."""
    text = f"HTTP {status}: {message}"
    wait = retry_after_s(headers)
    if status == 429:
        # OpenAI answers 429 for an exhausted quota too; no amount of waiting fixes that.
        if "insufficient_quota" in message or "exceeded your current quota" in message:
            return Failure("fatal", text)
        return Failure("rate_limit", text, wait)
    if status in (408, 409) or status >= 500:
        return Failure("transient", text, wait)
    if status in (400, 413, 422) and is_context_length_message(message):
        return Failure("context_length", text)
    return Failure("fatal", text)


def attempt_status(kind: ErrorKind) -> AttemptStatus:
    """Attempts have no separate context-length status: it is a fatal attempt."""
    return "fatal" if kind == "context_length" else kind


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure | None],
    retrier: Retrier,
    *,
    on_attempt: Callable[[Attempt], None] | None = None,
    slot: Callable[[], Awaitable[object]] | None = None,
    release: Callable[[], None] | None = None,
    retry_at_once: Callable[[Failure], bool] | None = None,
) -> tuple[T, Attempt]:
    """Run ``attempt`` until it succeeds, fails for good or runs out of retries or time.

    ``classify`` turns an exception into a Failure; None means "not a model failure" (a bug)
    and the exception propagates unchanged. ``slot``/``release`` bracket each attempt (the
    concurrency limiter): a call waiting out a backoff holds no slot, and time queued for a
    slot counts towards neither timeout. ``retry_at_once`` says of a retryable failure that
    the next attempt may go without the backoff wait (it will go to another replica, which
    the failure says nothing about); it still counts towards ``max_retries``. Returns the
    result and its (successful) Attempt."""
    policy = retrier.policy
    spent = 0.0  # attempts and backoff sleeps, not queueing; measured against call_timeout_s
    number = 0
    while True:
        number += 1
        budget = policy.attempt_timeout_s
        if policy.call_timeout_s is not None:
            left = policy.call_timeout_s - spent
            budget = left if budget is None else min(budget, left)
        if slot is not None:
            await slot()
        started = retrier.clock()
        failure: Failure | None = None
        try:
            async with asyncio.timeout(budget):
                result = await attempt()
        except TimeoutError:
            failure = Failure("timeout", f"no answer within {budget:g} s")
        except asyncio.CancelledError:
            raise
        except ModelError as exc:
            failure = Failure(exc.kind, str(exc))
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
        finally:
            if release is not None:
                release()
        latency = retrier.clock() - started
        spent += latency
        if failure is None:
            done = Attempt(number, "ok", latency, "", None)
            if on_attempt is not None:
                on_attempt(done)
            return result, done
        if on_attempt is not None:
            status = attempt_status(failure.kind)
            on_attempt(Attempt(number, status, latency, failure.message, failure.retry_after_s))
        if not failure.retryable:
            raise ModelError(failure.message, kind=failure.kind, attempts=number)
        if number > policy.max_retries:
            raise ModelError(
                f"gave up after {number} attempt{'s' if number > 1 else ''}; last: "
                f"{failure.message}",
                kind=failure.kind,
                attempts=number,
            )
        if retry_at_once is not None and retry_at_once(failure):
            continue
        delay = retrier.delay_for(number, failure)
        if policy.call_timeout_s is not None and spent + delay >= policy.call_timeout_s:
            raise ModelError(
                f"gave up after {number} attempts: the next wait ({delay:.1f} s) would pass the"
                f" {policy.call_timeout_s:g} s limit for one call; last: {failure.message}",
                kind="timeout",
                attempts=number,
            )
        await retrier.sleep(delay)
        spent += delay
