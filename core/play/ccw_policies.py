"""ConvCodeWorld's two turn policies for the loop (policy.py): its feedback turn, played by
core/ccw/drive.py with the simulator asked inside the turn, and BigCodeBench's turn 0
(core/ccw/turn0.py, sanitize.py). Everything the reference decides lives in core/ccw/; these
put it into a session: journaled calls, events, the execution and the recorded ``Turn``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from convtui.core.ccw import drive as ccw_drive
from convtui.core.ccw.sanitize import turn0_code
from convtui.core.ccw.turn import ModelCall, TurnInputs, TurnOutcome, user_kind
from convtui.core.ccw.turn0 import turn0_call
from convtui.core.feedback.evaluate import FeedbackSettings, evaluate, render_execution
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ChatMessage, Completion
from convtui.core.play.events import Emit, Executed, ReplyReady, ReplyStreamed
from convtui.core.play.policy import Played, TurnContext
from convtui.core.play.replay import REPLAY_NOTE, RecordedFeedback
from convtui.core.turns.journal import request_hash
from convtui.core.turns.record import Turn, TurnFeedback


class BcbTurn0:
    """Turn 0 as ConvCodeWorld made it: BigCodeBench's own generation (turn0.py), then its
    ``sanitize --calibrate``; the calibrated program is what runs, the sanitized solution is
    the turn's code (the next turn's Previous Code)."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context

    async def play(self, idx: int, turns: Sequence[Turn], emit: Emit) -> Played:
        context = self.context
        config, task = context.config, context.task
        call = turn0_call(task.prompt, await context.backend.chat_template())
        params = call.decoding.params()
        completion = await context.complete(
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
            task, made.solution, settings, context.execute, config.limits, program=made.program
        )
        emit(Executed(idx, evaluation.result))
        turn = evaluation.turn(
            idx,
            completion.text,
            generate_call=completion,
            prompt=call.messages,
            prompt_hash=request_hash(context.backend.spec, call.messages, params, call.kind),
            notes=(
                f"turn 0: {call.how}; sanitized and calibrated as BigCodeBench does, and run "
                "after the task's code prompt",
            ),
        )
        return Played(turn)


class CcwTurn:
    """A feedback turn as ConvCodeWorld plays it (turn.py): repairs of code that does not
    compile, the simulator asked inside the turn, DSPy's prompts as raw text."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context

    async def play(self, idx: int, turns: Sequence[Turn], emit: Emit) -> Played:
        return Played(await self.play_after(idx, turns[-1], emit))

    async def play_after(
        self,
        idx: int,
        previous: Turn,
        emit: Emit,
        *,
        recorded: RecordedFeedback | None = None,
    ) -> Turn:
        """Turn ``idx``, whose Previous Code is ``previous``'s. In a static replay
        (``recorded`` given) the reference's recorded words stand in for the simulator, as
        ConvCodeBench's ``pot.py`` reads them."""
        context = self.context
        config, task = context.config, context.task
        settings = FeedbackSettings.of(config)
        inputs = self._inputs(idx, previous, settings, recorded)
        simulator = self._simulator()
        made: dict[str, tuple[Completion, tuple[ChatMessage, ...]]] = {}
        played = await ccw_drive.play(inputs, self._asker(idx, emit, simulator, made))
        outcome = played.outcome
        code_call, prompt = made.get("code", (None, previous.prompt))
        reply = code_call.text if code_call is not None else previous.reply
        if outcome.aborted:
            # The reference's process exits here (its authors then deny-listed the task): the
            # turn keeps the previous code, is linked to no code call, and the session stalls
            # (loop.py's _status_after), since playing it again would stop at the same place.
            code, code_call = previous.code, None
        else:
            code = outcome.solution(task.import_header)
        if code_call is not None:
            emit(ReplyReady(idx, code_call, code))
        evaluation = await evaluate(task, code, settings, context.execute, config.limits)
        emit(Executed(idx, evaluation.result))
        simulated = made.get("simulate")
        return evaluation.turn(
            idx,
            reply,
            generate_call=code_call,
            simulate_call=simulated[0] if simulated else None,
            prompt=prompt,
            prompt_hash=request_hash(context.backend.spec, prompt, config.params, "text"),
            notes=_notes(idx, played, recorded),
            received=_received(outcome, recorded, config.feedback.verbal, simulator),
        )

    def _inputs(
        self,
        idx: int,
        previous: Turn,
        settings: FeedbackSettings,
        recorded: RecordedFeedback | None,
    ) -> TurnInputs:
        """What the reference reads from disk for turn ``idx``: the previous turn's code, its
        verdict and its untrimmed execution feedback (the turn trims it as the reference does);
        in a static replay, the reference's recorded words as well."""
        config, task = self.context.config, self.context.task
        ef = None
        if previous.execution is not None and settings.execution != "none":
            ef = render_execution(task, previous.execution, settings, trim=None)
        inputs = ccw_drive.turn_inputs(
            task,
            previous_code=previous.code,
            previous_passed=previous.passed,
            execution=settings.execution,
            execution_feedback=ef,
            user=user_kind(config.feedback.verbal),
            iteration=idx,
            max_tokens=config.params.max_tokens,
        )
        if recorded is not None:
            inputs = replace(inputs, static=True, recorded_user_feedback=recorded.text)
        return inputs

    def _simulator(self) -> ModelBackend:
        # The user object is the simulator (or the app's view of one): it holds the model
        # that plays the user; without one the code model plays it, as ConvCodeWorld's default.
        found = getattr(self.context.user, "backend", None)
        return found if isinstance(found, ModelBackend) else self.context.backend

    def _asker(
        self,
        idx: int,
        emit: Emit,
        simulator: ModelBackend,
        made: dict[str, tuple[Completion, tuple[ChatMessage, ...]]],
    ) -> ccw_drive.Ask:
        """The turn's model calls as journaled calls: the code model's streamed to the
        screen, the simulator's not; the last completion of each role is kept in ``made``
        for the recorded turn."""
        context = self.context
        config = context.config

        async def ask(call: ModelCall, seq: int) -> str:
            code_call = call.role == "code"
            base = config.params if code_call else config.simulator_params
            params = replace(base, max_tokens=call.max_tokens)
            prompt = (ChatMessage("user", call.prompt),)
            completion = await context.complete(
                idx,
                call.purpose,
                prompt,
                params,
                context.backend if code_call else simulator,
                (lambda text: emit(ReplyStreamed(idx, text))) if code_call else None,
                seq=seq,
                kind="text",
            )
            made["code" if code_call else "simulate"] = (completion, prompt)
            return completion.text

        return ask


def _notes(
    idx: int, played: ccw_drive.Played, recorded: RecordedFeedback | None
) -> tuple[str, ...]:
    """What the recorded turn notes about how it was played."""
    outcome = played.outcome
    notes = [f"convcodeworld: {len(outcome.calls)} model call(s), hop {outcome.iteration}"]
    if recorded is not None:
        notes.append(REPLAY_NOTE.format(turn=idx - 1))
    if outcome.aborted:
        notes.append(f"the reference's turn stops here: {outcome.aborted}")
    if played.overflows:
        notes.append(
            f"context overflow: the execution feedback was shortened {played.overflows} "
            "time(s) on the reference's schedule before the model took the prompt"
        )
    return tuple(notes)


def _received(
    outcome: TurnOutcome,
    recorded: RecordedFeedback | None,
    verbal: str,
    simulator: ModelBackend,
) -> TurnFeedback:
    """The feedback the turn was given, as the reference records it with the turn; the
    user's words are a replay's recorded ones or the simulator's."""
    source = recorded.source if recorded is not None else f"simulator:{verbal}:{simulator.spec}"
    return TurnFeedback(
        compilation=outcome.compilation_feedback,
        execution=outcome.execution_feedback,
        user=outcome.user_feedback,
        user_source=source if outcome.user_feedback is not None else "none",
    )
