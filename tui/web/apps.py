"""The app processes `convtui serve` runs. textual-serve's AppService gives the process and
its packet protocol; what it does not give is an end that always comes: its stop waits for a
browser that may have stopped reading, and for a process that may never read the quit. Here
an app is asked to quit, then terminated, then killed, and its browser is cut off if it stops
reading; at most one app runs per annotator, and at most ``limit`` in all."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from convtui.tui.web.lifeline import APP_MEMORY_MB, EXIT_OUT_OF_MEMORY

log = logging.getLogger("convtui.serve")

# How long an app has to quit when asked, then to end on SIGTERM, before SIGKILL.
QUIT_GRACE_S = 2.0
TERM_GRACE_S = 2.0
# A browser that has taken none of the screen it was sent for this long is gone (its tab
# frozen, its network dropped without a goodbye): its app is ended rather than left blocked.
WRITE_TIMEOUT_S = 10.0
# A browser that has not taken a frame for this long is not reading: a reading one takes the
# largest screen (about 250 KB) in milliseconds on any network a person works over.
STALLED_S = 1.0
# How long a browser has to answer a goodbye before its connection is cut.
CLOSE_GRACE_S = 2.0
# The message a page gets before its app is ended on purpose: it says why (page.js shows it).
ENDED = "convtui_ended"
# How long a starting app may take to draw its first screen before the next one may start
# anyway (it keeps starting; it only stops holding the others back).
START_WAIT_S = 30.0
# The message a page gets while its app waits for others to start first: how many apps wait
# before it (page.js shows its place in the line on the "opening" card).
QUEUED = "convtui_queued"
OUT_OF_MEMORY_REASON = (
    "The app reached the memory the study allows it and was closed. Everything you sent "
    "before is recorded; open it again to go on."
)
CRASHED_REASON = "The app stopped. Everything you sent before is recorded; open it again to go on."
# Textual's web driver, whose input thread ends an app out of memory (tui/web/driver.py).
DRIVER = "convtui.tui.web.driver:StudyWebDriver"
# An app takes its input as it comes (Textual reads it in a thread of its own), so the pipe to
# it only fills under a flood of keys faster than the app can handle them. While the server
# waits for the pipe, it reads nothing more from the browser, not even the close of its tab:
# an app that has taken none of its input for this long is ended, which bounds both the
# memory its backlog of keys takes and how long it can outlive its socket (a flood of keys
# once kept an app 33 s past its closed tab, growing by 50 MB a second).
INPUT_WAIT_S = 3.0
# An app ends within this many seconds of the server seeing its socket's end: the server waits
# on the app's input at most INPUT_WAIT_S, then asks it to quit (written within 1 s), gives
# it QUIT_GRACE_S, then SIGTERM and TERM_GRACE_S, then SIGKILL.
ENDS_WITHIN_S = INPUT_WAIT_S + 1.0 + QUIT_GRACE_S + TERM_GRACE_S
DROWNED_REASON = (
    "This page sent the app far more than anyone types, faster than the app could take it, "
    "so the app was closed. Everything you sent before is recorded."
)


class Peer:
    """The browser an app draws to: its socket, and the connection under it, which can be
    cut when the browser will not take what it is sent."""

    def __init__(self, socket: web.WebSocketResponse, transport: asyncio.BaseTransport | None):
        self.socket = socket
        self.transport = transport
        self.send_bytes = socket.send_bytes
        self.send_str = socket.send_str

    def cut(self) -> None:
        if isinstance(self.transport, asyncio.WriteTransport):
            self.transport.abort()

    async def close(self, stalled: bool = False) -> None:
        """A goodbye to a browser that takes it, else the connection cut. aiohttp's close
        waits on a browser that reads nothing (and swallows a timeout's cancel while it
        does), so it runs on its own and the connection is cut if it has not ended soon."""
        if self.socket.closed and self.transport is None:
            return
        if stalled:
            self.cut()
            return
        closing = asyncio.ensure_future(self.socket.close())
        closing.add_done_callback(_quietly)
        await asyncio.wait({closing}, timeout=CLOSE_GRACE_S)
        if not closing.done():
            self.cut()


def _quietly(task: asyncio.Task[bool]) -> None:
    if not task.cancelled():
        task.exception()  # a cut connection's close ends in an error nobody waits for


class AppProcess(AppService):
    """One annotator's app, bound to the token it was opened with (so that a token replaced
    later ends it) and ended for certain by :meth:`end`."""

    def __init__(
        self,
        command: str,
        *,
        annotator: str,
        token: str,
        peer: Peer,
        downloads: DownloadManager,
        environment: dict[str, str],
    ) -> None:
        super().__init__(
            command,
            write_bytes=peer.send_bytes,
            write_str=peer.send_str,
            close=peer.close,
            download_manager=downloads,
        )
        self.annotator = annotator
        self.token = token
        self.peer = peer
        self._extra_environment = environment
        self._ending: asyncio.Task[None] | None = None
        self._sending_since: float | None = None
        self._drawn = asyncio.Event()
        self._drowned = False  # ended for not taking its input: no quit is asked of it
        self._watching: asyncio.Task[None] | None = None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = {**super()._build_environment(width, height), **self._extra_environment}
        environment["TEXTUAL_DRIVER"] = DRIVER
        return environment

    async def send_bytes(self, data: bytes) -> bool:
        """The browser's keys, to the app; False when they were not taken."""
        return await self._send(self.encode_packet(b"D", data))

    async def send_meta(self, data: dict[str, str | int | bool | None]) -> bool:
        """A resize, focus or quit, to the app; False when it was not taken."""
        return await self._send(self.encode_packet(b"M", json.dumps(data).encode()))

    async def _send(self, packet: bytes) -> bool:
        """Write to the app's input, waiting at most INPUT_WAIT_S for it to be taken (an
        app still starting gets START_WAIT_S) and ending the app that does not take it."""
        if self._process is None or self._stdin is None or self._stdin.is_closing():
            return False
        try:
            self._stdin.write(packet)
            wait = INPUT_WAIT_S if self._drawn.is_set() else START_WAIT_S
            await asyncio.wait_for(self._stdin.drain(), wait)
        except TimeoutError:
            if self._ending is None:
                log.info(
                    "%s: the app took none of its input for %.0f s (a flood of keys): ending it",
                    self.annotator,
                    INPUT_WAIT_S,
                )
                self._drowned = True
                self.end_soon(DROWNED_REASON)
            return False
        except (RuntimeError, ConnectionError):  # the app has ended, or is ending
            return False
        return True

    async def on_data(self, payload: bytes) -> None:
        self._drawn.set()
        if self._ending is not None:
            return  # the browser is being cut off: nothing more goes to it
        self._sending_since = time.monotonic()
        try:
            await asyncio.wait_for(self.peer.send_bytes(payload), WRITE_TIMEOUT_S)
            self._sending_since = None
        except Exception as exc:  # any failure to write means the browser is gone
            if isinstance(exc, ConnectionError):  # it closed its end: a tab closed, a goodbye
                log.info("%s: the browser's connection closed", self.annotator)
            else:
                log.info(
                    "%s: the browser stopped taking the screen (%s)", self.annotator, _why(exc)
                )
            self.end_soon()

    async def on_meta(self, data: bytes) -> None:
        # Only "exit" is acted on: opening URLs and delivering files are not offered in a
        # served study (the app is ours, but the text it shows is not).
        try:
            kind = json.loads(data).get("type")
        except (ValueError, AttributeError):
            kind = None
        if kind == "exit":
            self.end_soon()
        else:
            log.info(
                "%s: the app asked for %r, which a served study does not do", self.annotator, kind
            )

    async def on_packed(self, payload: bytes) -> None:
        log.info("%s: dropped a file the app tried to send to the browser", self.annotator)

    def end_soon(self, reason: str | None = None) -> None:
        """End the app without waiting here (from inside its own reading task)."""
        if self._ending is None:
            self._ending = asyncio.get_running_loop().create_task(self._end(reason))

    async def end(self, reason: str | None = None) -> None:
        """Tell the browser why (if there is a reason), end the process whatever it does, and
        cut the browser off. Safe to call again and from anywhere; never raises."""
        self.end_soon(reason)
        assert self._ending is not None
        await asyncio.shield(self._ending)

    async def queued(self, ahead: int) -> None:
        """Tell the page how many apps wait to start before this one; a browser that does
        not take it within CLOSE_GRACE_S is not waited for (its app starts all the same)."""
        # A page gone or not reading (its app is ended by the usual ways): nothing to tell.
        with contextlib.suppress(ConnectionError, asyncio.TimeoutError):
            await asyncio.wait_for(self.peer.send_str(json.dumps([QUEUED, ahead])), CLOSE_GRACE_S)

    async def start(self, width: int, height: int) -> None:
        await super().start(width, height)
        self._watching = asyncio.get_running_loop().create_task(self._watch_exit())

    async def _watch_exit(self) -> None:
        """An app that ends by itself, other than by quitting (which it says first, and which
        may be read after its end), is ended here: its page is told why and its socket
        closed, not left on a screen that no longer answers."""
        assert self._process is not None
        status = await self._process.wait()
        if self._ending is not None:
            return
        if status == EXIT_OUT_OF_MEMORY:
            limit = os.environ.get(APP_MEMORY_MB, "?")
            log.info(
                "%s: the app reached its memory limit (%s MiB) and ended", self.annotator, limit
            )
            self.end_soon(OUT_OF_MEMORY_REASON)
        elif status != 0:
            log.info("%s: the app ended by itself (status %s)", self.annotator, status)
            self.end_soon(CRASHED_REASON)
        else:
            self.end_soon()

    async def started(self, timeout: float) -> None:
        """Wait until the app has drawn its first screen, has ended, or ``timeout`` passed."""
        waits: list[asyncio.Future[object]] = [asyncio.ensure_future(self._drawn.wait())]
        if self._process is not None:
            waits.append(asyncio.ensure_future(self._process.wait()))
        _, pending = await asyncio.wait(waits, timeout=timeout, return_when="FIRST_COMPLETED")
        for wait in pending:
            wait.cancel()

    def stalled(self) -> bool:
        """Whether the browser has stopped taking the screen."""
        since = self._sending_since
        return since is not None and time.monotonic() - since > STALLED_S

    async def _end(self, reason: str | None) -> None:
        stalled = self.stalled()
        if stalled:
            # First, so that the screen it is not reading stops holding the app's output
            # back and the app can quit when asked.
            self.peer.cut()
        elif reason is not None:
            with contextlib.suppress(Exception):
                text = json.dumps([ENDED, reason])
                await asyncio.wait_for(self.peer.send_str(text), CLOSE_GRACE_S)
        await self._end_process()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        await self.peer.close(stalled)

    async def _end_process(self) -> None:
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(Exception):
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        if self._drowned:
            # It takes no input, and Textual hears SIGTERM in its event loop, behind the
            # keys it has not handled yet: neither would reach it in time.
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            return
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.send_meta({"type": "quit"}), 1.0)
        for step, grace in ((None, QUIT_GRACE_S), (process.terminate, TERM_GRACE_S)):
            if step is not None:
                with contextlib.suppress(ProcessLookupError):
                    step()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), grace)
                return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        log.info("%s: the app did not end when asked and was killed", self.annotator)


class Full(Exception):
    """No app can be opened now: the server runs as many as it may."""


class Apps:
    """The apps this server runs: one per annotator (a newer tab replaces the older, which is
    told so) and at most ``limit`` in all. At most ``starting`` start at once: an app's
    start-up (imports, its store, its sandbox) takes a core for about a second, and a crowd
    arriving together would otherwise take every core from the people already typing."""

    def __init__(self, limit: int, starting: int | None = None) -> None:
        self.limit = limit
        self._open: dict[str, AppProcess] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._starting = asyncio.Semaphore(starting or os.cpu_count() or 1)
        # Apps waiting for a start, in the order they came: each page is told its place.
        self._line: list[AppProcess] = []
        self._telling: set[asyncio.Task[None]] = set()

    def full_for(self, annotator: str) -> bool:
        """Whether opening an app for ``annotator`` would pass the limit (replacing their own
        app adds none)."""
        return len(self._open) - (annotator in self._open) >= self.limit

    async def open(self, app: AppProcess, width: int, height: int) -> None:
        """Start ``app`` as its annotator's one app; raises :class:`Full`. Connections of one
        annotator arriving together are taken one at a time, so the last one wins and no two
        apps of theirs ever run at once."""
        lock = self._locks.setdefault(app.annotator, asyncio.Lock())
        async with lock:
            old = self._open.get(app.annotator)
            if old is not None:
                log.info("%s opened the app again: closing their earlier one", app.annotator)
                await old.end("The study was opened in another tab or window; this one is closed.")
                self.forget(old)
            if self.full_for(app.annotator):
                raise Full
            self._open[app.annotator] = app
            await self._start(app, width, height)

    async def _start(self, app: AppProcess, width: int, height: int) -> None:
        """Start ``app`` once one of the ``starting`` places is free. One that must wait is
        told its place in the line, and again each time it moves up."""
        self._line.append(app)
        try:
            if self._starting.locked():
                log.info("%s: waiting for other apps to start first", app.annotator)
                self._tell(app, len(self._line) - 1)
            async with self._starting:
                self._line.remove(app)
                for ahead, waiting in enumerate(self._line):
                    self._tell(waiting, ahead)
                log.info("%s: app starting", app.annotator)
                await app.start(width, height)
                await app.started(START_WAIT_S)
        finally:
            if app in self._line:  # cancelled while it waited
                self._line.remove(app)

    def _tell(self, app: AppProcess, ahead: int) -> None:
        """Tell ``app``'s page its place without holding up the start of the app that got
        one: a page can be slow to take a message."""
        task = asyncio.get_running_loop().create_task(app.queued(ahead))
        self._telling.add(task)
        task.add_done_callback(self._telling.discard)

    def forget(self, app: AppProcess) -> None:
        if self._open.get(app.annotator) is app:
            del self._open[app.annotator]

    async def close(self, app: AppProcess, reason: str | None = None) -> None:
        await app.end(reason)
        self.forget(app)

    def running(self) -> list[AppProcess]:
        return list(self._open.values())

    async def close_all(self, reason: str) -> None:
        await asyncio.gather(*(self.close(app, reason) for app in self.running()))


def _why(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return f"nothing read for {WRITE_TIMEOUT_S:.0f} s"
    return type(exc).__name__
