"""The session screen: the task, the code of the live turn as it streams in, its test results
and feedback, the composer where the person answers, the turn timeline and a status line.

The screen owns the state (``phase``, the recorded turns, the live turn, which turn is viewed)
and pushes it down into the widgets (tui/screens/session_view.py); all slow work runs in workers
through the SessionController, whose messages move the state on
(tui/screens/session_flow.py). This module builds the screen and takes the person's keys."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from convtui.core.codeif.conversation import offered_message, rounds_limit
from convtui.core.plural import counted
from convtui.core.settings.persona import is_persona, sees_reference
from convtui.tui import messages as msg
from convtui.tui.browser_keys import drop_browser_keys
from convtui.tui.codeif_controller import MODE as CODEIF_MODE
from convtui.tui.codeif_controller import CodeifController
from convtui.tui.controller import AppServices, SessionController, SessionPlan
from convtui.tui.human import Answer
from convtui.tui.launch import served_by_convtui
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.instruction import InstructionModal
from convtui.tui.screens.session_flow import SessionFlow
from convtui.tui.screens.session_keys import ALLOWED, BUSY, SESSION_BINDINGS
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.turn_timer import TurnTimer
from convtui.tui.typed_words import TypedWords
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.instruction_checklist import InstructionChecklist
from convtui.tui.widgets.keys_footer import KeysFooter
from convtui.tui.widgets.parts_line import PartsLine
from convtui.tui.widgets.results_table import TestResultsTable
from convtui.tui.widgets.simulated_feedback import SimulatedFeedback
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.task_pane import TaskPane
from convtui.tui.widgets.timeline import TurnTimeline


def _worker(group: str, description: str) -> Any:
    """The screen's blocking jobs (the model's turns, a re-run of the tests): each in a
    thread, one at a time in its group, and a failure is shown on screen rather than
    closing the app."""
    return work(
        thread=True, exclusive=True, group=group, exit_on_error=False, description=description
    )


class SessionScreen(SessionFlow):
    help = (
        "The model writes code for the task; the harness compiles it and runs the tests; you "
        "tell the model what to change. Every turn is saved before the next one starts, so "
        "quitting loses at most the turn in flight: `convtui session --resume ID` continues; "
        "words you typed and did not send come back in the composer."
    )
    BINDINGS = SESSION_BINDINGS

    def __init__(self, services: AppServices, plan: SessionPlan) -> None:
        super().__init__()
        if served_by_convtui():
            drop_browser_keys(self._bindings)  # in a browser page: its keys are not ours
        self.services = services
        self.plan = plan
        # A CodeIF-Bench task: the person gives instructions, a checklist shows them.
        self.codeif = plan.task.suite == "codeif"
        controller = CodeifController if self.codeif else SessionController
        self.controller = controller(services, plan, self.post_message)
        self.instructions = getattr(self.controller, "order", ())
        # A CodeIF session plays rounds until the person stops or the rounds run out; the
        # config's turn budget is BigCodeBench's and does not apply.
        self.budget = (
            rounds_limit(self.instructions, CODEIF_MODE) if self.codeif else plan.config.max_turns
        )
        self.given = ()
        self.composing = None
        self.recorded = []
        self.live = None
        self.calls = {}
        self._started = services.clock()
        self.unsent = TypedWords(self.controller.keep_typed)
        self.timer = TurnTimer(services.clock)
        self._keep_timer = None
        self._restored_instruction = None
        self._human_verbal = not is_persona(plan.user)
        self._persona = f"{plan.user} simulator"
        config = plan.config
        # convcodeworld asks its simulated user inside each feedback turn
        # (core/play/ccw_policies.py).
        self._user_inside_turn = (
            config.protocol == "convcodeworld" and config.feedback.verbal != "none"
        )

    # --- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        config, task = self.plan.config, self.plan.task
        yield PartsLine(self._title(self.plan.resume_id), id="session-title")
        with Horizontal(id="session-body"):
            yield TurnTimeline(id="timeline")
            with Vertical(id="session-main"):
                shown = sees_reference(config.feedback.verbal) and self._human_verbal
                yield TaskPane(task, with_reference=shown, id="task-pane")
                yield Static("", id="viewing-banner")
                yield CodePane(id="code-pane")
                if self.codeif:
                    yield InstructionChecklist(id="instruction-checklist")
                yield TestResultsTable(id="test-table")
                yield FeedbackComposer(id="feedback-composer")
                if not self._human_verbal:
                    yield SimulatedFeedback(
                        self._persona, inside_turn=self._user_inside_turn, id="simulated-feedback"
                    )
        # The status line's tail is short: the title says the rest.
        tail = (
            counted(len(self.instructions), "instruction") if self.codeif else config.feedback.label
        )
        yield StatusLine(tail, rounds=self.codeif, id="status-line")
        yield KeysFooter(compact=True)

    def on_resize(self) -> None:
        # Below 100 columns every session key needs the footer's room; ctrl+p still opens
        # the palette, and help (f1) says so.
        self.query_one(KeysFooter).show_command_palette = self.size.width >= 100

    def on_mount(self) -> None:
        status = self.query_one(StatusLine)
        status.max_turns = self.budget
        composer = self.query_one(FeedbackComposer)
        composer.clock = self.services.clock  # its keystrokes are timed on the app's clock
        composer.display = self.codeif or (
            self._human_verbal and self.plan.config.feedback.verbal != "none"
        )
        if self.codeif:
            composer.border_title = "Next instruction"
            self.add_class("-codeif")  # the checklist takes its share of a short screen
        # The simulated user's words take their rows of a short screen from the code's.
        self.set_class(not self._human_verbal, "-simulated")
        if self.plan.ended is not None:
            composer.display = False  # a session that ended is only read
        self.watch_phase(self.phase)
        self.set_interval(1.0, self._tick)
        self._play()

    # --- workers -------------------------------------------------------------------------------

    @_worker("model", "play the session")
    def _play(self) -> None:
        if self.plan.ended is not None:
            self.controller.view()
        else:
            self.controller.play()

    @_worker("exec", "re-run the tests")
    def _rerun(self) -> None:
        try:
            result = self.controller.rerun_tests()
        except Exception as exc:  # the executor's failure is shown, the turn is unaffected
            self.post_message(msg.TurnFailed(self.controller.live_idx, "executor", str(exc)))
            return
        self.post_message(msg.ExecutionDone(self.controller.live_idx, result, rerun=True))

    @work(thread=True, group="store", exit_on_error=False, description="close the session")
    def _close_between_turns(self, status: str) -> None:
        self.controller.close_without_turn(status)  # type: ignore[arg-type]
        self.post_message(msg.SessionFinished(status))  # type: ignore[arg-type]

    # --- messages from the widgets -------------------------------------------------------------

    @on(TurnTimeline.TurnSelected)
    def _turn_selected(self, event: TurnTimeline.TurnSelected) -> None:
        # The timeline's last row is the turn shown by default (the live one, else the
        # latest): choosing it ends read-only viewing.
        latest = len(self.recorded) if self.live is not None else len(self.recorded) - 1
        self.viewed = event.idx if event.idx < latest else None

    @on(InstructionChecklist.Chosen)
    def _instruction_chosen(self, event: InstructionChecklist.Chosen) -> None:
        self.composing = event.instruction.category
        words = offered_message(event.instruction, self.instructions[0].text)
        composer = self.query_one(FeedbackComposer)
        composer.offer_draft(words, f"the benchmark ({self.composing})", replace=True)
        self._refresh()

    @on(InstructionChecklist.DetailsRequested)
    def _instruction_details(self, event: InstructionChecklist.DetailsRequested) -> None:
        self.app.push_screen(InstructionModal(event.row))

    @on(TestResultsTable.TracebackRequested)
    def _traceback(self, event: TestResultsTable.TracebackRequested) -> None:
        self.app.push_screen(TracebackModal(event.row, event.run_detail))

    # --- actions -------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = ALLOWED.get(action)
        if allowed is None:
            return True
        if self.plan.ended is not None:
            return False  # read-only: nothing is played, sent or closed
        if self.codeif and action == "continue":
            return False  # every CodeIF round gives an instruction
        if self.codeif and action in ("send", "accept"):
            return self.phase in allowed
        if action in ("send", "continue", "accept") and not self._human_verbal:
            return False
        if action == "send" and self.plan.config.feedback.verbal == "none":
            return False  # nothing to write: ctrl+g steps to the next turn
        if action == "focus_composer" and not any(c.display for c in self.query(FeedbackComposer)):
            return False  # a simulator plays the user, or VF:none: there is no composer
        return self.phase in allowed

    def action_send(self) -> None:
        composer = self.query_one(FeedbackComposer)
        text = composer.text.strip()
        if not text:
            self.notify(
                "The feedback is empty: write what the model should change, or press ctrl+g "
                "to continue without verbal feedback.",
                severity="warning",
                markup=False,
            )
            return
        self._answer(Answer(text, instruction=self.composing if self.codeif else None))

    def action_continue(self) -> None:
        self._answer(Answer(""))

    def _answer(self, answer: Answer) -> None:
        composer = self.query_one(FeedbackComposer)
        # The keystrokes go with the words they typed: continuing without words leaves both
        # in the composer for the next turn.
        keys = composer.keystrokes if answer.text else ()
        if self.live is not None:
            times = self.timer.answered(self.live.idx, keys)
            answer = replace(answer, turn_idx=self.live.idx, times=times)
        if not self.controller.send(answer):
            self.notify("No turn is waiting for feedback yet.", severity="warning")
            return
        if answer.text:
            composer.forget_keystrokes()
        self.phase = "saving"

    def action_cancel(self) -> None:
        self.controller.cancel()
        self.query_one(StatusLine).note = "cancelling the turn…"

    def action_focus_composer(self) -> None:
        if self.query_one(FeedbackComposer).display:
            self.query_one(FeedbackComposer).focus()

    def action_rerun_tests(self) -> None:
        self.query_one(StatusLine).note = "re-running the tests…"
        self._rerun()

    def action_retry_turn(self) -> None:
        self.phase = "starting"
        self._play()

    def action_toggle_diff(self) -> None:
        self.query_one(CodePane).action_toggle_diff()

    def action_toggle_task(self) -> None:
        self.query_one(TaskPane).toggle()

    def action_toggle_timeline(self) -> None:
        # Below 100 columns the timeline starts hidden, so the key shows it there.
        narrow = self.app.has_class("-narrow")
        self.toggle_class("-show-timeline" if narrow else "-hide-timeline")

    def action_focus_timeline(self) -> None:
        # Shown first where it is hidden (below 100 columns, or ctrl+b): focus needs it on
        # screen, and the person asked for it.
        self.remove_class("-hide-timeline")
        if self.app.has_class("-narrow"):
            self.add_class("-show-timeline")
        self.query_one(TurnTimeline).focus()

    def action_view_live(self) -> None:
        self.viewed = None

    def action_accept(self) -> None:
        question = "Accept this code as solved and end the session? (Tests still fail.)"
        self.app.push_screen(ConfirmModal(question, yes="Accept"), self._accept_confirmed)

    def _accept_confirmed(self, yes: bool | None) -> None:
        if yes:
            self._answer(Answer(self.query_one(FeedbackComposer).text.strip(), "accepted"))

    def action_give_up(self) -> None:
        self.app.push_screen(
            ConfirmModal("Give up on this task?", yes="Give up"), self._give_up_confirmed
        )

    def _give_up_confirmed(self, yes: bool | None) -> None:
        if not yes:
            return
        if self.phase == "awaiting_feedback":
            self._answer(Answer(self.query_one(FeedbackComposer).text.strip(), "abandoned"))
        else:
            self._close_between_turns("abandoned")

    @property
    def unsaved_work(self) -> str:
        """What leaving now would lose, or "" when nothing (recorded turns are never lost;
        a finished model call is reused on resume, so an idle live turn costs nothing; the
        words typed in the composer are kept, the last ones as the screen closes)."""
        if self.phase in BUSY:
            return "The running turn"
        return ""

    def stop(self) -> None:
        """Leave the session: a turn in flight is dropped (never half-saved)."""
        self.controller.cancel()

    def on_unmount(self) -> None:
        if self._keep_timer is not None:
            self._keep_timer.stop()
            write = self.unsent.take()
            # The last keys before leaving (ctrl+q, another session): one short write on this
            # thread, as a worker would die with the screen. A failure has nowhere to be shown
            # any more; the words written before it are kept.
            if write is not None:
                with contextlib.suppress(Exception):
                    self.unsent.write(*write)
        self.stop()
