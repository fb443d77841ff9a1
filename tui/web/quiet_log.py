"""What aiohttp and asyncio say about a misbehaving connection, in the server's log as one
line each and at most a few a second. Left alone they print a traceback per connection:
a flood of broken connections wrote tens of megabytes of them in a minute."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

# Lines a second the libraries may write; the rest are counted and the count said later.
LINES_PER_S = 2.0


class OneLine(logging.Handler):
    """A record as one line (its exception's type and message, never its traceback), within
    ``LINES_PER_S``."""

    def __init__(self, target: logging.Logger) -> None:
        super().__init__(logging.WARNING)
        self.target = target
        self.allowance = LINES_PER_S
        self.at = time.monotonic()
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        now = time.monotonic()
        self.allowance = min(LINES_PER_S, self.allowance + (now - self.at) * LINES_PER_S)
        self.at = now
        if self.allowance < 1:
            self.dropped += 1
            return
        self.allowance -= 1
        line = record.getMessage().splitlines()[0] if record.getMessage() else record.name
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line = f"{line} ({type(exc).__name__}: {str(exc)[:200]})"
        if self.dropped:
            line += f" [{self.dropped:,} more like it not shown]"
            self.dropped = 0
        self.target.info("%s: %s", record.name, line)


def quiet_libraries() -> None:
    """aiohttp's and asyncio's loggers, and the running loop's unhandled errors, through
    :class:`OneLine` into the server's log."""
    target = logging.getLogger("convtui.serve")
    handler = OneLine(target)
    for name in ("aiohttp", "asyncio"):
        library = logging.getLogger(name)
        library.handlers = [handler]
        library.propagate = False

    def one_line(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        record = logging.LogRecord(
            "asyncio", logging.ERROR, __file__, 0, context.get("message", "error"), None, None
        )
        if isinstance(exc, BaseException):
            record.exc_info = (type(exc), exc, None)
        handler.handle(record)

    asyncio.get_running_loop().set_exception_handler(one_line)
