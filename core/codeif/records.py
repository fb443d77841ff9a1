"""A CodeIF-Bench round as the store keeps a turn, and the rounds back from the turns.

One turn per round: the round's message is what the turn was given (``Turn.received``: the
user's words, their source ``codeif:<kind>:<category>`` naming the round's kind and
instruction), its code, reply and execution are the turn's. :func:`rebuild` reads the rounds
back with their verdicts from the recorded executions (no execution runs again): resuming a
run and reporting on it both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from convtui.core.codeif.conversation import CHECKS_ALL, Mode, PlayedRound, RoundPlan
from convtui.core.codeif.instructions import Instruction
from convtui.core.codeif.metrics import RoundKind
from convtui.core.codeif.programs import own_verdicts, verdicts
from convtui.core.execution.types import ExecResult
from convtui.core.feedback.render import NO_SYNTAX_ERRORS
from convtui.core.models.types import ChatMessage, Completion
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.record import Turn, TurnFeedback

SOURCE = "codeif"  # Turn.received.user_source: codeif:<kind>:<category>


def round_turn(
    played: PlayedRound,
    completion: Completion | None,
    messages: tuple[ChatMessage, ...],
    prompt_hash: str,
    mode: Mode,
) -> Turn:
    """A played round as the store keeps a turn."""
    plan = played.plan
    notes = [
        f"codeif {mode}: round {plan.number}, {plan.kind} round for {plan.instruction.category}"
    ]
    if played.dropped:
        notes.append(f"dropped so far: {', '.join(sorted(played.dropped))}")
    return Turn(
        idx=plan.number - 1,
        reply=played.reply,
        code=played.code,
        compiled=played.compile_error is None,
        compile_feedback=played.compile_error or NO_SYNTAX_ERRORS,
        execution=played.result,
        generate_call=completion,
        prompt=messages,
        prompt_hash=prompt_hash,
        notes=tuple(notes),
        received=TurnFeedback(
            user=plan.message,
            user_source=f"{SOURCE}:{plan.kind}:{plan.instruction.category}",
        ),
    )


def round_source(got: TurnFeedback | None) -> tuple[RoundKind, str] | None:
    """The kind and instruction category of a CodeIF round, from what its turn received;
    None for any other turn."""
    if got is None or not got.user_source.startswith(f"{SOURCE}:"):
        return None
    _, kind, category = got.user_source.split(":", 2)
    return kind, category  # type: ignore[return-value]


def round_plan(turn: Turn, order: Sequence[Instruction]) -> RoundPlan:
    """What a recorded round said, as the conversation planned it."""
    found = round_source(turn.received)
    if found is None:
        raise ValueError(f"turn {turn.idx} is not a CodeIF round")
    kind, category = found
    by_category = {i.category: i for i in order}
    if category not in by_category:
        raise ValueError(f"turn {turn.idx} gives {category!r}, no instruction of this task")
    assert turn.received is not None  # round_source found it
    return RoundPlan(turn.idx + 1, kind, by_category[category], turn.received.user or "")


def rebuild(turns: Sequence[Turn], order: Sequence[Instruction], mode: Mode) -> list[PlayedRound]:
    """The rounds a session recorded, as the conversation played them."""
    rounds: list[PlayedRound] = []
    for turn in turns:
        plan = round_plan(turn, order)
        kind, category = plan.kind, plan.instruction.category
        before = rounds[-1].given if rounds else ()
        given = before if category in before else (*before, category)
        checked_on = order if mode in CHECKS_ALL else [i for i in order if i.category in given]
        result = turn.execution or ExecResult("error", detail="not run")
        found = verdicts(result, list(checked_on))
        dropped = rounds[-1].dropped if rounds else frozenset()
        if kind == "feedback" and not found[category]:
            dropped = dropped | {category}
        error = None if turn.compiled else turn.compile_feedback
        rounds.append(
            PlayedRound(
                plan,
                turn.reply,
                turn.code,
                result,
                error,
                found,
                given,
                dropped,
                own_verdicts(result, list(checked_on)),
            )
        )
    return rounds


def round_status(last: PlayedRound) -> SessionStatus:
    """Solved when the last round's code follows every instruction given; else exhausted."""
    return "solved" if all(last.followed.values()) else "exhausted"
