"""The app of ``convtui session --study DB --annotator NAME``: one annotator's assignments,
in their order. It is the app as always, but "next" (f10) is their next assignment rather
than the catalog's next task, f4 lists their assignments, and the task picker and the
store's other sessions are not offered: an annotator works on what the study gave them."""

from __future__ import annotations

import asyncio
import shlex

from textual import on
from textual.app import App
from textual.binding import Binding

from convtui.core.errors import ConvtuiError
from convtui.sessions.studies import assignments
from convtui.tui import messages as msg
from convtui.tui.app import ConvTuiApp, Launch
from convtui.tui.controller import AppServices, StudyRef
from convtui.tui.launch import next_plan, served_by_convtui
from convtui.tui.palette import SessionCommands
from convtui.tui.screens.assignments import AssignmentsModal
from convtui.tui.screens.session import SessionScreen


def how_to_leave() -> str:
    """How the annotator leaves: ctrl+q in a terminal; in a browser page ctrl+q is the
    browser's (Firefox quits), so closing the tab or the palette's Quit (tui/browser_keys.py)."""
    if served_by_convtui():
        return "Close this tab to leave (or choose Quit in the ctrl+p palette)."
    return "ctrl+q leaves."


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

    def open_without_plan(self) -> None:
        self._all_done()

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
