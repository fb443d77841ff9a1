"""The one interface every model backend offers, and the retrying skeleton most share."""

from __future__ import annotations

import asyncio
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from convtui.core.models.limiter import ConcurrencyLimiter
from convtui.core.models.retry import Failure, Retrier, call_with_retries
from convtui.core.models.types import (
    Attempt,
    CallInfo,
    ChatMessage,
    Completion,
    GenerationParams,
    ModelError,
)

TextCallback = Callable[[str], None]
AttemptCallback = Callable[[Attempt], None]


def credential_id(secret: str | None) -> str:
    """A short, non-reversible name for an API key, so two keys get two limiters and the
    key itself never lands in a connection key, a log or the store."""
    if not secret:
        return "anonymous"
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


class ModelBackend(ABC):
    """A model behind a spec string (``local:smollm2``, ``openai:gpt-4o``, ...).

    ``spec`` is the string it was opened from; ``model`` the model name sent with each
    request (for an ``http://`` server opened without a name, known after ``check()``)."""

    spec: str
    model: str

    @abstractmethod
    def connection_key(self) -> str:
        """Backend + endpoint + credential id: calls sharing it share one limiter."""

    @abstractmethod
    async def check(self) -> None:
        """Fail fast, before any work: raise ModelError(kind="fatal") with one line saying
        what is wrong (unreachable server, missing key, missing model file) and the fix."""

    @abstractmethod
    async def complete(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        *,
        on_text: TextCallback | None = None,
        on_attempt: AttemptCallback | None = None,
        call: CallInfo | None = None,
    ) -> Completion:
        """One chat completion. ``on_text`` gets the text so far while it streams (after a
        retry it starts again from the new attempt's first token); ``on_attempt`` hears of
        every attempt as it ends; ``call`` says which session, turn and purpose the call
        serves (the turn loop always passes it; only the scripted ``mock:`` backend uses
        it). Raises ModelError when the call fails for good."""

    async def complete_many(
        self, batch: Sequence[Sequence[ChatMessage]], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """Complete each conversation; a failure takes only its own slot in the result.

        Concurrent ``complete`` calls, bounded by the endpoint's limiter; backends with a
        real batch API (vLLM in-process) override this with one call."""
        results = await asyncio.gather(
            *(self.complete(messages, params) for messages in batch), return_exceptions=True
        )
        out: list[Completion | ModelError] = []
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, ModelError):
                raise result
            out.append(result)
        return out

    async def aclose(self) -> None:
        """Release connections; the backend is not used afterwards."""
        return None


@dataclass(frozen=True)
class RawCompletion:
    """What one successful attempt produced, before the retry layer adds its accounting."""

    text: str
    finish_reason: str
    input_tokens: int
    output_tokens: int
    resolved_model: str | None


class RetryingBackend(ModelBackend):
    """A backend whose calls go through the limiter and the retry loop: subclasses supply
    one attempt (``_attempt``) and say what their exceptions mean (``_classify``)."""

    def __init__(
        self, *, spec: str, model: str, limiter: ConcurrencyLimiter, retrier: Retrier
    ) -> None:
        self.spec: str = spec
        self.model: str = model
        self.limiter = limiter
        self.retrier = retrier

    @abstractmethod
    async def _attempt(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        on_text: TextCallback | None,
    ) -> RawCompletion:
        """One try, no retries; raises what ``_classify`` understands."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> Failure | None:
        """The failure an exception from ``_attempt`` stands for; None for a bug."""

    async def _before_call(self) -> None:
        """Hook for work needed once before the first request (e.g. finding the model)."""
        return None

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        *,
        on_text: TextCallback | None = None,
        on_attempt: AttemptCallback | None = None,
        call: CallInfo | None = None,
    ) -> Completion:
        await self._before_call()
        raw, last = await call_with_retries(
            lambda: self._attempt(messages, params, on_text),
            self._classify,
            self.retrier,
            on_attempt=on_attempt,
            slot=self.limiter.acquire,
            release=self.limiter.release,
        )
        return Completion(
            text=raw.text,
            finish_reason=raw.finish_reason,
            input_tokens=raw.input_tokens,
            output_tokens=raw.output_tokens,
            latency_s=last.latency_s,
            attempts=last.number,
            model=self.model,
            resolved_model=raw.resolved_model,
        )
