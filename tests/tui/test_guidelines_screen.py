"""A study's guidelines in the app of `convtui session --study` (the served app is the same
app): shown before the annotator's first assignment, from the text stored with the study,
closed with a key, not shown before the next assignment nor when the app opens again on a
started one, and shown again below the keys of the help (f1) and from the palette ("study:
guidelines"). A study without guidelines shows none. Scripted model, real sandbox, a real
SQLite study database in tmp_path."""

from __future__ import annotations

import asyncio

from scripted import end_by
from support.studies import split_study
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Markdown, Static
from tui_harness import AppFactory, awaiting_feedback, from_palette, study_app, wait_until

from convtui.core.studies.guidelines import Guidelines
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import assignments, load_study
from convtui.tui.screens.guidelines import GuidelinesModal
from convtui.tui.screens.help import HelpModal
from convtui.tui.screens.session import SessionScreen
from convtui.tui.study_app import StudyApp

GUIDELINES = (
    "# How to give feedback\n\n"
    "Name the **failing test** and say what it expects.\n\n"
    "See [the handbook](https://example.com/handbook) \x1b[2J for more.\n"
)


def watch_pushes(app: StudyApp) -> list[Screen]:
    """Every screen pushed on ``app`` from now on, in order."""
    pushed: list[Screen] = []
    push = app.push_screen

    def recorded(screen, *args, **kwargs):
        pushed.append(screen)
        return push(screen, *args, **kwargs)

    app.push_screen = recorded  # type: ignore[method-assign]
    return pushed


def shown_markdown(screen: Screen) -> list[str]:
    """The Markdown sources of ``screen``'s Markdown widgets."""
    return [widget.source for widget in screen.query(Markdown)]


def sessions_of(apps: AppFactory, annotator: str) -> list[str | None]:
    with Store.open(apps.db) as store:
        study = load_study(store)
        return [row.session_id for row in assignments(store, study.id, annotator)]


def run(app: StudyApp, scenario) -> None:
    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await scenario(pilot)

    asyncio.run(main())


def guidelines_up(pilot: Pilot) -> bool:
    """The guidelines are on screen, drawn."""
    screen = pilot.app.screen
    return isinstance(screen, GuidelinesModal) and bool(screen.query(Markdown))


def test_the_guidelines_come_before_the_first_assignment_and_again_from_help_and_palette(
    apps,
) -> None:
    split_study(apps.db, apps.model, guidelines=Guidelines.of(GUIDELINES))
    # The file they came from is gone: the app shows the text stored with the study.
    app = study_app(apps, "ana")
    pushed = watch_pushes(app)
    followed: list[str] = []
    app.open_url = lambda url, **_kw: followed.append(url)  # type: ignore[method-assign]

    async def scenario(pilot: Pilot) -> None:
        await wait_until(pilot, lambda: guidelines_up(pilot), "the guidelines")
        modal = pilot.app.screen
        assert isinstance(modal, GuidelinesModal) and modal.first
        # Markdown from the stored text, its control characters shown, not obeyed.
        [source] = shown_markdown(modal)
        assert source == GUIDELINES.replace("\x1b", "␛")
        note = str(modal.query_one("#guidelines-note", Static).render())
        assert "Please read the study's guidelines" in note
        # The first assignment waits for them: no session on screen, none started.
        assert not any(isinstance(s, SessionScreen) for s in pilot.app.screen_stack)
        await pilot.pause(0.3)
        assert sessions_of(apps, "ana") == [None, None]
        # A link is not followed.
        markdown = modal.query_one(Markdown)
        markdown.post_message(Markdown.LinkClicked(markdown, "https://example.com/handbook"))
        await pilot.pause(0.1)
        assert followed == []
        await pilot.press("enter")
        screen = await awaiting_feedback(pilot, 0)
        assert not any(isinstance(s, GuidelinesModal) for s in pilot.app.screen_stack)
        # The help shows them below the keys.
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpModal), "the help")
        help_modal = pilot.app.screen
        assert help_modal.query("#help-guidelines")
        assert GUIDELINES.replace("\x1b", "␛") in shown_markdown(help_modal)
        await pilot.press("escape")
        await wait_until(pilot, lambda: pilot.app.screen is screen, "the session")
        # The palette opens them alone, not as a first showing; escape closes them.
        await from_palette(pilot, "guidelines", "study: guidelines")
        await wait_until(pilot, lambda: guidelines_up(pilot), "the guidelines again")
        assert not pilot.app.screen.first
        assert shown_markdown(pilot.app.screen) == [GUIDELINES.replace("\x1b", "␛")]
        await pilot.press("escape")
        await wait_until(pilot, lambda: pilot.app.screen is screen, "the session again")
        # The next assignment opens without them.
        shown_before = sum(isinstance(s, GuidelinesModal) for s in pushed)
        await end_by(pilot, "f9", "abandoned")
        await pilot.press("f10")
        await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen is not screen,
            "the next assignment",
        )
        await awaiting_feedback(pilot, 0)
        assert sum(isinstance(s, GuidelinesModal) for s in pushed) == shown_before == 2

    run(app, scenario)
    assert followed == []
    assert all(sessions_of(apps, "ana"))

    # Opened again on a started assignment: straight to it.
    again = study_app(apps, "ana")
    pushed_again = watch_pushes(again)

    async def reopened(pilot: Pilot) -> None:
        await awaiting_feedback(pilot, 0)
        assert not any(isinstance(s, GuidelinesModal) for s in pushed_again)
        assert again.guidelines == Guidelines.of(GUIDELINES)

    run(again, reopened)


def test_a_study_without_guidelines_opens_on_the_first_assignment(apps) -> None:
    split_study(apps.db, apps.model, guidelines=None)
    app = study_app(apps, "ben")
    pushed = watch_pushes(app)

    async def scenario(pilot: Pilot) -> None:
        await awaiting_feedback(pilot, 0)
        assert not any(isinstance(s, GuidelinesModal) for s in pushed)
        assert app.guidelines is None
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpModal), "the help")
        assert not pilot.app.screen.query("#help-guidelines")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "back")
        titles = [c.title for c in app.get_system_commands(pilot.app.screen)]
        assert "study: guidelines" not in titles and "Quit" in titles
        app.action_guidelines()  # nothing to show
        await pilot.pause()
        assert not isinstance(pilot.app.screen, (GuidelinesModal, CommandPalette))

    run(app, scenario)
