"""`convtui serve`: the study app in a browser. textual-serve gives the terminal page's script
and the process protocol; this module decides who gets an app and which one. Nobody gets a
process before their token is checked, each annotator's process is started with their own
name (from the token, never from the request), and the page is ours: it names the study, not
the command line, and loads nothing from outside this server."""

from __future__ import annotations

import asyncio
import logging
import shlex
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from convtui.tui.web.gate import StudyGate
from convtui.tui.web.lifeline import mark_server

log = logging.getLogger("convtui.serve")

COOKIE = "convtui_token"
# A signed-in browser stays signed in for a fortnight; the token is checked on every request
# all the same, so a replaced token logs it out at once.
COOKIE_MAX_AGE_S = 14 * 24 * 3600
TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(textual_serve.__file__).with_name("static")


@dataclass(frozen=True)
class AppCommand:
    """The command line that opens one annotator's study app; ``extra`` carries this host's
    own settings (model name, isolation, …) as `session` takes them."""

    db: Path
    python: str
    extra: tuple[str, ...] = ()

    def for_annotator(self, annotator: str) -> str:
        argv = [self.python, "-m", "convtui", "session", "--study", str(self.db)]
        argv += ["--annotator", annotator, *self.extra]
        # textual-serve runs it through a shell: quoted, nothing in it is ever shell syntax,
        # and exec'd, so the app is the server's own child and ends with it (lifeline.py).
        return "exec " + shlex.join(argv)


@dataclass
class Running:
    """The app process each annotator has open: a second tab (or a reload) replaces the
    first, so two processes never write one session at once."""

    services: dict[str, AppService] = field(default_factory=dict)

    async def replace(self, annotator: str, service: AppService) -> None:
        old = self.services.get(annotator)
        if old is not None:
            log.info("%s opened the app again: closing their earlier one", annotator)
            await old.stop()
        self.services[annotator] = service

    def forget(self, annotator: str, service: AppService) -> None:
        if self.services.get(annotator) is service:
            del self.services[annotator]


class StudyServer:
    """The aiohttp application serving one study."""

    def __init__(self, gate: StudyGate, command: AppCommand, *, font_size: int = 16) -> None:
        self.gate = gate
        self.command = command
        self.font_size = font_size
        self.running = Running()
        self.downloads = DownloadManager()
        self.pages = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, keep_trailing_newline=True
        )

    def application(self) -> web.Application:
        app = web.Application()
        app.add_routes(
            [
                web.get("/", self.sign_in_page),
                web.post("/sign-in", self.sign_in),
                web.get("/sign-out", self.sign_out),
                web.get("/app", self.app_page),
                web.get("/ws", self.app_socket),
                web.get("/page.css", self.stylesheet),
                web.get("/favicon.ico", _no_icon),
                # textual-serve's own files: the terminal script, xterm's CSS and the font.
                web.static("/static", STATIC),
            ]
        )
        app.on_shutdown.append(self._close_apps)
        return app

    # --- pages -------------------------------------------------------------------------------

    def _page(self, name: str, status: int = 200, **values: object) -> web.Response:
        html = self.pages.get_template(name).render(study=self.gate.name, **values)
        response = web.Response(text=html, content_type="text/html", status=status)
        # Nothing on our pages may come from elsewhere, and no other site may frame them.
        response.headers["Content-Security-Policy"] = (
            "default-src 'self'; script-src 'self' 'unsafe-inline'; "
            "style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"
        )
        response.headers["Cache-Control"] = "no-store"
        return response

    def _refused(self, reason: str) -> web.Response:
        return self._page("refused.html", status=403, reason=reason)

    def _annotator(self, request: web.Request) -> str | None:
        return self.gate.annotator_for(request.cookies.get(COOKIE))

    async def sign_in_page(self, request: web.Request) -> web.StreamResponse:
        if self._annotator(request) is not None:
            raise web.HTTPSeeOther("app")
        return self._page("sign_in.html")

    async def sign_in(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        token = str(form.get("token", "")).strip()
        annotator = self.gate.annotator_for(token)
        if annotator is None:
            log.info("refused a sign-in with %s token", "an unknown" if token else "no")
            return self._refused(
                "That token does not open this study."
                if token
                else "A token is needed to open this study."
            )
        response = web.HTTPSeeOther("app")
        response.set_cookie(
            COOKIE,
            token,
            max_age=COOKIE_MAX_AGE_S,
            httponly=True,
            samesite="Strict",
            secure=_reached_over_https(request),
        )
        log.info("%s signed in", annotator)
        raise response

    async def sign_out(self, request: web.Request) -> web.StreamResponse:
        response = web.HTTPSeeOther("./")
        response.del_cookie(COOKIE)
        raise response

    async def app_page(self, request: web.Request) -> web.StreamResponse:
        annotator = self._annotator(request)
        if annotator is None:
            return self._refused("Your token is missing or no longer valid.")
        size = request.query.get("fontsize", "")
        font_size = int(size) if size.isdigit() and 8 <= int(size) <= 40 else self.font_size
        return self._page("app.html", annotator=annotator, font_size=font_size)

    async def stylesheet(self, _request: web.Request) -> web.StreamResponse:
        return web.FileResponse(TEMPLATES / "page.css")

    # --- the app's socket --------------------------------------------------------------------

    async def app_socket(self, request: web.Request) -> web.StreamResponse:
        annotator = self._annotator(request)
        if annotator is None:
            return self._refused("Your token is missing or no longer valid.")
        if not _same_origin(request):
            return self._refused("The app opens only from this study's own page.")
        socket = web.WebSocketResponse(heartbeat=15)
        await socket.prepare(request)

        async def close() -> None:
            await socket.close()

        service = AppService(
            self.command.for_annotator(annotator),
            write_bytes=socket.send_bytes,
            write_str=socket.send_str,
            close=close,
            download_manager=self.downloads,
        )
        await self.running.replace(annotator, service)
        log.info("%s: app opened", annotator)
        try:
            await service.start(
                _cells(request.query.get("width"), 80), _cells(request.query.get("height"), 24)
            )
            await _relay(socket, service)
        finally:
            await service.stop()
            self.running.forget(annotator, service)
            log.info("%s: app closed", annotator)
        return socket

    async def _close_apps(self, _app: web.Application) -> None:
        await asyncio.gather(*(s.stop() for s in list(self.running.services.values())))


async def _relay(socket: web.WebSocketResponse, service: AppService) -> None:
    """The browser's keys, resizes and focus changes, to the app process."""
    handlers: dict[str, Callable[[object], Awaitable[object]]] = {
        "stdin": lambda data: service.send_bytes(str(data).encode("utf-8")),
        "resize": lambda data: service.set_terminal_size(
            _sized(data, "width", 80), _sized(data, "height", 24)
        ),
        "ping": lambda data: socket.send_json(["pong", data]),
        "blur": lambda _data: service.blur(),
        "focus": lambda _data: service.focus(),
    }
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        envelope = message.json()
        if not isinstance(envelope, list) or not envelope:
            continue
        handler = handlers.get(str(envelope[0]))
        if handler is not None:
            await handler(envelope[1] if len(envelope) > 1 else None)


async def _no_icon(_request: web.Request) -> web.StreamResponse:
    return web.Response(status=204)


def _cells(value: object, default: int) -> int:
    """A terminal size in cells as the page sent it (a number, or the query's digits)."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and 0 < value < 10_000 else default


def _sized(data: object, key: str, default: int) -> int:
    return _cells(data.get(key) if isinstance(data, dict) else None, default)


def _reached_over_https(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def _same_origin(request: web.Request) -> bool:
    """A socket opened by another site's page (which the browser would send our cookie with,
    were it not SameSite) is refused: its Origin names another host."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.host


async def serve_until_stopped(
    server: StudyServer, host: str, port: int, on_ready: Sequence[str] = ()
) -> None:
    """Serve until SIGINT or SIGTERM; ``on_ready`` lines are printed once the port is bound
    (a script waiting for them knows the server answers)."""
    mark_server()
    runner = web.AppRunner(server.application(), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        for line in on_ready:
            print(line, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
