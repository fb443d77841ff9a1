"""Many annotators at once on one `convtui serve`, as a load generator that speaks the served
app's protocol itself, so that the load measured is the server's and its apps', not a
browser's. One or two real Chromium tabs can run beside it (``--browsers``) for the real page.

Each simulated annotator is an asyncio task with its own HTTP session (aiohttp, with its own
cookie jar) doing what a person's browser does:

1. ``GET /`` (the sign-in page), ``POST /sign-in`` with the form field ``token`` and the
   page's ``Origin``; the server answers 303 to ``app`` and sets the ``convtui_token``
   cookie, and the redirect's ``GET /app`` is followed (a 503 there: the server is full);
2. the page's files, once per page load: ``static/css/xterm.css``, ``page.css``,
   ``static/js/textual.js``, ``page.js`` and the two fonts ``page.css`` names;
3. the app's WebSocket, ``ws?width=W&height=H`` (142x38 cells, what a 1280x800 Chromium
   page asks for; ``Pace.size``) with the cookie and the page's ``Origin``,
   and, once it is open, what textual.js sends: ``["resize", {"width": W, "height": H}]``,
   ``["ping", "<ms>"]`` and ``["focus"]``. The server answers with binary messages, the
   app's terminal output (fed to pyte, a terminal emulator, to know what the screen shows),
   and text ones: ``["pong", …]``, ``["convtui_queued", n]`` while the app waits for others
   to start and ``["convtui_ended", reason]`` when it ends the app;
4. then the study as a person plays it: a pause to think (``--think-s``, exponential), a
   sentence of feedback typed key by key as ``["stdin", key]`` at a person's pace
   (``--keys-per-s``, gaps drawn around it, a longer pause now and then between words, a
   wrong key corrected with backspace now and then), sent with ctrl+j (``["stdin", "\\n"]``),
   turn after turn; a session that ends (its turn budget spent) is followed by the next
   assignment (f10, ``["stdin", "\\x1b[21~"]``), after a pause.

**Key-to-echo** (ms): from just before a key's ``["stdin", key]`` message is written to the
socket to the receipt of the first binary message after which the screen (pyte's, fed every
message in order) holds one more occurrence of the text typed so far than it held when the key
was sent (counted row by row; the text ends with the new key, so it is the feedback box that
gains it). Both on this process's monotonic clock, so it includes the relay both ways, the
app's handling and drawing, and this process's own scheduling delay: ``loop_lag_p95_ms`` (how
late a 50 ms timer of this process fires) says how much of that is the generator's. Spaces are
sent but not measured (a space alone puts nothing new on the screen), nor are backspaces.
``echo_*`` are the keys typed once everyone is seated (every simulated annotator's app has
shown its first turn; ``seated_s`` after the start): the load of people typing.
``arrival_echo_p95_ms`` is the keys typed before, by the first to arrive while the others'
apps start (`serve --max-starting` at a time).

**Turns**: a turn is counted when its feedback is sent or when it ends the session (as in
served_annotators.py); the turn left waiting for feedback at the end is not. After the run
the study database's ``turns`` rows are counted: every turn played must be recorded.

**Errors**: on screen, the error signs served_annotators.py looks for, a ``convtui_ended``
message, a full server, a key never echoed, a turn that never came; in the server's log (the
server's and its apps' stdout and stderr), tracebacks and lines naming an error.

**Memory and CPU**: the server's process tree (the server, every annotator's app, their
sandboxes) sampled every ``--sample-s`` with psutil: the sum of RSS and of PSS (shared pages
counted once, from /proc/PID/smaps_rollup), the median and peak over the samples taken once
every annotator's app runs; per annotator, that total over the annotators, and the median
RSS of one app with everything under it. CPU: the tree's user+system seconds (of the living
processes and of the children they reaped) over the wall time, as a percentage of one core;
the generator's own CPU likewise (the threads that run the simulated annotators, not the
sampler's nor Chromium's; on one machine they share the cores). When the generator's loop
lags, ``--workers`` deals the simulated annotators among that many processes.

**Chromium tabs** (``--browsers``) play as served_annotators.py plays: they type as fast as
Playwright presses keys, without a person's pauses, and their echo times, on the page's own
clock (one browser frame more), are ``browser_echo_*``, apart from the protocol's.

**Under attack** (``--attack N``): each repeat runs twice in turn, quiet and then with
someone else on the host holding ``N`` connections to the server, each a request begun and
never finished, reopened as fast as the server closes them (connection_attack.py, its own
process, at most 500 new connections a second). The table has a row for each, and
``attacked_echo_p95_ratio`` is the attacked echo p95 over the quiet one, per level (medians
of the runs). N above `serve --max-per-network` (128) holds every place loopback
may hold, and keeps pushing its own oldest out.

**Until it breaks** (``--until-breaks``): after the numbers asked for, twice the last, and so
on, until a level has an error, a turn played but not recorded, or a key-to-echo p95 over
``--break-p95-ms``. Past ``--max-apps`` (serve's default: 32) the server refuses apps: that
is a break by design, so raise it to find where the machine breaks.

A run is a fresh study database (made as served_annotators.py makes it: the scripted
``mock:`` model streaming a wrong solution for ``--reply-s`` seconds, so every session waits
for feedback and turns cost no model) and a fresh `convtui serve` on loopback; each number of
annotators is run ``--repeats`` times and the table shows the medians of the runs. Run from
the clone (needs the dev extra; ``--browsers`` needs Debian's chromium):

    python scripts/perf/served_load.py [--annotators 4,8,16,32] [--until-breaks]
        [--seconds 120] [--repeats 3] [--max-apps 64] [--browsers 1] [--workers 2]
        [--attack 600] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The tests' server and browser helpers, and the browser measurement's study and turn loop.
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from served_annotators import (  # noqa: E402
    Annotator,
    make_study,
    percentile,
    recorded,
    turn_loop,
)
from served_annotators import annotate as annotate_in_browser  # noqa: E402
from support.browser import AnnotatorPage, browser, served_study  # noqa: E402

# What a browser sends for these keys (xterm.js): ctrl+j sends the feedback, f10 opens the
# next assignment, backspace deletes.
SEND, NEXT, BACKSPACE = "\n", "\x1b[21~", "\x7f"
# The files the study page loads (app.html, page.css).
PAGE_FILES = (
    "static/css/xterm.css",
    "page.css",
    "static/js/textual.js",
    "page.js",
    "static/fonts/RobotoMono-VariableFont_wght.ttf",
    "static/fonts/RobotoMono-Italic-VariableFont_wght.ttf",
)
# Feedback a person might give on code that returns None; short enough for one line of the
# feedback box at the default terminal size.
SENTENCES = (
    "the function returns None, it should return the result",
    "please compute the value instead of returning None",
    "it ignores its arguments; use them and return the answer",
    "the tests expect a result, not None. fix the return",
    "read the inputs and build the output they ask for",
)
# Server log lines that tell of an error (the log is otherwise a line per event).
LOG_ERROR = re.compile(r"Traceback|\bERROR\b|\b\w*(Error|Exception)\b|failed to start|was killed")


class Broke(Exception):
    """Something a person would see as the app failing them."""


@dataclass(frozen=True)
class Pace:
    """How a simulated person types."""

    keys_per_s: float = 5.0
    think_s: float = 3.0
    word_pause_share: float = 0.1  # words followed by a pause to think
    typo_share: float = 0.02  # keys typed wrong, then deleted
    size: tuple[int, int] = (142, 38)  # the terminal a 1280x800 Chromium page asks for


@dataclass
class ProtocolPage:
    """One annotator's study page, spoken by protocol: the HTTP session, the app's socket and
    the screen its messages draw."""

    url: str
    size: tuple[int, int]
    http: Any = None
    socket: Any = None
    screen: Any = None
    stream: Any = None
    told: list[str] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    # The echo awaited: the text, how often the screen held it when the key went, and the
    # future given the receipt time of the message that echoes it.
    _awaited: tuple[str, int, asyncio.Future[float]] | None = None
    _reader: asyncio.Task[None] | None = None

    async def open(self, token: str) -> None:
        """Sign in, load the page and open the app's socket, as the browser does."""
        import aiohttp
        import pyte

        origin = self.url.rstrip("/")
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        async with self.http.get(self.url) as answer:
            await answer.read()
        async with self.http.post(
            self.url + "sign-in", data={"token": token}, headers={"Origin": origin}
        ) as answer:
            body = await answer.text()
            if answer.status == 503:
                raise Broke("the server is full")
            if answer.status != 200 or answer.url.path != "/app":
                raise Broke(f"sign-in led to {answer.status} {answer.url.path}: {body[:200]!r}")
        for name in PAGE_FILES:
            async with self.http.get(self.url + name) as answer:
                await answer.read()
        columns, rows = self.size
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.socket = await self.http.ws_connect(
            self.url.replace("http", "ws", 1) + f"ws?width={columns}&height={rows}",
            headers={"Origin": origin},
            max_msg_size=0,
        )
        self._reader = asyncio.create_task(self._read())
        await self.send("resize", {"width": columns, "height": rows})
        await self.send("ping", str(int(time.time() * 1000)))
        await self.send("focus")

    async def _read(self) -> None:
        import aiohttp

        try:
            async for message in self.socket:
                if message.type == aiohttp.WSMsgType.BINARY:
                    at = time.monotonic()
                    self.stream.feed(message.data)
                    if self._awaited is not None:
                        needle, before, echoed = self._awaited
                        if not echoed.done() and self._count(needle) > before:
                            echoed.set_result(at)
                elif message.type == aiohttp.WSMsgType.TEXT:
                    envelope = json.loads(message.data)
                    if isinstance(envelope, list) and envelope[:1] == ["convtui_ended"]:
                        self.told.append(str(envelope[1]) if len(envelope) > 1 else "")
            if not self.told:  # closed without a reason: say how, for the report
                why = self.socket.exception()
                self.told.append(f"socket closed, code {self.socket.close_code} ({why!r})")
        except Exception as exc:
            self.told.append(f"the page's socket failed: {type(exc).__name__}: {exc}")
        finally:
            self.closed.set()

    def _count(self, needle: str) -> int:
        return sum(row.count(needle) for row in self.screen.display)

    async def send(self, *envelope: object) -> None:
        await self.socket.send_str(json.dumps(list(envelope)))

    async def key(self, key: str, typed: str | None = None, timeout: float = 30.0) -> float:
        """Press ``key``; with ``typed`` (the feedback box's text once the key lands), wait
        for its echo and return the key-to-echo time in ms (0.0 without)."""
        if typed is None:
            await self.send("stdin", key)
            return 0.0
        echoed = asyncio.get_running_loop().create_future()
        self._awaited = (typed, self._count(typed), echoed)
        sent = time.monotonic()
        await self.send("stdin", key)
        try:
            return (await asyncio.wait_for(echoed, timeout) - sent) * 1000
        except TimeoutError:
            raise Broke(
                f"{typed[-12:]!r} not echoed within {timeout:.0f} s; the feedback box "
                f"showed {self._feedback_box()!r}"
            ) from None
        finally:
            self._awaited = None

    def _feedback_box(self) -> str:
        """The feedback box's rows as the screen holds them, for a report of a key that never
        showed there (each row stripped of the panes' borders)."""
        rows = self.screen.display
        title = next((i for i, row in enumerate(rows) if "Your feedback" in row), None)
        if title is None:
            return "(no feedback box on the screen)"
        inside = [row.rsplit("│", 2)[-2].strip() if row.count("│") >= 2 else row for row in rows]
        return " / ".join(row for row in inside[title + 1 : title + 5] if "╰" not in row)

    async def text(self) -> str:
        """The screen, one line per row (what served_annotators' next_state reads)."""
        if self.closed.is_set():
            raise Broke(f"the app closed: {self.told or 'no reason given'}")
        return "\n".join(self.screen.display) if self.screen is not None else ""

    async def close(self) -> None:
        if self.socket is not None and not self.socket.closed:
            await self.socket.close()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await self._reader
        if self.http is not None:
            await self.http.close()


async def type_feedback(page: ProtocolPage, who: Annotator, words: str, pace: Pace, rng: Any):
    """``words`` typed key by key at ``pace``, each key's echo timed."""
    typed = ""
    for key in words:
        await asyncio.sleep(rng.expovariate(pace.keys_per_s))
        if key == " " and rng.random() < pace.word_pause_share:
            await asyncio.sleep(rng.expovariate(1 / pace.think_s))
        if key != " " and rng.random() < pace.typo_share:
            wrong = rng.choice("qxzjkv")
            await timed_key(page, who, wrong, typed + wrong)
            await asyncio.sleep(rng.expovariate(pace.keys_per_s))
            await page.key(BACKSPACE)
            await asyncio.sleep(rng.expovariate(pace.keys_per_s))
        typed += key
        if key == " ":
            await page.key(key)
        else:
            await timed_key(page, who, key, typed)


async def timed_key(page: ProtocolPage, who: Annotator, key: str, typed: str) -> None:
    """``key`` pressed, its echo time kept with the moment it went."""
    at = time.monotonic()
    echo_ms = await page.key(key, typed)  # a key never echoed raises: neither is kept
    who.echo_at.append(at)
    who.echo_ms.append(echo_ms)


async def annotate(page: ProtocolPage, who: Annotator, until: float, pace: Pace, seed: int):
    """A person's study until the time is up, over the protocol: served_annotators' turn
    loop with a person's pace, thinking before each turn and before the next session."""
    rng = random.Random(seed)

    async def send_feedback(turn: int) -> None:
        await asyncio.sleep(rng.expovariate(1 / pace.think_s))
        await type_feedback(page, who, rng.choice(SENTENCES), pace, rng)
        await asyncio.sleep(rng.expovariate(pace.keys_per_s))
        await page.key(SEND)

    async def next_session() -> None:
        await asyncio.sleep(rng.expovariate(1 / pace.think_s))
        await page.key(NEXT)

    await page.open(f"token-{who.name}")
    # next_state reads only page.text(), which ProtocolPage has as AnnotatorPage does.
    await turn_loop(page, who, until, send_feedback, next_session, at_least_once=True)  # type: ignore[arg-type]


async def person(url: str, who: Annotator, until: float, pace: Pace, seed: int, arrive: float):
    """One simulated annotator, arriving ``arrive`` seconds in; what breaks is an error."""
    await asyncio.sleep(arrive)
    page = ProtocolPage(url, pace.size)
    try:
        await annotate(page, who, until, pace, seed)
        if page.told:
            who.errors += [f"ended: {reason}" for reason in page.told]
    except Exception as exc:  # whatever stops a person's page is an error, not the end
        who.errors.append(f"{type(exc).__name__}: {first_line(exc)}")
    finally:
        await page.close()


def first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0][:400]


async def browser_tabs(url: str, tabs: list[Annotator], until: float) -> None:
    """Real Chromium tabs on the same server (served_annotators' driver)."""
    if not tabs:
        return
    async with browser() as chromium:
        pages = [await AnnotatorPage.open(chromium, url) for _ in tabs]

        async def one(page: Any, who: Annotator) -> None:
            try:
                await annotate_in_browser(page, who, until)
            except AssertionError as exc:
                who.errors.append(f"AssertionError: {first_line(exc)}")

        await asyncio.gather(*(one(p, a) for p, a in zip(pages, tabs, strict=True)))


async def loop_lag(lags: list[float], stop: asyncio.Event, every_s: float = 0.05) -> None:
    """How late this process's timers fire (ms): the generator's share of an echo time."""
    while not stop.is_set():
        asked = time.monotonic()
        await asyncio.sleep(every_s)
        lags.append((time.monotonic() - asked - every_s) * 1000)


@dataclass(frozen=True)
class Crowd:
    """What every simulated annotator of a run shares: the server, the end (on
    CLOCK_MONOTONIC, the same in every process), the pace, the seed and how many they are."""

    url: str
    until: float
    pace: Pace
    seed: int
    total: int


async def play(
    crowd: Crowd, people: list[tuple[int, Annotator]], tabs: list[Annotator]
) -> list[float]:
    """``people`` (each with their place in the crowd) and ``tabs`` until the crowd's end,
    arrivals spread over the first few seconds; how late this loop's timers fired."""
    spread = min(5.0, (crowd.until - time.monotonic()) / 4)
    lags: list[float] = []
    stop = asyncio.Event()
    lagging = asyncio.create_task(loop_lag(lags, stop))
    await asyncio.gather(
        *(
            person(
                crowd.url,
                who,
                crowd.until,
                crowd.pace,
                crowd.seed * 1000 + i,
                spread * i / max(1, crowd.total),
            )
            for i, who in people
        ),
        browser_tabs(crowd.url, tabs, crowd.until),
    )
    stop.set()
    await lagging
    return lags


def play_here(
    crowd: Crowd, people: list[tuple[int, Annotator]], tabs: list[Annotator]
) -> tuple[list[Annotator], list[Annotator], list[float], float]:
    """:func:`play` in this process (a worker's, or the script's own); the annotators as
    they ended (a worker's are copies), the loop lags and this thread's CPU seconds."""
    cpu = time.thread_time()
    lags = asyncio.run(play(crowd, people, tabs))
    return [who for _, who in people], tabs, lags, time.thread_time() - cpu


def play_all(
    crowd: Crowd, people: list[Annotator], tabs: list[Annotator], workers: int
) -> tuple[list[Annotator], list[Annotator], list[float], float]:
    """Everyone until the crowd's end, the simulated annotators dealt among ``workers``
    processes (the Chromium tabs in the first); what :func:`play_here` gives, over them
    all."""
    placed = list(enumerate(people))
    if workers <= 1:
        return play_here(crowd, placed, tabs)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        shares = [
            pool.submit(play_here, crowd, placed[k::workers], tabs if k == 0 else [])
            for k in range(workers)
        ]
        done = [share.result() for share in shares]
    return (
        [who for share in done for who in share[0]],
        [who for share in done for who in share[1]],
        [lag for share in done for lag in share[2]],
        sum(share[3] for share in done),
    )


# --- the server's process tree -------------------------------------------------------------


@dataclass
class Sample:
    at: float
    rss: int
    pss: int
    apps: list[int]  # RSS of each annotator's app with everything under it
    cpu_s: float


def pss_of(pid: int) -> int:
    """Proportional set size in bytes (0 where the kernel does not say)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def sample_tree(root: int) -> Sample:
    """The tree's memory and CPU now: RSS and PSS summed over its living processes; CPU as
    each living process's own time and that of the children it reaped (a process that ended
    and was reaped within the tree is counted in its parent's)."""
    import psutil

    at = time.monotonic()
    top = psutil.Process(root)
    rss = pss = 0
    cpu_s = 0.0
    sizes: dict[int, int] = {}
    apps: list[psutil.Process] = []
    for proc in [top, *top.children(recursive=True)]:
        try:
            with proc.oneshot():
                size = proc.memory_info().rss
                times = proc.cpu_times()
                argv = proc.cmdline()
        except psutil.Error:
            continue
        sizes[proc.pid] = size
        rss += size
        pss += pss_of(proc.pid)
        cpu_s += times.user + times.system + times.children_user + times.children_system
        if "session" in argv and "--study" in argv:
            apps.append(proc)
    app_sizes = []
    for app in apps:
        with contextlib.suppress(psutil.Error):
            below = app.children(recursive=True)
            app_sizes.append(sizes.get(app.pid, 0) + sum(sizes.get(p.pid, 0) for p in below))
    return Sample(at, rss, pss, app_sizes, cpu_s)


@contextlib.contextmanager
def sampling(root: int, every_s: float) -> Iterator[list[Sample]]:
    """Samples of the tree under ``root`` every ``every_s`` on a thread, until the block
    ends."""
    samples: list[Sample] = []
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            with contextlib.suppress(Exception):  # the tree changes as it is read
                samples.append(sample_tree(root))
            stop.wait(every_s)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join()
        with contextlib.suppress(Exception):
            samples.append(sample_tree(root))


# --- one run and the levels ------------------------------------------------------------------


MB = 1024 * 1024


def one_run(
    annotators: int,
    seconds: float,
    *,
    pace: Pace = Pace(),
    reply_s: float = 0.5,
    browsers: int = 0,
    max_apps: int | None = None,
    sample_s: float = 1.0,
    seed: int = 0,
    workers: int = 1,
    attack: int = 0,
) -> dict[str, Any]:
    """A fresh study and server, ``annotators`` by protocol and ``browsers`` Chromium tabs
    for ``seconds``, from ``workers`` processes; what was measured."""
    people = [Annotator(f"annotator{i}") for i in range(1, annotators + 1)]
    tabs = [Annotator(f"annotator{annotators + i}") for i in range(1, browsers + 1)]
    extra = ["--max-apps", str(max_apps)] if max_apps is not None else []
    with tempfile.TemporaryDirectory(prefix="convtui-load-") as tmp:
        folder = Path(tmp)
        db = make_study(folder, annotators + browsers, reply_s)
        with (
            served_study(db, folder, extra=extra) as served,
            sampling(served.process.pid, sample_s) as samples,
            attacking(served.url, attack, time.time() + seconds + 3) as attacked,
        ):
            started = time.monotonic()
            crowd = Crowd(served.url, started + seconds, pace, seed, annotators)
            people, tabs, lags, own_cpu = play_all(crowd, people, tabs, workers)
            wall = time.monotonic() - started
        server_log = served.log.read_text(errors="replace")
        turns_recorded, failed_sessions = recorded(db)
    run = measures(people, tabs, samples, lags, wall, own_cpu, server_log, started) | {
        "turns_recorded": turns_recorded,
        "sessions_with_errors": failed_sessions,
        "attack": attack,
        **{f"attack_{k}": v for k, v in attacked.items()},
        "server_log_lines": len(server_log.splitlines()),
    }
    if not ok(run):  # the whole log, to read what the table only counts
        kept = Path(tempfile.gettempdir()) / f"served-load-{annotators}-{seed}.log"
        kept.write_text(server_log)
        run["server_log"] = str(kept)
    return run


@contextlib.contextmanager
def attacking(url: str, count: int, until: float) -> Iterator[dict[str, Any]]:
    """connection_attack.hold in its own process until ``until``; what it did, once done."""
    said: dict[str, Any] = {}
    if count <= 0:
        yield said
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from connection_attack import hold

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = pool.submit(hold, url, count, until)
        time.sleep(2.0)  # the places taken before the first annotator arrives
        yield said
        said.update(done.result())


def measures(
    people: list[Annotator],
    tabs: list[Annotator],
    samples: list[Sample],
    lags: list[float],
    wall: float,
    own_cpu: float,
    server_log: str,
    started: float,
) -> dict[str, Any]:
    everyone = people + tabs
    # Once every simulated annotator's app has shown its first turn, the arrivals are over:
    # the keys after that are the steady state; those before met apps still starting.
    seats = [who.seated_at for who in people if who.seated_at is not None]
    seated = max(seats) if seats and len(seats) == len(people) else float("inf")
    timed = [(at, ms) for who in people for at, ms in zip(who.echo_at, who.echo_ms, strict=True)]
    echoes = [ms for at, ms in timed if at >= seated]
    arriving = [ms for at, ms in timed if at < seated]
    page_echoes = [ms for who in tabs for ms in who.echo_ms]
    # Memory once every app runs (the arrivals are over); all samples if that never came.
    full = [s for s in samples if len(s.apps) >= len(everyone)] or samples
    rss, pss = (statistics.median(getattr(s, k) for s in full) / MB for k in ("rss", "pss"))
    cpu = (samples[-1].cpu_s - samples[0].cpu_s) / (samples[-1].at - samples[0].at) * 100
    error_lines = [line for line in server_log.splitlines() if LOG_ERROR.search(line)]
    return {
        "annotators": len(people),
        "browser_tabs": len(tabs),
        "seconds": round(wall, 1),
        "seated_s": rounded(seated - started) if seated != float("inf") else None,
        "keys": len(echoes),
        "echo_median_ms": rounded(statistics.median(echoes) if echoes else None),
        "echo_p95_ms": rounded(percentile(echoes, 0.95) if echoes else None),
        "arrival_keys": len(arriving),
        "arrival_echo_p95_ms": rounded(percentile(arriving, 0.95) if arriving else None),
        "browser_echo_median_ms": rounded(statistics.median(page_echoes) if page_echoes else None),
        "browser_echo_p95_ms": rounded(percentile(page_echoes, 0.95) if page_echoes else None),
        "rss_total_mb": rounded(rss),
        "rss_total_peak_mb": rounded(max(s.rss for s in samples) / MB),
        "pss_total_mb": rounded(pss),
        "rss_per_annotator_mb": rounded(rss / len(everyone)),
        "pss_per_annotator_mb": rounded(pss / len(everyone)),
        "app_rss_mb": rounded(statistics.median(a for s in full for a in s.apps) / MB)
        if any(s.apps for s in full)
        else None,
        "server_cpu_percent": rounded(cpu),
        "generator_cpu_percent": rounded(own_cpu / wall * 100),
        "loop_lag_p95_ms": rounded(percentile(lags, 0.95) if lags else None),
        "sessions": sum(who.sessions for who in everyone),
        "turns_played": sum(who.turns_played for who in everyone),
        "errors_on_screen": sorted({e for who in everyone for e in who.errors}),
        "errors_in_server_log": len(error_lines),
        "server_log_errors": error_lines[:20],
    }


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def ok(run: dict[str, Any]) -> bool:
    """Every turn played recorded, nothing failed on screen, in a session or in the log."""
    return (
        run["turns_played"] == run["turns_recorded"]
        and not run["sessions_with_errors"]
        and not run["errors_on_screen"]
        and not run["errors_in_server_log"]
    )


SUMMED = ("errors_in_server_log", "sessions_with_errors")


def level(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One number of annotators: the median of each measure over its runs, errors summed."""
    summary: dict[str, Any] = {
        "annotators": runs[0]["annotators"],
        "attack": runs[0]["attack"],
        "runs": len(runs),
    }
    for key in runs[0]:
        values = [r[key] for r in runs if isinstance(r[key], int | float)]
        if key in summary or not values:
            continue
        summary[key] = sum(values) if key in SUMMED else statistics.median(values)
    summary["errors_on_screen"] = sorted({e for r in runs for e in r["errors_on_screen"]})
    summary["recorded_all"] = all(r["turns_played"] == r["turns_recorded"] for r in runs)
    summary["ok"] = all(ok(r) for r in runs)
    return summary


def counts(ask: str) -> list[int]:
    return [int(n) for n in ask.split(",") if n.strip()]


def levels(asked: list[int], until_breaks: bool, most: int) -> Iterator[int]:
    """The numbers of annotators asked for; with ``until_breaks``, then twice the last, and
    so on up to ``most`` (``main`` stops at the first of those that breaks)."""
    yield from asked
    if until_breaks:
        n = asked[-1] * 2
        while n <= most:
            yield n
            n *= 2


def broke(summary: dict[str, Any], p95_limit_ms: float) -> bool:
    p95 = summary.get("echo_p95_ms")
    return not summary["ok"] or (p95 is not None and p95 > p95_limit_ms)


def show(summaries: list[dict[str, Any]], out: Callable[[Any], None]) -> None:
    from rich.table import Table

    table = Table(title="convtui serve under load (medians of the runs)")
    columns = (
        ("annotators", "annotators"),
        ("attack", "attack"),
        ("runs", "runs"),
        ("seated s", "seated_s"),
        ("keys", "keys"),
        ("echo median ms", "echo_median_ms"),
        ("echo p95 ms", "echo_p95_ms"),
        ("arriving p95 ms", "arrival_echo_p95_ms"),
        ("page echo p95 ms", "browser_echo_p95_ms"),
        ("RSS MB", "rss_total_mb"),
        ("PSS MB", "pss_total_mb"),
        ("RSS/annotator MB", "rss_per_annotator_mb"),
        ("app RSS MB", "app_rss_mb"),
        ("server CPU %", "server_cpu_percent"),
        ("generator CPU %", "generator_cpu_percent"),
        ("loop lag p95 ms", "loop_lag_p95_ms"),
        ("turns played", "turns_played"),
        ("recorded", "turns_recorded"),
        ("log errors", "errors_in_server_log"),
        ("log lines", "server_log_lines"),
        ("screen errors", "errors_on_screen"),
    )
    for title, _ in columns:
        table.add_column(title, justify="right")
    for summary in summaries:
        cells = []
        for _, key in columns:
            value = summary.get(key)
            if isinstance(value, list):
                value = len(value)
            cells.append(cell(value))
        table.add_row(*cells, style=None if summary["ok"] else "red")
    out(table)
    for summary in summaries:
        for error in summary["errors_on_screen"]:
            out(f"[red]{summary['annotators']} annotators:[/red] {error}")


def cell(value: object) -> str:
    if value is None:
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=counts, default=[4, 8, 16, 32])
    parser.add_argument("--until-breaks", action="store_true", help="then double until it breaks")
    parser.add_argument("--most", type=int, default=256, help="the most --until-breaks tries")
    parser.add_argument(
        "--break-p95-ms", type=float, default=100.0, help="a key-to-echo p95 that counts as broken"
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="each run's length")
    parser.add_argument("--repeats", type=int, default=3, help="runs per number of annotators")
    parser.add_argument("--max-apps", type=int, default=None, help="passed to convtui serve")
    parser.add_argument("--browsers", type=int, default=0, help="Chromium tabs beside them")
    parser.add_argument("--reply-s", type=float, default=0.5, help="each reply's streaming time")
    parser.add_argument("--keys-per-s", type=float, default=Pace.keys_per_s)
    parser.add_argument("--think-s", type=float, default=Pace.think_s, help="mean think pause")
    parser.add_argument(
        "--workers", type=int, default=1, help="processes the simulated annotators share"
    )
    parser.add_argument("--sample-s", type=float, default=1.0, help="memory and CPU sampling")
    parser.add_argument(
        "--attack", type=int, default=0, help="each repeat again with N connections held"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here too")
    args = parser.parse_args()
    from rich.console import Console

    console = Console(stderr=True, width=None if sys.stderr.isatty() else 240)
    pace = Pace(keys_per_s=args.keys_per_s, think_s=args.think_s)
    load_before = os.getloadavg()[0]
    given = {
        name: getattr(args, name)
        for name in ("reply_s", "browsers", "max_apps", "sample_s", "workers")
    }
    summaries, runs = [], []
    ratios = {}
    for n in levels(args.annotators, args.until_breaks, args.most):
        these: dict[int, list[dict[str, Any]]] = {0: [], args.attack: []}
        for k in range(args.repeats):
            for attack in sorted(these):  # quiet and attacked in turn, side by side
                these[attack].append(
                    one_run(n, args.seconds, pace=pace, seed=k, attack=attack, **given)
                )
                print(
                    json.dumps({"repeat": k + 1, **these[attack][-1]}), file=sys.stderr, flush=True
                )
        runs += [r for kind in these.values() for r in kind]
        summaries += [level(kind) for kind in these.values()]
        if args.attack:
            quiet, attacked = summaries[-2]["echo_p95_ms"], summaries[-1]["echo_p95_ms"]
            if quiet and attacked:
                ratios[n] = round(attacked / quiet, 2)
        if n > args.annotators[-1] and broke(summaries[-1], args.break_p95_ms):
            break
    show(summaries, console.print)
    for n, ratio in ratios.items():
        console.print(f"{n} annotators: echo p95 under attack / quiet = {ratio:g}")
    result = {
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "pace": {"keys_per_s": pace.keys_per_s, "think_s": pace.think_s, "size": pace.size},
        "reply_s": args.reply_s,
        "levels": summaries,
        "attacked_echo_p95_ratio": ratios,
        "runs": runs,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if all(s["ok"] for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
