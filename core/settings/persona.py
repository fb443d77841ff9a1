"""The simulated users' personas, declared once. Every list of them is derived from
:data:`Persona`: the user modes of ``session --user`` and the app (config.py), Ω's verbal part
and the sources of recorded feedback (omega.py), the study options, the store's checks.

Adding a persona is one word in :data:`Persona` plus its prompt files in core/prompts/:

- ``<persona>_system.md``: the simulator's system message;
- ``<persona>_user.md``: its user message, filled with ``$prompt``, ``$code`` and
  ``$feedback`` (and ``$reference``, the ground truth, for a persona that sees it);
- ``<persona>_no_leak.md``, only for a persona that sees the reference: asked once when its
  reply copied ground-truth lines (core/feedback/simulators.py).

What a persona does beyond its words is data here: one in :data:`SEES_REFERENCE` plays as the
expert (shown the ground truth, in the app too; always asked; told of execution only when it
failed; its replies cut before a code fence and checked for leaks), any other as the novice
(shown the code and its feedback, silent when what it can see passed). ConvCodeWorld's
protocol reproduces a reference with its own two expertise levels (core/ccw/turn.py), so a
persona it does not know is refused there with one line."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Persona = Literal["novice", "expert"]
PERSONAS: tuple[Persona, ...] = get_args(Persona)

# The personas shown the task's reference solution (ConvCodeWorld's expert): the rest are not.
SEES_REFERENCE: frozenset[Persona] = frozenset({"expert"})
# The simulated user a study's report offers to record beside its people: one that sees the
# reference, as a study's annotators do under its default Ω (CF,EF:full,VF:expert).
STUDY_BASELINE: Persona = "expert"
# The persona of a session whose Ω has no verbal part (what a person then plays).
DEFAULT_PERSONA: Persona = PERSONAS[0]


def is_persona(value: object) -> TypeGuard[Persona]:
    return value in PERSONAS


def sees_reference(persona: str) -> bool:
    """Whether ``persona`` is shown the reference solution (any other string: not)."""
    return persona in SEES_REFERENCE
