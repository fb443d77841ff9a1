"""Row ids and timestamps.

Ids are ULID-like: 48 bits of milliseconds since the epoch, then 80 random bits, written in
lower-case Crockford base32 (26 characters). They sort by creation time, need no coordination
between processes, and stay unique when two databases are merged. Within one process they are
strictly increasing, so rows created in one transaction keep their order under ``ORDER BY id``.

Ids made in the same millisecond (a benchmark plans thousands of sessions in one transaction)
count on from the last one by a random step of at least 2**70, as oklog/ulid's monotonic
entropy does, rather than by one: a step of one left them differing only in their last
character or two, so no prefix shorter than the whole id told them apart. With the step, the
first 12 characters (10 of time, 2 of the random part) always differ between two ids this
process made, which is what lets ``convtui sessions list`` show short prefixes
(``convtui.sessions.reading.browse.unique_prefix_length``). Ids already stored keep their meaning:
only how the next one is chosen changed.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_RANDOM_BITS = 80
_RANDOM_LIMIT = 1 << _RANDOM_BITS
# The step between two ids of one millisecond is in [2**70, 2**71): bit 70 or a higher one
# always changes, and bit 70 is written by the 12th character. About 300 ids fit in one
# millisecond on average before the count spills into the next one (a run planning 10,000
# sessions runs some 30 ms ahead of the clock, which is harmless: ids only need to sort).
_STEP_BITS = 70
_lock = threading.Lock()
# (pid, milliseconds, random part) of the last id; the pid makes a forked child start afresh
# instead of counting on from its parent's state and minting the parent's next ids.
_last: tuple[int, int, int] = (0, 0, 0)


def new_id() -> str:
    """A new sortable id, greater than every id this process made before."""
    global _last
    with _lock:
        pid, now = os.getpid(), time.time_ns() // 1_000_000
        last_pid, last_ms, last_random = _last
        if pid == last_pid and now <= last_ms:
            # Same millisecond (or the clock went back): count on from the last id.
            step = (1 << _STEP_BITS) + secrets.randbits(_STEP_BITS)
            now, rand = last_ms, last_random + step
            if rand >= _RANDOM_LIMIT:
                now, rand = now + 1, secrets.randbits(_RANDOM_BITS)
        else:
            rand = secrets.randbits(_RANDOM_BITS)
        _last = (pid, now, rand)
    value = (now << _RANDOM_BITS) | rand
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


UTC_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_now() -> str:
    """Now in UTC as fixed-width ISO-8601 text, so that text order is time order in SQL."""
    return datetime.now(UTC).strftime(UTC_FORMAT)


def utc_of(epoch_s: float) -> str:
    """The UTC time ``epoch_s`` seconds after the Unix epoch, in the format of :func:`utc_now`."""
    return datetime.fromtimestamp(epoch_s, UTC).strftime(UTC_FORMAT)


def utc_after(seconds: float) -> str:
    """The UTC time ``seconds`` from now, in the same format as :func:`utc_now`."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime(UTC_FORMAT)
