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
import tomllib
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Literal

from convtui.core.models.chat_template import ChatTemplate, ChatTemplateError
from convtui.core.models.types import ChatMessage, GenerationParams

__all__ = [
    "ApiRequest",
    "OpenModelRequest",
    "Turn0Call",
    "Turn0Decoding",
    "Turn0Error",
    "api_request",
    "open_model_request",
    "protocol_hash",
    "turn0_call",
]

_DATA = ("api_prompt.toml", "chat_prompt.toml", "generation.toml")


class Turn0Error(ChatTemplateError):
    """A chat template that cannot make BigCodeBench's turn-0 prompt."""


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


@dataclass(frozen=True)
class Turn0Call:
    """The one model call of turn 0: ``kind`` "text" sends ``messages[0].content`` as a raw
    prompt, "chat" sends the messages; ``how`` says which of BigCodeBench's requests it is."""

    kind: Literal["text", "chat"]
    messages: tuple[ChatMessage, ...]
    decoding: Turn0Decoding
    how: str


def turn0_call(instruct_prompt: str, template: ChatTemplate | None) -> Turn0Call:
    """BigCodeBench's request for a model with this chat template: the open-model prompt
    rendered with it, or, for a model whose template is not known here (a hosted chat API),
    its OpenAI backend's chat request."""
    if template is None:
        api = api_request(instruct_prompt)
        return Turn0Call("chat", api.messages, api.decoding, "BigCodeBench's OpenAI chat request")
    request = open_model_request(instruct_prompt)
    return Turn0Call(
        "text",
        (ChatMessage("user", request.prompt(template)),),
        request.decoding,
        "BigCodeBench's open-model prompt, rendered with the model's chat template",
    )
