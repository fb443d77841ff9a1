"""ConvTuiApp, the app of `convtui session`; convtui.tui.make_app builds it, or a study's
StudyApp (tui/study_app.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from pathlib import Path

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerCancelled

from convtui.core.catalog.search import TaskIndex
from convtui.core.errors import ConvtuiError
from convtui.core.printable import printable
from convtui.tui import messages as msg
from convtui.tui import render
from convtui.tui.browser_keys import drop_browser_keys
from convtui.tui.controller import AppServices, SessionPlan
from convtui.tui.launch import Launch, resume_command, resumed_plan, served_by_convtui
from convtui.tui.palette import SessionCommands, StoredSessions
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.help import HelpModal, key_help
from convtui.tui.screens.session import SessionScreen
from convtui.tui.screens.task_picker import TaskPickerScreen
from convtui.tui.settings import load_settings, save_setting, settings_path
from convtui.tui.text_bounds import bound_field

# Textual's system commands that write a file where the app runs: served, that is the study's
# host, and the browser gets nothing (its server drops files sent to the page).
HOST_ONLY_COMMANDS = frozenset({"Screenshot"})

# Where an unfinished session stands once the app has closed, by the phase it was left in.
UNFINISHED = {
    "awaiting_feedback": "waiting for your feedback",
    "cancelled": "its last turn was cancelled",
    "failed": "its last turn failed",
    "busy": "the turn in flight was not saved",
}


def screenshot_folder() -> Path:
    """The person's Downloads folder where there is one, else the current folder."""
    from platformdirs import user_downloads_path

    downloads = user_downloads_path()
    return downloads if downloads.is_dir() else Path.cwd()


class ConvTuiApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "convtui"
    COMMANDS = App.COMMANDS | {SessionCommands, StoredSessions}
    BINDINGS = [
        Binding("f1", "help", "Help", id="convtui.help", tooltip="Keys and what this screen does"),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="convtui.quit",
            priority=True,
            tooltip="Leave convtui; recorded turns are kept (a turn in flight asks first)",
        ),
        Binding(
            "f10",
            "next_task",
            "Next task",
            id="convtui.next-task",
            tooltip="Start the next task of the catalog under the same settings",
        ),
        Binding(
            "f4",
            "pick_task",
            "Pick task",
            id="convtui.pick-task",
            tooltip="Choose another task",
        ),
    ]

    def __init__(self, services: AppServices, launch: Launch) -> None:
        super().__init__()
        self.services = services
        self.launch = launch
        self.animation_level = "none"
        self._index: Worker[TaskIndex] | None = None
        self.opened: dict[str, SessionScreen] = {}
        """The sessions opened in this run, by id, in the order opened (for ``farewell``)."""
        if served_by_convtui():
            # In a browser page: only keys the browser passes on (tui/browser_keys.py). Quit
            # (ctrl+q quits Firefox) is left to the palette's Quit there.
            drop_browser_keys(self._bindings)

    # Served, the kernel holds the app to the server's memory limit (tui/web/lifeline.py):
    # a MemoryError no handler took ends the app at once, with its status, rather than have
    # it draw a traceback it has no memory for.
    def _handle_exception(self, error: Exception) -> None:
        if isinstance(error, MemoryError) and served_by_convtui():
            from convtui.tui.web.lifeline import out_of_memory

            out_of_memory()
        super()._handle_exception(error)

    async def task_index(self) -> TaskIndex:
        """The picker's search index, built once in a thread (about 75 ms for 1,190 tasks:
        too long for the UI thread)."""
        if self._index is None:
            catalog = self.launch.catalog
            self._index = self.run_worker(
                lambda: TaskIndex(catalog), thread=True, group="index", description="index tasks"
            )
        await self._index.wait()
        assert self._index.result is not None
        return self._index.result

    async def _warm_index(self) -> None:
        """The index built before anyone asks. An app that closes meanwhile (a served tab
        replaced by another) cancels the build: nothing is wrong then, so nothing is said."""
        with contextlib.suppress(WorkerCancelled):
            await self.task_index()

    def on_mount(self) -> None:
        self.run_worker(self._warm_index(), group="index")
        self._restore_theme()
        self.theme_changed_signal.subscribe(self, lambda theme: save_setting("theme", theme.name))
        if self.launch.error:
            self.notify(self.launch.error, severity="error", markup=False, timeout=15)
        if self.launch.plan is not None:
            self.open_launched(self.launch.plan)
        else:
            self.open_without_plan()

    @on(CommandPalette.Opened)
    def _bound_palette(self) -> None:
        # The palette (commands, themes) is Textual's: its query is held to a few words here.
        if isinstance(self.screen, CommandPalette):
            for field in self.screen.query(Input):
                bound_field(field)

    def open_launched(self, plan: SessionPlan) -> None:
        """What the app shows when it opens on a session: that session."""
        self.push_screen(SessionScreen(self.services, plan))

    def open_without_plan(self) -> None:
        """What the app shows when it opens on no session: the task picker."""
        self.action_pick_task(self.launch.query)

    def _restore_theme(self) -> None:
        name = load_settings().get("theme")
        if not name:
            return
        if name in self.available_themes:
            self.theme = name
        else:
            self.notify(
                f"unknown theme {name!r} in {settings_path()}; using {self.theme}",
                severity="warning",
                markup=False,
            )

    @on(msg.SessionOpened)
    def _remember(self, event: msg.SessionOpened) -> None:
        for screen in self.screen_stack:
            if (
                isinstance(screen, SessionScreen)
                and screen.controller.session_id == event.session_id
            ):
                self.opened[event.session_id] = screen

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast, a screen's too, comes here: errors quote names, replies and paths,
        whose control characters are shown, not obeyed."""
        super().notify(
            printable(message),
            title=printable(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Textual saves a screenshot to the Downloads folder, which a server or a fresh
        account does not have: the palette's Screenshot then said only "Failed to save
        screenshot". Where Downloads is missing it goes to the folder the app was started in
        (the notice says where)."""
        if path is None:
            path = str(screenshot_folder())
        return super().deliver_screenshot(filename, path, time_format)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        served = served_by_convtui()
        for command in super().get_system_commands(screen):
            if not (served and command.title in HOST_ONLY_COMMANDS):
                yield command

    def farewell(self) -> list[str]:
        """What the terminal is told once the app has closed: each session opened, where it
        stands, and the command that opens it again (the app's screen is gone by then, and
        the id is what --resume needs)."""
        lines = []
        for session_id, screen in self.opened.items():
            if screen.finished:
                how = f"ended: {render.PHASES.get(screen.phase, screen.phase)}"
                verb = "Open it read-only"
            else:
                how, verb = UNFINISHED.get(screen.phase, UNFINISHED["busy"]), "Continue it"
            task = screen.plan.task.id
            lines += [
                f"Session {session_id} ({task}): {screen.position()}, {how}.",
                f"  {verb}: {self.resume_command(session_id, screen.plan)}",
            ]
        return lines

    def resume_command(self, session_id: str, plan: SessionPlan) -> str:
        """What to paste in a shell to open this session again."""
        launch = self.launch
        return resume_command(
            session_id, self.services.store.path, plan.config, launch.machine, launch.config.model
        )

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")
        self.set_class(self.size.height < 30, "-short")

    def start_task(self, task_id: str | None) -> None:
        """Open a new session of ``task_id`` in place of the current screen."""
        if task_id is None:
            if not isinstance(self.screen, SessionScreen):
                self.exit()
            return
        try:
            task = self.launch.catalog.get(task_id)
        except ConvtuiError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        launch = self.launch
        self._open_session(
            SessionPlan(task, launch.config, launch.user, annotator=launch.annotator)
        )

    def _open_session(self, plan: SessionPlan) -> None:
        screen = SessionScreen(self.services, plan)
        # A session resumed from the palette replaces the picker it was chosen over.
        if isinstance(self.screen, (SessionScreen, TaskPickerScreen)):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_pick_task(self, query: str = "") -> None:
        self._leave_session(lambda: self.run_worker(self._open_picker(query), group="picker"))

    async def _open_picker(self, query: str) -> None:
        index = await self.task_index()
        self.push_screen(TaskPickerScreen(index, query), self.start_task)

    def resume_session(self, session_id: str) -> None:
        """Open a recorded session where it stopped (from the palette)."""
        screen = self.screen
        if isinstance(screen, SessionScreen) and screen.controller.session_id == session_id:
            self.notify("That session is the one open here.", markup=False)
            return
        self._leave_session(lambda: self.run_worker(self._resume(session_id), group="picker"))

    async def _resume(self, session_id: str) -> None:
        try:
            plan = await asyncio.to_thread(
                resumed_plan, self.services.store, self.launch.catalog, session_id
            )
        except ConvtuiError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        self._open_session(plan)

    def action_next_task(self) -> None:
        screen = self.screen
        if not isinstance(screen, SessionScreen):
            return
        ids = self.launch.catalog.ids
        position = ids.index(screen.plan.task.id) if screen.plan.task.id in ids else -1
        if position + 1 >= len(ids):
            self.notify("This is the last task of the catalog.", severity="warning")
            return
        self._leave_session(lambda: self.start_task(ids[position + 1]))

    def _leave_session(self, then) -> None:
        """Run ``then`` now, or after the person confirms dropping a turn in flight."""
        screen = self.screen
        if not isinstance(screen, SessionScreen) or not screen.unsaved_work:
            then()
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                screen.stop()
                then()

        question = f"Leave this session? {screen.unsaved_work} is not saved."
        session_id = screen.controller.session_id
        if served_by_convtui():
            # A command names the host's paths, and the person at the browser has no shell
            # there: what continues it for them is the page.
            question += " Signing in again continues the session where it stopped."
        elif session_id is not None:
            command = self.resume_command(session_id, screen.plan)
            question += f" This continues the session:\n{command}"
        self.push_screen(ConfirmModal(question, yes="Leave"), confirmed)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_task", "pick_task"):
            # Asked of the screen the person works on: the palette asks it while open, over
            # that screen (and a session's footer may redraw under a window).
            stack = self.screen_stack
            palette = isinstance(self.screen, CommandPalette) and len(stack) > 1
            screen = stack[-2] if palette else self.screen
            if isinstance(screen, SessionScreen):
                # Offered between sessions; mid-turn the person gives up or finishes first.
                return screen.finished or screen.phase in ("cancelled", "failed")
            if isinstance(screen, ModalScreen):
                return False  # help, a traceback, a question: they act once it is closed
        return True

    async def action_quit(self) -> None:
        self._leave_session(self.exit)

    def action_help(self) -> None:
        screen = self.screen
        if isinstance(screen, HelpModal):
            return
        blurbs = [str(getattr(screen, "help", ""))]
        focused = self.focused
        focused_help = getattr(focused, "help", None)
        if focused is not None and isinstance(focused_help, str) and focused_help:
            name = focused.border_title or type(focused).__name__
            blurbs.append(f"**{name}**: {focused_help}")
        rows = key_help(self, screen)
        self.push_screen(
            HelpModal(rows, "\n\n".join(b for b in blurbs if b), self.guidelines_text())
        )

    def guidelines_text(self) -> str:
        """Guidelines the help shows below the keys: a study's (tui/study_app.py), none here."""
        return ""
