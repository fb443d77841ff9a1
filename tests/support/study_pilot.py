"""A study played through the real app, as annotators play it in a terminal: each signs in
with their own token (the served study's gate names who holds it), then works through their
assignments in the Textual app under Pilot, typing fixed words and sending them. The app's
factory and waiting helpers are the TUI tests' own (tests/tui/tui_harness.py, a helper module,
not a test module), imported from their folder under the name those tests use, so a process
that runs both holds one module."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study
from convtui.tui.web.gate import StudyGate

TUI_TESTS = Path(__file__).resolve().parents[1] / "tui"
if str(TUI_TESTS) not in sys.path:
    sys.path.append(str(TUI_TESTS))

from tui_harness import (  # noqa: E402
    AppFactory,
    awaiting_feedback,
    phase_is,
    study_app,
    type_feedback,
    wait_until,
)


def signed_in(db: Path, token: str) -> str:
    """The annotator ``token`` signs in as (the gate's answer); fails for a token it refuses."""
    with Store.open(db) as store:
        name = StudyGate(store, load_study(store)).annotator_for(token)
    assert name is not None, "the study refused the token"
    return name


def annotate(apps: AppFactory, token: str, words: str, assignments: int) -> str:
    """The annotator holding ``token`` plays their ``assignments`` in the app, one after the
    other (f10 opens the next): at turn 0 they type ``words`` and send them (ctrl+j), and the
    study's turn budget ends the session. Returns the annotator's name."""
    annotator = signed_in(apps.db, token)
    app = study_app(apps, annotator)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            for n in range(assignments):
                if n:
                    await pilot.press("f10")
                await awaiting_feedback(pilot, 0)
                await type_feedback(pilot, words)
                await pilot.press("ctrl+j")
                await wait_until(pilot, phase_is(pilot, "exhausted"), "the budget to end it")

    asyncio.run(main())
    return annotator
