"""SessionController: the plain-Python side of a session screen. It opens or resumes the
session row, plays the core turn loop on the app's runner loop with the person as the user,
writes every turn to the store before the next begins, and reports progress as messages.

No widgets here: the screen calls ``start``/``send``/``cancel`` and reacts to messages."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from textual.message import Message

from convtui.core.catalog.tasks import Task
from convtui.core.errors import ConvtuiError
from convtui.core.execution.backend import ExecutionBackend
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.feedback.simulators import FeedbackRequest, Simulator, User, VerbalFeedback
from convtui.core.models.types import ModelError
from convtui.core.play import loop as core
from convtui.core.projects.checkout import exec_request
from convtui.core.services import Models
from convtui.core.settings.config import USER_MODES as USER_MODES  # the app's mode list
from convtui.core.settings.config import ClosingStatus, SessionConfig, SessionStatus, UserMode
from convtui.core.settings.persona import Persona, is_persona
from convtui.core.turns.record import Turn
from convtui.sessions import Store
from convtui.sessions.database.human_times import HumanTurnTimes
from convtui.sessions.database.records import UserKind
from convtui.sessions.studies.study_rows import start_assignment
from convtui.tui import messages as msg
from convtui.tui.human import Answer, PersonUser, ShownSimulator
from convtui.tui.refusal import Refusal
from convtui.tui.runner import AsyncRunner
from convtui.tui.turn_calls import WatchedJournal, read_calls

# Streamed text reaches the screen at most this often; the full reply follows anyway.
STREAM_INTERVAL_S = 0.05


class SessionError(ConvtuiError):
    """A session cannot be opened or resumed as asked."""


class TurnTaken(Exception):
    """The store refused a turn as already recorded: another window on the same session
    recorded it first. Raised out of the turn loop, whose turns no longer match the store's."""

    def __init__(self, turn: Turn, status: SessionStatus, instruction: str | None) -> None:
        super().__init__(f"turn {turn.idx} is already recorded")
        self.turn = turn
        self.status = status
        self.instruction = instruction


@dataclass(frozen=True)
class StudyRef:
    """Who annotates, in which study (``convtui session --study``): a session opened for
    one of their assignments is linked to it as its row is written."""

    study_id: str
    name: str
    annotator: str


@dataclass(frozen=True)
class SessionPlan:
    """What the screen plays: a new session of ``task`` under ``config``, or the recorded
    session ``resume_id`` (whose own task and config then apply)."""

    task: Task
    config: SessionConfig
    user: UserMode = "human"
    resume_id: str | None = None
    # Who gives the feedback (``--annotator``), recorded with human and assisted sessions.
    annotator: str | None = None
    # The recorded session ended with this status: it is shown read-only, nothing is played.
    ended: SessionStatus | None = None
    # The study whose assignment (this task, the study's annotator) the session answers.
    study: StudyRef | None = None

    @property
    def user_kind(self) -> UserKind:
        if is_persona(self.user):
            return "simulator"
        if self.config.feedback.verbal == "none":
            return "none"
        return "assist" if self.user.startswith("assist:") else "human"


@dataclass
class AppServices:
    """What every session of the app shares: opened once by the CLI or a test."""

    store: Store
    models: Models
    """The code model and the model that plays the user: the type bench commands use too."""
    executor: ExecutionBackend
    runner: AsyncRunner
    clock: Callable[[], float] = time.monotonic
    checked: set[str] = field(default_factory=set)
    """Backends that answered their check (a server that is down fails the first turn fast,
    before any session row is written)."""

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.runner.call(self.models.aclose(), timeout=10)
        self.runner.close()
        self.executor.close()
        self.store.close()


class SessionController:
    def __init__(
        self, services: AppServices, plan: SessionPlan, post: Callable[[Message], object]
    ) -> None:
        self.services = services
        self.plan = plan
        self.post = post
        self.session_id: str | None = plan.resume_id
        self.turns: list[Turn] = []
        self.live_idx = 0
        self._person: PersonUser | None = None
        self._future: concurrent.futures.Future[None] | None = None
        self._last_code = ""
        self._executed_idx = -1
        self._held_ask: msg.FeedbackWanted | None = None
        # The person's last answer's times, with the turn they are for (recorded with it).
        self._times: tuple[int, HumanTurnTimes] | None = None
        # The unrecorded turn that may have been shown before this controller opened the
        # session (a resumed session, or another window's): its times before now are unknown.
        self._shown_before: int | None = None
        self._opened = False

    @property
    def task(self) -> Task:
        return self.plan.task

    @property
    def config(self) -> SessionConfig:
        return self.plan.config

    @property
    def running(self) -> bool:
        return self._future is not None and not self._future.done()

    @property
    def waiting_for_person(self) -> bool:
        return self._person is not None and self._person.waiting

    # --- called from the screen (any thread) -------------------------------------------------

    def play(self) -> None:
        """Play turns until the session ends, fails, or is cancelled; blocks (call it from a
        worker thread). Errors arrive as messages, never as exceptions."""
        self._future = self.services.runner.submit(self._play())
        with contextlib.suppress(concurrent.futures.CancelledError):
            self._future.result()

    def view(self) -> None:
        """Show a session that ended: its recorded turns, read-only; blocks."""
        assert self.plan.ended is not None
        self.services.runner.call(self._open())
        self.post(msg.SessionFinished(self.plan.ended))

    def send(self, answer: Answer) -> bool:
        """Give the waiting turn the person's answer; False when no turn is waiting."""
        if self._person is None:
            return False
        if answer.times is not None and answer.turn_idx is not None:
            self._times = (answer.turn_idx, answer.times)
        return self._person.answer(answer)

    def cancel(self) -> None:
        """Stop the turn in flight; it is not saved, and ``play`` may start it again."""
        future = self._future
        if future is not None and not future.done():
            future.cancel()

    def close_without_turn(self, status: ClosingStatus) -> None:
        """End the session between turns (after a cancelled or failed turn)."""
        if self.session_id is not None:
            self.services.runner.call(self._set_status(status))

    def keep_typed(self, turn_idx: int, text: str, instruction: str | None = None) -> bool:
        """Keep the words typed for ``turn_idx`` and not sent (blank: none); blocks. False
        when nothing is kept: blank text, no session row yet, or the turn already recorded
        (the words were sent with it)."""
        if self.session_id is None:
            return False
        return self.services.store.keep_typed(self.session_id, turn_idx, text, instruction)

    def request(self, code: str) -> ExecRequest:
        """The execution that checks ``code``: the task's tests under the session's limits
        (a controller whose turns run other checks says so here, and reruns follow)."""
        return exec_request(self.task, code, self.config.limits)

    def rerun_tests(self) -> ExecResult:
        """Run the live turn's code again, uncached (flaky tests show up); blocks. The turn
        keeps the result it was given; the new one is logged beside it."""
        request = self.request(self._last_code)
        executor = self.services.executor
        result = executor.run(request)
        cache = self.services.store.execution_cache()
        cache.put(executor.cache_key(request), request.task_id, request.code, result)
        return result

    # --- on the runner loop ----------------------------------------------------------------------

    async def _set_status(self, status: ClosingStatus) -> None:
        assert self.session_id is not None
        self.services.store.set_session_status(self.session_id, status)

    async def _open(self) -> None:
        store = self.services.store
        study = self.plan.study
        recorded_before = self.session_id is not None and not self._opened
        if self.session_id is None and study is not None:
            self.session_id = start_assignment(
                store,
                study.study_id,
                self.task.id,
                study.annotator,
                self.config,
                self.plan.user_kind,
            )
        elif self.session_id is None:
            self.session_id = store.create_interactive_session(
                self.task.id, self.config, self.plan.user_kind, annotator=self.plan.annotator
            )
        else:
            # A call left "started" died with the app that made it; it is made again.
            store.abandon_started_calls(session_id=self.session_id)
        self._load()
        self._opened = True  # played again after a cancel, it is the same session here
        if recorded_before:
            self._note_shown_before()

    def _load(self) -> None:
        """Read the session's turns and the words kept for the next one, and show them."""
        store = self.services.store
        assert self.session_id is not None
        self.turns = store.load_turns(self.session_id)
        typed = store.typed_feedback(self.session_id, len(self.turns))
        self.post(msg.SessionOpened(self.session_id, tuple(self.turns), typed))
        self.post(msg.CallsRecorded(read_calls(store, self.session_id)))

    async def _play(self) -> None:
        try:
            await self._check_models()
            await self._open()  # the store, not this object, knows which turns are recorded
            while True:
                try:
                    await self._turns()
                    break
                except TurnTaken as taken:
                    ended = self._refused(taken)
                    if ended is not None:
                        self.post(msg.SessionFinished(ended))
                        break
        except asyncio.CancelledError:
            self._abandon()
            self.post(msg.TurnCancelled(self.live_idx))
            raise
        except ModelError as exc:
            self._abandon()
            self.post(msg.TurnFailed(self.live_idx, "model", str(exc)))
        except ConvtuiError as exc:
            self._abandon()
            self.post(msg.TurnFailed(self.live_idx, "session", str(exc)))
        except Exception as exc:  # a bug must reach the screen, not kill the runner silently
            self._abandon()
            self.post(msg.TurnFailed(self.live_idx, "internal", f"{type(exc).__name__}: {exc}"))

    async def _turns(self) -> None:
        """Play the turns after the recorded ones, posting what happens."""
        store = self.services.store
        assert self.session_id is not None
        store.set_session_status(self.session_id, "running")
        loop = core.SessionLoop(
            self.task,
            self.config,
            self.services.models.coder,
            core.cached_execute(self.services.executor, store.execution_cache()),
            self._user(),
            WatchedJournal(store.journal(self.session_id), self._calls_changed),
        )
        last_post = 0.0
        async for event in loop.run(self.turns):
            if isinstance(event, core.TurnStarted):
                self.live_idx = event.idx
                self.post(msg.TurnBegan(event.idx))
            elif isinstance(event, core.ReplyStreamed):
                now = time.monotonic()
                if now - last_post >= STREAM_INTERVAL_S:
                    last_post = now
                    self.post(msg.ReplyStreamed(event.idx, event.text))
            elif isinstance(event, core.ReplyReady):
                self._last_code = event.code
                self.post(msg.ReplyReady(event.idx, event.completion.text, event.code))
            elif isinstance(event, core.Executed):
                self.post(msg.ExecutionDone(event.idx, event.result))
                self._executed_idx = event.idx
                if self._held_ask is not None:
                    self.post(self._held_ask)
                    self._held_ask = None
            elif isinstance(event, core.TurnCompleted):
                self._record(event.turn, event.status, event.cache_key)
            elif isinstance(event, core.SessionEnded):
                if event.status == "failed":
                    store.set_session_status(self.session_id, "running", event.error)
                    self.post(msg.TurnFailed(self.live_idx, "model", event.error))
                else:
                    self.post(msg.SessionFinished(event.status))

    async def _check_models(self) -> None:
        services = self.services
        needed = [services.models.coder]
        if self.plan.user != "human" and self.config.feedback.verbal != "none":
            needed.append(services.models.user)
        for backend in needed:
            if backend.spec not in services.checked:
                await backend.check()
                services.checked.add(backend.spec)

    def _record(
        self,
        turn: Turn,
        status: SessionStatus,
        cache_key: str | None,
        instruction: str | None = None,
    ) -> None:
        """Write a finished turn, with the cache key of the execution it ran, and tell the
        screen; every turn of every controller is saved here, so the screen's view of the
        session never runs ahead of the store. Raises ``TurnTaken`` when the store already
        holds the turn (``instruction``: CodeIF, what the person's words were about)."""
        assert self.session_id is not None
        times = self._times_for(turn.idx)
        if not self.services.store.save_turn(self.session_id, turn, status, cache_key, times):
            raise TurnTaken(turn, status, instruction)
        self.turns.append(turn)
        self.post(msg.TurnSaved(turn, status))

    def _refused(self, taken: TurnTaken) -> SessionStatus | None:
        """Another window recorded ``taken``'s turn first: the person's words for it wait for
        the turn the store waits for, the screen hears what happened and is shown the store's
        turns. Returns how the session ended in the store, if it has (nothing more is played
        then)."""
        store = self.services.store
        assert self.session_id is not None
        words = self._persons_words(taken.turn)
        row = store.session(self.session_id)
        ended = row.status if row.finished else None
        kept_for = None
        if words and ended is None:
            kept_for = self._keep_refused(row.turns_done, words, taken.instruction)
        refusal = Refusal(taken.turn.idx, words, kept_for, ended, taken.status)
        self.post(msg.TurnRefused(refusal))
        self._drop_unrecorded()
        self._load()
        self._note_shown_before()
        return ended

    def _note_shown_before(self) -> None:
        """The session was opened with turns recorded elsewhere (the app closed and opened it
        again, or another window recorded a turn): the turn it waits for may have been shown
        before, and what the person did with it then is not known here."""
        assert self.session_id is not None
        idx = len(self.turns)
        if self.services.store.turn_may_have_been_shown(self.session_id, idx):
            self._shown_before = idx

    def _times_for(self, idx: int) -> HumanTurnTimes | None:
        """The person's times on turn ``idx``, if they answered it here; only the sending is
        known for a turn that may have been shown before the session was opened here."""
        if self._times is None or self._times[0] != idx:
            return None
        times, self._times = self._times[1], None
        return times.unknown_before_sent() if idx == self._shown_before else times

    def _persons_words(self, turn: Turn) -> str:
        """What the person sent with ``turn`` ("" when a simulator plays the user)."""
        if self._person is None:
            return ""
        said = turn.verbal_feedback or (turn.received.user if turn.received else None) or ""
        return said if said.strip() else ""

    def _keep_refused(self, idx: int, words: str, instruction: str | None) -> int | None:
        """Keep ``words`` as unsent words for turn ``idx``; the turn kept for, or None when
        the store took none (that turn got recorded, or the session ended, meanwhile)."""
        store = self.services.store
        assert self.session_id is not None
        there = store.typed_feedback(self.session_id, idx)
        if there is not None and words in there.text:
            return idx
        if there is not None and there.text not in words:
            # The other window's unsent words for that turn are the person's too: both stay.
            words = f"{there.text}\n\n{words}"
        return idx if store.keep_typed(self.session_id, idx, words, instruction) else None

    def _drop_unrecorded(self) -> None:
        """Forget what this window played past the store's turns: the next play starts from
        what the store holds, as a resumed session does."""
        self._held_ask = None
        self._executed_idx = -1
        self._last_code = ""

    def _abandon(self) -> None:
        if self.session_id is not None:
            self.services.store.abandon_started_calls(session_id=self.session_id)
            self._calls_changed(self.live_idx)  # its calls in flight now read "abandoned"

    def _calls_changed(self, turn_idx: int) -> None:
        """A call of ``turn_idx`` started or ended: the screen gets the turn's calls anew."""
        if self.session_id is not None:
            calls = read_calls(self.services.store, self.session_id, turn_idx)
            self.post(msg.CallsRecorded(calls))

    def _user(self) -> User | None:
        config, mode = self.config, self.plan.user
        verbal = config.feedback.verbal
        if is_persona(mode):
            return ShownSimulator(self._simulator(mode), self._on_simulating, self._on_simulated)
        drafter = None
        kind = mode.removeprefix("assist:")
        if kind != mode and verbal != "none" and is_persona(kind):
            drafter = self._simulator(kind)
        self._person = PersonUser(self._on_feedback_wanted, drafter)
        self._person.on_drafting = self._on_simulating
        return self._person

    def _simulator(self, kind: Persona) -> Simulator:
        backend = self.services.models.user
        return Simulator(kind, backend, self.config.simulator_params)

    def _on_feedback_wanted(self, request: FeedbackRequest, draft: str | None) -> None:
        ask = msg.FeedbackWanted(
            request.turn_idx, request.compile_feedback, request.execution_feedback, draft
        )
        # The loop asks while its Executed event may still be queued: the screen hears the
        # results first, so the ask waits for them.
        if self._executed_idx == request.turn_idx:
            self.post(ask)
        else:
            self._held_ask = ask

    def _on_simulating(self) -> None:
        self.post(msg.Simulating(self.live_idx))

    def _on_simulated(self, said: VerbalFeedback | None) -> None:
        self.post(msg.Simulated(self.live_idx, said.text if said else None))
