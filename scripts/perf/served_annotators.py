"""Several annotators at once in real browsers on one `convtui serve`: for a set time, each
types feedback key by key and sends it, turn after turn, session after session. Measures the
time from a key press to its echo on the page (the frame that puts the character on the
screen, both on the page's clock: rendering adds one browser frame, about 16 ms), and checks
that every turn played is recorded and that no database error reached anyone's screen.

The model is the scripted ``mock:`` one (each reply streams for --reply-s seconds), so the
load is the app, the server, the sandbox and SQLite, not a model. Needs Debian's chromium
and the dev extra (Playwright, pyte); run from the clone:

    python scripts/perf/served_annotators.py [--annotators 4] [--seconds 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The browser driver the tests use (tests/support/browser.py), not a second copy of it.
sys.path.insert(0, str(ROOT / "tests"))

from support.browser import AnnotatorPage, browser, served_study  # noqa: E402

from convtui.core.studies.spec import StudySpec, assign, token_hash  # noqa: E402
from convtui.sessions import Store  # noqa: E402
from convtui.sessions.studies.study_rows import create_study  # noqa: E402

WRONG_CODE = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"
# Enough that no annotator runs out in a long run (about 10 sessions each in 5 minutes here).
TASKS = tuple(f"BigCodeBench/{n}" for n in range(2, 402))
TURNS = 4
# Signs that a database error reached a person: the app's error notes and toasts.
ERROR_SIGNS = ("database is locked", "session error", "internal error", "OperationalError")


@dataclass
class Annotator:
    name: str
    turns_played: int = 0
    sessions: int = 0
    echo_ms: list[float] = field(default_factory=list)
    echo_at: list[float] = field(default_factory=list)  # when each timed key went (monotonic)
    errors: list[str] = field(default_factory=list)
    seated_at: float | None = None  # when their app first showed a turn (monotonic)


def make_study(folder: Path, annotators: int, reply_s: float) -> Path:
    replies = folder / "replies.jsonl"
    replies.write_text(json.dumps({"purpose": "generate", "text": WRONG_CODE, "delay_s": reply_s}))
    names = tuple(f"annotator{i}" for i in range(1, annotators + 1))
    spec = StudySpec(
        name="load",
        tasks=TASKS,
        model=f"mock:{replies}",
        feedback="CF,EF:full,VF:expert",
        turns=TURNS,
        protocol="convtui",
        user="human",
        annotators=names,
        overlap=1,
        seed=0,
    )
    db = folder / "study.db"
    with Store.open(db) as store:
        given = assign(TASKS, spec.annotators, spec.overlap, spec.seed)
        create_study(
            store, spec, spec.config(), given, {n: token_hash(f"token-{n}") for n in names}
        )
    return db


# How a session that ends by itself says so on its status line.
ENDED = ("turn limit reached", "· solved ·", "stalled")


SESSION = re.compile(r"· session (\w+)")


async def next_state(
    page: AnnotatorPage, who: Annotator, turn: int, ended: str | None = None
) -> tuple[str, str]:
    """Wait until turn ``turn`` waits for feedback ("waiting") or the session ended ("ended"),
    in a session other than ``ended`` (the one just left may still be drawn); the state and
    the session's id."""
    deadline = time.monotonic() + 120
    shown = ""
    while time.monotonic() < deadline:
        shown = await page.text()
        found = SESSION.search(shown.split("\n", 1)[0])
        if found is None or found.group(1) == ended:
            await asyncio.sleep(0.05)
            continue
        session = found.group(1)
        if f"turn {turn} ·" in shown and "waiting for your feedback" in shown:
            who.errors += [sign for sign in ERROR_SIGNS if sign in shown]
            return "waiting", session
        if f"turn {turn} ·" in shown and any(end in shown for end in ENDED):
            who.errors += [sign for sign in ERROR_SIGNS if sign in shown]
            return "ended", session
        await asyncio.sleep(0.05)
    raise AssertionError(f"{who.name}: turn {turn} neither waited nor ended:\n{shown}")


async def turn_loop(
    page: AnnotatorPage,
    who: Annotator,
    until: float,
    send_feedback: Callable[[int], Awaitable[None]],
    next_session: Callable[[], Awaitable[None]],
    at_least_once: bool = False,
) -> None:
    """Turn after turn until the time is up. A turn is counted once it is a turn of the
    store: when its feedback is sent (``send_feedback(turn)``), or when it ends the session
    (its turn budget spent, or solved; then ``next_session()`` opens the next). The turn
    left waiting for feedback at the end is not (its reply and test run are recorded, as
    calls and an execution, and come back when the session is resumed, but it is not a turn
    yet). ``at_least_once``: whoever opens the app sends feedback once, however late their
    first turn comes."""
    turn, left = 0, None
    while True:
        state, session = await next_state(page, who, turn, left)
        who.seated_at = who.seated_at or time.monotonic()
        if turn == 0:
            who.sessions += 1
        if state == "ended":
            who.turns_played += 1
            if time.monotonic() >= until:
                return
            await next_session()
            turn, left = 0, session
            continue
        if time.monotonic() >= until and (who.turns_played or not at_least_once):
            return
        await send_feedback(turn)
        who.turns_played += 1
        turn += 1


async def annotate(page: AnnotatorPage, who: Annotator, until: float) -> None:
    """A browser's study: each key pressed as fast as Playwright presses it, each echo
    timed on the page."""

    async def send_feedback(turn: int) -> None:
        await page.page.focus(".xterm-helper-textarea")
        words = f"{who.name} turn {turn} please fix"
        for end in range(1, len(words) + 1):
            await page.page.keyboard.press(words[end - 1])
            if words[end - 1] != " ":  # a space alone leaves nothing new to see
                who.echo_ms.append(await page.echo_time_ms(words[:end]))
        await page.press("Control+j")

    await page.sign_in(f"token-{who.name}")
    await turn_loop(page, who, until, send_feedback, lambda: page.press("F10"))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def play(url: str, annotators: list[Annotator], seconds: float) -> None:
    until = time.monotonic() + seconds
    async with browser() as chromium:
        pages = [await AnnotatorPage.open(chromium, url) for _ in annotators]
        await asyncio.gather(
            *(annotate(p, a, until) for p, a in zip(pages, annotators, strict=True))
        )


def recorded(db: Path) -> tuple[int, int]:
    """(turns recorded, sessions with an error recorded)."""
    with sqlite3.connect(db) as conn:
        turns = conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
        failed = conn.execute("SELECT COUNT(*) FROM sessions WHERE error != ''").fetchone()[0]
    return turns, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--reply-s", type=float, default=0.5, help="each reply's streaming time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    annotators = [Annotator(f"annotator{i}") for i in range(1, args.annotators + 1)]
    with tempfile.TemporaryDirectory() as folder:
        db = make_study(Path(folder), args.annotators, args.reply_s)
        started = time.monotonic()
        with served_study(db, Path(folder)) as served:
            asyncio.run(play(served.url, annotators, args.seconds))
            server_log = served.log.read_text(errors="replace")
        wall = time.monotonic() - started
        turns_recorded, failed_sessions = recorded(db)
    echoes = [ms for a in annotators for ms in a.echo_ms]
    result = {
        "annotators": args.annotators,
        "seconds": round(wall, 1),
        "sessions": sum(a.sessions for a in annotators),
        "turns_played": sum(a.turns_played for a in annotators),
        "turns_recorded": turns_recorded,
        "sessions_with_errors": failed_sessions,
        "errors_on_screen": sorted({e for a in annotators for e in a.errors}),
        "tracebacks_in_server_log": server_log.count("Traceback"),
        "keys": len(echoes),
        "echo_median_ms": round(statistics.median(echoes), 1),
        "echo_p95_ms": round(percentile(echoes, 0.95), 1),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:>26}  {value}")
    ok = (
        result["turns_played"] == turns_recorded
        and not failed_sessions
        and not result["errors_on_screen"]
        and not result["tracebacks_in_server_log"]
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
