"""convtui's own turn (docs/design.md#one-turn): the model writes code on a prompt built from
the conversation, the code is compiled and run, and the user is asked for feedback at the
end of the turn. Also the turn 0 of every protocol whose turn 0 is not BigCodeBench's."""

from __future__ import annotations

from collections.abc import Sequence

from convtui.core.catalog.tasks import Task
from convtui.core.feedback.evaluate import Evaluation, FeedbackSettings, evaluate
from convtui.core.feedback.prompts import feedback_message, render
from convtui.core.feedback.simulators import FeedbackRequest, VerbalFeedback
from convtui.core.models.base import ModelBackend
from convtui.core.models.extract import extract_code
from convtui.core.models.types import ChatMessage, Completion, GenerationParams
from convtui.core.play.events import Emit, Executed, ReplyReady, ReplyStreamed
from convtui.core.play.policy import Played, TurnContext
from convtui.core.settings.config import SessionConfig
from convtui.core.turns.journal import CallPurpose, request_hash
from convtui.core.turns.record import Turn


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


async def generate(
    context: TurnContext, idx: int, prompt: tuple[ChatMessage, ...], emit: Emit
) -> tuple[Completion, str, Evaluation]:
    """One code call on ``prompt``, the code extracted from its reply, and that code compiled
    and run: the part of a turn a static replay shares with a live one."""
    config, task = context.config, context.task
    completion = await context.complete(
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
        task, code, FeedbackSettings.of(config), context.execute, config.limits
    )
    emit(Executed(idx, evaluation.result))
    return completion, code, evaluation


class ConvtuiTurn:
    def __init__(self, context: TurnContext) -> None:
        self.context = context

    async def play(self, idx: int, turns: Sequence[Turn], emit: Emit) -> Played:
        context = self.context
        config, task = context.config, context.task
        prompt = build_prompt(task, config, turns)
        completion, code, evaluation = await generate(context, idx, prompt, emit)
        compiled, result, ef = evaluation.compiled, evaluation.result, evaluation.execution_feedback
        notes: list[str] = []
        verbal: VerbalFeedback | None = None
        last_turn = idx + 1 >= config.max_turns
        # Under convcodeworld the user speaks inside the next turn (ccw/policies.py), as there.
        user = context.user if config.protocol != "convcodeworld" else None
        if user is not None and not result.passed and not last_turn:
            request = FeedbackRequest(task, idx, code, compiled.ok, compiled.text, ef)

            async def ask(
                purpose: CallPurpose,
                messages: tuple[ChatMessage, ...],
                params: GenerationParams,
                backend: ModelBackend,
            ) -> Completion:
                return await context.complete(idx, purpose, messages, params, backend)

            verbal = await user.feedback(request, ask)
            if verbal is not None:
                notes.extend(verbal.notes)
        turn = evaluation.turn(
            idx,
            completion.text,
            # A person who closes the session may say nothing: then no feedback was given.
            verbal_feedback=verbal.text if verbal and verbal.text else None,
            feedback_source=verbal.source if verbal and verbal.text else "none",
            generate_call=completion,
            simulate_call=verbal.call if verbal else None,
            prompt=prompt,
            prompt_hash=request_hash(context.backend.spec, prompt, config.params),
            notes=tuple(notes),
            feedback_draft=verbal.draft if verbal else None,
        )
        return Played(turn, verbal.closes if verbal else None)
