"""``vllm:<hf-model>``: vLLM's in-process engine, one ``LLM.chat`` call per batch.

For turn-level batching (harness notes §4.2): the loop gathers every session's prompt for a
turn and ``complete_many`` generates them all in one engine call. vLLM needs a GPU and is an
optional extra; it is imported only when this backend is used. The engine call itself
(``_engine`` and ``_chat``) cannot run on CPU-only machines and is not exercised by the tests
here; everything around it is."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from collections.abc import Sequence
from typing import Any

from convtui.core.models.base import AttemptCallback, ModelBackend, TextCallback
from convtui.core.models.retry import is_context_length_message
from convtui.core.models.types import (
    Attempt,
    CallInfo,
    ChatMessage,
    Completion,
    ErrorKind,
    GenerationParams,
    ModelError,
)

INSTALL_HINT = 'pip install -e ".[vllm]" (vLLM needs an NVIDIA GPU)'

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


def _chat(
    model: str, conversations: list[list[dict[str, str]]], params: GenerationParams
) -> list[Any]:
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
        return engine.chat(conversations, sampling_params=sampling, use_tqdm=False)


def _as_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


class VllmEngineBackend(ModelBackend):
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

    async def complete_many(
        self, batch: Sequence[Sequence[ChatMessage]], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """The whole batch in one engine call; each Completion's latency is the batch's.
        If a prompt is too long vLLM rejects the whole call; then each conversation is run
        alone so only the long one fails. A missing vLLM or an engine that cannot load
        raises (as ``check()`` does) rather than failing every slot."""
        if not batch:
            return []
        await self.check()
        conversations = [_as_dicts(messages) for messages in batch]
        started = time.monotonic()
        try:
            outputs = await asyncio.to_thread(_chat, self.model, conversations, params)
        except ValueError as exc:
            if len(batch) == 1 or not is_context_length_message(str(exc)):
                kind: ErrorKind = (
                    "context_length" if is_context_length_message(str(exc)) else "fatal"
                )
                return [ModelError(f"vLLM: {exc}", kind=kind, attempts=1)] * len(batch)
            singles: list[Completion | ModelError] = []
            for messages in batch:
                singles.extend(await self.complete_many([messages], params))
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

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        *,
        on_text: TextCallback | None = None,
        on_attempt: AttemptCallback | None = None,
        call: CallInfo | None = None,
    ) -> Completion:
        """A batch of one. The offline engine does not stream: ``on_text`` hears the whole
        answer once. There is no retrying: an in-process engine failure is not transient."""
        (result,) = await self.complete_many([messages], params)
        if isinstance(result, ModelError):
            if on_attempt is not None:
                on_attempt(Attempt(1, "fatal", 0.0, str(result), None))
            raise result
        if on_attempt is not None:
            on_attempt(Attempt(1, "ok", result.latency_s, "", None))
        if on_text is not None:
            on_text(result.text)
        return result
