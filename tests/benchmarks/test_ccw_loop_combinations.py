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
    BROKEN_AGAIN,
    BROKEN_CODE,
    COMBINATIONS,
    FAILING,
    FAILING_CODE,
    REFINED_CODE,
    REPAIRED_CODE,
    SIM_REPLY,
    SYNTAX_DETAIL,
    TASK_IDS,
    Script,
    code_reply,
    ef_text,
    failing_result,
    syntax_error_result,
)
from support.ccw_turns import traceback_of as _tb

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.catalog.tasks import Task
from convtui.core.ccw.turn import TurnInputs, run_turn
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.feedback.render import compile_feedback
from convtui.core.models.mock import MockBackend
from convtui.core.settings.config import Turn
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.core.turns.loop import SessionLoop, TurnCompleted, cached_execute

CANDIDATES = ("repaired", "stays broken", "fails tests")


@pytest.fixture(scope="module")
def tasks(bigcodebench: TaskCatalog) -> dict[str, Task]:
    return {task_id: bigcodebench[task_id] for task_id in TASK_IDS}


def _previous(task: Task, candidate: str) -> tuple[Turn, object]:
    """The recorded turn 0 the loop starts from, and the same result as test_ccw_turn's."""
    names = FAILING[task.id]
    if candidate == "fails tests":
        code = task.import_header + FAILING_CODE
        result = ExecResult("fail", tuple(TestOutcome(n, "fail", 0.0, _tb(n)) for n in names))
        reference = failing_result(task)
    else:
        code = task.import_header + BROKEN_CODE
        # BigCodeBench's str(exc) is what the reference's EF shows for it.
        result = ExecResult(
            "error",
            tuple(TestOutcome(n, "not_run") for n in names),
            detail=SYNTAX_DETAIL,
            error_message=SYNTAX_DETAIL,
        )
        reference = syntax_error_result(task)
    compiled = compile_feedback(code, compat="ccw")
    turn = Turn(
        idx=0,
        reply="",
        code=code,
        compiled=compiled.ok,
        compile_feedback=compiled.text,
        execution=result,
        execution_feedback=None,
    )
    return turn, reference


def _script(path: Path, candidate: str) -> MockBackend:
    repair = BROKEN_AGAIN if candidate == "stays broken" else REPAIRED_CODE
    rows = [
        ("repair", code_reply(repair)),
        ("stale_ef", code_reply(REFINED_CODE)),
        ("generate", code_reply(REFINED_CODE)),
        ("simulate", SIM_REPLY),
    ]
    path.write_text("".join(json.dumps({"purpose": p, "text": t}) + "\n" for p, t in rows))
    return MockBackend(spec=f"mock:{path}", path=path)


@pytest.mark.parametrize("candidate", CANDIDATES)
@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize(("ef", "user"), COMBINATIONS)
def test_the_loop_sends_what_the_reference_turn_sends(
    tasks,
    executor,
    tmp_path,
    ef,
    user,
    task_id,
    candidate,
) -> None:
    task = tasks[task_id]
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
    script = Script(repair=BROKEN_AGAIN if candidate == "stays broken" else REPAIRED_CODE)
    inputs = TurnInputs(
        prompt=task.prompt,
        previous_code=previous.code,
        execution=ef,
        execution_feedback=ef_text(reference_result, task, ef),
        user=user,
        ground_truth=task.ground_truth,
    )
    outcome = run_turn(inputs, script)
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
