"""``vllm:<hf-model>``: vLLM's in-process engine, one ``LLM.chat`` call per batch of chats,
one ``LLM.generate`` call per batch of raw prompts (no chat template).

For turn-level batching (docs/harness-notes.md#what-convtui-does): the loop gathers every
session's prompt for a turn and ``complete_many`` (``complete_text_many``) generates them all
in one engine call.
vLLM needs a GPU and is an optional extra; it is imported only when this backend is used. The
engine call itself (``_engine`` and ``_run``) needs a GPU: the tests run it against a stand-in
engine that records what it was given, and everything around it for real."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import Sequence
from typing import Any

from convtui.core.extras import install_hint
from convtui.core.models.base import Hooks, Request, RequestBackend
from convtui.core.models.chat_template import SPECIAL_TOKENS, ChatTemplate
from convtui.core.models.retry import is_context_length_message
from convtui.core.models.types import (
    Attempt,
    CallKind,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerationParams,
    ModelError,
)

INSTALL_HINT = f"{install_hint('vllm')} (vLLM needs an NVIDIA GPU)"

_engines: dict[str, Any] = {}
_engines_lock = threading.Lock()
# The engine is not thread-safe; this also keeps one batch at a time on the GPU.
_chat_lock = threading.Lock()


def _engine(model: str) -> Any:
    """One engine per model per process: loading takes minutes and most of the GPU."""
    with _engines_lock:
        if model not in _engines:
            from vllm import LLM

            _engines[model] = LLM(model=model, seed=0)
        return _engines[model]


# One engine call's inputs: conversations for ``LLM.chat`` (kind "chat") or raw prompts for
# ``LLM.generate`` (kind "text").
Batch = Sequence[list[dict[str, str]] | str]


def _run(model: str, kind: CallKind, batch: Batch, params: GenerationParams) -> list[Any]:
    from vllm import SamplingParams

    sampling = SamplingParams(
        temperature=params.temperature,
        max_tokens=params.max_tokens,
        stop=list(params.stop) or None,
        seed=params.seed,
    )
    with _engines_lock:
        engine = _engines[model]
    with _chat_lock:
        if kind == "chat":
            return engine.chat(list(batch), sampling_params=sampling, use_tqdm=False)
        return engine.generate(list(batch), sampling_params=sampling, use_tqdm=False)


def _as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


class VllmEngineBackend(RequestBackend):
    """A Hugging Face model in vLLM's engine, in this process."""

    def __init__(self, *, spec: str, model: str) -> None:
        self.spec = spec
        self.model = model

    def connection_key(self) -> str:
        return f"vllm-engine|{self.model}"

    async def check(self) -> None:
        if importlib.util.find_spec("vllm") is None:
            raise ModelError(f"vllm:{self.model} needs vLLM: {INSTALL_HINT}")
        try:
            await asyncio.to_thread(_engine, self.model)
        except Exception as exc:  # vLLM raises many types (CUDA, OOM, missing weights)
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ModelError(f"vLLM could not load {self.model}: {first_line}") from None

    async def chat_template(self) -> ChatTemplate:
        """The Hugging Face tokenizer's template, as BigCodeBench's vLLM backend used it."""
        await self.check()
        with _engines_lock:
            tokenizer = _engines[self.model].get_tokenizer()
        config = {"chat_template": getattr(tokenizer, "chat_template", None)}
        config.update({name: getattr(tokenizer, name, None) for name in SPECIAL_TOKENS})
        return ChatTemplate.from_tokenizer_config(config)

    async def complete_many(
        self, batch: Sequence[Sequence[ChatMessage]], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """The whole batch in one engine call; each Completion's latency is the batch's.
        If a prompt is too long vLLM rejects the whole call; then each conversation is run
        alone so only the long one fails. A missing vLLM or an engine that cannot load
        raises (as ``check()`` does) rather than failing every slot."""
        return await self._batch("chat", [_as_dicts(messages) for messages in batch], params)

    async def complete_text_many(
        self, prompts: Sequence[str], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """``complete_many`` for raw prompts: one ``LLM.generate`` call, no chat template."""
        return await self._batch("text", list(prompts), params)

    async def _batch(
        self, kind: CallKind, batch: Batch, params: GenerationParams
    ) -> list[Completion | ModelError]:
        if not batch:
            return []
        await self.check()
        started = time.monotonic()
        try:
            outputs = await asyncio.to_thread(_run, self.model, kind, batch, params)
        except ValueError as exc:
            too_long = is_context_length_message(str(exc))
            if len(batch) == 1 or not too_long:
                kind_of: ErrorKind = "context_length" if too_long else "fatal"
                return [ModelError(f"vLLM: {exc}", kind=kind_of, attempts=1)] * len(batch)
            singles: list[Completion | ModelError] = []
            for item in batch:
                singles.extend(await self._batch(kind, [item], params))
            return singles
        latency = time.monotonic() - started
        results: list[Completion | ModelError] = []
        for output in outputs:
            generated = output.outputs[0]
            results.append(
                Completion(
                    text=generated.text,
                    finish_reason=generated.finish_reason or "stop",
                    input_tokens=len(output.prompt_token_ids or ()),
                    output_tokens=len(generated.token_ids or ()),
                    latency_s=latency,
                    attempts=1,
                    model=self.model,
                    resolved_model=self.model,
                )
            )
        return results

    async def _answer(self, request: Request, params: GenerationParams, hooks: Hooks) -> Completion:
        """A batch of one. The offline engine does not stream: ``on_text`` hears the whole
        answer once. There is no retrying: an in-process engine failure is not transient."""
        if isinstance(request, str):
            (result,) = await self.complete_text_many([request], params)
        else:
            (result,) = await self.complete_many([request], params)
        return _one(result, hooks)


def _one(result: Completion | ModelError, hooks: Hooks) -> Completion:
    """A batch of one's slot, reported as one attempt; its error raised."""
    if isinstance(result, ModelError):
        if hooks.on_attempt is not None:
            hooks.on_attempt(Attempt(1, "fatal", 0.0, str(result), None))
        raise result
    if hooks.on_attempt is not None:
        hooks.on_attempt(Attempt(1, "ok", result.latency_s, "", None))
    if hooks.on_text is not None:
        hooks.on_text(result.text)
    return result
