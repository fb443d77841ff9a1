"""ConvCodeWorld's user simulator asked alone (core/ccw/turn.py ``simulated_feedback``), as the
fidelity study asks it on a person's state: every request and the words it returns equal the
simulator's part of the whole reference turn (test_ccw_turn.py checks that turn's prompts byte
for byte against the reference's strings), and where the reference says nothing or stops, so
does it."""

import pytest
from support.ccw_turns import (
    BROKEN_CODE,
    FAILING_CODE,
    TASK_IDS,
    Script,
    failing_result,
    syntax_error_result,
    turn_inputs,
)

from convtui.core.catalog.tasks import Task
from convtui.core.ccw.turn import (
    CallFailed,
    SimulatedFeedback,
    TurnInputs,
    answered,
    run_turn,
    simulated_feedback,
)
from convtui.core.feedback.render import PASSED_ALL_TEST_RUNS


def ask_alone(inputs: TurnInputs, script: Script) -> SimulatedFeedback:
    return answered(simulated_feedback(inputs), script)


def inputs_for(task: Task, code: str, result, ef: str, user: str) -> TurnInputs:
    return turn_inputs(task, task.import_header + code, result, ef, user)


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("ef", ["none", "partial", "full"])
@pytest.mark.parametrize("user", ["novice", "expert"])
def test_alone_it_asks_what_the_whole_turn_asks_its_simulator(ccw_tasks, task_id, ef, user) -> None:
    """Code that compiles and fails tests: the whole turn's simulator is asked before any
    repair, so its requests and words are exactly what the simulator alone gives."""
    task = ccw_tasks[task_id]
    inputs = inputs_for(task, FAILING_CODE, failing_result(task), ef, user)
    whole, alone = Script(), Script()
    outcome = run_turn(inputs, whole)
    said = ask_alone(inputs, alone)
    simulated = [c for c in whole.calls if c.role == "simulator"]
    assert alone.calls == simulated
    assert [r.call for r in said.calls] == simulated
    assert said.aborted is None
    silent = user == "novice" and ef == "none"  # code that compiles, nothing to report
    assert said.text == (None if silent else outcome.user_feedback)
    assert (said.text is None) == silent


@pytest.mark.parametrize("task_id", TASK_IDS)
@pytest.mark.parametrize("ef", ["none", "partial", "full"])
def test_the_novice_on_code_that_does_not_compile(ccw_tasks, task_id, ef) -> None:
    """The novice is asked about broken code inside the whole turn too (it does not repair
    first): the same requests, the compilation feedback the reference's own."""
    task = ccw_tasks[task_id]
    inputs = inputs_for(task, BROKEN_CODE, syntax_error_result(task), ef, "novice")
    whole, alone = Script(), Script()
    outcome = run_turn(inputs, whole)
    said = ask_alone(inputs, alone)
    assert alone.calls == [c for c in whole.calls if c.role == "simulator"]
    assert said.text == outcome.user_feedback
    if ef == "none":  # with tests off the novice speaks of the compile error
        assert len(alone.calls) == 1 and said.text is not None


def test_the_expert_is_asked_on_broken_code_as_it_was_shown(ccw_tasks) -> None:
    """Where the reference's expert turn would repair first, the simulator alone is asked
    on the code the person saw: its request shows that code, not a repair."""
    task = ccw_tasks["BigCodeBench/7"]
    inputs = inputs_for(task, BROKEN_CODE, syntax_error_result(task), "full", "expert")
    script = Script()
    said = ask_alone(inputs, script)
    assert [c.role for c in script.calls] == ["simulator"]
    assert BROKEN_CODE in script.calls[0].prompt
    assert task.ground_truth in script.calls[0].prompt
    assert said.text is not None and said.aborted is None


def test_the_novice_is_silent_when_the_tests_it_sees_pass(ccw_tasks) -> None:
    task = ccw_tasks["BigCodeBench/1"]
    inputs = TurnInputs(
        prompt=task.prompt,
        previous_code=task.ground_truth,
        execution="full",
        execution_feedback=PASSED_ALL_TEST_RUNS,
        user="novice",
    )
    script = Script()
    said = ask_alone(inputs, script)
    assert (said.text, said.calls, script.calls) == (None, (), [])


def test_a_failed_request_stops_it_with_the_reason(ccw_tasks) -> None:
    task = ccw_tasks["BigCodeBench/7"]
    inputs = inputs_for(task, FAILING_CODE, failing_result(task), "full", "expert")
    said = ask_alone(inputs, Script(replies=[CallFailed("context length exceeded")]))
    assert said.text is None
    assert said.aborted is not None and "context length exceeded" in said.aborted
    assert len(said.calls) == 1
