"""What a served app costs the host. A crowd arriving at once at `convtui serve`: apps start at
most ``--max-starting`` at a time (each start takes a core for about a second), the others wait
their turn, told their place in line, and every one of them is drawn in the end. An app left
alone draws about once a second (its turn's clock), not on every blink of a cursor. A real
server on loopback with the real apps (the scripted ``mock:`` model, so nothing depends on what
a model writes); the order is read from the server's log."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from support.browser import served_study
from support.raw_client import RawApp
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(180)

EVENT = re.compile(r"^\S+ (ana|ben|cy): (app starting|app opened|waiting for other apps)")


def test_apps_of_a_crowd_start_one_at_a_time_and_all_are_drawn(tmp_path: Path) -> None:
    with served_study(scripted_study(tmp_path), tmp_path, extra=["--max-starting", "1"]) as served:

        async def crowd() -> dict[str, list[int]]:
            names = ("ana", "ben", "cy")
            apps = await asyncio.gather(*(RawApp.open(served, f"token-of-{n}") for n in names))
            try:
                await asyncio.gather(*(app.drawn() for app in apps))
            finally:
                await asyncio.gather(*(app.close() for app in apps))
            return {name: app.places for name, app in zip(names, apps, strict=True)}

        places = asyncio.run(crowd())
        log = served.log.read_text(errors="replace")
    events = [m.groups() for m in map(EVENT.match, log.splitlines()) if m]
    starting = [who for who, what in events if what == "app starting"]
    assert sorted(starting) == ["ana", "ben", "cy"], log
    # Each page that waited was told its place in line, and again as it moved up: the first
    # to start waited for none, the second was next, the last was second and then next.
    first, second, last = starting
    assert places[first] == [], places
    assert places[second] == [0], places
    assert sorted(places[last]) == [0, 1], places
    assert sum(what == "waiting for other apps" for _, what in events) == 2, log
    # One at a time: each app starts only once the one before it has drawn its screen.
    running = 0
    for _, what in events:
        running += {"app starting": 1, "app opened": -1}.get(what, 0)
        assert running <= 1, log
    assert "Traceback" not in log, log[-3000:]


def test_an_idle_served_app_draws_its_clock_not_a_blinking_cursor(tmp_path: Path) -> None:
    with served_study(scripted_study(tmp_path), tmp_path) as served:

        async def idle() -> int:
            # The size a 1280x800 page asks for: the composer is on screen.
            app = await RawApp.open(served, "token-of-ana", "width=142&height=38")
            try:
                await app.send("focus")  # as the page does: the composer has the cursor
                await app.drawn()
                await asyncio.sleep(5)  # the scripted reply and its test run are over
                before = app.frames
                await asyncio.sleep(6)
                return app.frames - before
            finally:
                await app.close()

        frames = asyncio.run(idle())
    # The clock redraws once a second; a blinking cursor would add two more each second.
    assert 3 <= frames <= 9, frames
