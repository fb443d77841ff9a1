"""The nine feedback combinations through the turn loop, under --protocol convcodeworld, with
the scripted ``mock:`` model: for a previous turn whose code does not compile (repaired, or
staying broken) and one whose code fails tests, on BigCodeBench/7, /100 and /1, the loop sends
exactly the calls, purposes and prompts of ConvCodeWorld's turn.

How the expected text is built: tests/core/test_ccw_turn.py assembles each prompt of these
very cases from the reference's own strings (pot.py's signatures, DSPy 2.4.12's template)
without convtui's template code, and checks ``run_turn`` against them with its ``Script``;
here the loop, fed the same previous turn and the same replies, must send byte for byte
what ``run_turn`` sent there. The previous turn is given to the loop as a recorded turn
(``run(prior=...)``), as a resumed session is, so the loop plays exactly one feedback turn;
its new code runs in the real sandbox."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.ccw_turns import (
    CANDIDATES,
    COMBINATIONS,
    REFINED_CODE,
    SIM_REPLY,
    TASK_IDS,
    Result,
    Script,
    code_reply,
    reference_turn,
)

from convtui.core.catalog.tasks import Task
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.feedback.render import compile_feedback
from convtui.core.models.mock import MockBackend
from convtui.core.play.loop import SessionLoop, TurnCompleted, cached_execute
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import Turn


def _executed(result: Result) -> ExecResult:
    """The reference's execution result as convtui's executor reports it."""
    return ExecResult(
        result.status,  # type: ignore[arg-type]
        tuple(TestOutcome(o.name, o.status, 0.0, o.traceback) for o in result.tests),  # type: ignore[arg-type]
        detail=result.detail,
        # BigCodeBench's str(exc) is what the reference's EF shows for it.
        error_message=result.detail,
    )


def _previous(task: Task, candidate: str) -> tuple[Turn, Result]:
    """The recorded turn 0 the loop starts from, and the same result as test_ccw_turn's."""
    case = CANDIDATES[candidate]
    code = task.import_header + case.code
    reference = case.result(task)
    compiled = compile_feedback(code, compat="ccw")
    turn = Turn(
        idx=0,
        reply="",
        code=code,
        compiled=compiled.ok,
        compile_feedback=compiled.text,
        execution=_executed(reference),
        execution_feedback=None,
    )
    return turn, reference


def _script(path: Path, candidate: str) -> MockBackend:
    rows = [
        ("repair", code_reply(CANDIDATES[candidate].repair)),
        ("stale_ef", code_reply(REFINED_CODE)),
        ("generate", code_reply(REFINED_CODE)),
        ("simulate", SIM_REPLY),
    ]
    path.write_text("".join(json.dumps({"purpose": p, "text": t}) + "\n" for p, t in rows))
    return MockBackend(spec=f"mock:{path}", path=path)


@pytest.mark.parametrize("candidate", tuple(CANDIDATES))
@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize(("ef", "user"), COMBINATIONS)
def test_the_loop_sends_what_the_reference_turn_sends(
    ccw_tasks,
    executor,
    tmp_path,
    ef,
    user,
    task_id,
    candidate,
) -> None:
    task = ccw_tasks[task_id]
    previous, reference_result = _previous(task, candidate)
    backend = _script(tmp_path / "script.jsonl", candidate)
    config = build_config(
        "convcodeworld",
        model=backend.spec,
        feedback=FeedbackConfig(ef, user),
        simulator=backend.spec if user != "none" else None,
        turns=1,
    )

    async def play() -> list[Turn]:
        loop = SessionLoop(task, config, backend, cached_execute(executor, None))
        return [e.turn async for e in loop.run([previous]) if isinstance(e, TurnCompleted)]

    (played,) = asyncio.run(play())
    sent = [(r.call.purpose, r.kind, r.request) for r in backend.requests if r.call]
    # The reference's turn on the same inputs and replies (checked against the reference's
    # own strings in tests/core/test_ccw_turn.py).
    script = Script(repair=CANDIDATES[candidate].repair)
    outcome = reference_turn(task, previous.code, reference_result, ef, user, script)
    assert sent == [(c.purpose, "text", c.prompt) for c in script.calls]
    assert all(r.call.turn_idx == 1 for r in backend.requests if r.call)
    # Every call's position in the turn, in order.
    assert [r.call.seq for r in backend.requests if r.call] == list(range(len(sent)))
    assert played.received is not None
    assert played.received.user == outcome.user_feedback
    assert played.received.execution == outcome.execution_feedback
    assert played.received.compilation == outcome.compilation_feedback
    if outcome.aborted is None and script.calls and any(c.role == "code" for c in script.calls):
        assert played.code == outcome.solution(task.import_header)
    if candidate == "stays broken" and user != "novice":
        assert [c.purpose for c in script.calls] == ["repair"] * 3
