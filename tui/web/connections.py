"""Who may hold a connection to `convtui serve`, and for how long. Without this, anyone on the
host could open connections until the server ran out of open files, or open one and never
finish its request, and no one could sign in.

Every connection starts *waiting*: it has not yet made a request that carries a right token.
Waiting connections are few (``Caps.waiting`` in all, ``Caps.per_network`` from one network);
one more pushes out the oldest that is between requests, so an attacker holding every place
loses them to each newcomer, and a person's browser, which sends its request at once, gets
in. A request with a right token makes its connection *signed in*: it leaves the waiting
places, up to ``Caps.per_annotator`` connections per annotator (a token cannot be varied
cheaply, an address can). Any connection that is between requests for ``Caps.idle_s`` is
closed: a request's headers and an idle keep-alive both get that long; a body gets
``BODY_S`` (server.py)."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("convtui.serve")

# A browser opens about six connections to a page; a few pages and tabs at once stay far
# below these, and an attacker who holds them all is pushed out by each newcomer.
DEFAULT_WAITING = 512
DEFAULT_PER_NETWORK = 128
DEFAULT_PER_ANNOTATOR = 16
# A browser sends a request's headers within milliseconds of connecting, and reuses an idle
# connection within seconds or opens a new one.
DEFAULT_IDLE_S = 10.0
# How often idle connections are looked for, and how often refusals are summed up in a line.
SWEEP_S = 1.0
SUMMARY_S = 10.0


@dataclass(frozen=True)
class Caps:
    """The limits on connections `convtui serve --max-connections …` sets."""

    waiting: int = DEFAULT_WAITING
    per_network: int = DEFAULT_PER_NETWORK
    per_annotator: int = DEFAULT_PER_ANNOTATOR
    idle_s: float = DEFAULT_IDLE_S


def network_of(address: str | None) -> str:
    """What an attacker cannot vary cheaply about where a connection comes from: every
    loopback address is this host (127.0.0.2 is as cheap as 127.0.0.1), an IPv6 address is
    its /64 (one machine is given a whole /64), an IPv4 address is itself."""
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Guarded(asyncio.Protocol):
    """One connection: aiohttp's own protocol inside, this one's bookkeeping around it."""

    def __init__(self, inner: asyncio.Protocol, pool: ConnectionPool) -> None:
        self.inner = inner
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.network = "unknown"
        self.annotator: str | None = None
        self.busy = 0  # requests being handled on it now
        self.answered = 0  # requests it has made that were handled
        self.idle_since = time.monotonic()

    # asyncio.Protocol, passed on to aiohttp's protocol once the connection is admitted.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.network = network_of(peer[0] if isinstance(peer, tuple) and peer else None)
        if not self.pool.admit(self):
            transport.abort()
            return
        self.inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.pool.forget(self):
            self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # The server's view.

    def started_request(self) -> None:
        self.busy += 1

    def finished_request(self) -> None:
        self.busy -= 1
        self.answered += 1
        self.idle_since = time.monotonic()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.abort()


@dataclass
class _Tally:
    """Refusals since the last line in the log: the first of each kind is said at once, the
    rest summed up every ``SUMMARY_S``, so a flood costs the log a line, not a line each."""

    counts: Counter[str] = field(default_factory=Counter)
    said: set[str] = field(default_factory=set)
    last: float = field(default_factory=time.monotonic)

    def add(self, kind: str, line: str) -> None:
        if kind not in self.said:
            self.said.add(kind)
            log.info("%s (more are summed up every %d s)", line, SUMMARY_S)
            return
        self.counts[kind] += 1

    def flush(self, now: float) -> None:
        if now - self.last < SUMMARY_S:
            return
        self.last = now
        if self.counts:
            parts = ", ".join(f"{n:,} {kind}" for kind, n in sorted(self.counts.items()))
            log.info("connections in the last %d s: %s", SUMMARY_S, parts)
        self.counts.clear()


class ConnectionPool:
    """Every open connection, waiting or signed in; see the module's docstring."""

    def __init__(self, caps: Caps | None = None) -> None:
        self.caps = caps or Caps()
        # Insertion order is age: the first evictable one found is the oldest.
        self._waiting: dict[Guarded, None] = {}
        self._by_network: dict[str, dict[Guarded, None]] = {}
        self._signed_in: dict[str, dict[Guarded, None]] = {}
        self._by_transport: dict[asyncio.Transport, Guarded] = {}
        self.tally = _Tally()

    def protocol_factory(self, inner: Callable[[], asyncio.Protocol]) -> Callable[[], Guarded]:
        return lambda: Guarded(inner(), self)

    def of(self, transport: object) -> Guarded | None:
        return self._by_transport.get(transport)  # type: ignore[call-overload]

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def signed_in(self, annotator: str) -> int:
        return len(self._signed_in.get(annotator, {}))

    def admit(self, conn: Guarded) -> bool:
        """Make room for ``conn`` among the waiting (pushing out the oldest idle one of its
        network, or of all) or refuse it when every place is in the middle of a request."""
        mine = self._by_network.get(conn.network, {})
        if len(mine) >= self.caps.per_network and not self._evict(mine):
            self.tally.add("refused", self._refusal(conn.network))
            return False
        if len(self._waiting) >= self.caps.waiting and not self._evict(self._waiting):
            self.tally.add("refused", self._refusal(conn.network))
            return False
        assert conn.transport is not None
        self._by_transport[conn.transport] = conn
        self._waiting[conn] = None
        self._by_network.setdefault(conn.network, {})[conn] = None
        return True

    def _refusal(self, network: str) -> str:
        return (
            f"refused a connection from {network}: every one of the {self.caps.waiting} places "
            f"for connections not yet signed in ({self.caps.per_network} a network) is in a "
            "request"
        )

    def _evict(self, among: dict[Guarded, None]) -> bool:
        """Close the oldest idle connection in ``among`` that has never made a whole request
        (someone holding a place), else the oldest idle one (a browser's keep-alive, which it
        replaces by asking again on a new one); False when every one is in a request."""
        old = next((c for c in among if c.busy == 0 and c.answered == 0), None)
        if old is None:
            old = next((c for c in among if c.busy == 0), None)
        if old is None:
            return False
        self.tally.add(
            "closed to make room",
            f"closed the oldest idle connection from {old.network} to make room: "
            f"{self.caps.waiting} connections not yet signed in are allowed, "
            f"{self.caps.per_network} from one network",
        )
        self._drop(old)
        old.close()
        return True

    def sign_in(self, conn: Guarded, annotator: str) -> None:
        """A request on ``conn`` carried ``annotator``'s right token: it stops waiting, unless
        that annotator already holds as many connections as one may."""
        if conn.annotator is not None or conn not in self._waiting:
            return
        theirs = self._signed_in.setdefault(annotator, {})
        if len(theirs) >= self.caps.per_annotator:
            return
        self._drop(conn)
        conn.annotator = annotator
        theirs[conn] = None

    def forget(self, conn: Guarded) -> bool:
        """``conn`` has closed; whether it had been admitted."""
        if conn.transport is None or self._by_transport.pop(conn.transport, None) is None:
            return False
        self._drop(conn)
        if conn.annotator is not None:
            theirs = self._signed_in.get(conn.annotator, {})
            theirs.pop(conn, None)
            if not theirs:
                self._signed_in.pop(conn.annotator, None)
        return True

    def _drop(self, conn: Guarded) -> None:
        self._waiting.pop(conn, None)
        mine = self._by_network.get(conn.network)
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self._by_network[conn.network]

    def sweep(self, now: float | None = None) -> None:
        """Close every connection that has been between requests for ``idle_s``."""
        now = time.monotonic() if now is None else now
        idle = [
            c
            for c in self._by_transport.values()
            if c.busy == 0 and now - c.idle_since >= self.caps.idle_s
        ]
        for conn in idle:
            self.tally.add(
                "closed idle",
                f"closed a connection from {conn.network} that sent no whole request for "
                f"{self.caps.idle_s:g} s",
            )
            conn.close()
        self.tally.flush(now)

    async def sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            self.sweep()
