"""The app of ``convtui session --study DB --annotator NAME``: one annotator's assignments,
in their order. It is the app as always, but "next" (f10) is their next assignment rather
than the catalog's next task, f4 lists their assignments, and the task picker and the
store's other sessions are not offered: an annotator works on what the study gave them.
A study with guidelines shows them before the annotator's first assignment, below the keys of
the help (f1), and from the palette ("study: guidelines")."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterable

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from convtui.core.errors import ConvtuiError
from convtui.core.studies.guidelines import Guidelines
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import assignments, load_study
from convtui.tui import messages as msg
from convtui.tui.app import ConvTuiApp, Launch
from convtui.tui.controller import AppServices, SessionPlan, StudyRef
from convtui.tui.launch import next_plan, served_by_convtui
from convtui.tui.palette import SessionCommands
from convtui.tui.screens.assignments import AssignmentsModal
from convtui.tui.screens.guidelines import GuidelinesModal
from convtui.tui.screens.session import SessionScreen


def how_to_leave() -> str:
    """How the annotator leaves: ctrl+q in a terminal; in a browser page ctrl+q is the
    browser's (Firefox quits), so closing the tab or the palette's Quit (tui/browser_keys.py)."""
    if served_by_convtui():
        return "Close this tab to leave (or choose Quit in the ctrl+p palette)."
    return "ctrl+q leaves."


def study_guidelines(store: Store, study: StudyRef) -> tuple[Guidelines | None, bool]:
    """The study's guidelines as stored with it (never the file they came from: a served
    app opens no path the database names), and whether they are due first: the annotator
    has not started any assignment yet."""
    guidelines = load_study(store).spec.guidelines
    if guidelines is None:
        return None, False
    rows = assignments(store, study.study_id, study.annotator)
    return guidelines, all(row.session_id is None for row in rows)


class StudyApp(ConvTuiApp):
    COMMANDS = App.COMMANDS | {SessionCommands}
    BINDINGS = [
        Binding(
            "f10",
            "next_task",
            "Next assignment",
            id="convtui.next-task",
            tooltip="Open your next assignment of the study",
        ),
        # The picker's key: an annotator picks no task, the study gives them theirs (and a
        # TextArea, the composer, takes f7 to select all).
        Binding(
            "f4",
            "assignments",
            "Assignments",
            id="convtui.assignments",
            tooltip="Your assignments in this study and how far each got",
        ),
    ]

    def __init__(self, services: AppServices, launch: Launch) -> None:
        super().__init__(services, launch)
        assert launch.study is not None
        self.study: StudyRef = launch.study
        # f10 pressed twice before the next assignment is on screen must open it once: two
        # openings would both find it pending and the second would fail to start it.
        self._opening_next = False
        self.guidelines: Guidelines | None = None
        """The study's guidelines, read from the database as the app opens."""

    def open_launched(self, plan: SessionPlan) -> None:
        self.run_worker(self._open_launched(plan), group="study")

    async def _open_launched(self, plan: SessionPlan) -> None:
        """The annotator's assignment, after the guidelines when it is their first."""
        first = await self._read_guidelines()
        if self.guidelines is None or not first:
            self._open_session(plan)
            return
        modal = GuidelinesModal(self.study.name, self.guidelines.text, first=True)
        self.push_screen(modal, lambda _closed: self._open_session(plan))

    async def _read_guidelines(self) -> bool:
        try:
            self.guidelines, first = await asyncio.to_thread(
                study_guidelines, self.services.store, self.study
            )
        except ConvtuiError as exc:
            self.notify(f"The study's guidelines: {exc}", severity="error", markup=False)
            return False
        return first

    def open_without_plan(self) -> None:
        self.run_worker(self._read_guidelines(), group="study")
        self._all_done()

    def guidelines_text(self) -> str:
        return "" if self.guidelines is None else self.guidelines.text

    def action_guidelines(self) -> None:
        shown = any(isinstance(screen, GuidelinesModal) for screen in self.screen_stack)
        if self.guidelines is not None and not shown:
            self.push_screen(GuidelinesModal(self.study.name, self.guidelines.text))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.guidelines is not None:
            yield SystemCommand(
                "study: guidelines", "The study's guidelines, again", self.action_guidelines
            )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick_task":
            return False
        if action == "next_task":
            # Once the assignment on screen has ended: an unfinished one is theirs to finish
            # (or give up on), and it would come up next anyway.
            screen = self.screen
            return isinstance(screen, SessionScreen) and screen.finished and not self._opening_next
        return super().check_action(action, parameters)

    def action_next_task(self) -> None:
        if isinstance(self.screen, SessionScreen) and not self._opening_next:
            self._leave_session(self._start_opening_next)

    def _start_opening_next(self) -> None:
        self._opening_next = True
        self.run_worker(self._open_next(), group="picker")

    async def _open_next(self) -> None:
        try:
            await self._open_next_plan()
        finally:
            self._opening_next = False

    async def _open_next_plan(self) -> None:
        launch = self.launch
        try:
            plan = await asyncio.to_thread(
                next_plan,
                self.services.store,
                launch.catalog,
                self.study,
                launch.config,
                launch.user,
            )
        except ConvtuiError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        if plan is None:
            self._all_done()
            return
        self._open_session(plan)

    def _all_done(self) -> None:
        note = (
            f"Study {self.study.name!r} is done for {self.study.annotator}: every assignment "
            f"is finished. Thank you! {how_to_leave()}"
        )
        self.notify(note, markup=False, timeout=30)
        self.run_worker(self._show_assignments(note), group="study")

    @on(msg.SessionFinished)
    def _assignment_ended(self, _event: msg.SessionFinished) -> None:
        screen = next(
            (s for s in reversed(self.screen_stack) if isinstance(s, SessionScreen)), None
        )
        if screen is None or screen.plan.study is None or screen.plan.ended is not None:
            return  # a session that was only viewed
        self.run_worker(self._say_whats_next(screen.plan.task.id), group="study")

    async def _say_whats_next(self, task_id: str) -> None:
        study = self.study
        rows = await asyncio.to_thread(
            assignments, self.services.store, study.study_id, study.annotator
        )
        left = [row for row in rows if row.state in ("pending", "started")]
        if left:
            self.notify(
                f"{task_id} is done. f10 opens your next assignment, {left[0].task_id} "
                f"({len(left)} left); f4 lists them.",
                markup=False,
                timeout=30,
            )
        else:
            self.notify(
                f"{task_id} was your last assignment: study {study.name!r} is done for you. "
                f"Thank you! {how_to_leave()}",
                markup=False,
                timeout=30,
            )

    def action_assignments(self) -> None:
        if not isinstance(self.screen, AssignmentsModal):
            self.run_worker(self._show_assignments(), group="study")

    async def _show_assignments(self, note: str = "") -> None:
        study = self.study
        rows = await asyncio.to_thread(
            assignments, self.services.store, study.study_id, study.annotator
        )
        title = f"study {study.name} · {study.annotator}'s assignments"
        self.push_screen(AssignmentsModal(title, rows, note))

    def farewell(self) -> list[str]:
        db = str(self.services.store.path.absolute())
        words = ["convtui", "session", "--study", db, "--annotator", self.study.annotator]
        command = shlex.join([*words, *self.launch.machine.as_flags()])
        return [*super().farewell(), f"Your assignments go on with: {command}"]
