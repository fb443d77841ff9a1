"""A static replay's turn (replay.py): the model is handed the reference's turn idx-1 and the
feedback recorded for it, never a user (ConvCodeBench, ``run.py --option static``); if that
reference turn passed, its code is this turn's, with no call. A replay's turn 0 is the
model's own and is played by the protocol's turn-0 policy instead."""

from __future__ import annotations

from collections.abc import Sequence

from convtui.core.feedback.evaluate import FeedbackSettings, evaluate
from convtui.core.play.ccw_policies import CcwTurn
from convtui.core.play.events import Emit, Executed
from convtui.core.play.own_turn import build_prompt, generate
from convtui.core.play.policy import Played, TurnContext
from convtui.core.play.replay import CARRIED_NOTE, REPLAY_NOTE, recorded_user_feedback
from convtui.core.turns.journal import request_hash
from convtui.core.turns.record import Turn


class ReplayTurn:
    """``reference`` is the reference session's recorded turns; under convcodeworld each turn
    is ConvCodeWorld's feedback turn (``ccw``) fed the reference's code and recorded words."""

    def __init__(
        self, context: TurnContext, reference: Sequence[Turn], ccw: CcwTurn | None = None
    ) -> None:
        self.context = context
        self.reference = tuple(reference)
        self.ccw = ccw

    async def play(self, idx: int, turns: Sequence[Turn], emit: Emit) -> Played:
        context, reference = self.context, self.reference
        config, task = context.config, context.task
        previous = reference[idx - 1]
        if self.ccw is not None:
            recorded = recorded_user_feedback(reference, idx)
            return Played(await self.ccw.play_after(idx, previous, emit, recorded=recorded))
        if previous.passed:
            evaluation = await evaluate(
                task, previous.code, FeedbackSettings.of(config), context.execute, config.limits
            )
            emit(Executed(idx, evaluation.result))
            carried = evaluation.turn(
                idx, previous.reply, notes=(CARRIED_NOTE.format(turn=idx - 1),)
            )
            return Played(carried)
        context_turns = reference[:idx] if config.context == "full" else (previous,)
        prompt = build_prompt(task, config, context_turns)
        completion, _, evaluation = await generate(context, idx, prompt, emit)
        turn = evaluation.turn(
            idx,
            completion.text,
            generate_call=completion,
            prompt=prompt,
            prompt_hash=request_hash(context.backend.spec, prompt, config.params),
            notes=(REPLAY_NOTE.format(turn=idx - 1),),
        )
        return Played(turn)
