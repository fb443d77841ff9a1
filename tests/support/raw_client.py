"""Clients of a served study that are not a browser page: what a hostile or broken annotator's
connection does, on real sockets. ``RawApp`` speaks the app socket's protocol through aiohttp's
client; ``stalled_socket`` does the WebSocket handshake by hand and then never reads, as a
frozen tab or a dropped network does."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import struct
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.browser import ServedStudy, descendants, http


def cookie_for(served: ServedStudy, token: str) -> str:
    return f"convtui_token={token}"


def app_pids(served: ServedStudy) -> list[int]:
    """The annotators' app processes below the server (not their sandboxes' children, nor
    an app's child caught between fork and exec, which still shows the app's command line:
    a full run of the suite once counted one as a second app)."""
    found: dict[int, int] = {}
    for pid in descendants(served.process.pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue
        if b"session" in argv and b"--study" in argv:
            found[pid] = int(stat[stat.rfind(b")") + 2 :].split()[1])
    return [pid for pid, parent in found.items() if parent not in found]


def annotator_of(pid: int) -> str:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return argv[argv.index(b"--annotator") + 1].decode()


def environment_of(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)


def wait_until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.1)


@dataclass
class RawApp:
    """One app socket, opened as the study's own page would open it."""

    served: ServedStudy
    token: str
    session: Any = None
    socket: Any = None
    screen_bytes: int = 0
    frames: int = 0  # binary messages: each a drawing of the app's
    told: list[str] = field(default_factory=list)
    places: list[int] = field(default_factory=list)  # in line for a start: how many before it
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    close_code: int | None = None
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(
        cls, served: ServedStudy, token: str, query: str = "width=100&height=30"
    ) -> RawApp:
        import aiohttp

        opened = cls(served, token)
        opened.session = aiohttp.ClientSession()
        origin = served.url.rstrip("/")
        opened.socket = await opened.session.ws_connect(
            served.url.replace("http", "ws") + "ws?" + query,
            headers={"Cookie": cookie_for(served, token), "Origin": origin},
            max_msg_size=0,
        )
        opened._reader = asyncio.create_task(opened._read())
        return opened

    async def _read(self) -> None:
        import aiohttp

        async for message in self.socket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.screen_bytes += len(message.data)
                self.frames += 1
            elif message.type == aiohttp.WSMsgType.TEXT:
                kind, data = json.loads(message.data)
                if kind == "convtui_ended":
                    self.told.append(data)
                elif kind == "convtui_queued":
                    self.places.append(data)
        self.close_code = self.socket.close_code
        self.closed.set()

    async def drawn(self, timeout: float = 60.0) -> None:
        """Wait until the app has drawn its screen (a few kilobytes have come)."""
        deadline = time.monotonic() + timeout
        while self.screen_bytes < 2000:
            if self.closed.is_set() or time.monotonic() > deadline:
                raise AssertionError(f"the app drew {self.screen_bytes} bytes, then {self.told}")
            await asyncio.sleep(0.05)

    async def send(self, *envelope: object) -> None:
        await self.socket.send_str(json.dumps(list(envelope)))

    async def ended(self, timeout: float) -> None:
        await asyncio.wait_for(self.closed.wait(), timeout)

    async def close(self) -> None:
        if not self.socket.closed:
            await self.socket.close()
        if self._reader is not None:
            await self._reader
        await self.session.close()


def stalled_socket(served: ServedStudy, token: str, width: int, height: int) -> socket.socket:
    """An app socket whose client does the handshake and then reads nothing: its receive
    buffer is tiny, so the server's writes soon block."""
    raw, answer = handshake(served, token, f"width={width}&height={height}")
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return raw


def handshake(served: ServedStudy, token: str, query: str) -> tuple[socket.socket, bytes]:
    """A WebSocket handshake for the app socket, by hand; the socket and the answer's head."""
    url = urllib.parse.urlsplit(served.url)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect((url.hostname, url.port))
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        (
            f"GET /ws?{query} HTTP/1.1\r\n"
            f"Host: {url.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://{url.netloc}\r\nCookie: {cookie_for(served, token)}\r\n\r\n"
        ).encode()
    )
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += raw.recv(1)
    return raw, answer


def client_frame(text: str) -> bytes:
    """A masked text frame, as a browser sends it."""
    payload = text.encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x81, 0x80 | size)
    elif size < 65536:
        head = struct.pack("!BBH", 0x81, 0x80 | 126, size)
    else:
        head = struct.pack("!BBQ", 0x81, 0x80 | 127, size)
    return head + mask + masked


def reset(raw: socket.socket) -> None:
    """Drop the connection at once (RST), as a crashed client or a cut network does."""
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    raw.close()


def sign_in_status(served: ServedStudy, token: str, origin: str | None = None) -> int:
    return http(served.url + "sign-in", form={"token": token}, headers=_origin(origin))[0]


def _origin(origin: str | None) -> dict[str, str]:
    return {} if origin is None else {"Origin": origin}
