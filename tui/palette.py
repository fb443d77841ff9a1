"""Command-palette entries: the session screen's actions ("area: verb", offered only when
valid), and the recorded sessions that can be resumed."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from convtui.core.catalog.loaders import TaskCatalog, suite_of
from convtui.core.codeif.conversation import rounds_limit
from convtui.core.codeif.instructions import instructions
from convtui.core.plural import counted
from convtui.core.printable import printable
from convtui.sessions.reading.browse import SessionSummary, list_sessions
from convtui.tui import render
from convtui.tui.codeif_controller import MODE as CODEIF_MODE
from convtui.tui.controller import AppServices
from convtui.tui.launch import Launch
from convtui.tui.screens.session import SessionScreen


class SessionsApp(Protocol):
    """What the stored-sessions search reads of the app (tui/app.py's ConvTuiApp), named here
    so that the palette, which the app imports, needs nothing of it."""

    services: AppServices
    launch: Launch

    @property
    def screen_stack(self) -> list[Any]: ...

    def resume_session(self, session_id: str) -> None: ...


class SessionCommands(Provider):
    """Every session action by name; the ones the current phase does not allow are left out."""

    COMMANDS = (
        ("feedback: send", "send", "Send the composer's text and start the next turn"),
        ("feedback: continue without verbal feedback", "continue", "Next turn, no words"),
        ("tests: re-run", "rerun_tests", "Run this turn's tests again, uncached"),
        ("turn: cancel", "cancel", "Cancel the running step"),
        ("turn: retry", "retry_turn", "Run a cancelled or failed turn again"),
        ("view: toggle diff", "toggle_diff", "Code or its diff against the previous turn"),
        ("view: fold task", "toggle_task", "Fold or unfold the task"),
        ("view: toggle timeline", "toggle_timeline", "Show or hide the turns"),
        ("view: live turn", "view_live", "Back to the live turn"),
        ("session: accept as solved", "accept", "End the session, the code accepted"),
        ("session: give up", "give_up", "End the session without a solution"),
        ("session: next task", "app.next_task", "The next task, same settings"),
        ("session: pick task", "app.pick_task", "Choose another task"),
        # No quit entry: Textual's own "Quit" system command is in the palette already.
    )

    def _offered(self) -> list[tuple[str, str, str]]:
        screen = self.screen
        offered = []
        for title, action, help_text in self.COMMANDS:
            target, _, name = action.rpartition(".")
            node = self.app if target == "app" else screen
            if not hasattr(node, f"action_{name}"):
                continue
            if node.check_action(name, ()) is not True:
                continue
            offered.append((title, action, help_text))
        return offered

    async def discover(self) -> Hits:
        for title, action, help_text in self._offered():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in self._offered():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self._run, action), help=help_text
                )

    async def _run(self, action: str) -> None:
        target, _, name = action.rpartition(".")
        node = self.app if target == "app" else self.screen
        await node.run_action(name)


class StoredSessions(Provider):
    """Interactive sessions still open in the store: "resume: BigCodeBench/2 · turn 1 · 2 of 3"."""

    async def startup(self) -> None:
        # Read once when the palette opens, off the UI thread; every keystroke searches these.
        app = cast("SessionsApp", self.app)
        found = await asyncio.to_thread(
            list_sessions,
            app.services.store,
            status=("planned", "running"),
            interactive=True,
            limit=200,
        )
        catalog = app.launch.catalog
        # A session open in this app is where the person already is: resuming it would only
        # leave and reopen it, so it is not offered.
        here = {
            screen.controller.session_id
            for screen in app.screen_stack
            if isinstance(screen, SessionScreen)
        }
        self._hits = [
            (self._title(s, catalog), partial(app.resume_session, s.id), s)
            for s in found
            if s.id not in here
        ]

    @staticmethod
    def _title(s: SessionSummary, catalog: TaskCatalog | None = None) -> str:
        # The palette reads a hit as markup; a merged session's task id is outside text.
        return escape(printable(StoredSessions._words(s, catalog)))

    @staticmethod
    def _words(s: SessionSummary, catalog: TaskCatalog | None) -> str:
        if suite_of(s.task_id) == "codeif":
            # Rounds that give instructions, no Ω; their limit comes from the task's
            # instructions (the session's header shows it), not from the stored turn budget.
            # A round is recorded once the person answers it, so the next is turns_done.
            if catalog is not None and s.task_id in catalog:
                limit = rounds_limit(instructions(catalog.get(s.task_id)), CODEIF_MODE)
                where = render.round_position(s.turns_done, limit)
            else:  # a merged session of a task this app did not load
                where = f"{counted(s.turns_done, 'round')} answered"
            return f"resume: {s.task_id} · {where} · {s.user_kind} · {s.id}"
        return (
            # The turn it resumes at, counted as its status line will count it.
            f"resume: {s.task_id} · {render.turn_position(s.turns_done, s.max_turns)} · "
            f"{s.feedback} · "
            f"{s.user_kind} · {s.id}"
        )

    async def discover(self) -> Hits:
        for title, resume, s in self._hits:
            yield DiscoveryHit(title, resume, help=s.updated_utc)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, resume, s in self._hits:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), resume, help=s.updated_utc)
