"""The feedback configuration Ω = ⟨f_c, f_e, f_v⟩ (docs/design.md#vocabulary).

Written on the command line as ``CF,EF:partial,VF:novice``; compilation feedback is always
on. ``all`` stands for the 9 combinations."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Literal, get_args

from convtui.core.errors import ConvtuiError
from convtui.core.settings.persona import PERSONAS, Persona, is_persona

ExecutionFeedback = Literal["none", "partial", "full"]
VerbalFeedback = Literal["none", Persona]
# Which tests EF:partial shows (core/feedback/render.py): ConvCodeWorld's rule or ours.
PartialRule = Literal["ccw", "first-tests"]
# Whose verbal feedback recorded sessions hold: people's, a simulated persona's, or none
# (``bench static --user``; sessions/reading/log_sets.py filters log sets by it).
FeedbackSource = Literal["human", Persona, "none"]
_EXECUTION: tuple[ExecutionFeedback, ...] = get_args(ExecutionFeedback)
_VERBAL: tuple[VerbalFeedback, ...] = get_args(VerbalFeedback)
_FORMAT_HINT = (
    f"write it like CF,EF:partial,VF:{PERSONAS[0]} (EF: partial|full, "
    f"VF: {'|'.join(PERSONAS)}) or all"
)


class BadFeedbackError(ConvtuiError):
    """A --feedback value that does not describe a feedback configuration."""


@dataclass(frozen=True)
class FeedbackConfig:
    execution: ExecutionFeedback = "none"
    verbal: VerbalFeedback = "none"

    @property
    def label(self) -> str:
        """The command-line spelling, e.g. ``CF,EF:full,VF:expert``."""
        parts = ["CF"]
        if self.execution != "none":
            parts.append(f"EF:{self.execution}")
        if self.verbal != "none":
            parts.append(f"VF:{self.verbal}")
        return ",".join(parts)


ALL_CONFIGS: tuple[FeedbackConfig, ...] = tuple(
    FeedbackConfig(e, v) for v, e in product(_VERBAL, _EXECUTION)
)


def parse_feedback(text: str) -> tuple[FeedbackConfig, ...]:
    """Parse a --feedback value into one configuration, or the 9 for ``all``."""
    spec = text.strip()
    if spec.lower() == "all":
        return ALL_CONFIGS
    execution: ExecutionFeedback = "none"
    verbal: VerbalFeedback = "none"
    seen: set[str] = set()
    for raw in spec.split(","):
        part = raw.strip()
        kind, _, value = part.partition(":")
        kind, value = kind.upper(), value.lower()
        if kind in seen:
            raise BadFeedbackError(f"--feedback names {kind} twice in {text!r}: {_FORMAT_HINT}")
        seen.add(kind)
        if kind == "CF" and not value:
            continue
        if kind == "EF" and value in ("partial", "full"):
            execution = value  # type: ignore[assignment]
        elif kind == "VF" and is_persona(value):
            verbal = value
        else:
            raise BadFeedbackError(f"bad --feedback part {part!r} in {text!r}: {_FORMAT_HINT}")
    if "CF" not in seen:
        raise BadFeedbackError(
            f"--feedback {text!r} lacks CF (compilation feedback is always on): {_FORMAT_HINT}"
        )
    return (FeedbackConfig(execution, verbal),)


@dataclass(frozen=True)
class FeedbackChoice:
    """A ``--feedback`` value (or a study file's ``feedback``), parsed once where it was
    written: the configurations it names, one or the nine of ``all``, and how it was spelled,
    for messages. Nothing downstream parses the text again."""

    configs: tuple[FeedbackConfig, ...]
    text: str

    @classmethod
    def parse(cls, text: str) -> FeedbackChoice:
        return cls(parse_feedback(text), text)

    @property
    def labels(self) -> tuple[str, ...]:
        """Each configuration's canonical spelling (``cf, ef:full`` is ``CF,EF:full``)."""
        return tuple(c.label for c in self.configs)

    def one(self, refusal: str) -> FeedbackConfig:
        """The one configuration named; ``all`` is refused with ``refusal``."""
        if len(self.configs) != 1:
            raise ConvtuiError(refusal)
        return self.configs[0]

    def __str__(self) -> str:
        return self.text
