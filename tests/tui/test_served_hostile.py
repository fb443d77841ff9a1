"""`convtui serve` against annotators whose connections misbehave, on real sockets: a real
server process on loopback, the real `session --study` apps it starts (the scripted ``mock:``
model, so nothing depends on what a model writes), a real SQLite study. Clients here are not
browsers (aiohttp's client, or a socket driven by hand) because the faults are in the
connection itself; what a page shows is tested in Chromium in test_served_study.py."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from support.browser import ServedStudy, http, served_study
from support.cli import invoke
from support.raw_client import (
    RawApp,
    annotator_of,
    app_pids,
    client_frame,
    environment_of,
    handshake,
    reset,
    sign_in_status,
    stalled_socket,
    wait_until,
)
from support.raw_screen import ScreenApp
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(300)


def run(coroutine: object) -> object:
    return asyncio.run(coroutine)  # type: ignore[arg-type]


def one_app_of(served: ServedStudy, timeout: float = 20.0) -> int:
    """The one app process running, once every other has ended."""
    wait_until(lambda: len(app_pids(served)) == 1, timeout, f"one app: {app_pids(served)}")
    return app_pids(served)[0]


@asynccontextmanager
async def drawn_app(served: ServedStudy, token: str) -> AsyncIterator[RawApp]:
    """An annotator's app, signed in with ``token`` and drawn once; closed on leaving."""
    app = await RawApp.open(served, token)
    try:
        await app.drawn()
        yield app
    finally:
        await app.close()


def no_traceback(served: ServedStudy) -> None:
    log = served.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


@contextmanager
def served_cleanly(tmp_path: Path, extra: Sequence[str] = ()) -> Iterator[ServedStudy]:
    """The scripted pilot study (``tmp_path/study.db``) served until the block ends; once
    the server has stopped, its log holds no traceback."""
    with served_study(scripted_study(tmp_path), tmp_path, extra=extra) as served:
        yield served
    no_traceback(served)


# --- 1. a connection that ends badly never locks anyone out ---------------------------------


def flood(served: ServedStudy, *raws: socket.socket) -> None:
    """Make the apps behind ``raws`` draw far more than the clients' buffers take: each
    redraws its whole 500x200 screen (about 250 KB) on every resize, and its client reads none
    of it, so the server's writes wait. Resizes go on until the server's send queue for each
    client (from /proc/net/tcp) holds a screen or more and has not moved for 2 s, resizes
    still coming: its writes wait, and have for longer than a browser that reads takes for
    the largest screen (the server's STALLED_S, 1 s)."""
    queued = [-1] * len(raws)
    since = [time.monotonic()] * len(raws)
    for step in range(200):
        width = 400 + (step % 2) * 100
        for raw in raws:
            raw.sendall(client_frame(json.dumps(["resize", {"width": width, "height": 200}])))
        time.sleep(0.08)
        now = time.monotonic()
        for i, raw in enumerate(raws):
            held = server_send_queue(served, raw)
            if held != queued[i]:
                queued[i], since[i] = held, now
        if all(q >= 250_000 and now - t > 2.0 for q, t in zip(queued, since, strict=True)):
            return
    raise AssertionError(f"the server's writes never waited (its send queues: {queued} bytes)")


def server_send_queue(served: ServedStudy, raw: socket.socket) -> int:
    """Bytes the server's end of ``raw``'s connection holds unsent or unacknowledged."""
    server_port = int(served.url.rstrip("/").rsplit(":", 1)[1])
    client_port = raw.getsockname()[1]
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = (int(end.split(":")[1], 16) for end in fields[1:3])
        if (local, remote) == (server_port, client_port):
            return int(fields[4].split(":")[0], 16)
    return 0


def signs_in_again(served: ServedStudy) -> None:
    """The annotator's next connection gets a working app."""

    async def again() -> None:
        app = await RawApp.open(served, "token-of-ana")
        try:
            await app.drawn(timeout=30)
            assert not app.closed.is_set()
        finally:
            await app.close()

    run(again())


def test_a_frozen_tab_never_locks_its_annotator_out(tmp_path: Path) -> None:
    """A tab that stops reading and never says goodbye (a frozen laptop, a network gone
    without a word): the annotator's next sign-in works, and the frozen one is cut off and
    its app ended, not left blocked on its pipes. Meanwhile another annotator's tab, frozen
    on its own with no new tab to replace it, is cut off once it has read nothing for a
    while, and its app ended."""
    with served_cleanly(tmp_path) as served:
        frozen = stalled_socket(served, "token-of-ana", 500, 200)
        alone = stalled_socket(served, "token-of-ben", 500, 200)
        wait_until(lambda: len(app_pids(served)) == 2, 20, f"two apps: {app_pids(served)}")
        stuck = {annotator_of(pid): pid for pid in app_pids(served)}
        flood(served, frozen, alone)
        signs_in_again(served)
        assert stuck["ana"] not in app_pids(served)
        wait_until(lambda: stuck["ben"] not in app_pids(served), 30, "the frozen tab's app ended")
        wait_until(lambda: app_pids(served) == [], 15, "every app ended")
        frozen.close()
        alone.close()


def test_a_connection_dropped_mid_frame_frees_the_annotator(tmp_path: Path) -> None:
    with served_cleanly(tmp_path) as served:
        raw = stalled_socket(served, "token-of-ana", 500, 200)
        stuck = one_app_of(served)
        flood(served, raw)
        reset(raw)
        wait_until(lambda: stuck not in app_pids(served), 15, "the stuck app ended")
        signs_in_again(served)
        wait_until(lambda: app_pids(served) == [], 15, "every app ended")


# --- 2. one app per annotator, always --------------------------------------------------------


def test_tabs_of_one_annotator_never_run_two_apps(tmp_path: Path) -> None:
    with served_cleanly(tmp_path) as served:

        async def three_at_once() -> None:
            apps = await asyncio.gather(*(RawApp.open(served, "token-of-ana") for _ in range(3)))
            try:
                # However they raced, one app runs, and the tabs that lost were told why.
                await asyncio.to_thread(one_app_of, served)
                for _ in range(200):
                    live = [a for a in apps if not a.closed.is_set()]
                    if len(live) == 1:
                        break
                    await asyncio.sleep(0.1)
                assert len(live) == 1, [a.told for a in apps]
                await live[0].drawn()
                assert all("another tab" in a.told[0] for a in apps if a is not live[0])
            finally:
                await asyncio.gather(*(a.close() for a in apps))

        async def two_tabs_half_a_second_apart() -> None:
            first = await RawApp.open(served, "token-of-ana")
            await asyncio.sleep(0.5)
            second = await RawApp.open(served, "token-of-ana")
            try:
                await first.ended(20)
                assert first.told and "another tab" in first.told[0]
                await second.drawn()
                assert not second.closed.is_set()
                await asyncio.to_thread(one_app_of, served)
            finally:
                await first.close()
                await second.close()

        run(three_at_once())
        wait_until(lambda: app_pids(served) == [], 15, "every app ended")
        run(two_tabs_half_a_second_apart())


# --- 4. a token that changes takes effect on open sockets ----------------------------------


@pytest.mark.parametrize("change", ["token", "reassign"])
def test_a_changed_token_ends_the_open_app(tmp_path: Path, change: str) -> None:
    db = tmp_path / "study.db"  # where served_cleanly writes the study
    with served_cleanly(tmp_path) as served:

        async def scenario() -> None:
            ana = await RawApp.open(served, "token-of-ana")
            ben = await RawApp.open(served, "token-of-ben")
            try:
                await ana.drawn()
                await ben.drawn()
                pid = next(
                    p for p in app_pids(served) if b"ana" in Path(f"/proc/{p}/cmdline").read_bytes()
                )
                done = invoke("study", change, "ana", "--db", str(db))
                assert done.returncode == 0, done.stderr
                changed = time.monotonic()
                await ana.ended(10)
                assert time.monotonic() - changed < 5
                assert ana.told and "token was replaced or withdrawn" in ana.told[0]
                # Her app is gone: nothing more can be recorded under the old token.
                await asyncio.to_thread(
                    wait_until, lambda: pid not in app_pids(served), 10, "ana's app ended"
                )
                assert not ben.closed.is_set()  # nobody else is touched
            finally:
                await ana.close()
                await ben.close()

        run(scenario())
        assert http(served.url + "app", cookie="convtui_token=token-of-ana")[0] == 403


# --- 6. limits ----------------------------------------------------------------------------


def test_sizes_are_checked_before_any_app_is_touched(tmp_path: Path) -> None:
    with served_cleanly(tmp_path) as served:

        async def scenario() -> None:
            async with drawn_app(served, "token-of-ana") as ana:
                pid = await asyncio.to_thread(one_app_of, served)
                # Sizes that are no sizes: refused, and ana's running app goes on.
                for query in ("width=%C2%B2&height=30", "width=abc&height=30", "width=-4"):
                    raw, answer = handshake(served, "token-of-ana", query)
                    raw.close()
                    assert answer.startswith(b"HTTP/1.1 400"), (query, answer)
                for bad in ({"width": "²", "height": 5}, {"width": [1]}, "x", None):
                    await ana.send("resize", bad)
                await ana.send("resize", {"width": 10**9, "height": 10**9})  # bounded
                await ana.socket.send_str("not json at all")
                await asyncio.sleep(1)
                assert app_pids(served) == [pid] and not ana.closed.is_set()

        run(scenario())
        wait_until(lambda: app_pids(served) == [], 15, "every app ended")
        # A huge size is bounded, not obeyed.
        stuck = stalled_socket(served, "token-of-ana", 10**6, 10**6)
        pid = one_app_of(served)
        env = environment_of(pid)
        assert (env["COLUMNS"], env["ROWS"]) == ("500", "200")
        reset(stuck)


def test_messages_past_the_size_or_the_rate_are_refused(tmp_path: Path) -> None:
    with served_cleanly(tmp_path) as served:

        async def scenario() -> None:
            async with drawn_app(served, "token-of-ana") as ana:
                for _ in range(2000):  # far past any typist's rate, at once
                    await ana.send("stdin", "x")
                await asyncio.sleep(0.5)
                assert not ana.closed.is_set()
                await ana.socket.send_str(json.dumps(["stdin", "y" * 100_000]))
                await ana.ended(10)
                assert ana.close_code == 1009  # message too big

        run(scenario())
        wait_until(lambda: app_pids(served) == [], 15, "the app ended with its socket")
        log = served.log.read_text()
        assert "ana: input past the rate limit dropped" in log


def test_a_full_server_says_so_and_starts_nothing(tmp_path: Path) -> None:
    with served_cleanly(tmp_path, extra=["--max-apps", "1"]) as served:

        async def scenario() -> None:
            async with drawn_app(served, "token-of-ana"):
                status, page = http(served.url + "app", cookie="convtui_token=token-of-ben")
                assert status == 503 and "full right now" in page and "try again" in page
                ben = await RawApp.open(served, "token-of-ben")
                await ben.ended(10)
                assert ben.told and "full" in ben.told[0]
                await ben.close()
                assert len(app_pids(served)) == 1
                # Ana's own new tab replaces hers: that is not one more app.
                again = await RawApp.open(served, "token-of-ana")
                await again.drawn()
                await again.close()

        run(scenario())


# --- 7. sign-in and sign-out not forgeable; failures throttled and logged ------------------


def test_sign_in_and_out_are_not_forgeable_and_guessing_is_throttled(tmp_path: Path) -> None:
    db = scripted_study(tmp_path)
    with served_study(db, tmp_path) as served:
        url = served.url
        own = url.rstrip("/")
        assert sign_in_status(served, "token-of-ana", origin="http://evil.example") == 403
        assert sign_in_status(served, "token-of-ana", origin="null") == 403
        assert sign_in_status(served, "token-of-ana", origin=own) == 303
        cookie = "convtui_token=token-of-ana"
        assert http(url + "sign-out", cookie=cookie)[0] == 405  # not a plain GET
        forged = http(url + "sign-out", form={}, cookie=cookie, headers={"Origin": "http://x.y"})
        assert forged[0] == 403
        assert http(url + "sign-out", form={}, cookie=cookie, headers={"Origin": own})[0] == 303
        # Client mistakes: a line each, never a traceback.
        too_long = http(url + "sign-in", form={"token": "x" * 10_000}, headers={"Origin": own})
        assert too_long[0] == 413
        for n in range(5):
            assert sign_in_status(served, f"guess-{n}", origin=own) == 403
        status, page = http(url + "sign-in", form={"token": "guess-5"}, headers={"Origin": own})
        assert status == 429 and "try again in" in page
    log = served.log.read_text()
    assert log.count("a wrong token (typed) from loopback") == 5
    assert "too many wrong tokens" in log
    assert "guess-" not in log and "token-of-ana" not in log  # tokens are never logged
    assert "Traceback" not in log


# --- 8. each annotator's settings are their own; headers --------------------------------


def test_a_theme_chosen_in_one_app_is_that_annotators_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "host-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("CONVTUI_CONFIG_DIR", raising=False)
    db = scripted_study(tmp_path)
    with served_study(db, tmp_path) as served:

        async def scenario() -> dict[str, Path]:
            ana = await ScreenApp.open(served, "token-of-ana")
            ben = await RawApp.open(served, "token-of-ben")
            try:
                await ana.drawn()
                await ben.drawn()
                folders = {
                    annotator_of(pid): Path(environment_of(pid)["CONVTUI_CONFIG_DIR"])
                    for pid in app_pids(served)
                }
                # Ana picks a theme through the command palette, as a person would: each
                # key once her screen shows what the one before it did.
                await ana.showing("^p palette")
                for keys, shows, hides in (
                    ("\x10", "Search for commands…", ()),
                    ("theme", "Change the current theme", ("Quit the application",)),
                    ("\r", "Search for themes…", ()),
                    ("nord", "nord", ("ansi-dark",)),
                    ("\r", "", ()),
                ):
                    await ana.send("stdin", keys)
                    await ana.showing(shows, without=hides)
                mine = folders["ana"] / "tui.json"
                for _ in range(100):
                    if mine.exists():
                        break
                    await asyncio.sleep(0.1)
                return folders
            finally:
                await ana.close()
                await ben.close()

        folders = run(scenario())
    assert isinstance(folders, dict) and folders["ana"] != folders["ben"]
    assert json.loads((folders["ana"] / "tui.json").read_text())["theme"] == "nord"
    assert not (folders["ben"] / "tui.json").exists()  # ben's app keeps its own
    assert not (home / "convtui" / "tui.json").exists()  # and the host's is untouched


def test_every_answer_is_hardened(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    db = scripted_study(tmp_path)
    with served_study(db, tmp_path) as served:
        for path in ("", "page.css", "page.js", "static/js/textual.js", "nowhere"):
            try:
                answer = urllib.request.urlopen(served.url + path, timeout=10)
            except urllib.error.HTTPError as refused:
                answer = refused
            headers = answer.headers
            assert headers["X-Content-Type-Options"] == "nosniff", path
            assert headers["Server"] == "convtui", path  # no version of anything
            policy = headers["Content-Security-Policy"]
            script = next(p for p in policy.split(";") if p.strip().startswith("script-src"))
            assert "unsafe-inline" not in script and "unsafe-eval" not in script
        status, page = http(served.url + "app", cookie="convtui_token=token-of-ana")
        assert status == 200 and "<script>" not in page and "onclick" not in page
