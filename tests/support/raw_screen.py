"""A served app's socket (``RawApp``, tests/support/raw_client.py) whose screen is read as
well as counted: the terminal output it receives goes through pyte, a terminal emulator, so
a test waits for what the app shows rather than for a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from support.raw_client import RawApp


class _Tee:
    """The app socket, handing each binary message (terminal output) to ``feed`` as it
    passes; everything else as the socket has it."""

    def __init__(self, socket: Any, feed: Callable[[bytes], None]) -> None:
        self._socket = socket
        self._feed = feed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._socket, name)

    async def __aiter__(self) -> AsyncIterator[Any]:
        import aiohttp

        async for message in self._socket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self._feed(message.data)
            yield message


@dataclass
class ScreenApp(RawApp):
    """A ``RawApp`` that keeps the screen its app draws (opened at ``RawApp.open``'s size,
    or at ``SIZE`` for a subclass that opens its app at another)."""

    SIZE: ClassVar[tuple[int, int]] = (100, 30)
    screen: Any = field(default=None)
    _stream: Any = field(default=None)

    async def _read(self) -> None:
        import pyte

        self.screen = pyte.Screen(*self.SIZE)
        self._stream = pyte.ByteStream(self.screen)
        self.socket = _Tee(self.socket, self._stream.feed)
        await super()._read()

    def shown(self) -> str:
        return "\n".join(self.screen.display) if self.screen is not None else ""

    async def showing(
        self, *needles: str, without: tuple[str, ...] = (), timeout: float = 30.0
    ) -> str:
        """The screen, once every one of ``needles`` is on it and none of ``without``."""

        def there() -> bool:
            shown = self.shown()
            return all(n in shown for n in needles) and not any(w in shown for w in without)

        deadline = time.monotonic() + timeout
        while not there():
            if self.closed.is_set() or time.monotonic() > deadline:
                raise AssertionError(
                    f"never showed {needles!r} without {without!r}; it shows:\n{self.shown()}"
                )
            await asyncio.sleep(0.05)
        return self.shown()
