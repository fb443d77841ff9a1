"""``convtui bench static``: replay log sets against a target model (ConvCodeBench).

Each log set (sessions/reading/log_sets.py) becomes one static run: a session per reference session,
linked to it, played by the turn loop with the reference's turns as input (core/play/replay.py).
The run is keyed by the target's config and the exact reference sessions, so the same command
after a kill finds it again and continues, reusing every finished model call."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from convtui.benchmarks.runs.lifecycle import NewRun
from convtui.core.errors import ConvtuiError
from convtui.core.settings.config import ContextMode, ProtocolName, SessionConfig
from convtui.sessions.reading.log_sets import LogSet


@dataclass(frozen=True)
class ReplaySettings:
    """What the command line sets for the target; None keeps the reference's setting."""

    model: str
    protocol: ProtocolName | None = None
    turns: int | None = None
    context: ContextMode | None = None
    max_tokens: int | None = None


def replay_config(log_set: LogSet, settings: ReplaySettings) -> SessionConfig:
    """The target's config: the reference's (its Ω, code extraction, partial-coverage rule,
    decoding, limits), with the target model and the settings given. The recorded feedback is
    handed on as it was, so the settings that shaped it stay the reference's."""
    reference = log_set.config
    protocol = settings.protocol or reference.protocol
    if protocol != reference.protocol:
        raise ConvtuiError(
            f"log set {log_set.name} was recorded under --protocol {reference.protocol}: its "
            f"feedback sits where that protocol puts it; replay it with --protocol "
            f"{reference.protocol} (or leave --protocol out)"
        )
    context = settings.context or reference.context
    if protocol == "convcodeworld" and context == "full":
        raise ConvtuiError(
            "--context full needs --protocol convtui: ConvCodeWorld's turns see only the "
            "previous code and its feedback"
        )
    if settings.turns is not None and settings.turns < 0:
        raise ConvtuiError(f"--turns must be 0 or more feedback turns, not {settings.turns}")
    params = reference.params
    if settings.max_tokens is not None:
        params = replace(params, max_tokens=settings.max_tokens)
    return replace(
        reference,
        model=settings.model,
        simulator=None,
        context=context,
        max_turns=reference.max_turns if settings.turns is None else settings.turns + 1,
        params=params,
        isolation="",
    )


def static_run(log_set: LogSet, config: SessionConfig, source: str) -> NewRun:
    """The static run replaying ``log_set`` under ``config``, for lifecycle.open_run: keyed by
    the exact reference sessions, so the same command finds it again."""
    digest = hashlib.sha256("\n".join(row.id for row in log_set.sessions).encode()).hexdigest()
    return NewRun(
        config,
        f"static;references={digest[:16]}",
        benchmark="bigcodebench",
        mode="static",
        references=log_set.sessions,
        replay=log_set.describe(source),
    )
