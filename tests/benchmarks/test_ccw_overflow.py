"""A prompt the model refuses as too long, under --protocol convcodeworld: the turn shortens
the execution feedback on the reference's schedule (pot.py) and asks again, and the turn
records that it did. The loopback server is a fake for fault injection only: a real server
cannot be made to refuse one chosen request."""

from __future__ import annotations

import asyncio

from support.data import needs_bigcodebench
from support.fault_server import FakeServer, ok, status, text_ok

from convtui.core.feedback.simulators import Simulator
from convtui.core.models import open_backend
from convtui.core.models.retry import Retrier, RetryPolicy
from convtui.core.play.loop import SessionLoop, TurnCompleted, cached_execute
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config

pytestmark = needs_bigcodebench

FAILS = "```python\nimport random\ndef task_func(*args, **kwargs):\n    return None\n```"
HINT = "help.\nUser Feedback: Return a dictionary keyed by the letters."
TOO_LONG = (
    "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens "
    "(1000 in the messages, 1100 in the completion). Please reduce the length."
)


async def _no_wait(seconds: float) -> None:
    return None


def test_a_context_overflow_shortens_the_execution_feedback_and_is_recorded(bigcodebench, executor):
    task = bigcodebench.get("BigCodeBench/2")
    fixed = f"fix it.\nCode: ```python\n{task.ground_truth}\n```"
    server = FakeServer()
    # Turn 0 (a chat call) fails the tests; in turn 1 the novice speaks (text), the code call
    # with EF and the user's words is refused as too long, then taken with a shorter EF.
    server.then(ok(FAILS), text_ok(HINT), status(400, TOO_LONG), text_ok(fixed))
    server.start()
    config = build_config(
        "convcodeworld",
        model=server.url,
        feedback=FeedbackConfig("full", "novice"),
        simulator=server.url,
        turns=1,
    )

    async def play() -> list:
        backend = open_backend(
            server.url,
            model_name="fake-model",
            retrier=Retrier(RetryPolicy(max_retries=0), sleep=_no_wait),
        )
        try:
            user = Simulator("novice", backend, config.simulator_params)
            loop = SessionLoop(task, config, backend, cached_execute(executor, None), user)
            return [e.turn async for e in loop.run() if isinstance(e, TurnCompleted)]
        finally:
            await backend.aclose()

    try:
        turns = asyncio.run(play())
    finally:
        server.stop()
    assert [t.passed for t in turns] == [False, True]
    texts = [r.body["prompt"] for r in server.requests if r.path.endswith("/v1/completions")]
    refused, taken = texts[-2], texts[-1]
    # The same request but for the execution feedback, cut to its head and tail around
    # "..." (pot.py get_execution_feedback with trim=True).
    # (The field's last occurrence is its value; the first describes it.)
    assert refused.rsplit("Execution Feedback:", 1)[0] == taken.rsplit("Execution Feedback:", 1)[0]
    assert "\n...\n" not in refused.rsplit("Execution Feedback:", 1)[1]
    assert "\n...\n" in taken.rsplit("Execution Feedback:", 1)[1]
    received = turns[1].received
    assert received is not None and received.execution is not None
    assert "\n...\n" in received.execution
    assert any("shortened 1 time(s)" in note for note in turns[1].notes)


def test_a_turn_the_reference_would_stop_at_is_recorded_and_the_session_stalls(
    bigcodebench, executor
):
    """Without a user, a code call the model refuses as too long is not retried by the
    reference: its process exits there (pot.py). Ours records the turn with the previous code,
    linked to no code call, and stalls: not a model error to retry, since the same request
    would be refused again."""
    task = bigcodebench.get("BigCodeBench/2")
    server = FakeServer()
    server.then(ok(FAILS), status(400, TOO_LONG))
    server.start()
    config = build_config(
        "convcodeworld", model=server.url, feedback=FeedbackConfig("full"), simulator=None, turns=3
    )

    async def play() -> tuple[list, str]:
        backend = open_backend(
            server.url,
            model_name="fake-model",
            retrier=Retrier(RetryPolicy(max_retries=0), sleep=_no_wait),
        )
        try:
            loop = SessionLoop(task, config, backend, cached_execute(executor, None))
            events = [e async for e in loop.run()]
        finally:
            await backend.aclose()
        turns = [e.turn for e in events if isinstance(e, TurnCompleted)]
        return turns, events[-1].status

    try:
        turns, status_ = asyncio.run(play())
    finally:
        server.stop()
    assert status_ == "stalled"
    assert [t.idx for t in turns] == [0, 1]
    assert turns[1].code == turns[0].code and turns[1].generate_call is None
    assert any("the reference's turn stops here" in note for note in turns[1].notes)
