"""One background asyncio loop that the app's model calls, executions and store writes run on.

Backends keep connections bound to the loop they were first used on (the openai client's
HTTP pool), so every session of the app shares this one loop rather than starting its own
per turn; the UI thread submits coroutines and waits on them only from worker threads."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class AsyncRunner:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="convtui-runner", daemon=True
        )
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runner's loop; cancelling the future cancels the task."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def _cancel_all(self) -> None:
        current = asyncio.current_task()
        pending = [t for t in asyncio.all_tasks() if t is not current]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self.loop.shutdown_asyncgens()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` and wait for its result (from a worker thread, never the UI's)."""
        return self.submit(coro).result(timeout)

    def close(self) -> None:
        """Cancel what is still running (a turn waiting for the person), let it clean up,
        then stop the loop."""
        if self.loop.is_closed():
            return
        with contextlib.suppress(Exception):
            self.call(self._cancel_all(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()
