"""`convtui serve` against someone else on the same host, without a token or with one: a
real server on loopback, real sockets opened by hand (the attacks are in the connections),
the real `session --study` app on the scripted ``mock:`` model. Each test failed on the
server before tui/web/connections.py and hosts.py: idle connections were held until the
open files ran out, an unfinished request was never closed, a cookie's wrong token was not
counted, another loopback address stepped around the throttle, five wrong tokens locked the
right one out, and any Host was answered."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.client import HTTPConnection
from pathlib import Path

import pytest
from support.browser import ServedStudy, http, served_study
from support.raw_client import RawApp, app_pids, sign_in_status, wait_until
from support.studies import scripted_study

pytestmark = pytest.mark.timeout(180)


@contextmanager
def served(tmp_path: Path, *extra: str) -> Iterator[ServedStudy]:
    with served_study(scripted_study(tmp_path), tmp_path, extra=extra) as study:
        yield study
    log = study.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


def connect(study: ServedStudy, source: str = "127.0.0.1") -> socket.socket:
    url = urllib.parse.urlsplit(study.url)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.bind((source, 0))
    raw.connect((url.hostname, url.port))
    return raw


def closed_by_server(raw: socket.socket, timeout: float) -> bool:
    """Whether the server closes ``raw`` within ``timeout`` (an answer is read past)."""
    raw.settimeout(timeout)
    try:
        while raw.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_idle_and_unfinished_connections_are_closed_and_few_are_held(tmp_path: Path) -> None:
    flags = ("--max-connections", "40", "--max-per-network", "20")
    with served(tmp_path, *flags, "--idle-timeout", "2") as study:
        # A request whose headers never finish, a byte a second: closed at the deadline.
        slow = connect(study)
        slow.sendall(b"GET / HTTP/1.1\r\n")
        started = time.monotonic()
        while time.monotonic() - started < 6:
            try:
                slow.sendall(b"X")
            except OSError:
                break
            time.sleep(0.5)
        assert closed_by_server(slow, 2.0)
        assert time.monotonic() - started < 6
        # Hundreds of idle connections: the server holds at most its places, each newcomer
        # pushing out the oldest, and its open files stay few.
        before = open_files(study.process.pid)
        crowd = [connect(study) for _ in range(300)]
        time.sleep(0.5)
        assert open_files(study.process.pid) - before <= 25
        # A person arriving now gets the sign-in page at once.
        status, page = http(study.url)
        assert status == 200 and "token" in page
        for raw in crowd:
            raw.close()
    log = study.log.read_text()
    # The flood costs the log a few lines, not one per connection.
    assert "closed the oldest idle connection from loopback to make room" in log
    assert len(log.splitlines()) < 40, log


def test_a_signed_in_app_goes_on_while_an_attacker_holds_every_place(tmp_path: Path) -> None:
    flags = ("--max-connections", "30", "--max-per-network", "30")
    with served(tmp_path, *flags) as study:
        # A browser's keep-alive connection, one request answered, outlasts a crowd of
        # connections that never asked anything: they are pushed out first.
        url = urllib.parse.urlsplit(study.url)
        browser = HTTPConnection(url.hostname or "", url.port, timeout=10)
        crowd: list[socket.socket] = []
        for _ in range(2):  # http.client never asks again on a new connection: one try each
            browser.request("GET", "/page.css")
            answer = browser.getresponse()
            assert answer.status == 200 and answer.read()
            crowd += [connect(study) for _ in range(60)]
            time.sleep(0.3)
        browser.close()
        for raw in crowd:
            raw.close()

        async def scenario() -> None:
            held = [connect(study) for _ in range(30)]
            app = await RawApp.open(study, "token-of-ana")  # pushes out an idle one
            await app.drawn()
            # The attacker takes every place again, and again: the app's connection is
            # signed in, so it is not among the places and is never pushed out.
            for _ in range(3):
                held += [connect(study) for _ in range(30)]
                await asyncio.sleep(0.2)
            drawn = app.screen_bytes
            await app.send("resize", {"width": 120, "height": 40})
            deadline = time.monotonic() + 20
            while app.screen_bytes == drawn and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert app.screen_bytes > drawn and not app.closed.is_set()
            await app.close()
            for raw in held:
                raw.close()

        asyncio.run(scenario())


def test_the_throttle_never_refuses_a_right_token_and_counts_every_wrong_one(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as study:
        own = study.url.rstrip("/")
        # Wrong tokens in a cookie count as typed ones do.
        for n in range(3):
            assert http(study.url + "app", cookie=f"convtui_token=cookie-guess-{n}")[0] == 403
        for n in range(2):
            assert sign_in_status(study, f"guess-{n}", origin=own) == 403
        assert sign_in_status(study, "guess-2", origin=own) == 429
        # Another loopback address is the same host: still throttled.
        url = urllib.parse.urlsplit(study.url)
        other = connect(study, source="127.0.0.2")
        body = b"token=guess-3"
        other.sendall(
            b"POST /sign-in HTTP/1.1\r\nHost: " + url.netloc.encode() + b"\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
        )
        answer = b""
        while chunk := other.recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 429"), answer[:200]
        # Throttled or not, the right token opens the study, typed or in a cookie.
        assert sign_in_status(study, "token-of-ana", origin=own) == 303
        assert http(study.url + "app", cookie="convtui_token=token-of-ana")[0] == 200
    log = study.log.read_text()
    assert log.count("a wrong token (cookie) from loopback") == 3
    assert "too many wrong tokens" in log


def test_only_names_the_server_answers_to_are_answered(tmp_path: Path) -> None:
    with served(tmp_path, "--allow-host", "study.example.org") as study:
        port = urllib.parse.urlsplit(study.url).port
        cookie = "convtui_token=token-of-ana"
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "study.example.org"):
            assert http(study.url, headers={"Host": host})[0] == 200, host
        # A page of another site whose name was rebound to this host: refused, however
        # right the cookie the browser sends along.
        for host in (f"rebound.example:{port}", "", "a b"):
            status, _ = http(study.url + "app", cookie=cookie, headers={"Host": host})
            assert status in (400, 421), host
        status, _ = http(study.url + "app", cookie=cookie, headers={"Host": "evil.example"})
        assert status == 421
        wait_until(lambda: "refused a request for host" in study.log.read_text(), 5, "a line")


def test_one_token_cannot_keep_starting_apps(tmp_path: Path) -> None:
    with served(tmp_path, "--max-app-opens", "2") as study:

        async def scenario() -> None:
            first = await RawApp.open(study, "token-of-ana")
            await first.drawn()
            second = await RawApp.open(study, "token-of-ana")  # replaces the first
            await second.drawn()
            await first.ended(10)
            running = app_pids(study)
            third = await RawApp.open(study, "token-of-ana")
            await third.ended(10)
            assert any("opened too often" in told for told in third.told), third.told
            # The app they had goes on: nothing was started or replaced.
            assert app_pids(study) == running and not second.closed.is_set()
            await second.close()
            await third.close()
            # Another annotator is not held back by ana's opens.
            other = await RawApp.open(study, "token-of-ben")
            await other.drawn()
            await other.close()

        asyncio.run(scenario())
