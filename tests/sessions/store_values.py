"""Hand-built values for the store tests (no executor, no model): configs, results, turns."""

from __future__ import annotations

from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.models.types import Attempt, ChatMessage, Completion, GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.protocol import ProtocolName, build_config
from convtui.core.turns.journal import request_hash
from convtui.core.turns.record import Turn

MODEL = "local:smollm2"


def config(
    feedback: FeedbackConfig | None = None, simulator: str | None = None, max_turns: int = 3
) -> SessionConfig:
    return SessionConfig(
        model=MODEL,
        feedback=feedback or FeedbackConfig("full", "none"),
        simulator=simulator,
        max_turns=max_turns,
        params=GenerationParams(temperature=0.0, max_tokens=512, stop=("\n\n---\n\n",), seed=7),
    )


def logged_config(
    protocol: ProtocolName = "convtui",
    feedback: FeedbackConfig | None = None,
    simulator: str | None = "gpt-4o",
    *,
    model: str = "acme/coder-1b",
    turns: int = 3,
) -> SessionConfig:
    """A run's config as the ConvCodeWorld log tests record it: a model no test runs, three
    turns, by default EF:full with novice feedback written by gpt-4o."""
    return build_config(
        protocol,
        model=model,
        feedback=feedback or FeedbackConfig("full", "novice"),
        simulator=simulator,
        turns=turns,
    )


def result(status: str = "fail", *, idx: int = 0) -> ExecResult:
    """A result with a passing test, a failing one with a traceback, and odd text."""
    passing = status == "pass"
    traceback = (
        f'Traceback (most recent call last):\n  File "x"\nAssertionError: 1 != {idx} ✗ [bold]\x00'
    )
    return ExecResult(
        status=status,  # type: ignore[arg-type]
        tests=(
            TestOutcome("test_empty", "pass", 0.125, ""),
            TestOutcome(
                "test_types",
                "pass" if passing else "fail",
                1 / 3,
                "" if passing else traceback,
            ),
        ),
        duration_s=0.1 + idx,
        output="out ☃\n" * 3,
        output_bytes=27,
        isolation="landlock",
        detail="" if passing else "1 test failed",
        missing_module=None,
        tampered=False,
    )


def prompt(idx: int) -> tuple[ChatMessage, ...]:
    return (
        ChatMessage("system", "You write Python."),
        ChatMessage("user", "Write task_func that sums a list."),
        *(ChatMessage("assistant", f"attempt {i}") for i in range(idx)),
    )


def completion(text: str, *, cached: bool = False, latency_s: float = 0.1 + 0.2) -> Completion:
    return Completion(
        text=text,
        finish_reason="stop",
        input_tokens=120,
        output_tokens=len(text),
        latency_s=latency_s,
        attempts=2,
        model="smollm2",
        resolved_model="SmolLM2-135M-Instruct-Q8_0",
        cached=cached,
    )


def attempts() -> list[Attempt]:
    return [
        Attempt(1, "rate_limit", 0.05, "429 Too Many Requests", 1.5),
        Attempt(2, "ok", 0.25, "", None),
    ]


def turn(
    idx: int,
    *,
    passed: bool = False,
    status: str | None = None,
    generate: Completion | None = None,
    simulate: Completion | None = None,
) -> Turn:
    code = f"def task_func(xs):\n    return sum(xs) + {0 if passed else idx + 1}\n"
    reply = f"Here you go:\n```python\n{code}```"
    execution = result(status or ("pass" if passed else "fail"), idx=idx)
    messages = prompt(idx)
    if simulate is None and not passed:
        simulate = completion(f"Check the sum in turn {idx}.")
    return Turn(
        idx=idx,
        reply=reply,
        code=code,
        compiled=True,
        compile_feedback="No compilation errors",
        execution=execution,
        execution_feedback=None if passed else f"test_types\nAssertionError {idx}",
        verbal_feedback=None if passed else f"Check the sum in turn {idx}.",
        feedback_source="none" if passed else "simulator:local:smollm2",
        generate_call=generate or completion(reply),
        simulate_call=simulate,
        prompt=messages,
        prompt_hash=request_hash(MODEL, messages, config().params),
        notes=("expert reply redacted",) if idx == 1 else (),
    )
