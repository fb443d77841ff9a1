"""Chat completions through the official ``openai`` async client: OpenAI, Azure OpenAI and
any OpenAI-compatible server (vLLM's ``vllm serve``, llama.cpp's server, Ollama).

Raw-text calls (``complete_text``) go to a server's ``/v1/completions`` with no chat
template; OpenAI and Azure, which serve chat models only, get the prompt as one user message
(``base.prompt_as_chat``), as ConvCodeWorld sent it to them.

The SDK's own retries are off (``max_retries=0``): the retry layer here counts and reports
every attempt once (docs/harness-notes.md#model-access)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import httpx2
import openai
from openai.types.chat.chat_completion_chunk import Choice as ChatChunkChoice
from openai.types.completion_choice import CompletionChoice as TextChoice

from convtui.core.models.base import (
    RawCompletion,
    Request,
    RetryingBackend,
    TextCallback,
    prompt_as_chat,
)
from convtui.core.models.chat_template import ChatTemplate
from convtui.core.models.limiter import limiter_for
from convtui.core.models.retry import Failure, Retrier, classify_status
from convtui.core.models.types import CallKind, GenerationParams, ModelError

Flavour = Literal["server", "openai", "azure"]

# How long check() waits for the server to list its models: a live server answers at once.
CHECK_TIMEOUT_S = 10.0


def _error_message(exc: openai.APIStatusError) -> str:
    """The server's own words, not the SDK's "Error code: 400 - {...}" wrapping."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
            code = inner.get("code")
            return f"{message} ({code})" if isinstance(code, str) else message
        if isinstance(inner, str):
            return inner
    if isinstance(body, str) and body:
        return body
    return exc.message


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def classify_openai_error(exc: BaseException) -> Failure | None:
    """What an exception out of the ``openai`` client means for retrying."""
    if isinstance(exc, openai.APIStatusError):
        return classify_status(
            exc.status_code, _short(_error_message(exc)), dict(exc.response.headers)
        )
    if isinstance(exc, openai.APITimeoutError):
        return Failure("timeout", "the request timed out")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f": {_short(str(cause))}" if cause is not None and str(cause) else ""
        return Failure("transient", f"connection error{detail}")
    if isinstance(exc, openai.APIResponseValidationError):
        return Failure("transient", f"malformed answer: {_short(str(exc))}")
    # A stream cut off mid-answer surfaces as the HTTP library's own error, unwrapped.
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("timeout", f"the request timed out: {_short(str(exc))}")
    if isinstance(exc, httpx2.TransportError | httpx2.StreamError | ConnectionError):
        return Failure("transient", f"connection lost: {_short(str(exc)) or type(exc).__name__}")
    if isinstance(exc, openai.APIError):
        # e.g. an error event inside a stream: the server broke off, try again.
        return Failure("transient", f"server error: {_short(str(exc))}")
    return None


class OpenAICompatBackend(RetryingBackend):
    """One endpoint speaking the OpenAI chat-completions API."""

    model: str  # "" for a server opened without --model-name, until check() asks it

    def __init__(
        self,
        *,
        spec: str,
        model: str,
        flavour: Flavour,
        client: openai.AsyncOpenAI,
        credential: str,
        default_limit: int,
        concurrency: int | None,
        retrier: Retrier,
        chat_template: Path | None = None,
    ) -> None:
        """``credential`` names the API key (see ``credential_id``); the limiter is the
        process-wide one for this endpoint and key. ``chat_template``: where the served
        model's chat template is (a server does not say), for raw prompts built with it."""
        self.flavour = flavour
        self.chat_template_path = chat_template
        self._chat_template: ChatTemplate | None = None
        self.client = client
        self.base_url = str(client.base_url).rstrip("/")
        self.endpoint = self.base_url
        self._credential = credential
        limiter = limiter_for(self.connection_key(), default=default_limit, override=concurrency)
        super().__init__(spec=spec, model=model, limiter=limiter, retrier=retrier)
        # Servers that reject stream_options get asked once, then never again.
        self._stream_usage = True

    def connection_key(self) -> str:
        return f"{self.flavour}|{self.base_url}|{self._credential}"

    async def chat_template(self) -> ChatTemplate | None:
        """The template from ``chat_template`` (None without one: the server applies its own
        to chat calls, and nothing here can read it)."""
        if self.chat_template_path is None:
            return None
        if self._chat_template is None:  # read once: a .gguf file loads its vocabulary
            self._chat_template = await asyncio.to_thread(
                ChatTemplate.from_file, self.chat_template_path
            )
        return self._chat_template

    async def check(self) -> None:
        if self.flavour == "azure":
            # Azure's data plane cannot list deployments; a bad deployment name shows up as
            # a 404 on the first call, which is fatal and not retried.
            return
        served = await self.served_models()
        if not self.model:
            self.model = served[0]
        elif self.model not in served:
            raise ModelError(
                f"the server at {self.base_url} does not serve {self.model!r}; it serves: "
                f"{', '.join(served[:10])} (pass one with --model-name)"
            )

    async def served_models(self, timeout_s: float = CHECK_TIMEOUT_S) -> list[str]:
        """What ``/models`` lists, in its order (OpenAI: the one model asked for, if it has
        it); ModelError with the reason and the fix when it cannot be asked or lists none."""
        quick = self.client.with_options(timeout=timeout_s)
        try:
            if self.flavour == "openai":
                await quick.models.retrieve(self.model)
                return [self.model]
            served = [m.id async for m in quick.models.list()]
        except openai.AuthenticationError as exc:
            raise ModelError(
                f"{self.base_url} rejected the API key (HTTP 401: {_short(_error_message(exc))});"
                f" check {'OPENAI_API_KEY' if self.flavour == 'openai' else 'CONVTUI_API_KEY'}"
            ) from None
        except openai.NotFoundError:
            if self.flavour == "openai":
                raise ModelError(
                    f"OpenAI has no model {self.model!r} for this API key; check the name"
                    " after 'openai:'"
                ) from None
            raise ModelError(
                f"{self.base_url}/models was not found (HTTP 404); the spec must be the API"
                " base URL, e.g. http://127.0.0.1:8000/v1"
            ) from None
        except (openai.APIConnectionError, httpx2.TransportError) as exc:
            failure = classify_openai_error(exc)
            raise ModelError(
                f"cannot reach the model server at {self.base_url}"
                f" ({failure.message if failure else exc}); start it or fix the URL"
            ) from None
        except openai.APIStatusError as exc:
            raise ModelError(
                f"{self.base_url} answered HTTP {exc.status_code} when asked for its models:"
                f" {_short(_error_message(exc))}"
            ) from None
        if not served:
            raise ModelError(f"the model server at {self.base_url} serves no models")
        return served

    async def _before_call(self) -> None:
        # An http:// spec without --model-name learns its model from the server.
        if not self.model:
            await self.check()

    def _request(
        self, body: dict[str, Any], params: GenerationParams, stream: bool
    ) -> dict[str, Any]:
        """``body`` (the messages or the prompt) plus the model and sampling settings."""
        request: dict[str, Any] = {"model": self.model, **body, "temperature": params.temperature}
        # OpenAI's newer models accept only max_completion_tokens; many OpenAI-compatible
        # servers (llama.cpp's among them) know only max_tokens.
        if self.flavour == "server":
            request["max_tokens"] = params.max_tokens
        else:
            request["max_completion_tokens"] = params.max_tokens
        if params.stop:
            request["stop"] = list(params.stop)
        if params.seed is not None:
            request["seed"] = params.seed
        if stream:
            request["stream"] = True
            if self._stream_usage:
                request["stream_options"] = {"include_usage": True}
        return request

    async def _attempt(
        self, request: Request, params: GenerationParams, on_text: TextCallback | None
    ) -> RawCompletion:
        """A server gets a raw prompt on ``/v1/completions`` (vLLM's and llama.cpp's servers
        both serve it); OpenAI and Azure, chat-only, get it as one user message
        (``prompt_as_chat``)."""
        if isinstance(request, str):
            if self.flavour == "server":
                return await self._send("text", {"prompt": request}, params, on_text)
            request = prompt_as_chat(request)
        body = {"messages": [{"role": m.role, "content": m.content} for m in request]}
        return await self._send("chat", body, params, on_text)

    async def _send(
        self,
        kind: CallKind,
        body: dict[str, Any],
        params: GenerationParams,
        on_text: TextCallback | None,
    ) -> RawCompletion:
        if on_text is None:
            return await self._plain(kind, self._request(body, params, stream=False))
        try:
            return await self._streamed(kind, self._request(body, params, stream=True), on_text)
        except openai.BadRequestError as exc:
            if not (self._stream_usage and "stream_options" in _error_message(exc)):
                raise
            self._stream_usage = False
            return await self._streamed(kind, self._request(body, params, stream=True), on_text)

    async def _plain(self, kind: CallKind, request: dict[str, Any]) -> RawCompletion:
        text: str | None
        if kind == "chat":
            chat = await self.client.chat.completions.create(**request)
            if not chat.choices:
                raise _no_choices()
            text, finish, usage, model = (
                chat.choices[0].message.content,
                chat.choices[0].finish_reason,
                chat.usage,
                chat.model,
            )
        else:
            completion = await self.client.completions.create(**request)
            if not completion.choices:
                raise _no_choices()
            text, finish, usage, model = (
                completion.choices[0].text,
                completion.choices[0].finish_reason,
                completion.usage,
                completion.model,
            )
        return RawCompletion(
            text=text or "",
            finish_reason=finish or "stop",
            input_tokens=usage.prompt_tokens if usage else None,
            output_tokens=usage.completion_tokens if usage else None,
            resolved_model=model or None,
        )

    async def _streamed(
        self, kind: CallKind, request: dict[str, Any], on_text: TextCallback
    ) -> RawCompletion:
        parts: list[str] = []
        finish_reason = "stop"
        input_tokens: int | None = None
        output_tokens: int | None = None
        resolved: str | None = None
        stream = await (
            self.client.chat.completions.create(**request)
            if kind == "chat"
            else self.client.completions.create(**request)
        )
        try:
            async for chunk in stream:
                resolved = chunk.model or resolved
                if chunk.usage is not None:
                    input_tokens = chunk.usage.prompt_tokens
                    output_tokens = chunk.usage.completion_tokens
                for choice in chunk.choices[:1]:
                    piece = _piece(choice)
                    if piece:
                        parts.append(piece)
                        on_text("".join(parts))
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        finally:
            await stream.close()
        return RawCompletion(
            text="".join(parts),
            finish_reason=finish_reason,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            resolved_model=resolved,
        )

    def _classify(self, exc: BaseException) -> Failure | None:
        return classify_openai_error(exc)

    async def aclose(self) -> None:
        await self.client.close()


def _no_choices() -> openai.APIError:
    # openai.APIError wants a request; an answer without choices has none to blame.
    return openai.APIError(
        "the answer holds no choices", httpx2.Request("POST", "http://invalid/"), body=None
    )


def _piece(choice: ChatChunkChoice | TextChoice) -> str | None:
    """The new text in one streamed choice: a chat delta's content, or a completion's text."""
    if isinstance(choice, TextChoice):
        return choice.text
    return choice.delta.content if choice.delta is not None else None


def make_client(
    flavour: Flavour,
    *,
    base_url: str,
    api_key: str,
    attempt_timeout_s: float | None,
    azure_api_version: str | None = None,
) -> openai.AsyncOpenAI:
    """The SDK client, retries off, its timeout a little past ours so ours fires first and
    every attempt ends in one place."""
    read = None if attempt_timeout_s is None else attempt_timeout_s + 5
    timeout = openai.Timeout(read, connect=10.0)
    if flavour == "azure":
        return openai.AsyncAzureOpenAI(
            azure_endpoint=base_url,
            api_key=api_key,
            api_version=azure_api_version,
            max_retries=0,
            timeout=timeout,
        )
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)
