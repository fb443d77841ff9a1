"""A served study (`convtui serve`, a real child process on a free loopback port) and real
browser pages on it: Debian's chromium, headless, driven by Playwright (told where chromium
is; it never downloads a browser). What a page shows is read back by replaying the bytes its
terminal received through pyte, a terminal emulator: the page draws on a canvas, which has
no text to read."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from support import processes
from support.data import DATA
from support.llama_server import free_port

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

# The flags a sandboxed CI machine needs: no GPU, no sandbox as root, and none of chromium's
# own calls home (on a closed network they fail by the dozen and slow every start).
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

# Records every frame the page's terminal socket receives (base64, with the time it came)
# and the size the page asked for, before textual.js opens its socket.
CAPTURE_SCRIPT = """
(() => {
  const Native = window.WebSocket;
  const seen = { frames: [], size: null, keys: [], names: [] };
  // When each key was pressed, on the clock the frames are stamped with (for echo times).
  // And which key, as Textual spells it (ctrl+g), for the tests of what a browser keeps.
  document.addEventListener("keydown", (event) => {
    seen.keys.push(performance.now());
    seen.names.push((event.ctrlKey ? "ctrl+" : "") + event.key.toLowerCase());
  }, true);
  window.__convtui = seen;
  const encode = (bytes) => {
    let text = "";
    for (let i = 0; i < bytes.length; i += 8192) {
      text += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    }
    return btoa(text);
  };
  function Capturing(url, protocols) {
    const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    const query = new URL(url).searchParams;
    seen.size = [Number(query.get("width")), Number(query.get("height"))];
    const send = socket.send.bind(socket);
    socket.send = (data) => {
      if (typeof data === "string" && data.startsWith('["resize"')) {
        const sent = JSON.parse(data)[1];
        seen.size = [sent.width, sent.height];
      }
      send(data);
    };
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") {
        seen.frames.push([performance.now(), encode(new Uint8Array(event.data))]);
      }
    });
    return socket;
  }
  Capturing.prototype = Native.prototype;
  Object.assign(Capturing, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket = Capturing;
})();
"""


def chromium(playwright_own: str) -> str:
    """Debian's chromium; else the one `python -m playwright install chromium` fetched
    (``playwright_own``, where a machine without apt has it); else the test is skipped,
    saying how to get one."""
    for found in (shutil.which("chromium"), shutil.which("chromium-browser"), playwright_own):
        if found and Path(found).exists():
            return found
    pytest.skip(
        "the browser tests need chromium: apt-get install chromium (what .ci/run does), or "
        "python -m playwright install chromium"
    )


@dataclass
class ServedStudy:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def app_processes(self) -> list[int]:
        """Pids of the app processes the server has started and that still run."""
        return descendants(self.process.pid)

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc)."""
    return sorted(processes.descendants(pid, processes.proc_table(zombies=False)))


@contextmanager
def served_study(
    db: Path, log_dir: Path, port: int | None = None, extra: Sequence[str] = ()
) -> Iterator[ServedStudy]:
    """`convtui serve --db DB [extra…]` on a free loopback port until the block ends, run
    from the database's folder (where a study's relative ``mock:`` file is found)."""
    port = port or free_port()
    log_path = log_dir / f"serve-{port}-{time.monotonic_ns()}.log"
    env = {**os.environ, "CONVTUI_DATA_DIR": str(DATA)}
    command = [sys.executable, "-m", "convtui", "serve", "--db", str(db), "--port", str(port)]
    command += extra
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=db.parent
        )
    served = ServedStudy(f"http://127.0.0.1:{port}/", process, log_path)
    try:
        deadline = time.monotonic() + 30
        while "Serving study" not in log_path.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"convtui serve did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.05)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def http(
    url: str,
    *,
    form: dict[str, str] | None = None,
    cookie: str = "",
    headers: dict[str, str] | None = None,
    method: str | None = None,
) -> tuple[int, str]:
    """(status, body) of a GET, or of a form POST when ``form`` is given; redirects not
    followed."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    data = urllib.parse.urlencode(form).encode() if form is not None else None
    sent = {**({"Cookie": cookie} if cookie else {}), **(headers or {})}
    request = urllib.request.Request(url, data=data, headers=sent, method=method)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode("utf-8", "replace")


@asynccontextmanager
async def browser() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        path = chromium(playwright.chromium.executable_path)
        launched = await playwright.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class AnnotatorPage:
    """One person's tab: a browser context of its own (its own cookie), and the screen its
    terminal shows, kept up to date from the captured frames."""

    page: Page
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    frames: list[tuple[float, bytes]] = field(default_factory=list)
    _screen: Any = None
    _stream: Any = None

    @classmethod
    async def open(cls, browser: Browser, url: str, size: tuple[int, int] = (1280, 800)):
        context = await browser.new_context(viewport={"width": size[0], "height": size[1]})
        await context.add_init_script(CAPTURE_SCRIPT)
        page = await context.new_page()
        opened = cls(page)
        page.on("request", lambda request: opened.requests.append(request.url))
        page.on("console", lambda message: opened.console.append(message.text))
        await page.goto(url)
        return opened

    async def sign_in(self, token: str) -> int:
        """Give the token on the sign-in page; the HTTP status of the page it leads to."""
        await self.page.fill("#token", token)
        async with self.page.expect_navigation() as navigation:
            await self.page.click("button[type=submit]")
        answer = await navigation.value
        return answer.status if answer is not None else 0

    async def text(self) -> str:
        """The terminal's screen as text, one line per row."""
        await self._feed_new_frames()
        return self._shown()

    async def echo_time_ms(self, needle: str, timeout: float = 30.0) -> float:
        """Milliseconds from the last key pressed to the first frame after which the screen
        shows ``needle``, both on the page's clock."""
        pressed = await self.page.evaluate("() => window.__convtui.keys.at(-1)")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown_at = await self._feed_new_frames(needle, after=pressed)
            if shown_at is not None:
                return shown_at - pressed
            await asyncio.sleep(0.005)
        raise AssertionError(f"{needle!r} was not echoed within {timeout} s")

    async def _feed_new_frames(self, needle: str = "", after: float = 0.0) -> float | None:
        """Feed the frames received since the last call, one by one; with ``needle``, the
        time of the first frame from ``after`` on that leaves it on the screen."""
        import pyte

        seen = await self.page.evaluate(
            "() => window.__convtui ? "
            "{size: window.__convtui.size, frames: window.__convtui.frames.splice(0)} : null"
        )
        if not seen or not seen["size"]:
            return None
        columns, rows = seen["size"]
        if self._screen is None:
            self._screen = pyte.Screen(columns, rows)
            self._stream = pyte.ByteStream(self._screen)
        elif (self._screen.columns, self._screen.lines) != (columns, rows):
            self._screen.resize(rows, columns)
        found: float | None = None
        for at, encoded in seen["frames"]:
            data = base64.b64decode(encoded)
            self.frames.append((at, data))
            self._stream.feed(data)
            if needle and found is None and at >= after and needle in self._shown():
                found = at
        return found

    def _shown(self) -> str:
        return "" if self._screen is None else "\n".join(self._screen.display)

    async def wait_for(self, *needles: str, timeout: float = 30.0) -> str:
        """The screen, once every one of ``needles`` is on it."""
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = await self.text()
            if all(needle in shown for needle in needles):
                return shown
            await asyncio.sleep(0.1)
        raise AssertionError(f"the page never showed {needles!r}; it shows:\n{shown}")

    async def focus(self) -> None:
        await self.page.click("#terminal")

    async def press(self, key: str) -> None:
        await self.page.keyboard.press(key)

    async def type(self, text: str) -> None:
        await self.page.keyboard.type(text)


@asynccontextmanager
async def signed_in(
    served: ServedStudy, token: str = "token-of-ana", size: tuple[int, int] = (1280, 800)
) -> AsyncIterator[AnnotatorPage]:
    """A tab of a fresh browser on ``served``, signed in with ``token``."""
    async with browser() as chromium:
        page = await AnnotatorPage.open(chromium, served.url, size)
        assert await page.sign_in(token) == 200
        yield page
