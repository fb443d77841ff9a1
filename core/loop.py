"""The turn loop (docs/design.md#one-turn): generate, extract, compile, execute, render
feedback, ask the user, and hand the finished turn to the caller before the next begins.

Front ends drive it as an async iterator of events; the iterator is suspended while the
caller handles ``TurnCompleted``, which is where the store commits the turn, so a turn is
always written before the next one starts."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace

from convtui.core.calls import journaled_call
from convtui.core.ccw import drive as ccw_drive
from convtui.core.ccw.sanitize import turn0_code
from convtui.core.ccw.turn import ModelCall
from convtui.core.ccw.turn0 import turn0_call
from convtui.core.evaluate import (
    Evaluation,
    Execute,
    FeedbackSettings,
    evaluate,
    render_execution,
)
from convtui.core.execution import ExecRequest, ExecResult
from convtui.core.executor import Executor
from convtui.core.extract import extract_code
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import (
    ChatMessage,
    Completion,
    GenerationParams,
    ModelError,
)
from convtui.core.prompts import feedback_message, render
from convtui.core.replay import (
    CARRIED_NOTE,
    REPLAY_NOTE,
    RecordedFeedback,
    recorded_user_feedback,
    replay_status,
)
from convtui.core.session import (
    CallJournal,
    CallKind,
    CallPurpose,
    ClosingStatus,
    ExecutionCache,
    SessionConfig,
    SessionStatus,
    Turn,
    TurnFeedback,
    request_hash,
)
from convtui.core.simulators import FeedbackRequest, User, VerbalFeedback
from convtui.core.tasks import Task


def cached_execute(executor: Executor, cache: ExecutionCache | None) -> Execute:
    """The loop's ``execute``: a result the cache holds is reused, anything else runs in a
    thread (the executor blocks while its child runs) and is recorded."""

    async def execute(request: ExecRequest) -> ExecResult:
        key = executor.cache_key(request)
        if cache is not None:
            hit = cache.get(key)
            if hit is not None:
                return hit
        result = await asyncio.to_thread(executor.run, request)
        if cache is not None:
            cache.put(key, request.task_id, request.code, result)
        return result

    return execute


@dataclass(frozen=True)
class TurnStarted:
    idx: int


@dataclass(frozen=True)
class ReplyStreamed:
    idx: int
    text: str


@dataclass(frozen=True)
class ReplyReady:
    idx: int
    completion: Completion
    code: str


@dataclass(frozen=True)
class Executed:
    idx: int
    result: ExecResult


@dataclass(frozen=True)
class TurnCompleted:
    """The caller persists ``turn`` while the loop waits; ``status`` is the session's status
    after it (``running`` when another turn follows)."""

    turn: Turn
    status: SessionStatus


@dataclass(frozen=True)
class SessionEnded:
    status: SessionStatus
    turns: tuple[Turn, ...]
    error: str = ""


Event = TurnStarted | ReplyStreamed | ReplyReady | Executed | TurnCompleted | SessionEnded


def build_prompt(
    task: Task, config: SessionConfig, turns: Sequence[Turn]
) -> tuple[ChatMessage, ...]:
    """What the model sees for the next turn: ``markov`` (ConvCodeWorld) shows the task, the
    last code and its feedback; ``full`` replays the whole conversation."""
    system = ChatMessage("system", render("coder_system"))
    first = ChatMessage("user", render("coder_task", prompt=task.prompt))
    if not turns:
        return (system, first)
    if config.context == "markov":
        last = turns[-1]
        text = render(
            "coder_retry_markov",
            prompt=task.prompt,
            code=last.code,
            feedback=feedback_message(last),
        )
        return (system, ChatMessage("user", text))
    messages = [system, first]
    for turn in turns:
        messages.append(ChatMessage("assistant", turn.reply))
        messages.append(
            ChatMessage("user", render("coder_retry_full", feedback=feedback_message(turn)))
        )
    return tuple(messages)


def _status_after(turn: Turn, config: SessionConfig) -> SessionStatus:
    if turn.passed:
        return "solved"
    if turn.idx + 1 >= config.max_turns:
        return "exhausted"
    if config.protocol == "convcodeworld":
        # The reference plays every turn. One that made no code call left the code as it
        # was, and the next would ask the same questions and get the same answers.
        return "stalled" if turn.idx > 0 and turn.generate_call is None else "running"
    if not feedback_message(turn):
        return "stalled"
    return "running"


def _emitter(queue: asyncio.Queue[Event]) -> Callable[[Event], None]:
    """Put events on ``queue`` from any thread: model backends may stream from a worker."""
    loop = asyncio.get_running_loop()

    def emit(event: Event) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    return emit


class SessionLoop:
    """Runs one task for one model under one feedback configuration."""

    def __init__(
        self,
        task: Task,
        config: SessionConfig,
        backend: ModelBackend,
        execute: Execute,
        user: User | None = None,
        journal: CallJournal | None = None,
        reference: Sequence[Turn] | None = None,
    ) -> None:
        self.task = task
        self.config = config
        self.backend = backend
        self.execute = execute
        self.user = user
        self.journal = journal
        # A static replay (ConvCodeBench): the reference session's recorded turns. Turn 0 is
        # the model's own; at turn t >= 1 it is given the reference's turn t-1 (and, with
        # context "full", every reference turn before t) and the feedback recorded for it,
        # and no user is ever asked (replay.py).
        self.reference = tuple(reference) if reference is not None else None
        # Passed to the backend with every call (CallInfo): the stored session's id, so a
        # session played again (resumed, or a cancelled turn retried) keeps its key.
        self.session_key = journal.session_id if journal is not None else uuid.uuid4().hex

    async def complete(
        self,
        turn_idx: int,
        purpose: CallPurpose,
        messages: tuple[ChatMessage, ...],
        params: GenerationParams,
        backend: ModelBackend | None = None,
        on_text: Callable[[str], None] | None = None,
        *,
        seq: int = 0,
        kind: CallKind = "chat",
    ) -> Completion:
        """One model call, journaled (calls.py); a finished identical call is reused."""
        return await journaled_call(
            backend or self.backend,
            self.journal,
            self.session_key,
            turn_idx,
            purpose,
            messages,
            params,
            on_text,
            seq=seq,
            kind=kind,
        )

    async def run(self, prior: Sequence[Turn] = ()) -> AsyncIterator[Event]:
        """Play the session from ``prior`` (turns already recorded) to its end."""
        turns = list(prior)
        status: SessionStatus = self._status_after(turns[-1]) if turns else "running"
        while status == "running":
            idx = len(turns)
            yield TurnStarted(idx)
            events: asyncio.Queue[Event] = asyncio.Queue()
            work = asyncio.ensure_future(self._turn(idx, turns, _emitter(events)))
            try:
                while not work.done() or not events.empty():
                    getter = asyncio.ensure_future(events.get())
                    await asyncio.wait({work, getter}, return_when=asyncio.FIRST_COMPLETED)
                    if getter.done():
                        yield getter.result()
                    else:
                        getter.cancel()
                        await asyncio.sleep(0)  # let threadsafe callbacks land in the queue
                turn, closes = work.result()
            except ModelError as exc:
                yield SessionEnded("failed", tuple(turns), str(exc))
                return
            finally:
                if not work.done():  # the caller stopped listening: cancel the turn in flight
                    work.cancel()
            status = closes or self._status_after(turn)
            turns.append(turn)
            yield TurnCompleted(turn, status)
        yield SessionEnded(status, tuple(turns))

    async def _turn(
        self, idx: int, turns: list[Turn], emit: Callable[[Event], None]
    ) -> tuple[Turn, ClosingStatus | None]:
        if self.reference is not None and idx > 0:
            return await self._replay_turn(idx, self.reference, emit), None
        if self.config.protocol == "convcodeworld" and turns:
            return await self._ccw_turn(idx, turns[-1], emit), None
        if self.config.protocol == "convcodeworld" and self.task.suite == "bigcodebench":
            return await self._bcb_turn0(idx, emit), None
        config, task = self.config, self.task
        prompt = build_prompt(task, config, turns)
        completion, code, evaluation = await self._generate(idx, prompt, emit)
        compiled, result, ef = evaluation.compiled, evaluation.result, evaluation.execution_feedback
        notes: list[str] = []
        verbal: VerbalFeedback | None = None
        last_turn = idx + 1 >= config.max_turns
        # Under convcodeworld the user speaks inside the next turn (_ccw_turn), as there.
        user = self.user if config.protocol != "convcodeworld" else None
        if user is not None and not result.passed and not last_turn:
            request = FeedbackRequest(task, idx, code, compiled.ok, compiled.text, ef)

            async def ask(
                purpose: CallPurpose,
                messages: tuple[ChatMessage, ...],
                params: GenerationParams,
                backend: ModelBackend,
            ) -> Completion:
                return await self.complete(idx, purpose, messages, params, backend)

            verbal = await user.feedback(request, ask)
            if verbal is not None:
                notes.extend(verbal.notes)
        turn = Turn(
            idx=idx,
            reply=completion.text,
            code=code,
            compiled=compiled.ok,
            compile_feedback=compiled.text,
            execution=result,
            execution_feedback=ef,
            # A person who closes the session may say nothing: then no feedback was given.
            verbal_feedback=verbal.text if verbal and verbal.text else None,
            feedback_source=verbal.source if verbal and verbal.text else "none",
            generate_call=completion,
            simulate_call=verbal.call if verbal else None,
            prompt=prompt,
            prompt_hash=request_hash(self.backend.spec, prompt, config.params),
            notes=tuple(notes),
            feedback_draft=verbal.draft if verbal else None,
        )
        return turn, verbal.closes if verbal else None

    async def _generate(
        self, idx: int, prompt: tuple[ChatMessage, ...], emit: Callable[[Event], None]
    ) -> tuple[Completion, str, Evaluation]:
        """One code call on ``prompt``, the code extracted from its reply, and that code
        compiled and run."""
        config, task = self.config, self.task
        completion = await self.complete(
            idx,
            "generate",
            prompt,
            config.params,
            on_text=lambda text: emit(ReplyStreamed(idx, text)),
        )
        code = extract_code(
            completion.text,
            header=task.import_header,
            entry_point=task.entry_point,
            mode=config.extract,
        )
        emit(ReplyReady(idx, completion, code))
        evaluation = await evaluate(
            task, code, FeedbackSettings.of(config), self.execute, config.limits
        )
        emit(Executed(idx, evaluation.result))
        return completion, code, evaluation

    def _status_after(self, turn: Turn) -> SessionStatus:
        if self.reference is None:
            return _status_after(turn, self.config)
        return replay_status(turn, self.reference, self.config)

    async def _replay_turn(
        self, idx: int, reference: Sequence[Turn], emit: Callable[[Event], None]
    ) -> Turn:
        """Turn ``idx`` of a static replay: the model is handed the reference's turn idx-1
        and the feedback recorded for it, never a user (ConvCodeBench, ``run.py --option
        static``); if that reference turn passed, its code is this turn's, with no call."""
        config, task = self.config, self.task
        previous = reference[idx - 1]
        if config.protocol == "convcodeworld":
            recorded = recorded_user_feedback(reference, idx)
            return await self._ccw_turn(idx, previous, emit, recorded=recorded)
        if previous.passed:
            evaluation = await evaluate(
                task, previous.code, FeedbackSettings.of(config), self.execute, config.limits
            )
            emit(Executed(idx, evaluation.result))
            return Turn(
                idx=idx,
                reply=previous.reply,
                code=previous.code,
                compiled=evaluation.compiled.ok,
                compile_feedback=evaluation.compiled.text,
                execution=evaluation.result,
                execution_feedback=evaluation.execution_feedback,
                notes=(CARRIED_NOTE.format(turn=idx - 1),),
            )
        context = reference[:idx] if config.context == "full" else (previous,)
        prompt = build_prompt(task, config, context)
        completion, code, evaluation = await self._generate(idx, prompt, emit)
        return Turn(
            idx=idx,
            reply=completion.text,
            code=code,
            compiled=evaluation.compiled.ok,
            compile_feedback=evaluation.compiled.text,
            execution=evaluation.result,
            execution_feedback=evaluation.execution_feedback,
            generate_call=completion,
            prompt=prompt,
            prompt_hash=request_hash(self.backend.spec, prompt, config.params),
            notes=(REPLAY_NOTE.format(turn=idx - 1),),
        )

    async def _bcb_turn0(self, idx: int, emit: Callable[[Event], None]) -> Turn:
        """Turn 0 as ConvCodeWorld made it: BigCodeBench's own generation (ccw/turn0.py), then
        its ``sanitize --calibrate``; the calibrated program is what runs, the sanitized
        solution is the turn's code (the next turn's Previous Code)."""
        config, task = self.config, self.task
        call = turn0_call(task.prompt, await self.backend.chat_template())
        params = call.decoding.params()
        completion = await self.complete(
            idx,
            "generate",
            call.messages,
            params,
            on_text=lambda text: emit(ReplyStreamed(idx, text)),
            kind=call.kind,
        )
        made = await asyncio.to_thread(
            turn0_code,
            call.decoding.finish(completion.text),
            complete_prompt=task.complete_prompt,
            code_prompt=task.code_header,
            entry_point=task.entry_point,
        )
        emit(ReplyReady(idx, completion, made.solution))
        settings = FeedbackSettings.of(config)
        evaluation = await evaluate(
            task, made.solution, settings, self.execute, config.limits, program=made.program
        )
        emit(Executed(idx, evaluation.result))
        return Turn(
            idx=idx,
            reply=completion.text,
            code=made.solution,
            compiled=evaluation.compiled.ok,
            compile_feedback=evaluation.compiled.text,
            execution=evaluation.result,
            execution_feedback=evaluation.execution_feedback,
            generate_call=completion,
            prompt=call.messages,
            prompt_hash=request_hash(self.backend.spec, call.messages, params, call.kind),
            notes=(
                f"turn 0: {call.how}; sanitized and calibrated as BigCodeBench does, and run "
                "after the task's code prompt",
            ),
        )

    async def _ccw_turn(
        self,
        idx: int,
        previous: Turn,
        emit: Callable[[Event], None],
        *,
        recorded: RecordedFeedback | None = None,
    ) -> Turn:
        """A feedback turn as ConvCodeWorld plays it (ccw/turn.py): repairs of code that does
        not compile, the simulator asked inside the turn, DSPy's prompts as raw text. In a
        static replay (``recorded`` given) the reference's recorded words stand in for the
        simulator, as ConvCodeBench's ``pot.py`` reads them."""
        config, task = self.config, self.task
        settings = FeedbackSettings.of(config)
        ef = None
        if previous.execution is not None and settings.execution != "none":
            ef = render_execution(task, previous.execution, settings, trim=None)
        inputs = ccw_drive.turn_inputs(
            task,
            previous_code=previous.code,
            previous_passed=previous.passed,
            execution=settings.execution,
            execution_feedback=ef,
            user=config.feedback.verbal,
            iteration=idx,
            max_tokens=config.params.max_tokens,
        )
        if recorded is not None:
            inputs = replace(inputs, static=True, recorded_user_feedback=recorded.text)
        # The user object is the simulator (or the app's view of one): it holds the model
        # that plays the user; without one the code model plays it, as ConvCodeWorld's default.
        found = getattr(self.user, "backend", None)
        simulator = found if isinstance(found, ModelBackend) else self.backend
        made: dict[str, tuple[Completion, tuple[ChatMessage, ...]]] = {}

        async def ask(call: ModelCall, seq: int) -> str:
            code_call = call.role == "code"
            base = config.params if code_call else config.simulator_params
            params = replace(base, max_tokens=call.max_tokens)
            prompt = (ChatMessage("user", call.prompt),)
            completion = await self.complete(
                idx,
                call.purpose,
                prompt,
                params,
                self.backend if code_call else simulator,
                (lambda text: emit(ReplyStreamed(idx, text))) if code_call else None,
                seq=seq,
                kind="text",
            )
            made["code" if code_call else "simulate"] = (completion, prompt)
            return completion.text

        played = await ccw_drive.play(inputs, ask)
        outcome = played.outcome
        code_call, prompt = made.get("code", (None, previous.prompt))
        reply = code_call.text if code_call is not None else previous.reply
        notes = [f"convcodeworld: {len(outcome.calls)} model call(s), hop {outcome.iteration}"]
        if recorded is not None:
            notes.append(REPLAY_NOTE.format(turn=idx - 1))
        if outcome.aborted:
            # The reference's process exits here (its authors then deny-listed the task): the
            # turn keeps the previous code, is linked to no code call, and the session stalls
            # (_status_after), since playing it again would stop at the same place.
            notes.append(f"the reference's turn stops here: {outcome.aborted}")
            code, code_call = previous.code, None
        else:
            code = outcome.solution(task.import_header)
        if code_call is not None:
            emit(ReplyReady(idx, code_call, code))
        evaluation = await evaluate(task, code, settings, self.execute, config.limits)
        emit(Executed(idx, evaluation.result))
        simulated = made.get("simulate")
        source = (
            recorded.source
            if recorded is not None
            else f"simulator:{config.feedback.verbal}:{simulator.spec}"
        )
        if played.overflows:
            notes.append(
                f"context overflow: the execution feedback was shortened {played.overflows} "
                "time(s) on the reference's schedule before the model took the prompt"
            )
        return Turn(
            idx=idx,
            reply=reply,
            code=code,
            compiled=evaluation.compiled.ok,
            compile_feedback=evaluation.compiled.text,
            execution=evaluation.result,
            execution_feedback=evaluation.execution_feedback,
            generate_call=code_call,
            simulate_call=simulated[0] if simulated else None,
            prompt=prompt,
            prompt_hash=request_hash(self.backend.spec, prompt, config.params, "text"),
            notes=tuple(notes),
            received=TurnFeedback(
                compilation=outcome.compilation_feedback,
                execution=outcome.execution_feedback,
                user=outcome.user_feedback,
                user_source=source if outcome.user_feedback is not None else "none",
            ),
        )
