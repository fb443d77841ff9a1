"""Simulated users: a novice and an expert who give verbal feedback on the model's code (each
persona's prompts are its files in core/prompts/, what it sees is core/settings/persona.py's data).

When they speak follows ConvCodeWorld (docs/harness-notes.md#simulated-users): the novice sees
only the task, the code and the compiler/test feedback, and with execution feedback on stays
silent when the tests it can see pass; without execution feedback it speaks only about compile
errors. The expert also sees the ground truth and is always asked; its reply must not reveal
that ground truth, so a reply that copies it is regenerated once and then redacted, and the
turn's notes say so."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from convtui.core.catalog.tasks import Task
from convtui.core.feedback.prompts import render
from convtui.core.feedback.render import PASSED_ALL_TEST_RUNS
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import (
    CallPurpose,
    ChatMessage,
    Completion,
    GenerationParams,
)
from convtui.core.settings.config import ClosingStatus
from convtui.core.settings.persona import Persona, sees_reference

# Lines of the ground truth at least this long (after trimming) count as leaked when they
# appear in the expert's reply; shorter ones ("return df", "else:") are too common to mean it.
LEAK_MIN_CHARS = 16


@dataclass(frozen=True)
class FeedbackRequest:
    """What a user sees when asked for feedback on one turn's code."""

    task: Task
    turn_idx: int
    code: str
    compiled: bool
    compile_feedback: str
    execution_feedback: str | None  # None when execution feedback is off


@dataclass(frozen=True)
class VerbalFeedback:
    """What a user answered. ``draft`` is the simulator text a person was shown before
    writing ``text``; ``closes`` ends the session after this turn (a person accepted the code
    or gave up), with ``text`` then usually empty."""

    text: str
    source: str  # "human", "simulator:<model>"
    call: Completion | None = None
    notes: tuple[str, ...] = field(default=())
    draft: str | None = None
    closes: ClosingStatus | None = None


# The loop's journaled model call: ask(purpose, messages, params, backend) -> Completion.
Ask = Callable[
    [CallPurpose, tuple[ChatMessage, ...], GenerationParams, "ModelBackend"],
    Awaitable[Completion],
]


class User(Protocol):
    """A source of verbal feedback: a simulator now, a person at the terminal in the TUI."""

    @property
    def source(self) -> str:
        """Who gives the feedback, as recorded with each turn (``human``, ``simulator:M``)."""

    async def feedback(self, request: FeedbackRequest, ask: Ask) -> VerbalFeedback | None:
        """The feedback for this turn, or None when the user has nothing to say."""


def postprocess(text: str, *, expert: bool) -> str:
    """ConvCodeWorld's clean-up of simulator output: cut at the first ``---`` and the first
    triple newline; an expert's reply is also cut before any code fence (pot.py)."""
    text = text.split("---", 1)[0].split("\n\n\n", 1)[0]
    if expert:
        text = text.split("\n```", 1)[0]
    return text.strip()


def leaked_lines(reply: str, task: Task) -> list[str]:
    """Ground-truth lines (beyond the public code header) that appear verbatim in ``reply``."""
    public = {line.strip() for line in task.code_header.splitlines()}
    squashed = re.sub(r"\s+", " ", reply)
    found = []
    for line in task.ground_truth.splitlines():
        stripped = line.strip()
        if len(stripped) < LEAK_MIN_CHARS or stripped in public or stripped.startswith("#"):
            continue
        if re.sub(r"\s+", " ", stripped) in squashed:
            found.append(stripped)
    return found


def redact(reply: str, lines: list[str]) -> str:
    for line in sorted(lines, key=len, reverse=True):
        reply = reply.replace(line, "[…]")
    return reply


def _feedback_block(request: FeedbackRequest, *, with_compile: bool) -> str:
    parts = []
    if with_compile:
        parts.append(render("feedback_compile", text=request.compile_feedback))
    if request.execution_feedback is not None:
        parts.append(render("feedback_execution", text=request.execution_feedback))
    return "\n\n".join(parts)


@dataclass
class Simulator:
    """A persona played by a model through ``backend``: one that sees the reference plays as
    the expert, any other as the novice (core/settings/persona.py); its words are its prompt
    files, ``<kind>_system``, ``<kind>_user`` and, seeing the reference, ``<kind>_no_leak``."""

    kind: Persona
    backend: ModelBackend
    params: GenerationParams = field(default_factory=GenerationParams)

    @property
    def source(self) -> str:
        return f"simulator:{self.kind}:{self.backend.spec}"

    @property
    def sees_reference(self) -> bool:
        return sees_reference(self.kind)

    def wants_to_speak(self, request: FeedbackRequest) -> bool:
        if self.sees_reference:
            return True
        if request.execution_feedback is not None:
            return request.execution_feedback != PASSED_ALL_TEST_RUNS
        return not request.compiled

    def messages(self, request: FeedbackRequest) -> tuple[ChatMessage, ...]:
        task = request.task
        if not self.sees_reference:
            user = render(
                f"{self.kind}_user",
                prompt=task.prompt,
                code=request.code,
                feedback=_feedback_block(request, with_compile=True),
            )
        else:
            # The expert hears about execution only when it failed (ConvCodeWorld's SEF).
            shown = request.execution_feedback
            visible = replace(
                request,
                execution_feedback=(shown if shown not in (None, PASSED_ALL_TEST_RUNS) else None),
            )
            user = render(
                f"{self.kind}_user",
                prompt=task.prompt,
                reference=task.ground_truth,
                code=request.code,
                feedback=_feedback_block(visible, with_compile=not request.compiled),
            )
        return (ChatMessage("system", render(f"{self.kind}_system")), ChatMessage("user", user))

    async def feedback(self, request: FeedbackRequest, ask: Ask) -> VerbalFeedback | None:
        if not self.wants_to_speak(request):
            return None
        messages = self.messages(request)
        call = await ask("simulate", messages, self.params, self.backend)
        text = postprocess(call.text, expert=self.sees_reference)
        notes: list[str] = []
        if self.sees_reference and leaked_lines(text, request.task):
            count = len(leaked_lines(text, request.task))
            notes.append(f"{self.kind} feedback copied {count} ground-truth line(s); asked again")
            retry = (
                *messages,
                ChatMessage("assistant", call.text),
                ChatMessage("user", render(f"{self.kind}_no_leak")),
            )
            call = await ask("simulate", retry, self.params, self.backend)
            text = postprocess(call.text, expert=True)
            leaked = leaked_lines(text, request.task)
            if leaked:
                text = redact(text, leaked)
                notes.append(
                    f"{self.kind} feedback still copied {len(leaked)} ground-truth line(s); "
                    "redacted"
                )
        if not text:
            return None
        return VerbalFeedback(text=text, source=self.source, call=call, notes=tuple(notes))
