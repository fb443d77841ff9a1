"""The two protocols a session can follow, the settings each one chooses, and the one place
that builds a session's settings (:meth:`PlayRules.settings`) for every command.

``convcodeworld`` reproduces ConvCodeWorld's reference run (sfc-gh-hhan/convcodeworld), so
that scores compare with its published tables; ``convtui`` is our own design. A protocol only
sets defaults: every named option can still be given on the command line, and the config a
session records holds the values in force, so two runs differ in their hash whenever any of
them differs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import get_args

from convtui.core.errors import ConvtuiError
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import (
    USER_MODES,
    ContextMode,
    ExtractMode,
    PartialRule,
    ProtocolName,
    SessionConfig,
    UserMode,
)
from convtui.core.settings.omega import FeedbackConfig
from convtui.core.settings.persona import PERSONAS, is_persona

PROTOCOLS: tuple[ProtocolName, ...] = get_args(ProtocolName)
# ConvCodeWorld's DSPy client for open models stops at the separator of its prompt template.
CCW_STOP = "\n\n---\n\n"


@dataclass(frozen=True)
class ProtocolDefaults:
    """What a protocol chooses where the command line says nothing."""

    extract: ExtractMode
    partial_rule: PartialRule
    context: ContextMode
    max_tokens: int
    simulator_max_tokens: int
    stop: tuple[str, ...]
    ef_source_lines: bool
    summary: str
    # The personas the protocol can play (Ω's VF); None: every one (persona.py).
    personas: tuple[str, ...] | None = None


DEFAULTS: dict[ProtocolName, ProtocolDefaults] = {
    "convcodeworld": ProtocolDefaults(
        extract="ccw",
        partial_rule="ccw",
        context="markov",
        max_tokens=2048,
        simulator_max_tokens=2048,
        stop=(CCW_STOP,),
        ef_source_lines=False,
        summary=(
            "ConvCodeWorld's reference, for scores comparable with its tables: BigCodeBench's "
            "own turn 0 (its prompt, sanitize --calibrate), DSPy's prompts and up to three "
            "code calls in each feedback turn, its code parser, its rule for the tests "
            "EF:partial shows, the task plus the last code and its feedback, tracebacks "
            "without the candidate's source lines (as BigCodeBench's), "
            "2048-token replies that stop at its template separator"
        ),
        # ConvCodeWorld's two user_expertise levels, its protocol data (core/ccw/turn.py
        # UserKind, which a test keeps in step with this).
        personas=("novice", "expert"),
    ),
    "convtui": ProtocolDefaults(
        extract="robust",
        partial_rule="first-tests",
        context="full",
        max_tokens=1024,
        simulator_max_tokens=512,
        stop=(),
        ef_source_lines=True,
        summary=(
            "our own design: robust code extraction, EF:partial shows the first three real "
            "tests, the whole conversation as context, tracebacks that quote the failing lines, "
            "a simulator that may not leak the reference solution"
        ),
    ),
}


def protocol_name(value: str) -> ProtocolName:
    """``value`` as a protocol name, or one clear error naming the choices."""
    for name in PROTOCOLS:
        if value == name:
            return name
    raise ConvtuiError(f"--protocol must be one of {', '.join(PROTOCOLS)}, not {value!r}")


def build_config(
    protocol: ProtocolName,
    *,
    model: str,
    feedback: FeedbackConfig,
    simulator: str | None,
    turns: int,
    context: ContextMode | None = None,
    partial_rule: PartialRule | None = None,
    extract: ExtractMode | None = None,
    max_tokens: int | None = None,
) -> SessionConfig:
    """A session's config under ``protocol``; ``None`` takes the protocol's default.

    ``turns`` counts feedback turns after turn 0, as ConvCodeWorld does (its published
    setting, 10, is 11 generations). ``simulator`` is the model that plays the user, None
    when no configuration of the run has verbal feedback (see :func:`simulator_for`)."""
    if turns < 0:
        raise ConvtuiError(f"--turns must be 0 or more feedback turns, not {turns}")
    chosen = DEFAULTS[protocol]
    known = chosen.personas
    if feedback.verbal != "none" and known is not None and feedback.verbal not in known:
        raise ConvtuiError(
            f"protocol {protocol} plays only the simulated users {' and '.join(known)}, not "
            f"VF:{feedback.verbal}: use protocol convtui"
        )
    params = GenerationParams(
        max_tokens=max_tokens if max_tokens is not None else chosen.max_tokens,
        stop=chosen.stop,
    )
    simulator_params = GenerationParams(max_tokens=chosen.simulator_max_tokens, stop=chosen.stop)
    return SessionConfig(
        model=model,
        protocol=protocol,
        feedback=feedback,
        simulator=simulator,
        context=context or chosen.context,
        partial_rule=partial_rule or chosen.partial_rule,
        extract=extract or chosen.extract,
        max_turns=turns + 1,
        ef_source_lines=chosen.ef_source_lines,
        params=params,
        simulator_params=simulator_params,
    )


def simulator_for(
    model: str, simulator: str | None, feedback: tuple[FeedbackConfig, ...]
) -> str | None:
    """The simulator a run needs: the one named, else the code model itself, and none at all
    when no configuration has verbal feedback."""
    if all(f.verbal == "none" for f in feedback):
        return None
    return simulator or model


@dataclass(frozen=True)
class PlayRules:
    """``--protocol`` and what it decides unless told (``--turns``, ``--context``,
    ``--partial-rule``, ``--extract``), with ``--simulator``: the rules a session plays by, as
    a front end's options hold them. None takes the protocol's default (:data:`DEFAULTS`)."""

    protocol: ProtocolName = "convtui"
    turns: int = 10
    context: ContextMode | None = None
    partial_rule: PartialRule | None = None
    extract: ExtractMode | None = None
    simulator: str | None = None

    def settings(
        self,
        *,
        model: str,
        feedback: FeedbackConfig,
        user: UserMode | None = None,
        max_tokens: int | None = None,
        covering: tuple[FeedbackConfig, ...] = (),
    ) -> SessionConfig:
        """The settings a session plays by under these rules, as every command builds them
        (``session``, ``session --study``, ``study init``, ``serve`` and the ``bench``
        commands): Ω as the user makes it, the rules a protocol sets on who may give verbal
        feedback, the simulator the run needs, then the protocol's defaults where nothing was
        given.

        ``user`` says who gives the verbal feedback (None: a benchmark's simulated user, the
        persona Ω names); ``covering`` is every Ω of the run (``--feedback all``: the nine),
        which decides whether it needs a simulator at all."""
        omega = feedback if user is None else feedback_for_user(feedback, user)
        by_a_person = user not in (None, *PERSONAS)  # a simulator of a persona speaks alone
        if self.protocol == "convcodeworld" and omega.verbal != "none" and by_a_person:
            raise ConvtuiError(
                "protocol convcodeworld asks its simulated user inside each turn, so a person "
                "cannot give the verbal feedback: let a simulator play the user (--user "
                f"{'|'.join(PERSONAS)}), drop VF from the feedback, or use protocol convtui"
            )
        return build_config(
            self.protocol,
            model=model,
            feedback=omega,
            simulator=simulator_for(model, self.simulator, covering or (omega,)),
            turns=self.turns,
            context=self.context,
            partial_rule=self.partial_rule,
            extract=self.extract,
            max_tokens=max_tokens,
        )


def feedback_for_user(feedback: FeedbackConfig, user: UserMode) -> FeedbackConfig:
    """Ω as ``user`` makes it: a simulated or drafting user names the verbal part (VF given
    must agree); a person on their own plays the persona Ω names (VF:expert shows them the
    reference)."""
    if user == "human":
        return feedback
    kind = user.split(":", 1)[-1]
    if not is_persona(kind):
        raise ConvtuiError(f"--user must be one of {', '.join(USER_MODES)}, not {user!r}")
    if feedback.verbal not in ("none", kind):
        raise ConvtuiError(
            f"--user {user} plays VF:{kind} but --feedback says VF:{feedback.verbal}; drop VF "
            "from --feedback or make them agree"
        )
    return replace(feedback, verbal=kind)
