"""The one interface every model backend offers, and the retrying skeleton most share."""

from __future__ import annotations

import asyncio
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TypedDict, Unpack

from convtui.core.models.chat_template import ChatTemplate
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
# What one call sends: chat messages (``complete``) or one raw prompt (``complete_text``).
Request = tuple[ChatMessage, ...] | str


def prompt_as_chat(prompt: str) -> tuple[ChatMessage, ...]:
    """The raw prompt of a text call, for a backend that only speaks chat (OpenAI, Azure):
    one user message holding the whole prompt, no system message. The rule is ConvCodeWorld's,
    which sent DSPy's prompt string this way to OpenAI models and as a raw completion to
    open ones; the message then goes through the model's chat template."""
    return (ChatMessage("user", prompt),)


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

    async def complete_text(
        self,
        prompt: str,
        params: GenerationParams,
        *,
        on_text: TextCallback | None = None,
        on_attempt: AttemptCallback | None = None,
        call: CallInfo | None = None,
    ) -> Completion:
        """One raw-text completion: ``prompt`` goes to the model as it is, with no chat
        template (an OpenAI-compatible server's ``/v1/completions``, llama.cpp's
        ``create_completion``, vLLM's ``generate``). Callbacks, ``call`` and errors as in
        ``complete``; ``params.stop`` cuts the text for both kinds of call.

        This default is the rule for backends that only speak chat: the prompt is sent as
        one user message (``prompt_as_chat``). Backends that can send raw text override it."""
        return await self.complete(
            prompt_as_chat(prompt), params, on_text=on_text, on_attempt=on_attempt, call=call
        )

    async def chat_template(self) -> ChatTemplate | None:
        """The model's chat template, for prompts that must be rendered exactly as a
        reference run rendered them and then sent as raw text (BigCodeBench's turn 0 for open
        models). None where it is not known here: hosted chat APIs, which apply their own."""
        return None

    async def complete_many(
        self, batch: Sequence[Sequence[ChatMessage]], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """Complete each conversation; a failure takes only its own slot in the result.

        Concurrent ``complete`` calls, bounded by the endpoint's limiter; backends with a
        real batch API (vLLM in-process) override this with one call."""
        results = await asyncio.gather(
            *(self.complete(messages, params) for messages in batch), return_exceptions=True
        )
        return _slots(results)

    async def complete_text_many(
        self, prompts: Sequence[str], params: GenerationParams
    ) -> list[Completion | ModelError]:
        """``complete_many`` for raw-text calls: each prompt through ``complete_text``."""
        results = await asyncio.gather(
            *(self.complete_text(prompt, params) for prompt in prompts), return_exceptions=True
        )
        return _slots(results)

    async def aclose(self) -> None:
        """Release connections; the backend is not used afterwards."""
        return None


def _slots(results: Sequence[Completion | BaseException]) -> list[Completion | ModelError]:
    """A gathered batch as result slots: a ModelError takes its slot, anything else is a bug
    and propagates."""
    out: list[Completion | ModelError] = []
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, ModelError):
            raise result
        out.append(result)
    return out


@dataclass(frozen=True)
class RawCompletion:
    """What one successful attempt produced, before the retry layer adds its accounting."""

    text: str
    finish_reason: str
    input_tokens: int | None  # None: the server did not say
    output_tokens: int | None
    resolved_model: str | None


@dataclass(frozen=True)
class Hooks:
    """What the caller of one call listens with, and where the call sits: ``complete``'s
    keyword arguments, passed on together."""

    on_text: TextCallback | None = None
    on_attempt: AttemptCallback | None = None
    call: CallInfo | None = None


class HookArgs(TypedDict, total=False):
    """``Hooks`` as keyword arguments: how a backend that only routes ``complete``'s keyword
    arguments on to ``Hooks`` takes them, without spelling ``complete``'s signature again."""

    on_text: TextCallback | None
    on_attempt: AttemptCallback | None
    call: CallInfo | None


class RequestBackend(ModelBackend):
    """A backend that answers chat and raw-text calls in one place, ``_answer``, given the
    request either way: its chat messages, or the raw prompt of a text call."""

    async def complete(
        self, messages: Sequence[ChatMessage], params: GenerationParams, **hooks: Unpack[HookArgs]
    ) -> Completion:
        return await self._answer(tuple(messages), params, Hooks(**hooks))

    async def complete_text(
        self, prompt: str, params: GenerationParams, **hooks: Unpack[HookArgs]
    ) -> Completion:
        return await self._answer(prompt, params, Hooks(**hooks))

    @abstractmethod
    async def _answer(self, request: Request, params: GenerationParams, hooks: Hooks) -> Completion:
        """One call of either kind; ``hooks`` and errors as in ``complete``."""


def stamped(
    on_attempt: AttemptCallback | None, endpoint: Callable[[], str | None]
) -> AttemptCallback | None:
    """``on_attempt`` hearing each attempt with the endpoint it went to (``endpoint()`` as
    the attempt ends); None stays None."""
    if on_attempt is None:
        return None
    report = on_attempt
    return lambda attempt: report(replace(attempt, endpoint=endpoint()))


class RetryingBackend(RequestBackend):
    """A backend whose calls go through the limiter and the retry loop: subclasses supply
    one attempt (``_attempt``) and say what their exceptions mean (``_classify``).
    ``endpoint``: the base URL of a backend behind one, recorded with each call and attempt
    (None for in-process models)."""

    endpoint: str | None = None

    def __init__(
        self, *, spec: str, model: str, limiter: ConcurrencyLimiter, retrier: Retrier
    ) -> None:
        self.spec: str = spec
        self.model: str = model
        self.limiter = limiter
        self.retrier = retrier

    @abstractmethod
    async def _attempt(
        self, request: Request, params: GenerationParams, on_text: TextCallback | None
    ) -> RawCompletion:
        """One try, no retries; raises what ``_classify`` understands. A backend that only
        speaks chat sends a raw prompt as ``prompt_as_chat`` says."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> Failure | None:
        """The failure an exception from ``_attempt`` stands for; None for a bug."""

    async def _before_call(self) -> None:
        """Hook for work needed once before the first request (e.g. finding the model)."""
        return None

    async def _answer(self, request: Request, params: GenerationParams, hooks: Hooks) -> Completion:
        """One call: each try through the limiter, retried as the policy says."""
        await self._before_call()
        raw, last = await call_with_retries(
            lambda: self._attempt(request, params, hooks.on_text),
            self._classify,
            self.retrier,
            on_attempt=stamped(hooks.on_attempt, lambda: self.endpoint),
            slot=self.limiter.acquire,
            release=self.limiter.release,
        )
        return finished(raw, last, self.model, self.endpoint)


def finished(raw: RawCompletion, last: Attempt, model: str, endpoint: str | None) -> Completion:
    """The attempt's own fields, and the retry layer's accounting of the whole call."""
    return Completion(
        **asdict(raw),
        latency_s=last.latency_s,
        attempts=last.number,
        model=model,
        endpoint=endpoint,
    )
