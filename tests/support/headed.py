"""A headed Chromium on a virtual X display (Xvfb), and keys pressed the way a person's
keyboard sends them (xdotool, through the X server), not through the DevTools protocol:
only so does the browser see a key before the page and keep the ones it reserves."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.browser import CAPTURE_SCRIPT, CHROMIUM_FLAGS, chromium

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

HINT = "apt-get install xvfb xdotool (what .ci/run does)"


@dataclass(frozen=True)
class Display:
    name: str  # ":77"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "DISPLAY": self.name}

    def xdotool(self, *args: str) -> str:
        done = subprocess.run(
            ["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=30
        )
        if done.returncode != 0:
            raise AssertionError(f"xdotool {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def press(self, combo: str) -> None:
        """``combo`` (xdotool's spelling: ctrl+g) to the window that has the focus."""
        self.xdotool("key", "--clearmodifiers", combo)

    def focus_browser(self, window: str | None = None, timeout: float = 20.0) -> str:
        """The focus to ``window``, or to the browser's largest visible window, which is
        returned (there is no window manager to give it). Chromium maps short-lived windows
        of its own (bubbles, a closed window on its way out) beside the page's: one can be
        unmapped between the search and the focus, which X answers with BadMatch, so the
        search is made again until a window takes the focus."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                chosen = window or max(self._browser_windows(), key=self._area)
                self.xdotool("windowfocus", "--sync", chosen)
                return chosen
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _browser_windows(self) -> list[str]:
        return self.xdotool("search", "--sync", "--onlyvisible", "--class", "chromium").split()

    def _area(self, window: str) -> int:
        shape = self.xdotool("getwindowgeometry", window).split("Geometry:")[-1].split()[0]
        width, height = shape.split("x")
        return int(width) * int(height)


@contextmanager
def virtual_display() -> Iterator[Display]:
    """Xvfb on a free display number until the block ends; the test is skipped, saying how
    to get them, where Xvfb or xdotool is missing."""
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            pytest.skip(f"the headed-browser test needs {tool}: {HINT}")
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Xvfb :{number} did not start")
            time.sleep(0.05)
        yield Display(f":{number}")
    finally:
        server.terminate()
        server.wait(timeout=10)


@asynccontextmanager
async def headed_chromium(display: Display, profile: Path) -> AsyncIterator[BrowserContext]:
    """A headed Chromium on ``display`` with a profile of its own: one browser context, in
    which the windows and tabs a key opens show up as pages."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium(playwright.chromium.executable_path),
            headless=False,
            args=CHROMIUM_FLAGS,
            env=display.env,
            viewport={"width": 1200, "height": 800},
        )
        await context.add_init_script(CAPTURE_SCRIPT)
        try:
            yield context
        finally:
            await context.close()
