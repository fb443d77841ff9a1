"""Turn 0 under ``--protocol convcodeworld``: BigCodeBench's own generation, as ConvCodeWorld
made its initial code (CCW:``bigcodebench/run_initial_code_generation.sh`` runs
``bigcodebench.generate --subset instruct --temperature 0`` from its BigCodeBench fork,
sfc-gh-hhan/bigcodebench@777303b, itself bigcode-project/bigcodebench v0.1.8 + 2 commits).

Two kinds of request, both built from the task's ``instruct_prompt``:

- open models (BigCodeBench's vLLM backend): one raw prompt, the model's chat template
  applied to [user, assistant] with the splitter in the assistant message, cut at the
  splitter (``make_chat_prompt``); so the model continues the assistant turn after BigCodeBench's
  response prefix, which ends with an opened ```` ```python ```` fence. The answer is sent to
  ``sanitize`` as it is (the prefix is not part of it).
- OpenAI chat models (its ``openai`` backend): a system and a user message.

The fixed strings and decoding settings are data (``core/prompts/bigcodebench/*.toml``, each
naming its source). The answer then goes through :mod:`convtui.core.ccw.sanitize`."""

from __future__ import annotations

import functools
import hashlib
import json
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Literal

from convtui.core.errors import ConvtuiError
from convtui.core.models.types import ChatMessage, GenerationParams

__all__ = [
    "ApiRequest",
    "ChatTemplate",
    "OpenModelRequest",
    "Turn0Decoding",
    "Turn0Error",
    "api_request",
    "open_model_request",
    "protocol_hash",
]

_DATA = ("api_prompt.toml", "chat_prompt.toml", "generation.toml")

# The token attributes transformers passes to a chat template (its SPECIAL_TOKENS_ATTRIBUTES).
_SPECIAL_TOKENS = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
# GGUF metadata key of each token id (llama.cpp's names, "seperator" sic).
_GGUF_TOKEN_IDS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "sep_token": "tokenizer.ggml.seperator_token_id",
    "pad_token": "tokenizer.ggml.padding_token_id",
}


class Turn0Error(ConvtuiError):
    """A model that BigCodeBench's turn 0 cannot be run for (no chat template), or a chat
    template that fails to render."""


@functools.cache
def _data(name: str) -> dict[str, Any]:
    path = resources.files("convtui.core").joinpath("prompts", "bigcodebench", name)
    return tomllib.loads(path.read_text("utf-8"))


@functools.cache
def protocol_hash() -> str:
    """A hash over BigCodeBench's strings and settings as kept here, to record with each
    turn-0 call so a change of them is visible."""
    digest = hashlib.sha256()
    folder = resources.files("convtui.core").joinpath("prompts", "bigcodebench")
    for name in _DATA:
        digest.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class Turn0Decoding:
    """BigCodeBench's decoding for turn 0 (``generation.toml``): greedy, one sample.

    ``max_model_len``: the context the reference engine had (vLLM: 2,048 tokens shared by
    prompt and answer), None for API models. ``tab_replacement``: what each tab of the
    answer becomes before sanitizing (vLLM backend), None to keep the text."""

    temperature: float
    top_p: float
    max_new_tokens: int
    stop: tuple[str, ...]
    max_model_len: int | None
    tab_replacement: str | None

    def params(self) -> GenerationParams:
        """convtui's call settings for this decoding (top_p 1.0 is every backend's default)."""
        return GenerationParams(
            temperature=self.temperature, max_tokens=self.max_new_tokens, stop=self.stop
        )

    def finish(self, text: str) -> str:
        """The answer as BigCodeBench stored it, from the text the model returned."""
        if self.tab_replacement is None:
            return text
        return text.replace("\t", self.tab_replacement)


def _decoding(kind: Literal["open_model", "api"]) -> Turn0Decoding:
    data = _data("generation.toml")
    common, own = data["common"], data[kind]
    return Turn0Decoding(
        temperature=float(common["temperature"]),
        top_p=float(common["top_p"]),
        max_new_tokens=int(common["max_new_tokens"]),
        stop=tuple(own["stop"]),
        max_model_len=own.get("max_model_len"),
        tab_replacement=own.get("tab_replacement"),
    )


@dataclass(frozen=True)
class ChatTemplate:
    """A model's chat template (Jinja source) and the special tokens it may refer to."""

    source: str
    special_tokens: Mapping[str, str]

    @classmethod
    def from_tokenizer_config(cls, config: Mapping[str, Any]) -> ChatTemplate:
        """From a Hugging Face ``tokenizer_config.json`` (its ``chat_template``, a string or
        a list of named templates of which "default" is used; tokens as strings or as
        ``{"content": ...}`` objects)."""
        template = config.get("chat_template")
        if isinstance(template, list):
            named = {item.get("name"): item.get("template") for item in template}
            template = named.get("default")
        if not isinstance(template, str):
            raise Turn0Error(
                "the tokenizer has no chat template; BigCodeBench-Instruct needs one "
                "(its generate refuses direct completion for instruct tasks)"
            )
        tokens: dict[str, str] = {}
        for name in _SPECIAL_TOKENS:
            value = config.get(name)
            if isinstance(value, Mapping):
                value = value.get("content")
            if isinstance(value, str) and value:
                tokens[name] = value
        return cls(template, tokens)

    @classmethod
    def from_gguf(
        cls, metadata: Mapping[str, str], token_text: Callable[[int], str]
    ) -> ChatTemplate:
        """From GGUF metadata (``tokenizer.chat_template`` and the token ids), with
        ``token_text`` giving a token's text (llama.cpp's vocabulary)."""
        template = metadata.get("tokenizer.chat_template")
        if not template:
            raise Turn0Error("the GGUF file has no tokenizer.chat_template")
        tokens = {
            name: token_text(int(metadata[key]))
            for name, key in _GGUF_TOKEN_IDS.items()
            if metadata.get(key) not in (None, "")
        }
        return cls(template, tokens)

    def render(self, messages: Sequence[ChatMessage], *, add_generation_prompt: bool) -> str:
        """The template applied as transformers' ``apply_chat_template(tokenize=False)``
        does: a sandboxed Jinja environment with trim_blocks and lstrip_blocks, its
        ``tojson`` filter and ``raise_exception``, the special tokens as variables."""
        conversation = [{"role": m.role, "content": m.content} for m in messages]
        try:
            compiled = _environment().from_string(self.source)
            return compiled.render(
                messages=conversation,
                tools=None,
                documents=None,
                add_generation_prompt=add_generation_prompt,
                **self.special_tokens,
            )
        except Exception as exc:  # jinja2's TemplateError and whatever a template raises
            raise Turn0Error(f"the chat template failed to render: {exc}") from exc


@functools.cache
def _environment() -> Any:
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as exc:
        raise Turn0Error("rendering a chat template needs jinja2: pip install jinja2") from exc

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    def tojson(
        value: object,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    class Generation(jinja2.ext.Extension):
        """transformers' ``{% generation %}`` block, which only marks text: rendered as is."""

        tags = {"generation"}  # noqa: RUF012 (jinja2's own class attribute)

        def parse(self, parser: Any) -> Any:
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            call = self.call_method("_body")
            return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


@dataclass(frozen=True)
class OpenModelRequest:
    """Turn 0 for an open model: ``user`` is the user message, ``response_prefix`` the start
    of the assistant message the model continues from; ``assistant`` is the whole assistant
    message BigCodeBench renders, with ``splitter`` where the code goes."""

    user: str
    response_prefix: str
    decoding: Turn0Decoding
    assistant: str
    splitter: str

    @property
    def messages(self) -> tuple[ChatMessage, ChatMessage]:
        """The conversation BigCodeBench renders: the user message, then the assistant
        message holding the splitter where the code would go."""
        return (ChatMessage("user", self.user), ChatMessage("assistant", self.assistant))

    def prompt(self, template: ChatTemplate) -> str:
        """The raw prompt sent to the model (BigCodeBench's ``make_chat_prompt``): the
        template applied to :attr:`messages`, cut at the splitter. It ends with
        :attr:`response_prefix`, placed wherever the template puts assistant content
        (after the template's own whitespace: CodeLlama's adds a space, which rendering the
        user turn with ``add_generation_prompt`` and appending the prefix would miss)."""
        rendered = template.render(self.messages, add_generation_prompt=False)
        head, found, _ = rendered.partition(self.splitter)
        if not found:
            raise Turn0Error("the chat template dropped the assistant message")
        return head


@dataclass(frozen=True)
class ApiRequest:
    """Turn 0 for an OpenAI chat model: the messages BigCodeBench's OpenAI backend sends."""

    messages: tuple[ChatMessage, ChatMessage]
    decoding: Turn0Decoding
    response_format: str


def open_model_request(instruct_prompt: str) -> OpenModelRequest:
    """The turn-0 request for an open model, from the task's ``instruct_prompt``."""
    text = _data("chat_prompt.toml")["text"]
    splitter = text["splitter"]
    assistant = Template(text["response"]).substitute(splitter=splitter)
    return OpenModelRequest(
        user=Template(text["user"]).substitute(prompt=instruct_prompt.strip()),
        response_prefix=assistant.partition(splitter)[0],
        decoding=_decoding("open_model"),
        assistant=assistant,
        splitter=splitter,
    )


def api_request(instruct_prompt: str) -> ApiRequest:
    """The turn-0 request for an OpenAI chat model, from the task's ``instruct_prompt``."""
    text = _data("api_prompt.toml")["text"]
    user = Template(text["user"]).substitute(prompt=instruct_prompt.strip())
    return ApiRequest(
        messages=(ChatMessage("system", text["system"]), ChatMessage("user", user)),
        decoding=_decoding("api"),
        response_format=_data("generation.toml")["api"]["response_format"],
    )
