"""What one browser may ask of `convtui serve`: a terminal of bounded size, messages of bounded
size at a bounded rate, and a few failed sign-ins a minute. Anything past a limit is dropped
or refused here, before it reaches an annotator's running app."""

from __future__ import annotations

import re
import time
from collections import deque
from dataclasses import dataclass, field

# A terminal larger than any screen shows is only a way to make the app draw (and the server
# relay) more than anyone reads.
MAX_COLUMNS = 500
MAX_ROWS = 200
MIN_COLUMNS = 20
MIN_ROWS = 5
# A key press is a few bytes; a paste of a whole solution is a few kilobytes. 64 KiB leaves
# room for a long paste and none for a flood.
MAX_MESSAGE_BYTES = 64 * 1024
# A fast typist sends about 15 keys a second, a paste one message: 100 messages and 128 KiB a
# second, with a burst of twice that, never hold back a person.
MESSAGES_PER_S = 100.0
BYTES_PER_S = 128 * 1024.0
BURST_S = 2.0
# Wrong tokens: five a minute from one network is a person mistyping (or a page with an old
# cookie); more is guessing. From everywhere at once, a study's people mistype far fewer than
# a hundred a minute.
SIGN_IN_FAILURES = 5
ALL_FAILURES = 100
SIGN_IN_WINDOW_S = 60.0

# App opens per annotator: a page reloaded, a second tab, a dropped network each open one;
# ten a minute is far more than a person does, and each start takes a core for a second, so
# one token opening apps in a loop would otherwise take a core from everyone else.
APP_OPENS_PER_MINUTE = 10

# How many addresses' failures are kept before the stale ones are forgotten.
_ADDRESSES_KEPT = 1000
_DIGITS = re.compile(r"[0-9]{1,9}")


def parse_cells(value: object, low: int, high: int) -> int | None:
    """A terminal size in cells as a page sent it (a JSON number, or the query's ASCII
    digits), kept within ``low``..``high``; None when it is not a size at all."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return max(low, min(high, value))


def terminal_size(width: object, height: object) -> tuple[int, int] | None:
    """(columns, rows) within the bounds; None unless both are sizes."""
    columns = parse_cells(width, MIN_COLUMNS, MAX_COLUMNS)
    rows = parse_cells(height, MIN_ROWS, MAX_ROWS)
    return None if columns is None or rows is None else (columns, rows)


@dataclass
class Bucket:
    """A token bucket: ``rate`` a second, holding at most ``rate * burst_s``."""

    rate: float
    level: float = -1.0
    at: float = field(default_factory=time.monotonic)
    burst_s: float = BURST_S

    def take(self, amount: float, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        full = self.rate * self.burst_s
        self.level = full if self.level < 0 else min(full, self.level + (now - self.at) * self.rate)
        self.at = now
        if amount > self.level:
            return False
        self.level -= amount
        return True


@dataclass
class InputRate:
    """One connection's allowance of messages and bytes."""

    messages: Bucket = field(default_factory=lambda: Bucket(MESSAGES_PER_S))
    data: Bucket = field(default_factory=lambda: Bucket(BYTES_PER_S))

    def allows(self, size: int, now: float | None = None) -> bool:
        return self.messages.take(1, now) and self.data.take(size, now)


@dataclass
class SignInThrottle:
    """Wrong tokens (typed into the sign-in form or carried by a cookie) per network, and in
    all. Past ``SIGN_IN_FAILURES`` in the window from one network, or ``ALL_FAILURES`` from
    everywhere, a wrong token is answered "too many" (429) and no longer logged each time. A
    right token is never refused: a token holds 256 random bits, so guessing needs no
    throttle to fail; what one bounds is the work and the log a guesser costs, and refusing
    right tokens would let anyone who shares an address lock its people out."""

    failures: dict[str, deque[float]] = field(default_factory=dict)
    everywhere: deque[float] = field(default_factory=lambda: deque(maxlen=ALL_FAILURES))

    def wait_s(self, network: str, now: float | None = None) -> float:
        """Seconds before a wrong token from ``network`` is answered as one again (0: now)."""
        now = time.monotonic() if now is None else now
        recent = self.failures.get(network)
        if recent is not None and now - recent[-1] >= SIGN_IN_WINDOW_S:
            del self.failures[network]
            recent = None
        return max(_wait(recent, SIGN_IN_FAILURES, now), _wait(self.everywhere, ALL_FAILURES, now))

    def failed(self, network: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if network not in self.failures and len(self.failures) >= _ADDRESSES_KEPT:
            # Many networks that failed once and never came back: forget those whose last
            # failure has left the window, so guessing from many addresses costs no memory.
            for stale in [a for a, t in self.failures.items() if now - t[-1] >= SIGN_IN_WINDOW_S]:
                del self.failures[stale]
        # Only the last few failures decide a wait: a guesser's millions are not kept.
        self.failures.setdefault(network, deque(maxlen=SIGN_IN_FAILURES)).append(now)
        self.everywhere.append(now)


def _wait(recent: deque[float] | None, limit: int, now: float) -> float:
    """Until the oldest of the last ``limit`` failures leaves the window, if all are in it."""
    if recent is None or len(recent) < limit:
        return 0.0
    return max(0.0, SIGN_IN_WINDOW_S - (now - recent[0]))


@dataclass
class AppOpens:
    """Apps each annotator may open: ``per_minute``, all of them at once if they like."""

    per_minute: int = APP_OPENS_PER_MINUTE
    buckets: dict[str, Bucket] = field(default_factory=dict)

    def allows(self, annotator: str, now: float | None = None) -> bool:
        bucket = self.buckets.get(annotator)
        if bucket is None:
            bucket = self.buckets[annotator] = Bucket(self.per_minute / 60.0, burst_s=60.0)
        return bucket.take(1, now)
