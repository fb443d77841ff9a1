"""`convtui serve`: the study app in a browser. textual-serve gives the terminal page's script
and the process protocol; this module decides who gets an app and which one. Nobody gets a
process before their token is checked, each annotator's process is started with their own
name (from the token, never from the request), and the page is ours: it names the study, not
the command line, and loads nothing from outside this server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import resource
import shlex
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.download_manager import DownloadManager

from convtui.core.printable import visible
from convtui.tui.settings import CONFIG_DIR, settings_path
from convtui.tui.web.apps import ENDED, AppProcess, Apps, Full, Peer
from convtui.tui.web.connections import Caps, ConnectionPool, network_of
from convtui.tui.web.gate import StudyGate
from convtui.tui.web.hosts import AllowedHosts
from convtui.tui.web.lifeline import mark_server
from convtui.tui.web.limits import (
    APP_OPENS_PER_MINUTE,
    MAX_MESSAGE_BYTES,
    AppOpens,
    InputRate,
    SignInThrottle,
    terminal_size,
)
from convtui.tui.web.quiet_log import quiet_libraries

log = logging.getLogger("convtui.serve")

COOKIE = "convtui_token"
# A signed-in browser stays signed in for a fortnight; the token is checked on every request
# all the same, so a replaced token logs it out at once.
COOKIE_MAX_AGE_S = 14 * 24 * 3600
TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(textual_serve.__file__).with_name("static")
# How many apps one host runs at once unless told otherwise (`serve --max-apps`).
DEFAULT_MAX_APPS = 32
# How often open apps' tokens are checked against the study: a replaced token ends its app
# within this many seconds.
TOKEN_CHECK_S = 1.0
# The sign-in form is a token; nothing a page posts here needs more.
MAX_FORM_BYTES = 4096
# A browser posts a 4 KiB form in milliseconds; a body still arriving after this is not one.
BODY_S = 5.0
# An open app's socket is pinged this often; one that has not answered within half of it is
# closed (aiohttp's heartbeat), so a browser that vanished without a goodbye frees its app
# about 7 s later (measured: 14.6 s at 10, 5.6 s at 4). Browsers answer pings at once, even
# from a background tab; a network stalled past 2.5 s costs the app, never a sent word.
PING_S = 5.0
WATCH = web.AppKey("token_watch", asyncio.Task)
SWEEP = web.AppKey("connection_sweep", asyncio.Task)
# What the first middleware learnt of a request: whose right token it carries, if any.
ANNOTATOR = web.RequestKey("annotator", str)
REVOKED_REASON = (
    "Your token was replaced or withdrawn by the study's organiser, so this app is closed. "
    "Everything you sent before is recorded; ask the organiser for your new token."
)
FULL_REASON = "The study's server is full right now. Please try again in a minute."
TOO_OFTEN_REASON = (
    "The app was opened too often in the last minute. Please wait a minute, then reload the "
    "page; everything you sent is recorded."
)
# Nothing on our pages comes from elsewhere, no script is inline, and no other site frames
# them. xterm.js sets its cells' styles itself, hence inline styles.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; "
    "base-uri 'none'"
)


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


class StudyServer:
    """The aiohttp application serving one study."""

    def __init__(
        self,
        gate: StudyGate,
        command: AppCommand,
        *,
        font_size: int = 16,
        max_apps: int = DEFAULT_MAX_APPS,
        max_starting: int | None = None,
        config_root: Path | None = None,
        caps: Caps | None = None,
        hosts: AllowedHosts | None = None,
        app_opens_per_minute: int = APP_OPENS_PER_MINUTE,
    ) -> None:
        self.gate = gate
        self.command = command
        self.font_size = font_size
        self.apps = Apps(max_apps, max_starting)
        self.throttle = SignInThrottle()
        self.app_opens = AppOpens(app_opens_per_minute)
        self.connections = ConnectionPool(caps)
        self.hosts = hosts or AllowedHosts.for_server()
        # Each annotator's remembered choices (the theme) are their own, not the host's.
        self.config_root = config_root or settings_path().parent / "served" / gate.study.id
        self.downloads = DownloadManager()
        self.pages = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, keep_trailing_newline=True
        )

    def application(self) -> web.Application:
        app = web.Application(
            middlewares=[self._checked, _one_line_errors], client_max_size=MAX_FORM_BYTES
        )
        app.add_routes(
            [
                web.get("/", self.sign_in_page),
                web.post("/sign-in", self.sign_in),
                web.post("/sign-out", self.sign_out),
                web.get("/app", self.app_page),
                web.get("/ws", self.app_socket),
                web.get("/page.css", self.own_file("page.css")),
                web.get("/page.js", self.own_file("page.js")),
                web.get("/favicon.ico", _no_icon),
                # textual-serve's own files: the terminal script, xterm's CSS and the font.
                web.static("/static", STATIC),
            ]
        )
        app.on_response_prepare.append(_hardened)
        app.on_startup.append(self._start_watch)
        app.on_startup.append(self._start_sweep)
        app.on_shutdown.append(self._close_apps)
        return app

    # --- pages -------------------------------------------------------------------------------

    def _page(self, name: str, status: int = 200, **values: object) -> web.Response:
        html = self.pages.get_template(name).render(study=self.gate.study.name, **values)
        return web.Response(text=html, content_type="text/html", status=status)

    def _refused(self, reason: str, status: int = 403) -> web.Response:
        return self._page("refused.html", status=status, reason=reason)

    def _annotator(self, request: web.Request) -> str | None:
        return request.get(ANNOTATOR)

    @web.middleware
    async def _checked(
        self,
        request: web.Request,
        handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    ) -> web.StreamResponse:
        """Every request: its connection is busy until it is answered; its Host must be one
        this server answers to; its cookie is a token, checked (and throttled when wrong) as
        a typed one is, and a right one signs its connection in."""
        conn = self.connections.of(request.transport)
        if conn is not None:
            conn.started_request()
        try:
            if not self.hosts.allows(request.headers.get("Host")):
                self.connections.tally.add(
                    "wrong Host", f"refused a request for host {request.host!r}"
                )
                raise web.HTTPMisdirectedRequest(
                    text="This server does not answer to that name (serve --allow-host).\n"
                )
            token = request.cookies.get(COOKIE)
            annotator = self.gate.annotator_for(token)
            if annotator is not None:
                request[ANNOTATOR] = annotator
                if conn is not None:
                    self.connections.sign_in(conn, annotator)
            elif token:
                self._wrong_token(request, "cookie")
            return await handler(request)
        finally:
            if conn is not None:
                conn.finished_request()

    def _wrong_token(self, request: web.Request, how: str) -> float:
        """Count a wrong token; the seconds its network was already to wait before a wrong
        token is answered as one again (0: answer it so). Each is logged until the network
        is throttled, then summed up."""
        network = network_of(request.remote)
        wait = self.throttle.wait_s(network)
        self.throttle.failed(network)
        if wait > 0:
            self.connections.tally.add(
                "wrong tokens while throttled",
                f"{network} goes on sending wrong tokens: too many wrong tokens, throttled",
            )
        else:
            log.info("a wrong token (%s) from %s", how, network)
        return wait

    def own_file(self, name: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def send(_request: web.Request) -> web.StreamResponse:
            return web.FileResponse(TEMPLATES / name)

        return send

    async def sign_in_page(self, request: web.Request) -> web.StreamResponse:
        if self._annotator(request) is not None:
            raise web.HTTPSeeOther("app")
        return self._page("sign_in.html")

    async def sign_in(self, request: web.Request) -> web.StreamResponse:
        if not _same_origin(request):
            log.info("refused a sign-in posted from another site's page")
            return self._refused("Sign in on this study's own page.")
        try:
            form = await asyncio.wait_for(request.post(), BODY_S)
        except TimeoutError:
            raise web.HTTPRequestTimeout(text="The form took too long to arrive.\n") from None
        token = str(form.get("token", "")).strip()
        if not token:
            return self._refused("A token is needed to open this study.")
        # The token is checked before any throttle: a right one always opens the study.
        annotator = self.gate.annotator_for(token)
        if annotator is None:
            wait = self._wrong_token(request, "typed")
            if wait > 0:
                response = self._refused(
                    f"Too many wrong tokens from here: try again in {math.ceil(wait)} s.", 429
                )
                response.headers["Retry-After"] = str(math.ceil(wait))
                return response
            return self._refused("That token does not open this study.")
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
        if not _same_origin(request):
            return self._refused("Sign out on this study's own page.")
        response = web.HTTPSeeOther("./")
        response.del_cookie(COOKIE)
        raise response

    async def app_page(self, request: web.Request) -> web.StreamResponse:
        annotator = self._annotator(request)
        if annotator is None:
            return self._refused("Your token is missing or no longer valid.")
        if self.apps.full_for(annotator):
            return self._full()
        size = request.query.get("fontsize", "")
        font_size = int(size) if size.isdigit() and 8 <= int(size) <= 40 else self.font_size
        return self._page("app.html", annotator=annotator, font_size=font_size)

    def _full(self) -> web.Response:
        response = self._page("full.html", status=503, limit=self.apps.limit)
        response.headers["Retry-After"] = "60"
        return response

    # --- the app's socket --------------------------------------------------------------------

    async def app_socket(self, request: web.Request) -> web.StreamResponse:
        token = request.cookies.get(COOKIE)
        annotator = self._annotator(request)
        if annotator is None or token is None:
            return self._refused("Your token is missing or no longer valid.")
        if not _same_origin(request):
            return self._refused("The app opens only from this study's own page.")
        # The size is read before anything is started or replaced: a page's bad numbers are
        # refused here, and never cost the annotator the app they have running.
        asked = request.query.get("width", "80"), request.query.get("height", "24")
        size = terminal_size(*asked)
        if size is None:
            log.info("%s: refused an app of size %r", annotator, asked)
            raise web.HTTPBadRequest(text="width and height must be numbers of cells")
        width, height = size
        socket = web.WebSocketResponse(heartbeat=PING_S, max_msg_size=MAX_MESSAGE_BYTES)
        await socket.prepare(request)
        if not self.app_opens.allows(annotator):
            # Before anything is started or replaced: the app they have stays.
            self.connections.tally.add(
                "app opens refused", f"{annotator}: refused an app, opened too often"
            )
            await socket.send_str(json.dumps([ENDED, TOO_OFTEN_REASON]))
            await socket.close()
            return socket
        app = AppProcess(
            self.command.for_annotator(annotator),
            annotator=annotator,
            token=token,
            peer=Peer(socket, request.transport),
            downloads=self.downloads,
            environment={CONFIG_DIR: str(self._config_dir(annotator))},
        )
        try:
            await self.apps.open(app, width, height)
        except Full:
            await socket.send_str(json.dumps([ENDED, FULL_REASON]))
            await socket.close()
            return socket
        log.info("%s: app opened", annotator)
        try:
            await _relay(socket, app)
        finally:
            await self.apps.close(app)
            log.info("%s: app closed", annotator)
        return socket

    def _config_dir(self, annotator: str) -> Path:
        # A name may hold anything a study file allowed: its digest is a safe folder name.
        return self.config_root / hashlib.sha256(annotator.encode()).hexdigest()[:16]

    # --- apps whose token changed ------------------------------------------------------------

    async def _start_watch(self, app: web.Application) -> None:
        app[WATCH] = asyncio.get_running_loop().create_task(self._watch_tokens())

    async def _watch_tokens(self) -> None:
        """End, within ``TOKEN_CHECK_S``, every app whose token `study token` replaced or
        `study reassign` withdrew: the person's page says why, and the app records nothing
        more."""
        while True:
            await asyncio.sleep(TOKEN_CHECK_S)
            for app in self.apps.running():
                try:
                    holder = self.gate.annotator_for(app.token)
                except Exception as exc:  # a busy store is asked again next time
                    log.info("could not check tokens (%s); trying again", exc)
                    break
                if holder != app.annotator:
                    log.info("%s: their token changed, closing their app", app.annotator)
                    await self.apps.close(app, REVOKED_REASON)

    async def _start_sweep(self, app: web.Application) -> None:
        app[SWEEP] = asyncio.get_running_loop().create_task(self.connections.sweep_forever())

    async def _close_apps(self, app: web.Application) -> None:
        app[WATCH].cancel()
        app[SWEEP].cancel()
        await self.apps.close_all(
            "The study's server is stopping. Everything you sent is recorded."
        )


async def _relay(socket: web.WebSocketResponse, app: AppProcess) -> None:
    """The browser's keys, resizes and focus changes, to the app process: within this
    connection's rate, and a message that makes no sense is logged in a line and dropped."""
    rate = InputRate()
    dropped = 0
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        if not rate.allows(len(message.data)):
            dropped += 1
            if dropped == 1 or dropped % 1000 == 0:
                log.info(
                    "%s: input past the rate limit dropped (%d so far)", app.annotator, dropped
                )
            continue
        try:
            envelope = json.loads(message.data)
        except ValueError:
            log.info("%s: ignored a message that is not JSON", app.annotator)
            continue
        if not isinstance(envelope, list) or not envelope:
            continue
        kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        if kind == "stdin" and isinstance(data, str):
            await app.send_bytes(data.encode("utf-8", "replace"))
        elif kind == "resize":
            size = terminal_size(
                *(data.get(k) if isinstance(data, dict) else None for k in ("width", "height"))
            )
            if size is None:
                log.info("%s: ignored a resize to no size", app.annotator)
            else:
                await app.set_terminal_size(*size)
        elif kind == "ping":
            await socket.send_json(["pong", data])
        elif kind == "blur":
            await app.blur()
        elif kind == "focus":
            await app.focus()


async def _no_icon(_request: web.Request) -> web.StreamResponse:
    return web.Response(status=204)


async def _hardened(request: web.Request, response: web.StreamResponse) -> None:
    """Every response: no version of anything, no guessing of content types, our CSP."""
    response.headers["Server"] = "convtui"
    response.headers["X-Content-Type-Options"] = "nosniff"
    # Not no-referrer: under it a browser posts our own forms with "Origin: null", which the
    # sign-in's origin check must refuse.
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Content-Security-Policy"] = CSP
    if response.content_type == "text/html":
        response.headers["Cache-Control"] = "no-store"


@web.middleware
async def _one_line_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A client's mistake (a malformed form, a body too large) is a line in the log and an
    answer, not a traceback."""
    try:
        return await handler(request)
    except web.HTTPException as answer:
        if answer.status >= 400:
            log.info(
                "%s %s from %s: %s", request.method, request.path, request.remote, answer.reason
            )
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        log.info(
            "%s %s from %s: bad request (%s)",
            request.method,
            request.path,
            request.remote,
            type(exc).__name__,
        )
        raise web.HTTPBadRequest() from None


def _reached_over_https(request: web.Request) -> bool:
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def _same_origin(request: web.Request) -> bool:
    """A form posted or a socket opened by another site's page is refused: its Origin (or,
    where a browser sends none, its Referer) names another host. A request with neither
    comes from no page at all (a script), which the token alone decides."""
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.host


class _VisibleFormatter(logging.Formatter):
    """Log lines with their names and texts (a study's, an annotator's, a library's message)
    shown, not obeyed, by the terminal: no escape sequence or bidi override reaches it."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def _log_to_stderr() -> None:
    """The server's log, a line per event, where the person who started it sees it."""
    handler = logging.StreamHandler()
    handler.setFormatter(_VisibleFormatter("%(asctime)s %(message)s", "%H:%M:%S"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


class GuardedSite(web.TCPSite):
    """aiohttp's TCP site with each connection admitted (or not) by the server's pool."""

    def __init__(self, runner: web.AppRunner, pool: ConnectionPool, host: str, port: int) -> None:
        super().__init__(runner, host, port, backlog=1024)
        self.pool = pool

    async def start(self) -> None:
        await web.BaseSite.start(self)
        assert self._runner.server is not None
        self._server = await asyncio.get_running_loop().create_server(
            self.pool.protocol_factory(self._runner.server),
            self._host,
            self._port,
            backlog=self._backlog,
        )


def _more_open_files() -> None:
    """As many open files as the host allows: the pool's caps, not the OS's, should be what
    a crowd of connections meets first."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def serve_until_stopped(
    server: StudyServer, host: str, port: int, on_ready: Sequence[str] = ()
) -> None:
    """Serve until SIGINT or SIGTERM; ``on_ready`` lines are printed once the port is bound
    (a script waiting for them knows the server answers)."""
    mark_server()
    _log_to_stderr()
    quiet_libraries()
    _more_open_files()
    runner = web.AppRunner(server.application(), access_log=None)
    await runner.setup()
    try:
        await GuardedSite(runner, server.connections, host, port).start()
        for line in on_ready:
            print(visible(line), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
