"""The session screen: the task, the code of the live turn as it streams in, its test results
and feedback, the composer where the person answers, the turn timeline and a status line.

The screen owns the state (``phase``, the recorded turns, the live turn, which turn is viewed)
and pushes it down into the widgets; all slow work runs in workers through the
SessionController, whose messages move the state on."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TextArea

from convtui.core.codeif.conversation import offered_message, rounds_limit
from convtui.core.codeif.instructions import Instruction
from convtui.core.codeif.records import round_source
from convtui.core.plural import counted
from convtui.sessions.browse import CallLine
from convtui.tui import messages as msg
from convtui.tui import refusal as refusals
from convtui.tui import render
from convtui.tui.browser_keys import drop_browser_keys
from convtui.tui.codeif_controller import MODE as CODEIF_MODE
from convtui.tui.codeif_controller import CodeifController
from convtui.tui.controller import Services, SessionController, SessionPlan
from convtui.tui.human import Answer
from convtui.tui.launch import served_by_convtui
from convtui.tui.screens.confirm import ConfirmModal
from convtui.tui.screens.instruction import InstructionModal
from convtui.tui.screens.session_keys import ALLOWED, BUSY, FINISHED, SESSION_BINDINGS
from convtui.tui.screens.traceback import TracebackModal
from convtui.tui.typed_words import KEEP_AFTER_S, Typed, TypedWords
from convtui.tui.viewmodels import TurnView, result_view, turn_view
from convtui.tui.widgets.code_pane import CodePane
from convtui.tui.widgets.composer import FeedbackComposer
from convtui.tui.widgets.feedback_pane import FeedbackPane
from convtui.tui.widgets.instruction_checklist import InstructionChecklist, checklist_rows
from convtui.tui.widgets.keys_footer import KeysFooter
from convtui.tui.widgets.parts_line import PartsLine
from convtui.tui.widgets.simulated_feedback import SimulatedFeedback
from convtui.tui.widgets.status_line import StatusLine
from convtui.tui.widgets.task_pane import TaskPane
from convtui.tui.widgets.test_table import TestResultsTable
from convtui.tui.widgets.timeline import TurnTimeline


def _worker(group: str, description: str) -> Any:
    """The screen's blocking jobs (the model's turns, a re-run of the tests): each in a
    thread, one at a time in its group, and a failure is shown on screen rather than
    closing the app."""
    return work(
        thread=True, exclusive=True, group=group, exit_on_error=False, description=description
    )


class SessionScreen(Screen):
    help = (
        "The model writes code for the task; the harness compiles it and runs the tests; you "
        "tell the model what to change. Every turn is saved before the next one starts, so "
        "quitting loses at most the turn in flight: `convtui session --resume ID` continues; "
        "words you typed and did not send come back in the composer."
    )
    BINDINGS = SESSION_BINDINGS

    phase: reactive[str] = reactive("starting", bindings=True)
    """What the session is doing: starting, generating, executing, simulating,
    awaiting_feedback, saving, cancelled, failed, or finished (solved, exhausted, stalled,
    accepted, abandoned)."""

    viewed: reactive[int | None] = reactive(None)
    """The recorded turn shown read-only, or None for the live turn."""

    def __init__(self, services: Services, plan: SessionPlan) -> None:
        super().__init__()
        if served_by_convtui():
            drop_browser_keys(self._bindings)  # in a browser page: its keys are not ours
        self.services = services
        self.plan = plan
        # A CodeIF-Bench task: the person gives instructions, a checklist shows them.
        self.codeif = plan.task.suite == "codeif"
        controller = CodeifController if self.codeif else SessionController
        self.controller = controller(services, plan, self.post_message)
        self.instructions: tuple[Instruction, ...] = getattr(self.controller, "order", ())
        # A CodeIF session plays rounds until the person stops or the rounds run out; the
        # config's turn budget is BigCodeBench's and does not apply.
        self.budget = (
            rounds_limit(self.instructions, CODEIF_MODE) if self.codeif else plan.config.max_turns
        )
        self.given: tuple[str, ...] = ()
        """CodeIF: the instructions given so far, in the order given."""
        self.composing: str | None = None
        """CodeIF: the instruction whose words the composer was given."""
        self.recorded: list[TurnView] = []
        self.live: TurnView | None = None
        self.calls: dict[int, tuple[CallLine, ...]] = {}
        """Each turn's model calls in the order made, as the store holds them."""
        self._started = services.clock()
        self.unsent = TypedWords(self.controller.keep_typed)
        """The composer's unsent words on their way to the store."""
        self._keep_timer: Timer | None = None
        self._restored_instruction: str | None = None
        """CodeIF: the instruction the restored words were about, until the round is offered."""
        self._human_verbal = plan.user not in ("novice", "expert")
        self._persona = f"{plan.user} simulator"
        config = plan.config
        # convcodeworld asks its simulated user inside each feedback turn (core/ccw/policies.py).
        self._user_inside_turn = (
            config.protocol == "convcodeworld" and config.feedback.verbal != "none"
        )

    # --- layout --------------------------------------------------------------------------------

    def _title(self, session_id: str | None) -> list[str]:
        """The header's parts; on a narrow terminal they take a second line (PartsLine), so
        the session id and Ω are never cut. The model comes last: a long spec (a path, a
        URL) is what a short terminal cuts."""
        config, task = self.plan.config, self.plan.task
        if self.codeif:
            # What the session is, in place of the Ω label it has no use for (its rounds give
            # instructions, not Ω's feedback); next to the task, so 80 columns still show it.
            what = render.codeif_summary(len(self.instructions), self.budget)
            parts = [task.id, what, f"user: {self.plan.user}"]
        else:
            parts = [task.id, config.feedback.label, f"user: {self.plan.user}"]
        if session_id:
            parts.append(f"session {session_id}")
        return [*parts, config.model]

    def compose(self) -> ComposeResult:
        config, task = self.plan.config, self.plan.task
        yield PartsLine(self._title(self.plan.resume_id), id="session-title")
        with Horizontal(id="session-body"):
            yield TurnTimeline(id="timeline")
            with Vertical(id="session-main"):
                expert = config.feedback.verbal == "expert" and self._human_verbal
                yield TaskPane(task, with_reference=expert, id="task-pane")
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
        composer.display = self.codeif or (
            self._human_verbal and self.plan.config.feedback.verbal != "none"
        )
        if self.codeif:
            composer.border_title = "Next instruction"
            self.add_class("-codeif")  # the checklist takes its share of a short screen
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

    @work(thread=True, group="typed", exit_on_error=False, description="keep the words typed")
    def _write_typed(self, seq: int, typed: Typed) -> None:
        try:
            self.unsent.write(seq, typed)
        except Exception as exc:  # shown, and written again on the next change
            self.post_message(msg.TypedNotKept(str(exc)))

    @work(thread=True, group="store", exit_on_error=False, description="close the session")
    def _close_between_turns(self, status: str) -> None:
        self.controller.close_without_turn(status)  # type: ignore[arg-type]
        self.post_message(msg.SessionFinished(status))  # type: ignore[arg-type]

    # --- messages from the controller ----------------------------------------------------------

    @on(msg.SessionOpened)
    def _opened(self, event: msg.SessionOpened) -> None:
        self.recorded = [turn_view(t) for t in event.turns]
        if self.codeif:
            self.given = self._given_through(len(self.recorded) - 1)
        self.query_one("#session-title", PartsLine).set_parts(self._title(event.session_id))
        composer = self.query_one(FeedbackComposer)
        typed = event.typed
        if typed is not None and self.plan.ended is None:
            self.unsent.found((typed.turn_idx, typed.text, typed.instruction))
            if not composer.typed:  # words typed since the screen opened are newer
                composer.restore(typed.text)
                self._restored_instruction = typed.instruction
        # Words typed before the row existed had nowhere to go; they have now.
        self._keep_typed_soon()
        self._refresh()

    @on(msg.CallsRecorded)
    def _calls_recorded(self, event: msg.CallsRecorded) -> None:
        self.calls.update(event.calls)
        turn, _previous = self._shown()
        if turn is not None and turn.idx in event.calls:
            self._show_feedback(turn)

    @on(msg.TurnBegan)
    def _began(self, event: msg.TurnBegan) -> None:
        self.live = TurnView(event.idx)
        self.phase = "generating"
        self.query_one(CodePane).clear(event.idx)
        self._refresh()

    @on(msg.ReplyStreamed)
    def _streamed(self, event: msg.ReplyStreamed) -> None:
        if self.viewed is None:
            self.query_one(CodePane).stream(event.idx, event.text)

    @on(msg.ReplyReady)
    def _reply_ready(self, event: msg.ReplyReady) -> None:
        same = self.live is not None and self.live.idx == event.idx
        base = self.live if same and self.live is not None else TurnView(event.idx)
        self.live = replace(base, reply=event.reply, code=event.code)
        # A cached execution lets the turn reach its user before this message arrives (the
        # user's callbacks post directly, the loop's events after a hop): never step back.
        if self.phase in ("starting", "generating"):
            self.phase = "executing"
        self._refresh()

    def _update_live(self, **changes: Any) -> None:
        """The live turn with ``changes``; none while no turn is live (a message that arrives
        after its turn was saved)."""
        if self.live is not None:
            self.live = replace(self.live, **changes)

    @on(msg.ExecutionDone)
    def _executed(self, event: msg.ExecutionDone) -> None:
        view = result_view(event.result)
        if event.rerun:
            note = f"re-run: {render.status_word(view.status)} {view.summary}"
            self.query_one(StatusLine).note = note
            self.query_one(TestResultsTable).show(view, note=note + " (turn keeps the first)")
            return
        self._update_live(result=view)
        # The person may already be asked (the loop goes on while this message travels).
        if self.phase == "executing":
            self.phase = "saving"
        self._refresh()

    @on(msg.FeedbackWanted)
    def _feedback_wanted(self, event: msg.FeedbackWanted) -> None:
        self._update_live(
            compile_feedback=event.compile_feedback, execution_feedback=event.execution_feedback
        )
        self.phase = "awaiting_feedback"
        composer = self.query_one(FeedbackComposer)
        if self.codeif:
            composer.offer_draft(event.draft, f"the benchmark ({self.composing})")
        else:
            kind = self.plan.user.split(":", 1)[-1]
            composer.offer_draft(event.draft, f"simulator:{kind}")
        if composer.display:
            composer.focus()
        self._refresh()

    @on(msg.Simulating)
    def _simulating(self, _event: msg.Simulating) -> None:
        self.phase = "simulating"
        self._refresh()

    @on(msg.Simulated)
    def _simulated(self, event: msg.Simulated) -> None:
        # Shown where a person's feedback would be (below the tests, and in the Feedback
        # tab), never over the code; "" is a simulator that stayed silent.
        self._update_live(
            verbal_feedback=event.text or "", feedback_source=f"simulator:{self.plan.user}"
        )
        self.phase = "saving"
        self._refresh()

    @on(msg.TurnSaved)
    def _saved(self, event: msg.TurnSaved) -> None:
        self.recorded.append(turn_view(event.turn))
        self.live = None
        composer = self.query_one(FeedbackComposer)
        self.unsent.saved()
        if event.turn.verbal_feedback is not None or event.turn.feedback_draft is not None:
            composer.sent()
        # Between turns the next one is starting; after the last, the session's end shows.
        self.phase = event.status if event.status != "running" else "starting"
        # Words left in the composer (ctrl+g sends none) now wait for the next turn.
        self._keep_typed_soon()
        self._refresh()

    @on(msg.TurnRefused)
    def _refused(self, event: msg.TurnRefused) -> None:
        # The store's turns come next (SessionOpened) and replace this window's: the live
        # turn was never recorded, and the words the store kept come back from there.
        refusal = event.refusal
        self.live = None
        self.viewed = None
        self.unsent.saved()  # the other window's record dropped the words kept for the turn
        composer = self.query_one(FeedbackComposer)
        composer.sent()
        if refusal.kept_for is None and refusal.words:
            composer.restore(refusal.words)  # the store took them nowhere: here to copy
        # An ended session's phase is set now, so the note below outlives the SessionFinished
        # that follows.
        self.phase = refusal.ended or "starting"
        rounds = self.codeif
        what = "round" if rounds else "turn"
        self.notify(
            refusals.notice(refusal, rounds=rounds),
            title=f"this {what} was already recorded",
            severity="warning",
            markup=False,
            timeout=60,
        )
        self.query_one(StatusLine).note = refusals.note(refusal, rounds=rounds)
        self._refresh()

    @on(msg.SessionFinished)
    def _finished(self, event: msg.SessionFinished) -> None:
        self.phase = event.status  # the status line says how it ended
        self._refresh()

    @on(msg.TurnFailed)
    def _failed(self, event: msg.TurnFailed) -> None:
        if event.kind == "executor" and self.phase == "awaiting_feedback":
            self.notify(event.text, title="re-run failed", severity="error", markup=False)
            return
        self.phase = "failed"
        self.notify(
            event.text, title=f"{event.kind} error", severity="error", markup=False, timeout=15
        )
        self.query_one(StatusLine).note = f"{event.kind} error: {event.text.splitlines()[0]}"
        self._refresh()

    @on(msg.TurnCancelled)
    def _cancelled(self, _event: msg.TurnCancelled) -> None:
        self.phase = "cancelled"
        self.live = None
        self._refresh()

    @on(TurnTimeline.TurnSelected)
    def _turn_selected(self, event: TurnTimeline.TurnSelected) -> None:
        # The timeline's last row is the turn shown by default (the live one, else the
        # latest): choosing it ends read-only viewing.
        latest = len(self.recorded) if self.live is not None else len(self.recorded) - 1
        self.viewed = event.idx if event.idx < latest else None

    @on(msg.InstructionOffered)
    def _instruction_offered(self, event: msg.InstructionOffered) -> None:
        restored, self._restored_instruction = self._restored_instruction, None
        # Restored words stay about the instruction they were written for.
        keep = restored is not None and self.query_one(FeedbackComposer).restored
        self.composing = restored if keep else event.category
        self._refresh()

    @on(msg.InstructionsGiven)
    def _instructions_given(self, event: msg.InstructionsGiven) -> None:
        self.given = event.categories
        self._refresh()

    @on(TextArea.Changed, "#feedback-composer")
    def _composer_changed(self, _event: TextArea.Changed) -> None:
        self._keep_typed_soon()

    @on(msg.TypedNotKept)
    def _typed_not_kept(self, event: msg.TypedNotKept) -> None:
        self.unsent.failed()
        note = f"your words are not saved yet: {event.error.splitlines()[0]}"
        self.query_one(StatusLine).note = note
        self.notify(
            event.error, title="could not keep your words", severity="warning", markup=False
        )

    def _keep_typed_soon(self) -> None:
        """Write the composer's words once typing pauses (``KEEP_AFTER_S``): only the
        person's own, for the turn that waits or will wait for them, while the session is
        live; an unedited draft writes nothing (it comes back from the call journal)."""
        composer = self.query_one(FeedbackComposer)
        idx = self._current_turn()
        if (
            self.controller.session_id is None
            or self.plan.ended is not None
            or self.finished
            or not composer.display
            or idx is None
        ):
            return
        text = composer.text if composer.typed else ""
        self.unsent.changed((idx, text, self.composing if self.codeif else None))
        if self._keep_timer is not None:
            self._keep_timer.stop()
        self._keep_timer = self.set_timer(KEEP_AFTER_S, self._keep_pending)

    def _keep_pending(self) -> None:
        self._keep_timer = None
        write = self.unsent.take()
        if write is not None:
            self._write_typed(*write)

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

    # --- state pushed down ---------------------------------------------------------------------

    def watch_phase(self, phase: str) -> None:
        if not self.query(StatusLine) or not self.query(FeedbackComposer):
            # Read before or while the panes mount (the app's footer asks check_action as the
            # screen is pushed, and once met the status line mounted before the composer):
            # nothing to push down yet; on_mount does it once the panes exist.
            return
        self.query_one(StatusLine).phase = phase
        composer = self.query_one(FeedbackComposer)
        composer.ready = phase == "awaiting_feedback"
        composer.idle_note = render.composer_note(phase)
        composer.read_only = phase in FINISHED  # nobody will read what is typed now
        self.set_class(phase in BUSY, "-busy")

    def watch_viewed(self, _viewed: int | None) -> None:
        self._refresh()

    def _shown(self) -> tuple[TurnView | None, TurnView | None]:
        """The turn the panes show and the one before it (for the diff)."""
        if self.viewed is not None:
            idx = self.viewed
            turn = self.recorded[idx]
        elif self.live is not None:
            idx, turn = self.live.idx, self.live
        elif self.recorded:
            idx, turn = len(self.recorded) - 1, self.recorded[-1]
        else:
            return None, None
        previous = self.recorded[idx - 1] if 0 < idx <= len(self.recorded) else None
        return turn, previous

    def _refresh(self) -> None:
        turn, previous = self._shown()
        labels = [render.timeline_label(t) for t in self.recorded]
        if self.live is not None:
            labels.append(render.timeline_label(self.live, live=True, phase=self.phase))
        timeline = self.query_one(TurnTimeline)
        # The row of the turn on screen stays highlighted: the viewed one, else the latest.
        shown = self.viewed if self.viewed is not None else len(labels) - 1
        timeline.set_turns(labels, shown, self.budget)
        banner = self.query_one("#viewing-banner", Static)
        banner.display = self.viewed is not None
        if self.viewed is not None:
            banner.update(
                Text(
                    f"viewing turn {self.viewed} of {len(self.recorded)} (read-only) · "
                    "end returns to the live turn"
                )
            )
        self.query_one(StatusLine).turn = self._current_turn()
        writing = self.phase == "simulating" and self.viewed is None
        for pane in self.query(SimulatedFeedback):
            pane.show_turn(turn, previous, writing=writing)
        if turn is None:
            return
        streaming = self.viewed is None and self.live is not None and not self.live.code
        if not streaming:
            self.query_one(CodePane).show(turn, previous)
        self.query_one(TestResultsTable).show(turn.result)
        if self.codeif:
            given = self.given if self.viewed is None else self._given_through(self.viewed)
            composing = self.composing if self.viewed is None else None
            self.query_one(InstructionChecklist).show(
                checklist_rows(self.instructions, turn.result, given), composing
            )
        self._show_feedback(turn)

    def _given_through(self, idx: int) -> tuple[str, ...]:
        """CodeIF: the instructions given up to recorded turn ``idx``."""
        given: list[str] = []
        for turn in self.recorded[: idx + 1]:
            found = round_source(turn.received)
            if found is not None and found[1] not in given:
                given.append(found[1])
        return tuple(given)

    def _show_feedback(self, turn: TurnView) -> None:
        self.query_one(FeedbackPane).show(
            turn,
            execution_on=self.plan.config.feedback.execution != "none",
            calls=self.calls.get(turn.idx, ()),
            user_inside_turn=self._user_inside_turn,
        )

    def position(self) -> str:
        """Where the session stands, as the status line says it (``turn 1 · 2 of 11``): the
        one way turns are counted wherever the app speaks of them."""
        shown = render.round_position if self.codeif else render.turn_position
        return shown(self._current_turn(), self.budget)

    def _current_turn(self) -> int | None:
        """The turn in play: the live one, else the next to run, or once the session ended
        the last one played (None if it ended before any)."""
        if self.live is not None:
            return self.live.idx
        if self.finished:
            return len(self.recorded) - 1 if self.recorded else None
        return len(self.recorded)

    def _tick(self) -> None:
        self.query_one(StatusLine).elapsed_s = self.services.clock() - self._started

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
        if not self.controller.send(answer):
            self.notify("No turn is waiting for feedback yet.", severity="warning")
            return
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
    def finished(self) -> bool:
        return self.phase in FINISHED

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
