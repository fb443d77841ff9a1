"""A model's chat template, rendered as Hugging Face transformers renders it
(``apply_chat_template(tokenize=False)``), for the prompts that must match byte for byte what a
reference run sent through the same template (ConvCodeWorld's turn 0, BigCodeBench's
``make_chat_prompt``). Read from a GGUF file's metadata or a ``tokenizer_config.json``."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convtui.core.errors import ConvtuiError
from convtui.core.extras import install_hint
from convtui.core.models.types import ChatMessage

__all__ = ["SPECIAL_TOKENS", "ChatTemplate", "ChatTemplateError"]

# The token attributes transformers passes to a chat template (its SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_TOKENS = (
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


class ChatTemplateError(ConvtuiError):
    """A model without a chat template, or a template that fails to render."""


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
            raise ChatTemplateError(
                "the tokenizer has no chat template; BigCodeBench-Instruct needs one "
                "(its generate refuses direct completion for instruct tasks)"
            )
        tokens: dict[str, str] = {}
        for name in SPECIAL_TOKENS:
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
            raise ChatTemplateError("the GGUF file has no tokenizer.chat_template")
        tokens = {
            name: token_text(int(metadata[key]))
            for name, key in _GGUF_TOKEN_IDS.items()
            if metadata.get(key) not in (None, "")
        }
        return cls(template, tokens)

    @classmethod
    def from_file(cls, path: Path) -> ChatTemplate:
        """From a ``tokenizer_config.json``, a model folder holding one, a GGUF file, or a
        bare Jinja template (``.jinja``, no special tokens)."""
        if path.is_dir():
            path = path / "tokenizer_config.json"
        try:
            if path.suffix == ".gguf":
                return _from_gguf_file(path)
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ChatTemplateError(f"cannot read the chat template {path}: {exc}") from None
        if path.suffix == ".json":
            try:
                return cls.from_tokenizer_config(json.loads(text))
            except json.JSONDecodeError as exc:
                raise ChatTemplateError(f"{path} is not JSON: {exc.msg}") from None
        return cls(text, {})

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
            raise ChatTemplateError(f"the chat template failed to render: {exc}") from exc


def _from_gguf_file(path: Path) -> ChatTemplate:
    """The template in a GGUF file, read with llama.cpp's vocabulary only (no weights)."""
    from convtui.core.models.llama_runtime import import_llama_cpp

    try:
        llama_cpp = import_llama_cpp()
    except ImportError:
        raise ChatTemplateError(
            f"reading the chat template of {path} needs llama-cpp-python "
            f"({install_hint('local')}), or pass its tokenizer_config.json"
        ) from None
    if not path.is_file():
        raise ChatTemplateError(f"no GGUF file at {path}")
    try:
        llama = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise ChatTemplateError(f"llama.cpp could not read {path}: {exc}") from None
    return ChatTemplate.from_gguf(llama.metadata, functools.partial(token_text, llama))


def token_text(llama: Any, token: int) -> str:
    """A token's text in llama.cpp's vocabulary, special tokens included."""
    return llama.detokenize([token], special=True).decode("utf-8", errors="replace")


@functools.cache
def _environment() -> Any:
    try:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError as exc:
        raise ChatTemplateError(
            "rendering a chat template needs jinja2: pip install jinja2"
        ) from exc

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
