"""Playing one ConvCodeWorld feedback turn (turn.py), or its user simulator alone, against
real models: the inputs come from the session's previous turn, each model call goes through
the caller's journaled ``ask``, and the outcome becomes the turn's code and the feedback it
was given."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import TypeVar

from convtui.core.catalog.tasks import Task
from convtui.core.ccw.turn import (
    CallFailed,
    Coverage,
    ModelCall,
    Reply,
    SimulatedFeedback,
    TurnInputs,
    TurnOutcome,
    UserKind,
    feedback_turn,
    simulated_feedback,
)
from convtui.core.models.types import ModelError

# The caller's model call: the request, its position among the turn's calls -> reply text.
Ask = Callable[[ModelCall, int], Awaitable[str]]
_R = TypeVar("_R")


def turn_inputs(
    task: Task,
    *,
    previous_code: str,
    previous_passed: bool,
    execution: Coverage,
    execution_feedback: str | None,
    user: UserKind,
    iteration: int,
    max_tokens: int,
) -> TurnInputs:
    """The inputs the reference reads from disk for iteration ``iteration`` (run.py, pot.py):
    the instruct prompt, the previous solution, whether it passed and its execution feedback
    (untrimmed: the turn trims it as the reference does), and the ground truth for the
    expert (the code prompt and the canonical solution)."""
    return TurnInputs(
        prompt=task.prompt,
        previous_code=previous_code,
        previous_passed=previous_passed,
        execution=execution,
        execution_feedback=execution_feedback,
        user=user,
        ground_truth=task.ground_truth,
        iteration=iteration,
        max_tokens=max_tokens,
    )


@dataclass(frozen=True)
class Played:
    """A turn's outcome, and how many of its calls the model refused as too long (each made
    the turn shrink the execution feedback one step of the reference's schedule)."""

    outcome: TurnOutcome
    overflows: int


async def play(inputs: TurnInputs, ask: Ask) -> Played:
    """Run the turn's calls in order through ``ask``. A prompt the model cannot take (context
    length) is handed back to the turn, which shrinks the execution feedback as the reference
    does; any other failed call ends the session (after the backend's own retries). An
    outcome the reference would have aborted on (``outcome.aborted``: its process exits there)
    is returned for the caller to record."""
    outcome, overflows = await drive(feedback_turn(inputs), ask)
    return Played(outcome, overflows)


async def simulate(inputs: TurnInputs, ask: Ask) -> SimulatedFeedback:
    """ConvCodeWorld's simulator alone on ``inputs.previous_code`` (turn.py
    ``simulated_feedback``), its calls through ``ask``; a prompt the model cannot take ends it
    with ``aborted`` set, as the reference's simulator has no shorter prompt to try."""
    said, _ = await drive(simulated_feedback(inputs), ask)
    return said


async def drive(calls: Generator[ModelCall, Reply, _R], ask: Ask) -> tuple[_R, int]:
    """Send each call ``calls`` yields through ``ask``, in order, until it returns; (its
    result, how many calls the model refused as too long, each handed back as
    :class:`CallFailed`)."""
    seq = overflows = 0
    reply: Reply = None
    try:
        call = next(calls)
        while True:
            try:
                reply = await ask(call, seq)
            except ModelError as exc:
                if exc.kind != "context_length":
                    raise
                overflows += 1
                reply = CallFailed(str(exc))
            seq += 1
            call = calls.send(reply)
    except StopIteration as stop:
        return stop.value, overflows
