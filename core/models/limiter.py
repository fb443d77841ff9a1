"""Bounded concurrency per endpoint, shared by every backend object in the process.

The code model and the simulated user often talk to the same server; one limiter per
``connection_key()`` keeps their sum under the bound (docs/harness-notes.md#model-access). The
limiter is not tied to one event loop (asyncio.Semaphore is), because the registry outlives any
single ``asyncio.run``: the CLI and the tests run several loops in one process."""

from __future__ import annotations

import asyncio
import threading
from collections import deque

HOSTED_API_LIMIT = 8
LOCAL_SERVER_LIMIT = 32


class ConcurrencyLimiter:
    """A counting semaphore that any event loop (or thread's loop) can wait on.

    ``peak`` is the most slots ever held at once, for tests and progress displays."""

    def __init__(self, key: str, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be at least 1, got {limit}")
        self.key = key
        self._limit = limit
        self._in_use = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._lock = threading.Lock()
        self.peak = 0

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_use(self) -> int:
        return self._in_use

    @property
    def waiting(self) -> int:
        """Callers queued for a slot (replica routing counts them as load)."""
        return len(self._waiters)

    def set_limit(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be at least 1, got {limit}")
        with self._lock:
            self._limit = limit
            # A raised limit frees slots for whoever is already queued.
            while self._waiters and self._in_use < self._limit:
                self._in_use += 1
                self._hand_over_locked()

    async def acquire(self) -> None:
        with self._lock:
            if self._in_use < self._limit and not self._waiters:
                self._take_locked()
                return
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                    raise
            # The slot was handed over just as we were cancelled: pass it on. (If the
            # hand-over callback has not run yet, it sees the cancellation and does it.)
            if waiter.done() and not waiter.cancelled():
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                self._hand_over_locked()
            else:
                self._in_use -= 1

    def _take_locked(self) -> None:
        self._in_use += 1
        self.peak = max(self.peak, self._in_use)

    def _hand_over_locked(self) -> None:
        """Give the slot being released to the first live waiter, keeping ``_in_use``."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if waiter.done():
                continue
            try:
                waiter.get_loop().call_soon_threadsafe(self._wake, waiter)
            except RuntimeError:  # its loop is closed; nobody is waiting there any more
                continue
            return
        self._in_use -= 1

    def _wake(self, waiter: asyncio.Future[None]) -> None:
        if waiter.cancelled():
            self.release()
        else:
            waiter.set_result(None)
            with self._lock:
                self.peak = max(self.peak, self._in_use)

    async def __aenter__(self) -> ConcurrencyLimiter:
        await self.acquire()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


_registry: dict[str, ConcurrencyLimiter] = {}
_registry_lock = threading.Lock()


def limiter_for(key: str, *, default: int, override: int | None = None) -> ConcurrencyLimiter:
    """The process-wide limiter for ``key``. ``default`` applies only when it is created;
    an explicit ``override`` (a user's ``--concurrency``) always sets the limit."""
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = _registry[key] = ConcurrencyLimiter(key, override or default)
            return limiter
    if override is not None and override != limiter.limit:
        limiter.set_limit(override)
    return limiter
