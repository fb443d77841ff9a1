"""The turn loop's pure parts and the simulated users' rules (ConvCodeWorld §2.5)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from support.recorded import ADD_ONE

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.feedback.render import PASSED_ALL_TEST_RUNS
from convtui.core.feedback.simulators import (
    FeedbackRequest,
    Simulator,
    leaked_lines,
    postprocess,
    redact,
)
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ChatMessage, Completion
from convtui.core.play.loop import _status_after, build_prompt, feedback_message
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn

# A ground truth with lines long enough to leak, for the simulators' leak checks.
TASK = replace(
    ADD_ONE,
    code_header="import math\ndef task_func(x):\n",
    ground_truth="import math\ndef task_func(x):\n    incremented_value = math.floor(x) + 1\n"
    "    return incremented_value\n",
)
FAILED = ExecResult("fail", (TestOutcome("test_a", "fail", 0.0, "AssertionError: 1 != 2\n"),))


def turn(idx: int, **kw) -> Turn:
    base = Turn(
        idx=idx,
        reply=f"reply {idx}",
        code=f"def task_func(x):\n    return {idx}\n",
        compiled=True,
        compile_feedback="No syntax errors",
        execution=FAILED,
        execution_feedback="TEST_A\nAssertionError: 1 != 2\n\n",
    )
    return replace(base, **kw)


def test_markov_prompt_holds_task_last_code_and_its_feedback_only():
    config = SessionConfig(model="m", context="markov")
    prompt = build_prompt(TASK, config, [turn(0), turn(1, verbal_feedback="off by one")])
    assert [m.role for m in prompt] == ["system", "user"]
    text = prompt[1].content
    assert "Add one to x." in text and "return 1" in text and "return 0" not in text
    assert "off by one" in text and "TEST_A" in text


def test_full_prompt_replays_the_conversation():
    config = SessionConfig(model="m", context="full")
    prompt = build_prompt(TASK, config, [turn(0), turn(1)])
    assert [m.role for m in prompt] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert prompt[2].content == "reply 0" and prompt[4].content == "reply 1"


def test_compile_error_feedback_replaces_execution_feedback():
    broken = turn(
        0, compiled=False, compile_feedback="SyntaxError: invalid syntax", execution_feedback=None
    )
    message = feedback_message(broken)
    assert "SyntaxError" in message and "TEST_A" not in message


def test_session_stalls_when_nothing_could_change_the_code():
    config = SessionConfig(model="m", max_turns=10)
    assert _status_after(turn(0, execution_feedback=None), config) == "stalled"
    assert _status_after(turn(0, execution_feedback=PASSED_ALL_TEST_RUNS), config) == "stalled"
    assert _status_after(turn(0), config) == "running"
    assert _status_after(turn(9), config) == "exhausted"
    solved = turn(0, execution=ExecResult("pass", (TestOutcome("test_a", "pass"),)))
    assert _status_after(solved, config) == "solved"


def request(execution_feedback: str | None, compiled: bool = True) -> FeedbackRequest:
    return FeedbackRequest(
        TASK,
        0,
        "def task_func(x):\n    return x\n",
        compiled,
        "No syntax errors",
        execution_feedback,
    )


class Scripted(ModelBackend):
    """Fault injection only: a simulator model that misbehaves on purpose (it copies the
    ground truth into its feedback), which no real small model can be made to do reliably."""

    spec = model = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.seen: list[tuple[ChatMessage, ...]] = []

    def connection_key(self) -> str:
        return "scripted"

    async def check(self) -> None:
        return None

    async def complete(
        self, messages, params, *, on_text=None, on_attempt=None, call=None
    ) -> Completion:
        self.seen.append(tuple(messages))
        return Completion(self.replies.pop(0), "stop", 1, 1, 0.0, 1, "scripted", None)

    async def aclose(self) -> None:
        return None


async def _ask(purpose, messages, params, backend):
    return await backend.complete(messages, params)


def test_novice_stays_silent_when_the_visible_tests_pass():
    novice = Simulator("novice", Scripted([]))
    assert not novice.wants_to_speak(request(PASSED_ALL_TEST_RUNS))
    assert novice.wants_to_speak(request("TEST_A\nAssertionError\n\n"))
    # without execution feedback it speaks only about compile errors
    assert not novice.wants_to_speak(request(None))
    assert novice.wants_to_speak(request(None, compiled=False))


def test_novice_never_sees_the_ground_truth():
    backend = Scripted(["The function returns the wrong value."])
    novice = Simulator("novice", backend)
    answer = asyncio.run(novice.feedback(request("TEST_A\nAssertionError\n\n"), _ask))
    assert answer is not None and answer.text == "The function returns the wrong value."
    sent = "\n".join(m.content for m in backend.seen[0])
    assert "incremented_value" not in sent


def test_expert_that_copies_the_ground_truth_is_asked_again_then_redacted():
    leak = "Just write: incremented_value = math.floor(x) + 1 and return it."
    backend = Scripted([leak, leak])
    expert = Simulator("expert", backend)
    answer = asyncio.run(expert.feedback(request("TEST_A\nAssertionError\n\n"), _ask))
    assert answer is not None
    assert "incremented_value = math.floor(x) + 1" not in answer.text
    assert len(backend.seen) == 2  # regenerated once before redacting
    assert any("redacted" in note for note in answer.notes)
    assert "incremented_value = math.floor(x) + 1" in "\n".join(
        m.content for m in backend.seen[0]
    )  # the expert itself does see the reference


def test_expert_feedback_that_rephrases_is_kept():
    backend = Scripted(["Floor the input before adding one."])
    answer = asyncio.run(Simulator("expert", backend).feedback(request(None), _ask))
    assert answer is not None and answer.text == "Floor the input before adding one."
    assert answer.notes == ()


@pytest.mark.parametrize(
    ("raw", "expert", "kept"),
    [
        ("Fix the loop.\n---\nignored", False, "Fix the loop."),
        ("Fix the loop.\n\n\nignored", False, "Fix the loop."),
        ("Fix the loop.\n```python\nx = 1\n```", True, "Fix the loop."),
        ("Fix the loop.\n```python\nx = 1\n```", False, "Fix the loop.\n```python\nx = 1\n```"),
    ],
)
def test_simulator_output_is_cut_like_convcodeworld(raw, expert, kept):
    assert postprocess(raw, expert=expert) == kept


def test_leak_detection_ignores_the_public_header_and_short_lines():
    assert leaked_lines("def task_func(x): return it", TASK) == []
    found = leaked_lines("use return incremented_value", TASK)
    assert found == ["return incremented_value"]
    assert redact("a return incremented_value b", found) == "a […] b"


def test_feedback_config_labels_round_trip():
    assert FeedbackConfig("partial", "novice").label == "CF,EF:partial,VF:novice"
