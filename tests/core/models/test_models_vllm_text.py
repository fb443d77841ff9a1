"""``vllm:`` raw-text calls: the engine gets the raw prompts through ``LLM.generate`` (no
chat template) and chats through ``LLM.chat``, with the stop strings and max_tokens in its
SamplingParams. vLLM needs a GPU, so a stand-in engine (and a stand-in ``vllm`` module giving
SamplingParams) records what the backend hands it; everything around the engine call runs
for real. On a GPU machine the real engine is what ``check()`` loads."""

from __future__ import annotations

import asyncio
import importlib.machinery
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from convtui.core.models import GenerationParams, ModelError, open_backend, vllm_engine

MODEL = "stand-in/model"
PARAMS = GenerationParams(max_tokens=2048, stop=("\n\n---\n\n",))


@dataclass
class SamplingParams:
    temperature: float
    max_tokens: int
    stop: list[str] | None
    seed: int | None


@dataclass
class Output:
    text: str
    finish_reason: str
    token_ids: list[int]


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[Output]


@dataclass
class StandInEngine:
    """Answers each prompt with its reversal; a prompt holding "TOO LONG" fails the batch
    the way vLLM does (ValueError about the maximum model length)."""

    calls: list[tuple[str, list[Any], SamplingParams]] = field(default_factory=list)

    def _answer(self, method: str, batch: list[Any], sampling: SamplingParams) -> list[Any]:
        self.calls.append((method, batch, sampling))
        words = [item if isinstance(item, str) else item[-1]["content"] for item in batch]
        if any("TOO LONG" in w for w in words):
            raise ValueError(
                "The decoder prompt (length 9000) is longer than the maximum model length of 4096."
            )
        return [
            RequestOutput(list(range(len(w.split()))), [Output(w[::-1], "stop", [1, 2])])
            for w in words
        ]

    def generate(self, prompts: list[str], *, sampling_params: SamplingParams, use_tqdm: bool):
        return self._answer("generate", prompts, sampling_params)

    def chat(self, conversations: list[Any], *, sampling_params: SamplingParams, use_tqdm: bool):
        return self._answer("chat", conversations, sampling_params)


@pytest.fixture
def engine(monkeypatch) -> StandInEngine:
    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    stand_in = StandInEngine()
    monkeypatch.setitem(vllm_engine._engines, MODEL, stand_in)
    return stand_in


def test_text_calls_go_to_generate_with_the_raw_prompts_and_the_stop_strings(engine):
    backend = open_backend(f"vllm:{MODEL}")
    results = asyncio.run(backend.complete_text_many(["one two", "three"], PARAMS))
    assert [r.text for r in results if not isinstance(r, ModelError)] == ["owt eno", "eerht"]
    [(method, batch, sampling)] = engine.calls
    assert (method, batch) == ("generate", ["one two", "three"])
    assert sampling == SamplingParams(0.0, 2048, ["\n\n---\n\n"], 0)
    first = results[0]
    assert not isinstance(first, ModelError)
    assert (first.input_tokens, first.output_tokens, first.attempts) == (2, 2, 1)


def test_a_single_text_call_is_a_batch_of_one_reported_as_one_attempt(engine):
    backend = open_backend(f"vllm:{MODEL}")
    attempts, seen = [], []
    completion = asyncio.run(
        backend.complete_text("abc", PARAMS, on_attempt=attempts.append, on_text=seen.append)
    )
    assert completion.text == "cba" and seen == ["cba"]
    assert [a.status for a in attempts] == ["ok"]
    assert engine.calls[0][:2] == ("generate", ["abc"])


def test_chat_calls_still_go_to_chat(engine):
    from convtui.core.models import ChatMessage

    backend = open_backend(f"vllm:{MODEL}")
    completion = asyncio.run(backend.complete([ChatMessage("user", "hi")], PARAMS))
    assert completion.text == "ih"
    assert engine.calls[0][:2] == ("chat", [[{"role": "user", "content": "hi"}]])


def test_a_too_long_text_prompt_fails_only_its_own_slot_as_context_length(engine):
    backend = open_backend(f"vllm:{MODEL}")
    ok, long = asyncio.run(backend.complete_text_many(["fine", "TOO LONG"], PARAMS))
    assert not isinstance(ok, ModelError) and ok.text == "enif"
    assert isinstance(long, ModelError) and long.kind == "context_length"
    # The whole batch first, then each prompt alone.
    assert [batch for _, batch, _ in engine.calls] == [["fine", "TOO LONG"], ["fine"], ["TOO LONG"]]
    with pytest.raises(ModelError) as caught:
        asyncio.run(backend.complete_text("TOO LONG", PARAMS))
    assert caught.value.kind == "context_length"
