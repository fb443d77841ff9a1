"""``mock:FILE`` for raw-text calls and for a turn's several code calls (``repair``,
``stale_ef``, ``CallInfo.seq``): which row answers, stop strings, and what the mock keeps of
each request. Scripted, so nothing here depends on what a model writes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from convtui.core.models import CallInfo, ChatMessage, GenerationParams, ModelError, open_backend
from convtui.core.models.base import ModelBackend, prompt_as_chat
from convtui.core.models.mock import REQUESTS_KEPT, MockRequest, cut_at_stop

CCW_STOP = "\n\n---\n\n"  # DSPy 2.4's field separator, ConvCodeWorld's stop string
PROMPT = "Task: add one to x.\n\n---\n\nCode:"
PARAMS = GenerationParams()


def script(tmp_path: Path, *rows: dict | str) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return f"mock:{path}"


def row(purpose: str, text: str, **extra: object) -> dict:
    return {"purpose": purpose, "text": text, **extra}


def text_call(backend: ModelBackend, call: CallInfo | None, prompt: str = PROMPT, **kw):
    params = kw.pop("params", PARAMS)
    return asyncio.run(backend.complete_text(prompt, params, call=call, **kw))


def chat_call(backend: ModelBackend, call: CallInfo | None, prompt: str = PROMPT):
    return asyncio.run(backend.complete((ChatMessage("user", prompt),), PARAMS, call=call))


def test_a_text_call_takes_the_same_rows_as_a_chat_call_and_counts_prompt_words(tmp_path):
    backend = open_backend(script(tmp_path, row("generate", "zero"), row("generate", "one")))
    assert text_call(backend, CallInfo("s", 0, "generate")).text == "zero"
    assert chat_call(backend, CallInfo("s", 1, "generate")).text == "one"
    completion = text_call(backend, CallInfo("s", 1, "generate"))
    assert completion.text == "one"
    assert (completion.input_tokens, completion.output_tokens) == (len(PROMPT.split()), 1)
    assert (completion.finish_reason, completion.attempts) == ("stop", 1)


def test_the_mock_keeps_every_request_with_its_kind_prompt_and_params(tmp_path):
    backend = open_backend(script(tmp_path, row("generate", "reply")))
    params = GenerationParams(max_tokens=2048, stop=(CCW_STOP,))
    info = CallInfo("s", 0, "generate")
    text_call(backend, info, params=params)
    chat_call(backend, info)
    assert backend.requests == [
        MockRequest(info, "text", PROMPT, params),
        MockRequest(info, "chat", (ChatMessage("user", PROMPT),), PARAMS),
    ]


def test_the_mock_keeps_only_its_latest_requests(tmp_path):
    """A sweep makes a hundred thousand calls: the mock keeps the last REQUESTS_KEPT for a
    test to read, not all of them."""
    backend = open_backend(script(tmp_path, row("generate", "reply")))

    async def many() -> None:
        for k in range(REQUESTS_KEPT + 5):
            await backend.complete_text(
                f"prompt {k}", PARAMS, call=CallInfo(f"s{k}", 0, "generate")
            )

    asyncio.run(many())
    kept = backend.requests
    assert len(kept) == REQUESTS_KEPT
    assert [r.request for r in (kept[0], kept[-1])] == ["prompt 5", f"prompt {REQUESTS_KEPT + 4}"]


def test_stop_strings_cut_the_scripted_reply_for_both_kinds_of_call(tmp_path):
    reply = "```python\ndef task_func(x):\n    return x + 1\n```" + CCW_STOP + "Reasoning: more"
    backend = open_backend(script(tmp_path, row("generate", reply)))
    params = GenerationParams(stop=("never there", CCW_STOP, "Reasoning"))
    seen: list[str] = []
    info = CallInfo("s", 0, "generate")
    text = asyncio.run(backend.complete_text(PROMPT, params, on_text=seen.append, call=info))
    chat = asyncio.run(backend.complete(prompt_as_chat(PROMPT), params, call=info))
    cut = reply[: reply.index(CCW_STOP)]
    assert text.text == chat.text == cut and seen[-1] == cut
    assert text.output_tokens == len(cut.split()) and text.finish_reason == "stop"
    # Without stop strings the whole row comes back.
    assert text_call(backend, info).text == reply


@pytest.mark.parametrize(
    ("text", "stop", "expected"),
    [
        ("a---b---c", ("---",), "a"),
        ("abc", ("x", "c", "b"), "a"),  # the earliest match wins, whatever the order
        ("abc", (), "abc"),
        ("abc", ("",), "abc"),  # an empty stop string stops nothing
        ("---", ("---",), ""),
    ],
)
def test_cut_at_stop_keeps_the_text_before_the_first_stop_string(text, stop, expected):
    assert cut_at_stop(text, stop) == expected


def test_with_seq_zero_rows_are_picked_as_before(tmp_path):
    """Default seq (0): generate by turn, simulate in order, as the pre-seq mock did."""
    backend = open_backend(
        script(tmp_path, row("generate", "g0"), row("simulate", "s0"), row("generate", "g1"))
    )
    picks = [
        chat_call(backend, CallInfo("s", 1, "generate")).text,
        chat_call(backend, CallInfo("s", 1, "generate", seq=0)).text,
        chat_call(backend, CallInfo("s", 0, "simulate", 0), "first").text,
        chat_call(backend, CallInfo("s", 5, "generate")).text,
    ]
    assert picks == ["g1", "g1", "s0", "g1"]


def test_repair_and_stale_ef_rows_are_taken_in_order_per_session(tmp_path):
    backend = open_backend(
        script(
            tmp_path,
            row("generate", "broken"),
            row("repair", "fix 1"),
            row("repair", "fix 2"),
            row("stale_ef", "stale"),
        )
    )
    turn = [
        text_call(backend, CallInfo("a", 0, "generate", 0), "p0").text,
        text_call(backend, CallInfo("a", 0, "repair", 1), "p1").text,
        text_call(backend, CallInfo("a", 0, "repair", 2), "p2").text,
        text_call(backend, CallInfo("a", 0, "stale_ef", 3), "p3").text,
    ]
    assert turn == ["broken", "fix 1", "fix 2", "stale"]
    # The rows run out: the last repeats. Another session starts over.
    assert text_call(backend, CallInfo("a", 1, "repair", 1), "p4").text == "fix 2"
    assert text_call(backend, CallInfo("b", 0, "repair", 1), "p1").text == "fix 1"


def test_a_repair_call_made_again_gets_its_row_again_but_the_next_seq_does_not(tmp_path):
    backend = open_backend(script(tmp_path, row("repair", "fix 1"), row("repair", "fix 2")))
    first = CallInfo("a", 0, "repair", 1)
    assert text_call(backend, first, "same").text == "fix 1"
    assert text_call(backend, first, "same").text == "fix 1"  # a cancelled turn, again
    # The same words at the next position of the turn are another call.
    assert text_call(backend, CallInfo("a", 0, "repair", 2), "same").text == "fix 2"


def test_a_text_request_and_a_chat_request_of_the_same_words_are_different_requests(tmp_path):
    backend = open_backend(script(tmp_path, row("simulate", "one"), row("simulate", "two")))
    info = CallInfo("a", 0, "simulate")
    assert text_call(backend, info).text == "one"
    assert chat_call(backend, info).text == "two"


def test_pinned_rows_answer_only_their_turn_and_seq_and_beat_the_unpinned_ones(tmp_path):
    backend = open_backend(
        script(
            tmp_path,
            row("repair", "any turn"),
            row("repair", "turn 2, any seq", turn=2),
            row("repair", "turn 2, seq 2", turn=2, seq=2),
            row("generate", "g"),
            row("generate", "turn 1 only", turn=1),
        )
    )
    assert text_call(backend, CallInfo("a", 2, "repair", 1)).text == "turn 2, any seq"
    assert text_call(backend, CallInfo("a", 2, "repair", 2)).text == "turn 2, seq 2"
    assert text_call(backend, CallInfo("a", 0, "repair", 1)).text == "any turn"
    # Pinned generate rows leave the unpinned ones' turn numbering alone.
    gens = [text_call(backend, CallInfo("a", t, "generate")).text for t in (0, 1, 2)]
    assert gens == ["g", "turn 1 only", "g"]


def test_a_call_with_neither_a_pin_nor_an_unpinned_row_fails_clearly(tmp_path):
    backend = open_backend(script(tmp_path, row("generate", "g"), row("repair", "r", turn=3)))
    with pytest.raises(ModelError, match=r"no repair rows for turn 0 \(seq 1\)") as caught:
        text_call(backend, CallInfo("s", 0, "repair", 1))
    assert caught.value.kind == "fatal"
    assert text_call(backend, CallInfo("s", 3, "repair", 1)).text == "r"
    with pytest.raises(ModelError, match="no stale_ef rows"):
        text_call(backend, CallInfo("s", 0, "stale_ef", 2))


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        (row("repair", "x", seq=1), "seq pins a row within a turn; give its turn too"),
        (row("repair", "x", turn=-1), "turn must be a whole number >= 0, got -1"),
        (row("repair", "x", turn=True), "turn must be a whole number >= 0, got True"),
        (row("repair", "x", turn=1, seq=1.5), "seq must be a whole number >= 0, got 1.5"),
        (row("critic", "x"), "or repair or stale_ef for a turn's further code calls"),
    ],
)
def test_a_bad_pin_or_purpose_fails_the_check_with_one_line(tmp_path, line, complaint):
    backend = open_backend(script(tmp_path, line))
    with pytest.raises(ModelError) as caught:
        asyncio.run(backend.check())
    assert complaint in str(caught.value) and "\n" not in str(caught.value)


def test_a_backend_that_only_speaks_chat_gets_the_prompt_as_one_user_message():
    """The base class's rule for backends without a completions API (OpenAI, Azure, and any
    backend that does not override ``complete_text``)."""
    from convtui.core.models.types import Completion

    sent: list[tuple[ChatMessage, ...]] = []

    class ChatOnly(ModelBackend):
        spec = model = "chat-only"

        def connection_key(self) -> str:
            return "chat-only"

        async def check(self) -> None:
            return None

        async def complete(self, messages, params, *, on_text=None, on_attempt=None, call=None):
            sent.append(tuple(messages))
            return Completion("ok", "stop", 1, 1, 0.0, 1, self.model, None)

    backend = ChatOnly()
    asyncio.run(backend.complete_text(PROMPT, PARAMS))
    results = asyncio.run(backend.complete_text_many(["a", "b"], PARAMS))
    assert [r.text for r in results if not isinstance(r, ModelError)] == ["ok", "ok"]
    assert sent == [(ChatMessage("user", text),) for text in (PROMPT, "a", "b")]
    assert prompt_as_chat(PROMPT) == sent[0]


def test_a_text_request_never_shares_a_request_hash_with_a_chat_request():
    """The journal finds calls by request hash: a raw prompt and the same words as one chat
    message are different requests (no chat template on one)."""
    from convtui.core.turns.journal import request_hash, text_request_hash

    text = text_request_hash("m", PROMPT, PARAMS)
    assert text == text_request_hash("m", PROMPT, PARAMS)
    assert text != request_hash("m", prompt_as_chat(PROMPT), PARAMS)
    assert text != text_request_hash("m", PROMPT, GenerationParams(stop=(CCW_STOP,)))
    assert text != text_request_hash("other", PROMPT, PARAMS)
