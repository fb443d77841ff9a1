"""What one annotator can make their app hold, and how long it outlives its socket (issue 48,
point 2), on a real `convtui serve` on loopback with the real `session --study` apps it starts
(the scripted ``mock:`` model). Clients speak the app socket's protocol by hand (support/
raw_client.py), as a hostile page would: pastes and floods of keys past what a browser sends
for a person. One served study for the module; each test takes annotators of its own."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import ServedStudy, served_study
from support.raw_client import RawApp, annotator_of, app_pids, wait_until
from support.raw_screen import ScreenApp
from support.sqlite_rows import fetchall
from support.studies import scripted_study

from convtui.tui.text_bounds import MAX_FEEDBACK_CHARS, MAX_FIELD_CHARS
from convtui.tui.web.apps import DROWNED_REASON, ENDS_WITHIN_S, OUT_OF_MEMORY_REASON

pytestmark = pytest.mark.timeout(300)

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # bracketed paste, as xterm.js sends one


class TallApp(ScreenApp):
    """An app opened tall enough to show the composer under the code and the tests."""

    SIZE = (120, 45)

    @classmethod
    async def open(cls, served: ServedStudy, token: str, query: str = "") -> TallApp:
        opened = await super().open(served, token, "width=120&height=45")
        assert isinstance(opened, TallApp)
        return opened


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedStudy]:
    folder = tmp_path_factory.mktemp("bounds")
    with served_study(scripted_study(folder), folder) as served:
        yield served
    log = served.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


def run(coroutine: object) -> object:
    return asyncio.run(coroutine)  # type: ignore[arg-type]


def db_of(served: ServedStudy) -> Path:
    return served.log.parent / "study.db"


def typed_text(served: ServedStudy, annotator: str) -> list[str]:
    """The unsent words the app keeps in the store for ``annotator``."""
    return [
        text
        for (text,) in fetchall(
            db_of(served),
            "SELECT t.text FROM typed_feedback t JOIN sessions s ON s.id = t.session_id "
            "WHERE s.annotator = ?",
            (annotator,),
        )
    ]


async def flood(app: RawApp, seconds: float) -> None:
    """Keys, not a paste, as fast as the server's input rate lets through (each character a
    key press the app handles one by one): what no browser sends for a person."""
    keys = "abcdefghij" * 3000
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not app.closed.is_set():
        await app.socket.send_str(json.dumps(["stdin", keys]))
        await asyncio.sleep(0.25)


def test_feedback_and_the_palette_hold_bounded_text_and_say_so(served: ServedStudy) -> None:
    async def scenario() -> None:
        app = await TallApp.open(served, "token-of-ana")
        try:
            await app.showing("waiting for your feedback", "Your feedback", timeout=90)
            # Three pastes of 20,000 characters: the composer keeps its first 32 KiB.
            words = ("fix the counter " * 1250)[:20_000]
            for _ in range(3):
                await app.send("stdin", PASTE_START + words + PASTE_END)
            await app.showing("32 KiB")
            for _ in range(100):
                kept = typed_text(served, "ana")
                if kept and len(kept[0]) >= MAX_FEEDBACK_CHARS:
                    break
                await asyncio.sleep(0.1)
            assert [len(text) for text in kept] == [MAX_FEEDBACK_CHARS]
            # The palette's query holds a few words; a longer paste is refused, saying so.
            await app.send("stdin", "\x10")  # ctrl+p
            await app.showing("Search for commands")
            await app.send("stdin", PASTE_START + "q" * 5000 + PASTE_END)
            await app.showing(f"at most {MAX_FIELD_CHARS} characters")
        finally:
            await app.close()

    run(scenario())


def test_an_app_flooded_with_keys_ends_soon_after_its_socket_and_soon_anyway(
    served: ServedStudy,
) -> None:
    """Ben floods his app for 4 s, then closes his socket: the app ends within ENDS_WITHIN_S
    (before, the server waited on the app's input meanwhile, and the app outlived the socket
    by 16 s and more). Cy floods hers and stays: the server ends her app, telling her why."""

    async def scenario() -> None:
        ben = await TallApp.open(served, "token-of-ben")
        cy = await TallApp.open(served, "token-of-cy")
        try:
            for app in (ben, cy):
                await app.showing("waiting for your feedback", timeout=90)
            pids = {annotator_of(pid): pid for pid in app_pids(served)}

            async def ben_floods_and_leaves() -> float:
                await flood(ben, 4.0)
                closed = time.monotonic()
                await ben.socket.close()
                while pids["ben"] in app_pids(served):
                    assert time.monotonic() - closed < 60, "ben's app never ended"
                    await asyncio.sleep(0.05)
                return time.monotonic() - closed

            ended, _ = await asyncio.gather(ben_floods_and_leaves(), flood(cy, 20.0))
            assert ended < ENDS_WITHIN_S + 1, f"ben's app ended {ended:.1f} s after his socket"
            await cy.ended(15)
            assert cy.told == [DROWNED_REASON]
        finally:
            await ben.close()
            await cy.close()

    run(scenario())
    wait_until(lambda: app_pids(served) == [], 15, "every app ended")
    assert "cy: the app took none of its input" in served.log.read_text()


# Far below the default (DEFAULT_APP_MEMORY_MB): an app waiting for feedback holds about 130 MiB
# of data, and a flood of keys passes this within a second or two.
LOW_MEMORY_MB = 180


def test_an_app_past_its_memory_limit_ends_says_so_and_loses_nothing(tmp_path: Path) -> None:
    db = scripted_study(tmp_path)
    said = "please count them"

    async def scenario(served: ServedStudy) -> None:
        app = await TallApp.open(served, "token-of-ana")
        try:
            await app.showing("waiting for your feedback", "Your feedback", timeout=90)
            (pid,) = app_pids(served)
            limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
            data = next(line for line in limits if line.startswith("Max data size"))
            assert data.split()[3] == str(LOW_MEMORY_MB * 1024 * 1024)  # the soft limit
            # A turn recorded first: the app's end must lose nothing of it.
            await app.send("stdin", said)
            await app.showing(said)
            await app.send("stdin", "\n")  # ctrl+j sends
            await app.showing("turn 1 · ", "waiting for your feedback")
            await flood(app, 20.0)
            await app.ended(15)
            assert app.told == [OUT_OF_MEMORY_REASON]
        finally:
            await app.close()

    with served_study(db, tmp_path, extra=["--app-memory-mb", str(LOW_MEMORY_MB)]) as served:
        run(scenario(served))
        wait_until(lambda: app_pids(served) == [], 15, "the app ended")
    log = served.log.read_text(errors="replace")
    assert f"ana: the app reached its memory limit ({LOW_MEMORY_MB} MiB) and ended" in log
    assert "Traceback" not in log and "MemoryError" not in log, log[-3000:]
    turns = fetchall(
        db,
        "SELECT t.idx, t.verbal_feedback FROM turns t JOIN sessions s ON s.id = t.session_id "
        "WHERE s.annotator = 'ana'",
    )
    assert (0, said) in turns
    assert fetchall(db, "PRAGMA integrity_check") == [("ok",)]
