"""One model served by several OpenAI-compatible servers: ``--model http://a/v1,http://b/v1``.

The servers are replicas of one model (several ``vllm serve`` or llama.cpp processes), so any
of them may answer any call, and the run is the same run whichever did. Each keeps its own
concurrency limiter (the process-wide one for its URL: a simulator on the same servers shares
the bounds). Each attempt of a call goes to the least loaded replica that is up (slots held and
queued over its limit; ties to the one sent fewest). An attempt that fails on a connection
error, a 5xx or a timeout takes its replica out for a cooldown, and the call's next attempt
goes to another replica at once (no backoff: the failure says nothing about that one), still
within the retry policy's bound on attempts. When the cooldown is over, the next call first
asks the replica for its models (``/models``, a few seconds at most): one that answers with the
same model is used again; one that does not stays out twice as long (up to ``MAX_COOLDOWN_S``).
While every replica is out, attempts go to the one whose cooldown ends first, with the usual
backoff between them. The endpoint of each attempt and of the answer is recorded with the call
(``Attempt.endpoint``, ``Completion.endpoint``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace

from convtui.core.models.base import (
    AttemptCallback,
    Hooks,
    RawCompletion,
    Request,
    RequestBackend,
    finished,
)
from convtui.core.models.chat_template import ChatTemplate
from convtui.core.models.openai_compat import OpenAICompatBackend, classify_openai_error
from convtui.core.models.retry import Failure, Retrier, call_with_retries
from convtui.core.models.types import Attempt, Completion, ErrorKind, GenerationParams, ModelError

# A replica that failed is left alone this long before it is probed; each failed probe doubles
# it, up to MAX_COOLDOWN_S, so a replica gone for good costs one quick probe a minute.
COOLDOWN_S = 5.0
MAX_COOLDOWN_S = 60.0
# A live server lists its models at once; a probe must not hold its call up for long.
PROBE_TIMEOUT_S = 5.0
# Failures that say the replica itself is in trouble (unreachable, erroring, stuck), as
# opposed to the request (fatal, context length) or a busy server (rate limit).
REPLICA_FAULTS: frozenset[ErrorKind] = frozenset({"transient", "timeout"})


@dataclass(eq=False)
class Replica:
    """One endpoint and what routing knows of it. ``down_until`` (the retrier's clock): out of
    rotation until then, None when up; ``cooldown_s``: how long the last time out was."""

    backend: OpenAICompatBackend
    routed: int = 0
    down_until: float | None = None
    cooldown_s: float = 0.0
    probing: bool = False

    @property
    def url(self) -> str:
        return self.backend.base_url

    @property
    def load(self) -> float:
        limiter = self.backend.limiter
        return (limiter.in_use + limiter.waiting) / limiter.limit


@dataclass
class _Route:
    """Where the current attempt of one call goes."""

    replica: Replica | None = None

    @property
    def url(self) -> str | None:
        return None if self.replica is None else self.replica.url


class ReplicaBackend(RequestBackend):
    """Calls spread over ``replicas`` (OpenAI-compatible servers of one model), with failover
    and recovery as the module docstring says."""

    def __init__(
        self,
        *,
        spec: str,
        replicas: Sequence[OpenAICompatBackend],
        retrier: Retrier,
        cooldown_s: float = COOLDOWN_S,
    ) -> None:
        if len(replicas) < 2:
            raise ValueError("replicas are two or more endpoints")
        self.spec = spec
        self.model = replicas[0].model  # "" until check() asks the servers
        self.replicas = tuple(Replica(backend) for backend in replicas)
        self.retrier = retrier
        self.cooldown_s = cooldown_s
        # Routing state is changed by whichever loop's call finishes; the lock keeps a probe
        # from being claimed twice.
        self._lock = threading.Lock()

    def connection_key(self) -> str:
        return "replicas|" + ",".join(r.backend.connection_key() for r in self.replicas)

    async def check(self) -> None:
        """Every replica must answer and serve the model: ``--model-name``'s, else the first
        the first replica lists. One line names the replica that does not."""
        listed = await asyncio.gather(
            *(r.backend.served_models() for r in self.replicas), return_exceptions=True
        )
        for found in listed:  # the first replica's problem first, whichever answered first
            if isinstance(found, BaseException):
                raise found
        served = [found for found in listed if isinstance(found, list)]
        model = self.model or served[0][0]
        for replica, models in zip(self.replicas, served, strict=True):
            if model in models:
                continue
            whose = "" if self.model else f" (what {self.replicas[0].url} serves first)"
            raise ModelError(
                f"the replicas of one model must serve the same model: {replica.url} does not "
                f"serve {model!r}{whose}; it serves: {', '.join(models[:10])}"
            )
        self.model = model
        for replica in self.replicas:
            replica.backend.model = model

    async def chat_template(self) -> ChatTemplate | None:
        return await self.replicas[0].backend.chat_template()

    async def _answer(self, request: Request, params: GenerationParams, hooks: Hooks) -> Completion:
        if not self.model:
            await self.check()
        route = _Route()

        def attempt() -> Awaitable[RawCompletion]:
            assert route.replica is not None
            # The replica's own single try (no limiter, no retries: those are done here).
            return route.replica.backend._attempt(request, params, hooks.on_text)

        def release() -> None:
            assert route.replica is not None
            route.replica.backend.limiter.release()

        raw, last = await call_with_retries(
            attempt,
            classify_openai_error,
            self.retrier,
            on_attempt=self._heard(route, hooks.on_attempt),
            slot=lambda: self._enter(route),
            release=release,
            retry_at_once=self._fails_over,
        )
        return finished(raw, last, self.model, route.url)

    def _heard(self, route: _Route, on_attempt: AttemptCallback | None) -> AttemptCallback:
        """Each attempt's outcome updates its replica's health, then goes to the caller with
        the replica's URL."""

        def heard(attempt: Attempt) -> None:
            assert route.replica is not None
            self._note(route.replica, attempt)
            if on_attempt is not None:
                on_attempt(replace(attempt, endpoint=route.replica.url))

        return heard

    def _note(self, replica: Replica, attempt: Attempt) -> None:
        with self._lock:
            if attempt.status == "ok":
                replica.down_until, replica.cooldown_s = None, 0.0
            elif attempt.status in REPLICA_FAULTS:
                replica.cooldown_s = replica.cooldown_s or self.cooldown_s
                until = self.retrier.clock() + replica.cooldown_s
                replica.down_until = max(replica.down_until or until, until)

    def _fails_over(self, failure: Failure) -> bool:
        """A replica fault is retried at once when another replica is up to take it."""
        return failure.kind in REPLICA_FAULTS and any(r.down_until is None for r in self.replicas)

    async def _enter(self, route: _Route) -> None:
        """Probe the replicas whose cooldown is over, then take a slot on the least loaded
        replica that is up. A replica that went down while the call queued for it is left for
        another that is up."""
        await self._probe_due()
        while True:
            replica = self._pick()
            await replica.backend.limiter.acquire()
            if replica.down_until is None or self._pick().down_until is not None:
                replica.routed += 1
                route.replica = replica
                return
            replica.backend.limiter.release()

    def _pick(self) -> Replica:
        up = [r for r in self.replicas if r.down_until is None]
        if up:
            return min(up, key=lambda r: (r.load, r.routed))
        return min(self.replicas, key=lambda r: r.down_until or 0.0)

    async def _probe_due(self) -> None:
        now = self.retrier.clock()
        with self._lock:
            due = [
                r
                for r in self.replicas
                if r.down_until is not None and r.down_until <= now and not r.probing
            ]
            for replica in due:
                replica.probing = True
        if due:
            await asyncio.gather(*(self._probe(replica) for replica in due))

    async def _probe(self, replica: Replica) -> None:
        """Back in rotation if it lists our model; else out for twice as long."""
        try:
            healthy = self.model in await replica.backend.served_models(PROBE_TIMEOUT_S)
        except ModelError:
            healthy = False
        with self._lock:
            replica.probing = False
            if healthy:
                replica.down_until, replica.cooldown_s = None, 0.0
            else:
                grown = max(self.cooldown_s, 2 * replica.cooldown_s)
                replica.cooldown_s = min(MAX_COOLDOWN_S, grown)
                replica.down_until = self.retrier.clock() + replica.cooldown_s

    async def aclose(self) -> None:
        for replica in self.replicas:
            await replica.backend.aclose()
