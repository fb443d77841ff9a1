"""Which turn policy plays which turn, and the cache key a completed turn carries.

The key is what the store links a turn's execution by, so it must be the key of the request
the loop actually ran: BigCodeBench's turn 0 runs its calibrated program, not the turn's code,
and a turn answered from the cache still names the entry that answered it. The executor here
is a stand-in that records what it is asked to run (the sandbox is tested elsewhere)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from support.recorded import ADD_ONE

from convtui.core.execution.types import ExecRequest, ExecResult, TestOutcome
from convtui.core.models.mock import MockBackend
from convtui.core.play.ccw_policies import BcbTurn0, CcwTurn
from convtui.core.play.loop import SessionLoop, TurnCompleted, cached_execute, choose_policy
from convtui.core.play.own_turn import ConvtuiTurn
from convtui.core.play.replay_turn import ReplayTurn
from convtui.core.projects.checkout import exec_request
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.turns.record import Turn

FENCE = "```"
# Shaped like a BigCodeBench task: its turn 0 reads the prompt, code prompt and complete prompt.
BCB = replace(
    ADD_ONE,
    prompt='def task_func(x):\n    """Add one to x."""\n',
    code_header="import math\ndef task_func(x):\n",
    ground_truth="import math\ndef task_func(x):\n    return x + 1\n",
    complete_prompt='import math\ndef task_func(x):\n    """Add one to x."""\n',
)
CODEIF = replace(BCB, id="CodeIF/0", suite="codeif")
FAILED = ExecResult("fail", (TestOutcome("test_a", "fail", 0.0, "AssertionError: 1 != 2\n"),))
PASSED = ExecResult("pass", (TestOutcome("test_a", "pass", 0.0, ""),))
REPLY = f"{FENCE}python\ndef task_func(x):\n    return x\n{FENCE}"


class RecordingExecutor:
    """Answers every run with ``result`` and remembers the requests it ran."""

    def __init__(self, result: ExecResult = FAILED) -> None:
        self.result = result
        self.ran: list[ExecRequest] = []

    def cache_key(self, request: ExecRequest) -> str:
        blob = json.dumps([request.code, request.task_id, request.limits.as_dict()])
        return hashlib.sha256(blob.encode()).hexdigest()

    def run(self, request: ExecRequest) -> ExecResult:
        self.ran.append(request)
        return self.result


class DictCache:
    def __init__(self) -> None:
        self.rows: dict[str, ExecResult] = {}

    def get(self, key: str) -> ExecResult | None:
        return self.rows.get(key)

    def put(self, key: str, task_id: str, code: str, result: ExecResult) -> None:
        self.rows.setdefault(key, result)


def _backend(tmp_path: Path, *replies: str) -> MockBackend:
    path = tmp_path / "script.jsonl"
    rows = [{"purpose": "generate", "text": reply} for reply in replies]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return MockBackend(spec=f"mock:{path}", path=path)


def _config(protocol: str, max_turns: int = 3) -> SessionConfig:
    return SessionConfig(
        model="mock:x",
        feedback=FeedbackConfig("full"),
        max_turns=max_turns,
        protocol=protocol,
    )


def _reference_turn(idx: int, passed: bool = False) -> Turn:
    return Turn(
        idx=idx,
        reply=REPLY,
        code="def task_func(x):\n    return x\n",
        compiled=True,
        compile_feedback="No syntax errors",
        execution=PASSED if passed else FAILED,
        execution_feedback=None if passed else "test_a failed",
    )


REFERENCE = (_reference_turn(0), _reference_turn(1))


@pytest.mark.parametrize(
    ("protocol", "task", "idx", "replay", "expected", "replays_ccw"),
    [
        *[("convtui", BCB, idx, False, ConvtuiTurn, None) for idx in (0, 1, 5)],
        ("convtui", BCB, 0, True, ConvtuiTurn, None),
        ("convtui", BCB, 1, True, ReplayTurn, False),
        ("convcodeworld", BCB, 0, False, BcbTurn0, None),
        *[("convcodeworld", BCB, idx, False, CcwTurn, None) for idx in (1, 4)],
        # BigCodeBench's turn 0 is BigCodeBench's only: another suite starts as convtui does.
        ("convcodeworld", CODEIF, 0, False, ConvtuiTurn, None),
        ("convcodeworld", CODEIF, 1, False, CcwTurn, None),
        ("convcodeworld", BCB, 0, True, BcbTurn0, None),
        *[("convcodeworld", BCB, idx, True, ReplayTurn, True) for idx in (1, 2)],
    ],
)
def test_each_turn_gets_its_protocols_policy(protocol, task, idx, replay, expected, replays_ccw):
    reference = REFERENCE if replay else None
    execute = cached_execute(RecordingExecutor(), None)
    loop = SessionLoop(task, _config(protocol), None, execute, reference=reference)
    chosen = loop.policy(idx)
    assert type(chosen) is expected
    assert type(choose_policy(loop.context, idx, reference)) is expected
    if replays_ccw is not None:
        assert isinstance(chosen, ReplayTurn)
        # Under convcodeworld a replayed turn is ConvCodeWorld's feedback turn on recorded words.
        assert (chosen.ccw is not None) == replays_ccw


def test_the_loop_chooses_its_policies_once_when_it_is_built():
    loop = SessionLoop(
        BCB, _config("convcodeworld"), None, cached_execute(RecordingExecutor(), None)
    )
    first, later = loop.policy(0), loop.policy(1)
    assert loop.policy(0) is first
    assert all(loop.policy(idx) is later for idx in (1, 2, 9))


def _completed(loop: SessionLoop, prior: tuple[Turn, ...] = ()) -> list[TurnCompleted]:
    async def play() -> list[TurnCompleted]:
        return [e async for e in loop.run(prior) if isinstance(e, TurnCompleted)]

    return asyncio.run(play())


def test_a_completed_turn_carries_the_cache_key_of_the_request_it_ran(tmp_path):
    executor = RecordingExecutor()
    cache = DictCache()
    config = _config("convtui", max_turns=2)
    backend = _backend(tmp_path, REPLY, REPLY)
    loop = SessionLoop(BCB, config, backend, cached_execute(executor, cache))
    first, second = _completed(loop)
    (ran,) = executor.ran  # the second turn wrote the same code: the cache answered it
    assert first.cache_key == executor.cache_key(ran)
    assert ran.code == first.turn.code
    assert second.cache_key == first.cache_key
    assert second.cache_key in cache.rows


def test_bigcodebenchs_turn_0_carries_the_key_of_the_program_it_ran_not_of_its_code(tmp_path):
    executor = RecordingExecutor()
    backend = _backend(tmp_path, REPLY)
    config = _config("convcodeworld", max_turns=1)
    loop = SessionLoop(BCB, config, backend, cached_execute(executor, None))
    (done,) = _completed(loop)
    (ran,) = executor.ran
    assert ran.code != done.turn.code  # the calibrated program runs after the code prompt
    assert done.cache_key == executor.cache_key(ran)
    assert done.cache_key != executor.cache_key(exec_request(BCB, done.turn.code, config.limits))


def test_a_carried_replay_turn_carries_the_key_of_the_reference_code_it_ran(tmp_path):
    executor = RecordingExecutor(PASSED)
    reference = (_reference_turn(0, passed=True),)
    config = _config("convtui", max_turns=3)
    loop = SessionLoop(BCB, config, None, cached_execute(executor, None), reference=reference)
    (done,) = _completed(loop, (replace(_reference_turn(0), idx=0),))
    (ran,) = executor.ran
    assert ran.code == reference[0].code == done.turn.code
    assert done.turn.generate_call is None  # carried: no model call
    assert done.cache_key == executor.cache_key(ran)


def test_an_execute_that_keeps_no_cache_gives_no_key(tmp_path):
    async def execute(request: ExecRequest) -> ExecResult:
        return FAILED

    loop = SessionLoop(BCB, _config("convtui", max_turns=1), _backend(tmp_path, REPLY), execute)
    (done,) = _completed(loop)
    assert done.cache_key is None
