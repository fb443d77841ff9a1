"""``mock:FILE``, the scripted backend: which row answers which call, streaming, accounting,
and one clear line for a bad script. Every test here is scripted, so none depends on what a
model writes."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import pytest
from support.recorded import ADD_ONE as TASK

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.feedback.simulators import Simulator
from convtui.core.models import ACCEPTED_SPECS, CallInfo, ChatMessage, ModelError, open_backend
from convtui.core.models.mock import MockBackend
from convtui.core.models.types import GenerationParams
from convtui.core.play.loop import SessionEnded, SessionLoop, TurnCompleted
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store

HELLO = (ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello to the world."))
PARAMS = GenerationParams()


def script(tmp_path: Path, *rows: dict | str, name: str = "script.jsonl") -> str:
    """Write ``rows`` (dicts as JSON, strings as they are) and return the mock spec."""
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return f"mock:{path}"


def gen(text: str, **extra: object) -> dict:
    return {"purpose": "generate", "text": text, **extra}


def sim(text: str) -> dict:
    return {"purpose": "simulate", "text": text}


def ask(backend, call: CallInfo | None, messages=HELLO, **kwargs):
    return asyncio.run(backend.complete(messages, PARAMS, call=call, **kwargs))


def test_the_spec_opens_a_mock_backend_named_after_its_file(tmp_path):
    spec = script(tmp_path, gen("hi"), name="replies.jsonl")
    backend = open_backend(spec)
    assert isinstance(backend, MockBackend)
    assert (backend.spec, backend.model) == (spec, "replies")
    assert "mock:/path/to/script.jsonl" in ACCEPTED_SPECS


def test_turn_i_gets_the_ith_generate_row_and_the_last_row_repeats(tmp_path):
    backend = open_backend(script(tmp_path, gen("zero"), sim("say"), gen("one"), gen("two")))
    texts = [ask(backend, CallInfo("s", idx, "generate")).text for idx in (0, 1, 2, 3, 7)]
    assert texts == ["zero", "one", "two", "two", "two"]


def test_a_turn_played_again_or_first_played_by_a_fresh_backend_gets_its_own_row(tmp_path):
    spec = script(tmp_path, gen("zero"), gen("one"), gen("two"))
    first = open_backend(spec)
    assert ask(first, CallInfo("s", 1, "generate")).text == "one"
    assert ask(first, CallInfo("s", 1, "generate")).text == "one"  # a cancelled turn again
    resumed = open_backend(spec)  # turns 0 and 1 came from the journal
    assert ask(resumed, CallInfo("s", 2, "generate")).text == "two"


def test_calls_without_call_info_take_the_generate_rows_in_order(tmp_path):
    backend = open_backend(script(tmp_path, gen("zero"), gen("one")))
    assert [ask(backend, None).text for _ in range(3)] == ["zero", "one", "one"]


def test_simulate_rows_are_taken_in_order_and_start_over_for_each_session(tmp_path):
    backend = open_backend(script(tmp_path, gen("code"), sim("first"), sim("second")))
    asked = [
        ask(backend, CallInfo("a", 0, "simulate"), (ChatMessage("user", "turn 0"),)).text,
        # The expert asked again in the same turn: a different request, the next row.
        ask(backend, CallInfo("a", 0, "simulate"), (ChatMessage("user", "again"),)).text,
        ask(backend, CallInfo("a", 3, "simulate"), (ChatMessage("user", "turn 3"),)).text,
        ask(backend, CallInfo("b", 2, "simulate"), (ChatMessage("user", "turn 2"),)).text,
    ]
    assert asked == ["first", "second", "second", "first"]


def test_a_simulate_request_made_again_gets_the_same_row(tmp_path):
    backend = open_backend(script(tmp_path, sim("first"), sim("second"), sim("third")))
    one = (ChatMessage("user", "turn 0"),)
    two = (ChatMessage("user", "turn 1"),)
    assert ask(backend, CallInfo("a", 0, "simulate"), one).text == "first"
    assert ask(backend, CallInfo("a", 1, "simulate"), two).text == "second"
    assert ask(backend, CallInfo("a", 1, "simulate"), two).text == "second"  # cancelled, again
    assert ask(backend, CallInfo("a", 2, "simulate"), one).text == "third"  # another turn


def test_a_reply_streams_as_growing_prefixes_of_the_whole_text(tmp_path):
    text = "```python\ndef task_func(x):\n    return x + 1\n```"
    backend = open_backend(script(tmp_path, gen(text)))
    seen: list[str] = []
    completion = ask(backend, CallInfo("s", 0, "generate"), on_text=seen.append)
    assert completion.text == text and seen[-1] == text
    assert len(seen) == len(text.split())
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(seen))


def test_accounting_counts_words_and_reports_one_attempt(tmp_path):
    backend = open_backend(script(tmp_path, gen("two words")))
    attempts = []
    completion = ask(backend, CallInfo("s", 0, "generate"), on_attempt=attempts.append)
    assert (completion.input_tokens, completion.output_tokens) == (7, 2)  # 2 + 5 words in
    assert (completion.attempts, completion.finish_reason, completion.cached) == (1, "stop", False)
    assert completion.model == "script" and completion.resolved_model is None
    [attempt] = attempts
    assert (attempt.number, attempt.status, attempt.error) == (1, "ok", "")
    assert attempt.latency_s == completion.latency_s


def test_delay_spreads_over_the_stream_and_the_call_can_be_cancelled_midway(tmp_path):
    text = " ".join(f"w{i}" for i in range(10))
    backend = open_backend(script(tmp_path, gen(text, delay_s=0.5)))
    seen: list[str] = []

    async def cut_short() -> None:
        info = CallInfo("s", 0, "generate")
        await asyncio.wait_for(
            backend.complete(HELLO, PARAMS, on_text=seen.append, call=info), timeout=0.2
        )

    with pytest.raises(TimeoutError):
        asyncio.run(cut_short())
    assert seen and len(seen) < 10 and text.startswith(seen[-1])
    whole = ask(backend, CallInfo("s", 0, "generate"))
    assert whole.text == text and whole.latency_s >= 0.45


@pytest.mark.parametrize(
    ("lines", "complaint"),
    [
        (None, "no script file at"),
        ([], "has no rows"),
        (["", "   "], "has no rows"),
        (["{not json"], "line 1 is not JSON"),
        ([json.dumps(gen("ok")), "[1, 2]"], "line 2 is not a JSON object"),
        ([json.dumps({"purpose": "critic", "text": "x"})], "purpose must be generate or simulate"),
        ([json.dumps({"text": "x"})], "purpose must be generate or simulate"),
        ([json.dumps({"purpose": "generate", "text": 3})], "text must be a string, got int"),
        ([json.dumps({"purpose": "generate"})], "text must be a string, got NoneType"),
        ([json.dumps(gen("x", delay_s=-1))], "delay_s must be a number of seconds >= 0"),
        ([json.dumps(gen("x", reply="y"))], "unknown keys ['reply']"),
    ],
)
def test_a_missing_or_invalid_script_fails_the_check_with_one_line(tmp_path, lines, complaint):
    path = tmp_path / "bad.jsonl"
    if lines is not None:
        path.write_text("\n".join(lines))
    backend = open_backend(f"mock:{path}")
    with pytest.raises(ModelError) as caught:
        asyncio.run(backend.check())
    message = str(caught.value)
    assert complaint in message and message.startswith(f"mock:{path}")
    assert "\n" not in message and caught.value.kind == "fatal"
    with pytest.raises(ModelError, match="mock:"):  # a call without a check says the same
        ask(backend, CallInfo("s", 0, "generate"))


def test_a_call_for_a_purpose_without_rows_fails_clearly(tmp_path):
    backend = open_backend(script(tmp_path, gen("code only")))
    asyncio.run(backend.check())
    with pytest.raises(ModelError, match="no simulate rows") as caught:
        ask(backend, CallInfo("s", 0, "simulate"))
    assert caught.value.kind == "fatal"


# --- through the turn loop and the store's journal ----------------------------------------

FAILED = ExecResult("fail", (TestOutcome("test_a", "fail", 0.0, "AssertionError: 1 != 2\n"),))


async def always_fails(request) -> ExecResult:
    """The loop's plumbing is under test here, not the sandbox (tests/tui and
    tests/benchmarks run real code)."""
    return FAILED


def play(store: Store, session_id: str, backend, *, share: bool = False, turns: int = 3):
    config = SessionConfig(
        model=backend.spec, feedback=FeedbackConfig("full", "novice"), max_turns=turns
    )
    journal = store.journal(session_id, share_across_sessions=share)
    loop = SessionLoop(TASK, config, backend, always_fails, Simulator("novice", backend), journal)

    async def go():
        async for event in loop.run(store.load_turns(session_id)):
            if isinstance(event, TurnCompleted):
                store.save_turn(session_id, event.turn, event.status)
            elif isinstance(event, SessionEnded):
                return event

    return asyncio.run(go())


def session(store: Store, spec: str) -> str:
    return store.create_interactive_session(TASK.id, SessionConfig(model=spec), "simulator")


def test_each_turn_of_a_looped_session_takes_its_rows_and_every_call_is_journaled(tmp_path):
    spec = script(tmp_path, gen("reply 0"), gen("reply 1"), sim("hint A"), sim("hint B"))
    backend = open_backend(spec)
    with Store.open(tmp_path / "results.db") as store:
        first, second = session(store, spec), session(store, spec)
        ended = play(store, first, backend)
        again = play(store, second, backend)  # the same backend: scripts start over
        for result in (ended, again):
            assert result.status == "exhausted"
            assert [t.reply for t in result.turns] == ["reply 0", "reply 1", "reply 1"]
            assert [t.verbal_feedback for t in result.turns] == ["hint A", "hint B", None]
        calls = store.db.execute(
            "SELECT session_id, turn_idx, purpose, status, cache_hit, output_tokens "
            "FROM model_calls ORDER BY id"
        ).fetchall()
    expected = [
        (0, "generate", 2),
        (0, "simulate", 2),
        (1, "generate", 2),
        (1, "simulate", 2),
        (2, "generate", 2),
    ]
    for sid in (first, second):
        mine = [(t, p, o) for s, t, p, status, hit, o in calls if s == sid]
        assert mine == expected
    assert {(status, hit) for _, _, _, status, hit, _ in calls} == {("ok", 0)}


def code(value: int) -> str:
    return f"```python\ndef task_func(x):\n    return {value}\n```"


def test_calls_the_journal_answers_do_not_shift_the_rows_of_later_turns(tmp_path):
    # Distinct code each turn, so that no two turns send the same request.
    spec = script(tmp_path, gen(code(0)), gen(code(1)), gen(code(2)), sim("hint"))
    with Store.open(tmp_path / "results.db") as store:
        first, second = session(store, spec), session(store, spec)
        play(store, first, open_backend(spec), turns=2)
        # Another session with the same first prompt: the journal reuses the first's answer
        # (share_across_sessions), and a fresh backend never sees that call.
        ended = play(store, second, open_backend(spec), share=True, turns=3)
        assert [t.reply for t in ended.turns] == [code(0), code(1), code(2)]
        hits = store.db.execute(
            "SELECT turn_idx, purpose FROM model_calls WHERE session_id = ? AND cache_hit = 1",
            (second,),
        ).fetchall()
        assert (0, "generate") in hits


def test_a_resumed_session_continues_the_script_at_its_next_turn(tmp_path):
    spec = script(tmp_path, gen("reply 0"), gen("reply 1"), gen("reply 2"), sim("hint"))
    with Store.open(tmp_path / "results.db") as store:
        sid = session(store, spec)
        play(store, sid, open_backend(spec), turns=1)
        assert [t.reply for t in store.load_turns(sid)] == ["reply 0"]
        store.set_session_status(sid, "running")
        resumed = play(store, sid, open_backend(spec), turns=3)
        assert [t.reply for t in resumed.turns] == ["reply 0", "reply 1", "reply 2"]


def test_the_loop_tells_the_backend_its_session_turn_and_purpose(tmp_path):
    spec = script(tmp_path, gen("reply"), sim("hint"))
    seen: list[CallInfo | None] = []

    class Listening(MockBackend):
        async def complete(self, messages, params, *, call=None, **kwargs):
            seen.append(call)
            return await super().complete(messages, params, call=call, **kwargs)

    backend = Listening(spec=spec, path=Path(spec.removeprefix("mock:")))
    with Store.open(tmp_path / "results.db") as store:
        sid = session(store, spec)
        play(store, sid, backend, turns=2)
    assert seen == [
        CallInfo(sid, 0, "generate"),
        CallInfo(sid, 0, "simulate"),
        CallInfo(sid, 1, "generate"),
    ]


def test_call_info_is_not_part_of_the_request_hash(tmp_path):
    """The journal finds a call by its request alone, whichever session made it."""
    spec = script(tmp_path, gen("reply"))
    with Store.open(tmp_path / "results.db") as store:
        first, second = session(store, spec), session(store, spec)
        play(store, first, open_backend(spec), turns=1)
        play(store, second, open_backend(spec), turns=1)
        hashes = store.db.execute(
            "SELECT session_id, request_hash FROM model_calls WHERE purpose = 'generate'"
        ).fetchall()
    assert len(hashes) == 2 and hashes[0][0] != hashes[1][0] and hashes[0][1] == hashes[1][1]
