"""`convtui serve`: a study played through a real browser. Debian's chromium (headless,
driven by Playwright) opens the served app for three annotators at once; the app is the real
`session --study` process started by the server, with the scripted ``mock:`` model (so that
what is asserted never depends on what a model writes), the real sandbox and a real SQLite
study database. Skipped only where chromium is not installed (.ci/run installs it)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from pathlib import Path

import pytest
from support.browser import AnnotatorPage, ServedStudy, browser, http, served_study, signed_in
from support.cli import invoke
from support.llama_server import free_port
from support.sqlite_rows import fetchall
from support.studies import PILOT_TASKS, study_spec, write_study

pytestmark = pytest.mark.timeout(300)

WRONG_CODE = "```python\ndef task_func(*args, **kwargs):\n    return None\n```"
HEADER = re.compile(r"(BigCodeBench/\d+) · CF")  # the header: task id, then Ω
SCREENSHOT = "served-study.png"


def make_study(tmp_path: Path, delay_s: float = 0.0, turns: int = 1) -> Path:
    """The pilot's first 3 tasks, ana, ben and cy, each task to 2 of them (2 each: a first
    assignment, then a last one, and each annotator has a task of the others' they must not
    be shown), ``turns`` feedback turns after turn 0, the scripted model always wrong (so
    each session waits for feedback, then ends when its turn budget is spent)."""
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps({"purpose": "generate", "text": WRONG_CODE, "delay_s": delay_s}))
    db = tmp_path / "study.db"
    # Relative: the server runs in tmp_path, and the page's header stays short.
    write_study(
        db,
        study_spec(
            tasks=PILOT_TASKS[:3],
            model="mock:replies.jsonl",
            turns=turns,
            feedback="CF,EF:full,VF:expert",
        ),
    )
    return db


def tokens() -> dict[str, str]:
    return {name: f"token-of-{name}" for name in ("ana", "ben", "cy")}


def held(db: Path) -> dict[str, set[str]]:
    found = fetchall(db, "SELECT annotator, task_id FROM study_assignments")
    theirs: dict[str, set[str]] = {}
    for annotator, task in found:
        theirs.setdefault(annotator, set()).add(task)
    return theirs


async def annotate_all(
    page: AnnotatorPage, name: str, count: int, screenshot: Path | None = None
) -> list[str]:
    """Play each of the annotator's assignments: one line of feedback after turn 0 (the
    budget then ends the session), f10 to the next; the tasks in the order they came. With
    ``screenshot``, the page is saved there once the first feedback is written."""
    played: list[str] = []
    for _ in range(count):
        task = await next_task_on_screen(page, played[-1] if played else None)
        played.append(task)
        await page.page.focus(".xterm-helper-textarea")
        words = f"{name} asks to fix {task}"
        await page.type(words)
        # xterm.js hands typed text and control keys to the socket by different paths: wait
        # for the words to be in the composer before sending them, as a person would.
        await page.wait_for(words)
        if screenshot is not None and len(played) == 1:
            await page.page.screenshot(path=str(screenshot))
        await page.press("Control+j")
        last = len(played) == count
        await page.wait_for(f"{task} was your last" if last else f"{task} is done. f10 opens")
        await page.press("F10")
    await page.wait_for(f"is done for {name}")
    return played


async def next_task_on_screen(page: AnnotatorPage, previous: str | None) -> str:
    """The task of the session that waits for feedback on screen, once it is not
    ``previous`` (the one just ended may still be drawn for a moment)."""
    for _ in range(600):
        shown = await page.wait_for("waiting for your feedback", timeout=60)
        found = HEADER.search(shown)
        if found is not None and found.group(1) != previous:
            return found.group(1)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no new assignment after {previous}")


def test_three_annotators_play_a_study_through_the_browser_at_once(tmp_path: Path) -> None:
    db = make_study(tmp_path)
    theirs = held(db)
    assert sum(len(t) for t in theirs.values()) == 6
    assert all(len(t) == 2 for t in theirs.values()), theirs
    # The README's picture of the served app is this test's: CONVTUI_SCREENSHOT_DIR=docs/images
    # writes it there.
    shots = {"ana": Path(os.environ.get("CONVTUI_SCREENSHOT_DIR", tmp_path)) / SCREENSHOT}

    async def scenario(served: ServedStudy) -> dict[str, tuple[list[str], AnnotatorPage]]:
        async with browser() as chromium:
            pages = {name: await AnnotatorPage.open(chromium, served.url) for name in tokens()}
            for name, token in tokens().items():
                assert await pages[name].sign_in(token) == 200
            played = await asyncio.gather(
                *(
                    annotate_all(pages[name], name, len(theirs[name]), shots.get(name))
                    for name in pages
                )
            )
            # Asking for another's assignments changes nothing: who you are is your token.
            # Ana's app opens on her list: her tasks, none that only ben or cy has.
            await pages["ana"].page.goto(served.url + "app?annotator=ben")
            shown = await pages["ana"].wait_for("is done for ana", "ana's assignments")
            assert all(task in shown for task in theirs["ana"])
            others = (theirs["ben"] | theirs["cy"]) - theirs["ana"]
            assert others and not any(task in shown for task in others)
            return dict(zip(pages, zip(played, pages.values(), strict=True), strict=True))

    with served_study(db, tmp_path) as served:
        results = asyncio.run(scenario(served))
        origin = served.url
    assert shots["ana"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name, (played, page) in results.items():
        # Each annotator was given exactly their own tasks, each once.
        assert sorted(played) == sorted(theirs[name]), name
        # The page called no one but our server (no font CDN).
        assert page.requests and all(url.startswith(origin) for url in page.requests)
    sessions = fetchall(
        db,
        "SELECT a.annotator, a.task_id, s.annotator, s.status, t.verbal_feedback "
        "FROM study_assignments a JOIN sessions s ON s.id = a.session_id "
        "JOIN turns t ON t.session_id = s.id AND t.idx = 0",
    )
    assert len(sessions) == 6
    for holder, task, recorded_by, status, feedback in sessions:
        assert recorded_by == holder and status == "exhausted"
        assert feedback == f"{holder} asks to fix {task}"
    status = invoke("study", "status", "--db", str(db), "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert (report["done"], report["assignments"]) == (6, 6), report


def test_a_wrong_or_missing_token_is_refused_and_starts_no_app(tmp_path: Path) -> None:
    db = make_study(tmp_path)
    with served_study(db, tmp_path) as served:
        url = served.url
        status, page = http(url + "sign-in", form={"token": "token-of-nobody"})
        assert status == 403 and "does not open this study" in page
        assert http(url + "sign-in", form={"token": ""})[0] == 403
        for path in ("app", "ws"):
            assert http(url + path)[0] == 403
            assert http(url + path, cookie="convtui_token=token-of-nobody")[0] == 403
        assert served.app_processes() == []
        # The right token signs in, and still starts nothing until the page opens its app.
        assert http(url + "sign-in", form={"token": "token-of-ana"})[0] == 303
        status, page = http(url + "app", cookie="convtui_token=token-of-ana")
        assert status == 200 and "pilot" in page and "ana" in page
        assert "convtui session" not in page and str(db) not in page  # never the command
        assert "googleapis" not in page and "https://" not in page
        # A replaced token stops working at once.
        assert invoke("study", "token", "ana", "--db", str(db)).returncode == 0
        assert http(url + "app", cookie="convtui_token=token-of-ana")[0] == 403
        assert served.app_processes() == []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_server_killed_during_a_turn_loses_nothing_and_the_person_goes_on(
    tmp_path: Path,
) -> None:
    db = make_study(tmp_path, turns=2)
    replies = tmp_path / "replies.jsonl"
    # Turn 1's reply streams for 20 s: the server is killed while the model is writing it.
    slow = {"purpose": "generate", "text": WRONG_CODE, "delay_s": 20}
    replies.write_text(
        json.dumps({"purpose": "generate", "text": WRONG_CODE}) + "\n" + json.dumps(slow)
    )
    port = free_port()
    sent, ahead = "ana asks for a Counter", "and a docstring"

    async def until_killed(served: ServedStudy) -> tuple[str, list[int]]:
        async with signed_in(served) as page:
            task = await next_task_on_screen(page, None)
            await page.page.focus(".xterm-helper-textarea")
            await page.type(sent)
            await page.wait_for(sent)
            await page.press("Control+j")
            await page.wait_for("turn 1", "model is writing")
            # While the model writes, she types ahead what she will say next, unsent.
            await page.type(ahead)
            await page.wait_for(ahead)
            # Once she pauses, the app keeps typed words in the study's database.
            for _ in range(300):
                kept = fetchall(db, "SELECT text FROM typed_feedback")
                if any(ahead in text for (text,) in kept):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError(f"{ahead!r} was never kept: {kept}")
            apps = served.app_processes()
            assert apps
            served.kill()
            await page.page.wait_for_selector("body.-closed", timeout=15_000)
            return task, apps

    async def after_restart(served: ServedStudy, task: str) -> str:
        # The same person comes back (their browser kept the cookie; here they sign in).
        async with signed_in(served) as page:
            # The session continues at the turn that was cut off, played again (not a new
            # session from turn 0), with the words she had typed ahead, still unsent.
            shown = await page.wait_for(
                "turn 1", "waiting for your feedback", ahead, "not sent yet", timeout=60
            )
            found = HEADER.search(shown)
            assert found is not None and found.group(1) == task
            return shown

    with served_study(db, tmp_path, port=port) as served:
        task, apps = asyncio.run(until_killed(served))
    # The apps the dead server had started end with it: none goes on writing the session.
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in apps) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in apps)
    turns = fetchall(
        db,
        "SELECT t.idx, t.verbal_feedback, s.status FROM turns t "
        "JOIN sessions s ON s.id = t.session_id WHERE s.annotator = 'ana'",
    )
    assert turns == [(0, sent, "running")]  # turn 0 and the words sent after it
    replies.write_text(json.dumps({"purpose": "generate", "text": WRONG_CODE}))
    with served_study(db, tmp_path, port=port) as served:
        asyncio.run(after_restart(served, task))
    sessions = fetchall(
        db, "SELECT task_id, status, turns_done FROM sessions WHERE annotator = 'ana'"
    )
    # The same session went on: no second one was opened for the assignment.
    assert [(t, done) for t, _status, done in sessions] == [(task, 1)]
