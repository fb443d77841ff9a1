"""Identical model requests asked at once share one call: the first asks, the others await
its answer (or its error). ``study fidelity`` asks every simulator on every state at once, and
states often show a simulator exactly the same thing (a session whose code did not change
between turns, two annotators on the same code): each would otherwise be sent and logged
(38 calls for 16 distinct requests, issue 47). Once the call is done its key is forgotten:
the next identical request finds the answer in the call journal instead
(core/play/journaled.py), or asks again after a failure."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class InFlight(Generic[_T]):
    """Calls in flight by key (for model calls: the request hash, which names the model, the
    messages or prompt and the settings, with the call's purpose and place in its turn)."""

    def __init__(self) -> None:
        self._calls: dict[Hashable, asyncio.Future[_T]] = {}

    async def call(self, key: Hashable, start: Callable[[], Awaitable[_T]]) -> _T:
        """``start()``'s result, started only when no call of ``key`` is in flight; else the
        result of the one that is."""
        found = self._calls.get(key)
        if found is None:
            found = asyncio.ensure_future(start())
            self._calls[key] = found
            found.add_done_callback(lambda _done: self._calls.pop(key, None))
        # A caller cancelled while waiting must not cancel the call the others await.
        return await asyncio.shield(found)

    def __len__(self) -> int:
        return len(self._calls)
