"""Prompt templates: our own words, kept as files in core/prompts/, filled with
``string.Template`` so that code and tracebacks pass through untouched."""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from string import Template

from convtui.core.feedback.render import PASSED_ALL_TEST_RUNS
from convtui.core.turns.record import Turn


@functools.cache
def template(name: str) -> Template:
    text = resources.files("convtui.core").joinpath("prompts", f"{name}.md").read_text("utf-8")
    return Template(text.rstrip("\n"))


def render(name: str, **values: str) -> str:
    """Fill template ``name``; a missing value is a bug, so it raises KeyError."""
    return template(name).substitute(values)


@functools.cache
def prompts_hash() -> str:
    """A hash over every template, recorded with each run so prompt changes are visible."""
    folder = resources.files("convtui.core").joinpath("prompts")
    digest = hashlib.sha256()
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    return digest.hexdigest()[:12]


def feedback_message(turn: Turn) -> str:
    """The feedback about ``turn``'s code as the next prompt states it; empty when there is
    nothing the model could act on (ConvCodeWorld then leaves the code unchanged)."""
    parts = []
    if not turn.compiled:
        parts.append(render("feedback_compile", text=turn.compile_feedback))
    elif turn.execution_feedback is not None and turn.execution_feedback != PASSED_ALL_TEST_RUNS:
        parts.append(render("feedback_execution", text=turn.execution_feedback))
    if turn.verbal_feedback:
        parts.append(render("feedback_user", text=turn.verbal_feedback))
    return "\n\n".join(parts)
