"""Turn 0 as BigCodeBench generated it for ConvCodeWorld (convtui.core.ccw.turn0).

Expected strings come from sfc-gh-hhan/bigcodebench@777303b ``bigcodebench/model.py``
(``make_chat_prompt``, ``EOS``, ``OpenAIChatDecoder``) and ``gen/util/openai_request.py``.
"""

from __future__ import annotations

import re

import pytest

from convtui.core.ccw.turn0 import (
    Turn0Error,
    api_request,
    open_model_request,
    protocol_hash,
)
from convtui.core.models.chat_template import ChatTemplate, ChatTemplateError
from convtui.core.models.types import ChatMessage, GenerationParams

FENCE = "```"
TASK = (
    "Sort a list.\nYou should write self-contained code starting with:\n"
    f"{FENCE}\ndef task_func(xs):\n{FENCE}"
)
USER = (
    "Please provide a self-contained Python script that solves the following problem in a "
    f"markdown code block:\n{FENCE}\n{TASK}\n{FENCE}\n"
)
PREFIX = (
    "Below is a Python script with a self-contained function that solves the problem and "
    f"passes corresponding tests:\n{FENCE}python\n"
)

# codellama/CodeLlama-7b-Instruct-hf tokenizer_config.json chat_template (Llama 2's format;
# ConvCodeBench's reference model): the assistant turn starts with a space and is stripped.
CODELLAMA_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% set system_message = messages[0]['content'] %}{% else %}"
    "{% set loop_messages = messages %}{% set system_message = false %}{% endif %}"
    "{% for message in loop_messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}"
    "{% if loop.index0 == 0 and system_message != false %}"
    "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}"
    "{% endif %}{% endfor %}"
)


def test_the_open_model_request_is_bigcodebenchs_chat_prompt() -> None:
    request = open_model_request("\n  " + TASK + "\n\n")  # the task prompt is stripped
    assert request.user == USER
    assert request.response_prefix == PREFIX
    assert request.messages == (
        ChatMessage("user", USER),
        ChatMessage("assistant", PREFIX + request.splitter + f"\n{FENCE}\n"),
    )
    assert request.splitter == "-[[]]-this-is-really-our-highest-priority-[[]]-"


def test_the_open_model_decoding_is_greedy_with_bigcodebenchs_stop_strings() -> None:
    decoding = open_model_request(TASK).decoding
    assert (decoding.temperature, decoding.top_p, decoding.max_new_tokens) == (0.0, 1.0, 1280)
    assert decoding.stop == (
        "<|endoftext|>",
        "<|endofmask|>",
        "</s>",
        "\nif __name__",
        "\ndef main(",
        "\nprint(",
        f"\n{FENCE}\n",
    )
    assert decoding.max_model_len == 2048
    assert decoding.finish("def f():\n\treturn 1") == "def f():\n    return 1"
    assert decoding.params() == GenerationParams(
        temperature=0.0, max_tokens=1280, stop=decoding.stop, seed=0
    )


def test_the_api_request_is_bigcodebenchs_openai_request() -> None:
    request = api_request(TASK + "\n")
    assert request.messages == (
        ChatMessage("system", "You are a helpful assistant good at coding."),
        ChatMessage(
            "user",
            "Please generate self-contained code to complete the following problem:\n"
            f"{FENCE}python\n{TASK}\n{FENCE}",
        ),
    )
    assert request.response_format == "text"
    decoding = request.decoding
    assert (decoding.temperature, decoding.max_new_tokens, decoding.stop) == (0.0, 1280, ())
    assert decoding.max_model_len is None
    assert decoding.finish("\tkept") == "\tkept"


def smollm2_template() -> ChatTemplate:
    llama_cpp = pytest.importorskip("llama_cpp")
    from convtui.core.models.llama_local import smollm2_path
    from convtui.core.models.types import ModelError

    try:
        path = smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))
    model = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)

    def token_text(token: int) -> str:
        return model.detokenize([token], special=True).decode("utf-8")

    return ChatTemplate.from_gguf(model.metadata, token_text)


def test_the_prompt_through_smollm2s_own_gguf_template() -> None:
    template = smollm2_template()
    assert template.special_tokens["bos_token"] == "<|im_start|>"
    assert template.special_tokens["eos_token"] == "<|im_end|>"
    request = open_model_request(TASK)
    # SmolLM2's template: a default system message when the first message is not one, then
    # "<|im_start|>{role}\n{content}<|im_end|>\n" per message; the assistant message is cut
    # at the splitter, so the prompt ends with the response prefix.
    expected = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n"
        f"<|im_start|>user\n{USER}<|im_end|>\n"
        f"<|im_start|>assistant\n{PREFIX}"
    )
    assert request.prompt(template) == expected
    # For a ChatML template this is the generation prompt followed by the prefix.
    only_user = template.render(request.messages[:1], add_generation_prompt=True)
    assert only_user + request.response_prefix == expected


def test_the_smollm2_prompt_tokenizes_into_its_special_tokens() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from convtui.core.models.llama_local import smollm2_path

    template = smollm2_template()
    model = llama_cpp.Llama(model_path=str(smollm2_path()), vocab_only=True, verbose=False)
    tokens = model.tokenize(
        open_model_request(TASK).prompt(template).encode(), add_bos=False, special=True
    )
    im_start = model.token_bos()
    assert tokens[0] == im_start
    assert tokens.count(im_start) == 3  # system, user, assistant


def test_a_template_that_pads_the_assistant_turn_keeps_its_padding() -> None:
    template = ChatTemplate(CODELLAMA_TEMPLATE, {"bos_token": "<s>", "eos_token": "</s>"})
    request = open_model_request(TASK)
    # The user content is stripped (its final newline goes) and the assistant content follows
    # " " — which appending the prefix to the generation prompt would not give.
    assert request.prompt(template) == f"<s>[INST] {USER.strip()} [/INST] {PREFIX}"
    generation = template.render(request.messages[:1], add_generation_prompt=True)
    assert generation + PREFIX != request.prompt(template)


def test_a_tokenizer_config_gives_the_template_and_its_tokens() -> None:
    config = {
        "chat_template": [
            {"name": "tool_use", "template": "unused"},
            {"name": "default", "template": "{{ bos_token }}{{ messages | tojson }}"},
        ],
        "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False},
        "eos_token": "</s>",
        "pad_token": None,
    }
    template = ChatTemplate.from_tokenizer_config(config)
    assert template.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    rendered = template.render([ChatMessage("user", "é")], add_generation_prompt=True)
    assert rendered == '<s>[{"role": "user", "content": "é"}]'  # HF's tojson: no ASCII escapes
    with pytest.raises(ChatTemplateError, match="no chat template"):
        ChatTemplate.from_tokenizer_config({"eos_token": "</s>"})


def test_template_features_of_transformers_render() -> None:
    # lstrip_blocks/trim_blocks, loop controls and the {% generation %} marker.
    source = (
        "{% for m in messages %}\n"
        "    {% if m.role == 'system' %}{% continue %}{% endif %}\n"
        "{% generation %}[{{ m.role }}]{{ m.content }}{% endgeneration %}\n"
        "{% endfor %}"
    )
    template = ChatTemplate(source, {})
    messages = [ChatMessage("system", "s"), ChatMessage("user", "u")]
    assert template.render(messages, add_generation_prompt=False) == "[user]u"


def test_template_failures_are_chat_template_errors() -> None:
    failing = ChatTemplate("{{ raise_exception('no system role') }}", {})
    with pytest.raises(ChatTemplateError, match="no system role"):
        open_model_request(TASK).prompt(failing)
    user_only = ChatTemplate("{{ messages[0]['content'] }}", {})
    with pytest.raises(Turn0Error, match="dropped the assistant"):
        open_model_request(TASK).prompt(user_only)
    sandboxed = ChatTemplate("{{ ''.__class__.__mro__ }}", {})
    with pytest.raises(ChatTemplateError):
        sandboxed.render([], add_generation_prompt=False)


def test_the_protocol_hash_names_the_data_files_state() -> None:
    assert re.fullmatch(r"[0-9a-f]{12}", protocol_hash())
