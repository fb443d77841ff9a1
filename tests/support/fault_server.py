"""A scripted loopback HTTP server for fault injection ONLY: it answers chat completions
with whatever a test scripts (429s with Retry-After, 5xx, hangs, dropped connections), which
a real server cannot be made to do on demand. Real answers come from llama.cpp."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from convtui.core.models import (
    Attempt,
    ChatMessage,
    Completion,
    GenerationParams,
    ModelBackend,
    Retrier,
    RetryPolicy,
    open_backend,
)

Writer = asyncio.StreamWriter

# The smallest chat request: what a test sends where the server's behaviour is the point.
HELLO = [ChatMessage("user", "hi")]
PARAMS = GenerationParams(max_tokens=5)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict


Action = Callable[["FakeServer", Request, Writer], Awaitable[None]]


def _completion_body(text: str, usage: bool = True) -> dict:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model-2024",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }
    if not usage:
        del body["usage"]
    return body


async def _send(writer: Writer, status: int, body: bytes, headers: dict[str, str]) -> None:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()


def ok(text: str = "hello", delay_s: float = 0.0, usage: bool = True) -> Action:
    """A normal answer (streamed as SSE when the request asks for a stream); without
    ``usage``, no token counts, as llama.cpp's server streams."""

    async def act(server: FakeServer, request: Request, writer: Writer) -> None:
        if delay_s:
            await asyncio.sleep(delay_s)
        if not request.body.get("stream"):
            body = json.dumps(_completion_body(text, usage)).encode()
            await _send(writer, 200, body, {"Content-Type": "application/json"})
            return
        chunks = []
        for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
            chunks.append(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "fake-model-2024",
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
            )
        chunks.append(
            {**chunks[0], "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        )
        if usage:
            chunks.append(
                {
                    **chunks[0],
                    "choices": [],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                }
            )
        stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        await _send(writer, 200, stream.encode(), {"Content-Type": "text/event-stream"})

    return act


def status(
    code: int,
    message: str = "error",
    headers: dict[str, str] | None = None,
    error_code: str | None = None,
) -> Action:
    """An error answer in OpenAI's shape."""

    async def act(server: FakeServer, request: Request, writer: Writer) -> None:
        body = {"error": {"message": message, "type": "x", "code": error_code}}
        await _send(
            writer,
            code,
            json.dumps(body).encode(),
            {"Content-Type": "application/json", **(headers or {})},
        )

    return act


def hang() -> Action:
    """Accept the request and never answer (until the client gives up)."""

    async def act(server: FakeServer, request: Request, writer: Writer) -> None:
        await asyncio.sleep(3600)

    return act


def drop_mid_answer() -> Action:
    """Promise a body, send half of it (a streamed chunk when streaming), then hang up."""

    async def act(server: FakeServer, request: Request, writer: Writer) -> None:
        if request.body.get("stream"):
            chunk = {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "fake-model-2024",
                "choices": [{"index": 0, "delta": {"content": "par"}, "finish_reason": None}],
            }
            head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            head += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            data = f"data: {json.dumps(chunk)}\n\n".encode()
            writer.write(head.encode() + f"{len(data):x}\r\n".encode() + data + b"\r\n")
        else:
            body = json.dumps(_completion_body("never complete")).encode()
            head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            writer.write(head.encode() + body[: len(body) // 2])
        await writer.drain()
        writer.transport.abort()

    return act


@dataclass
class FakeServer:
    """A loopback HTTP server answering chat completions from a script of actions (fault
    injection only). ``/v1/models`` lists ``served`` (one model). When the script runs out,
    ``default`` answers."""

    host: str = "127.0.0.1"
    port: int = 0
    served: tuple[str, ...] = ("fake-model",)
    script: deque[Action] = field(default_factory=deque)
    default: Action = field(default_factory=ok)
    requests: list[Request] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[Request]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def then(self, *actions: Action) -> FakeServer:
        self.script.extend(actions)
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            line = (await reader.readline()).decode().strip()
            if not line:
                return
            method, path, _ = line.split(" ", 2)
            headers: dict[str, str] = {}
            while (header := (await reader.readline()).decode().strip()) != "":
                name, _, value = header.partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            request = Request(method, path, headers, json.loads(raw) if raw else {})
            with self._lock:
                self.requests.append(request)
            if path.endswith("/models"):
                listed = [{"id": name, "object": "model"} for name in self.served]
                models = {"object": "list", "data": listed}
                await _send(writer, 200, json.dumps(models).encode(), {})
                return
            with self._lock:
                action = self.script.popleft() if self.script else self.default
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                await action(self, request, writer)
            finally:
                with self._lock:
                    self.in_flight -= 1
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def start(self) -> None:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            server = loop.run_until_complete(asyncio.start_server(self._handle, self.host, 0))
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)

    def stop(self) -> None:
        """Stop serving (connections are refused from then on); stopping twice is stopping."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)


class RecordedSleeps:
    """Stands in for asyncio.sleep: remembers each wait and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


def text_ok(text: str = "x + 1", delay_s: float = 0.0, finish_reason: str = "stop"):
    """A /v1/completions answer (``text_completion`` objects), plain or streamed as SSE."""

    async def act(server: FakeServer, request: Request, writer: Writer) -> None:
        if delay_s:
            await asyncio.sleep(delay_s)
        base = {"id": "cmpl-fake", "object": "text_completion", "created": 0}
        base["model"] = "fake-model-2024"
        usage = {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}
        if not request.body.get("stream"):
            choice = {"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}
            body = json.dumps({**base, "choices": [choice], "usage": usage}).encode()
            await _send(writer, 200, body, {"Content-Type": "application/json"})
            return
        pieces = [text[: len(text) // 2], text[len(text) // 2 :]]
        chunks = [
            {**base, "choices": [{"index": 0, "text": p, "finish_reason": None}]} for p in pieces
        ]
        chunks.append({**base, "choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
        chunks.append({**base, "choices": [], "usage": usage})
        stream = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        await _send(writer, 200, stream.encode(), {"Content-Type": "text/event-stream"})

    return act


def server_backend(
    server: FakeServer,
    sleeps: RecordedSleeps | None = None,
    *,
    max_retries: int = 8,
    attempt_timeout_s: float = 30.0,
    concurrency: int | None = None,
) -> ModelBackend:
    """The HTTP backend over ``server``, its backoff waits recorded in ``sleeps`` rather than
    slept. rng 0.5: full jitter picks half the ceiling, so expected waits are exact."""
    retrier = Retrier(
        RetryPolicy(max_retries=max_retries, attempt_timeout_s=attempt_timeout_s),
        sleep=sleeps if sleeps is not None else RecordedSleeps(),
        rng=lambda: 0.5,
    )
    return open_backend(
        server.url, model_name="fake-model", retrier=retrier, concurrency=concurrency
    )


async def logged_call(
    backend: ModelBackend,
    request: str | Sequence[ChatMessage],
    params: GenerationParams,
    **kwargs: object,
) -> tuple[Completion, list[Attempt]]:
    """One call (``complete_text`` for a prompt string, else ``complete``) and every attempt
    it made; the backend is closed after it."""
    attempts: list[Attempt] = []
    try:
        if isinstance(request, str):
            completion = await backend.complete_text(
                request, params, on_attempt=attempts.append, **kwargs
            )
        else:
            completion = await backend.complete(
                request, params, on_attempt=attempts.append, **kwargs
            )
        return completion, attempts
    finally:
        await backend.aclose()
