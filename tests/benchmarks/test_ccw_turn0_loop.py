"""Turn 0 under --protocol convcodeworld, played by the turn loop: BigCodeBench's own request,
its sanitize --calibrate, and the calibrated program run in the real sandbox.

The expected requests are written here from BigCodeBench's source, not from our data files
(sfc-gh-hhan/bigcodebench@777303b): ``gen/util/openai_request.py`` (the system message) and
``model.py`` (``OpenAIChatDecoder.codegen``'s user message; ``make_chat_prompt``'s user and
assistant messages and its ``_MAGIC_SPLITTER_``; ``EOS`` plus the ``"\\n```\\n"`` that
``GeneralVllmDecoder`` adds; ``max_new_tokens=1280``; greedy). The scripted ``mock:`` model
makes the replies independent of any model; the real SmolLM2 test asserts only the prompt it
is sent, rendered independently by llama-cpp-python's own template formatter."""

from __future__ import annotations

import asyncio
import functools
import json
import sqlite3
from pathlib import Path

import pytest
from support.data import DATA, needs_bigcodebench

from convtui.core.catalog.loaders import load_catalog
from convtui.core.ccw.turn0 import turn0_call
from convtui.core.execution.executor import Executor
from convtui.core.models import open_backend
from convtui.core.models.mock import MockBackend
from convtui.core.models.types import ChatMessage
from convtui.core.play.loop import SessionLoop, TurnCompleted, cached_execute
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import build_config
from convtui.core.turns.record import Turn

ROOT = Path(__file__).resolve().parents[2]
pytestmark = needs_bigcodebench

FENCE = "```"
BCB_STOPS = ("<|endoftext|>", "<|endofmask|>", "</s>", "\nif __name__", "\ndef main(", "\nprint(")


@functools.cache
def _catalog():
    return load_catalog("bigcodebench", DATA)


def _task(number: int):
    return _catalog().get(f"BigCodeBench/{number}")


def _play(task, backend, executor: Executor) -> Turn:
    config = build_config(
        "convcodeworld",
        model=backend.spec,
        feedback=FeedbackConfig("full"),
        simulator=None,
        turns=0,
    )

    async def play() -> list[Turn]:
        loop = SessionLoop(task, config, backend, cached_execute(executor, None))
        return [e.turn async for e in loop.run() if isinstance(e, TurnCompleted)]

    (turn,) = asyncio.run(play())
    return turn


def _script(path: Path, lines: list[dict]) -> MockBackend:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return MockBackend(spec=f"mock:{path}", path=path)


def _body(task) -> str:
    """The ground truth's function body: an answer that is only the body, indented."""
    return task.ground_truth.split(task.code_header, 1)[1]


def test_a_chat_model_gets_bigcodebenchs_openai_request_and_a_body_is_calibrated(
    tmp_path, executor
):
    task = _task(7)
    # A reply that is only the function body: --calibrate puts the task's complete_prompt in
    # front of it, so it becomes the whole function and passes.
    reply = f"Here it is:\n{FENCE}python\n{_body(task)}\n{FENCE}\nDone."
    backend = _script(tmp_path / "s.jsonl", [{"purpose": "generate", "text": reply}])
    turn = _play(task, backend, executor)
    (request,) = backend.requests
    assert request.kind == "chat"
    assert request.request == (
        ChatMessage("system", "You are a helpful assistant good at coding."),
        ChatMessage(
            "user",
            "Please generate self-contained code to complete the following problem:\n"
            f"{FENCE}python\n{task.prompt.strip()}\n{FENCE}",
        ),
    )
    assert request.params.temperature == 0 and request.params.max_tokens == 1280
    assert request.params.stop == ()  # OpenAIChatDecoder sends none
    assert turn.passed
    # The turn's code is the sanitized solution (what turn 1 shows as Previous Code): the
    # calibrated function, without the prose around the fence.
    assert turn.code.lstrip().startswith(("import", "from", "def"))
    assert "Here it is" not in turn.code and "Done." not in turn.code
    assert f"def {task.entry_point}(" in turn.code
    assert turn.reply == reply
    assert any("BigCodeBench's OpenAI chat request" in note for note in turn.notes)


def test_the_calibrated_program_runs_after_the_code_prompt(tmp_path, executor):
    # A solution that calls a name only the task's code prompt imports: it passes only because
    # BigCodeBench runs code_prompt + "\n    pass\n" + solution.
    task = _task(7)
    imports = [line for line in task.code_header.splitlines() if line.startswith("import")]
    assert imports, "BigCodeBench/7's code prompt imports its libraries"
    solution_without_imports = "\n".join(
        line for line in task.ground_truth.splitlines() if not line.startswith(("import", "from"))
    )
    reply = f"{FENCE}python\n{solution_without_imports}\n{FENCE}"
    backend = _script(tmp_path / "s.jsonl", [{"purpose": "generate", "text": reply}])
    turn = _play(task, backend, executor)
    assert not turn.code.startswith("import")
    assert turn.passed


def test_an_open_model_gets_the_chat_prompt_cut_at_the_splitter(tmp_path, executor):
    task = _task(2)
    # A template in the ChatML shape; the mock plays an open model with it.
    template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    answer = f"def task_func(LETTERS):\n\treturn {{}}\n{FENCE}\nMore prose."
    backend = _script(
        tmp_path / "s.jsonl",
        [{"chat_template": template}, {"purpose": "generate", "text": answer}],
    )
    turn = _play(task, backend, executor)
    (request,) = backend.requests
    assert request.kind == "text"
    user = (
        "Please provide a self-contained Python script that solves the following problem in a "
        f"markdown code block:\n{FENCE}\n{task.prompt.strip()}\n{FENCE}\n"
    )
    prefix = (
        "Below is a Python script with a self-contained function that solves the problem and "
        f"passes corresponding tests:\n{FENCE}python\n"
    )
    assert request.request == (
        f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n{prefix}"
    )
    assert request.params.stop == (*BCB_STOPS, f"\n{FENCE}\n")
    assert request.params.temperature == 0 and request.params.max_tokens == 1280
    # The stop cut the prose; the tab became four spaces (VllmDecoder), then sanitize kept
    # the function.
    assert turn.code == "def task_func(LETTERS):\n    return {}"
    assert not turn.passed


def test_the_embedded_model_is_sent_its_gguf_template_as_llama_cpp_renders_it(executor):
    """Only the prompt is asserted: what SmolLM2 writes changes with the llama.cpp build."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    task = _task(2)
    backend = open_backend("local:smollm2")
    turn = _play(task, backend, executor)
    template = asyncio.run(backend.chat_template())
    assert template is not None
    splitter = "-[[]]-this-is-really-our-highest-priority-[[]]-"
    user = (
        "Please provide a self-contained Python script that solves the following problem in a "
        f"markdown code block:\n{FENCE}\n{task.prompt.strip()}\n{FENCE}\n"
    )
    assistant = (
        "Below is a Python script with a self-contained function that solves the problem and "
        f"passes corresponding tests:\n{FENCE}python\n{splitter}\n{FENCE}\n"
    )
    # llama-cpp-python's own renderer of a GGUF template (not ours), then make_chat_prompt's
    # cut at the splitter.
    formatter = Jinja2ChatFormatter(
        template=template.source,
        eos_token=template.special_tokens.get("eos_token", ""),
        bos_token=template.special_tokens.get("bos_token", ""),
        add_generation_prompt=False,
    )
    rendered = formatter(
        messages=[{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    ).prompt
    expected = rendered.split(splitter)[0]
    assert turn.prompt == (ChatMessage("user", expected),)
    assert turn.generate_call is not None and turn.generate_call.output_tokens <= 1280


def test_a_server_given_the_models_chat_template_gets_the_open_model_prompt(tmp_path, smollm2_path):
    """llama.cpp's server on loopback does not say which template its model has:
    ``--chat-template`` names it (here the GGUF file itself), and turn 0 is then sent as
    raw text, the same prompt the in-process model gets. Only requests are asserted."""
    from support.live import benched
    from support.llama_server import running_llama_server

    with running_llama_server(smollm2_path, 4096, tmp_path) as url:
        db = tmp_path / "server.db"
        run = ["--ids", "2", "--turns", "0", "--feedback", "CF,EF:full"]
        flags = ("--protocol", "convcodeworld", "--chat-template", str(smollm2_path))
        benched(db, "--model", url, *flags, run=run)
    with sqlite3.connect(db) as conn:
        found = conn.execute("SELECT kind, messages_json FROM model_calls").fetchall()
        texts = dict(conn.execute("SELECT hash, text FROM blobs").fetchall())
    ((kind, refs),) = found
    prompt = "".join(texts[h] for _, h in json.loads(refs))
    local = asyncio.run(open_backend("local:smollm2").chat_template())
    assert kind == "text"
    assert prompt == turn0_call(_task(2).prompt, local).messages[0].content
