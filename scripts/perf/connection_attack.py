"""Someone on the host holding `convtui serve`'s connection places, beside a load run
(served_load.py ``--attack N``): ``N`` connections, each with a request begun and never
finished (a slowloris), and each one the server closes opened again at once, at most
``--reconnects-per-s`` a second so the attack stays bounded. It runs in its own process, so
its work is not the load generator's, and says what it did: connections opened, and how many
the server closed."""

from __future__ import annotations

import selectors
import socket
import time
import urllib.parse
from dataclasses import asdict, dataclass
from typing import Any

# Far above what a person's browser opens, far below what would make this a test of the
# kernel rather than of the server.
RECONNECTS_PER_S = 500.0


@dataclass
class Attacked:
    connections: int = 0  # opened in all
    closed_by_server: int = 0
    held_median: int = 0  # connections open at once, sampled every second


def _open(host: str, port: int, netloc: str) -> socket.socket | None:
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.settimeout(1.0)
    try:
        raw.connect((host, port))
        raw.sendall(f"GET / HTTP/1.1\r\nHost: {netloc}\r\n".encode())
    except OSError:
        raw.close()
        return None
    raw.setblocking(False)
    return raw


def hold(
    url: str, count: int, until: float, reconnects_per_s: float = RECONNECTS_PER_S
) -> dict[str, Any]:
    """Hold ``count`` unfinished requests to ``url`` until ``until`` (time.time())."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    done = Attacked()
    watch = selectors.DefaultSelector()
    held: set[socket.socket] = set()
    allowance, at, sampled, counts = reconnects_per_s, time.monotonic(), 0.0, []
    while time.time() < until:
        now = time.monotonic()
        allowance = min(reconnects_per_s, allowance + (now - at) * reconnects_per_s)
        at = now
        while len(held) < count and allowance >= 1:
            allowance -= 1
            raw = _open(host, port, parts.netloc)
            if raw is not None:
                done.connections += 1
                held.add(raw)
                watch.register(raw, selectors.EVENT_READ)
        for key, _ in watch.select(timeout=0.02):
            ready = key.fileobj
            assert isinstance(ready, socket.socket)
            try:
                gone = not ready.recv(65536)
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            if gone:
                done.closed_by_server += 1
                watch.unregister(ready)
                held.discard(ready)
                ready.close()
        if now - sampled >= 1.0:
            sampled = now
            counts.append(len(held))
    for raw in held:
        raw.close()
    counts.sort()
    done.held_median = counts[len(counts) // 2] if counts else 0
    return asdict(done)
