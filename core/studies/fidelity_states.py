"""The states of the simulated-user fidelity study (issue 32; docs/design.md, "Is the simulated
user a person?"), as pure data: which recorded turns are states, what a simulator is shown on
one (exactly what the person saw), the turns a target is handed with each feedback in the
person's place, who each source is, and the facts the words are read against
(core/studies/feedback_words.py). The store reads the turns (sessions/studies/fidelity.py); the
command plays the calls (benchmarks/commands/study/study_fidelity.py).

A state is a turn of a human or assisted session that carries a person's words: its
``verbal_feedback`` set and its ``feedback_source`` ``human``, or, in an assisted session, a
draft the person sent as it was (the person chose those words, so they count as theirs). In
an assisted session the simulator's draft stands beside the person's words as a source of
its own, ``draft:<persona>:<model>``, so person and draft are a pair too."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from convtui.core.catalog.tasks import Task
from convtui.core.ccw.template import templates_sha256
from convtui.core.ccw.turn import TurnInputs, user_kind
from convtui.core.feedback.prompts import template
from convtui.core.feedback.simulators import FeedbackRequest
from convtui.core.settings.config import ProtocolName, SessionConfig
from convtui.core.settings.persona import DEFAULT_PERSONA, Persona, sees_reference
from convtui.core.settings.protocol import build_config
from convtui.core.studies.feedback_words import StateFacts
from convtui.core.studies.fidelity import NO_FEEDBACK, PERSON
from convtui.core.turns.record import Turn

# The last line of a Python traceback names the exception: "KeyError: 'x'", "pkg.Error: ...".
_EXCEPTION = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*[A-Z][\w]*(?:Error|Exception|Exit|Warning))\b")


@dataclass(frozen=True)
class State:
    """One turn where a person gave verbal feedback: the session's ``turns`` up to and
    including it (``turns[-1]`` is the state's turn), under the session's ``config``."""

    session_id: str
    task_id: str
    annotator: str | None
    user_kind: str
    config: SessionConfig
    turns: tuple[Turn, ...]

    @property
    def turn(self) -> Turn:
        return self.turns[-1]

    @property
    def turn_idx(self) -> int:
        return self.turn.idx

    @property
    def state_id(self) -> str:
        """``<session id>/<turn index>``: the key of the state in every table."""
        return state_id(self.session_id, self.turn_idx)

    @property
    def person_text(self) -> str:
        return self.turn.verbal_feedback or ""

    @property
    def draft(self) -> str | None:
        """The simulator's draft the person was shown (assisted sessions), else None."""
        return self.turn.feedback_draft

    @property
    def draft_source(self) -> str | None:
        """The draft's source label: ``draft:<persona>:<model>``; None without a draft."""
        if self.draft is None:
            return None
        return f"draft:{session_persona(self.config)}:{self.config.simulator or self.config.model}"


def state_id(session_id: str, turn_idx: int) -> str:
    return f"{session_id}/{turn_idx}"


def is_state(turn: Turn, user_kind: str) -> bool:
    """Whether ``turn`` of a session of ``user_kind`` carries a person's words."""
    if user_kind not in ("human", "assist") or turn.verbal_feedback is None:
        return False
    return turn.feedback_source == "human" or turn.feedback_draft is not None


def session_persona(config: SessionConfig) -> Persona:
    """The persona Ω names for the session (what the person played: VF:expert showed them the
    reference); the default persona (the novice) when Ω has no verbal part."""
    verbal = config.feedback.verbal
    return DEFAULT_PERSONA if verbal == "none" else verbal


def feedback_request(task: Task, turn: Turn) -> FeedbackRequest:
    """What the person saw on ``turn``, as a simulator is asked: the task, the code, whether it
    compiled and the compiler's and the tests' feedback as recorded with the turn."""
    return FeedbackRequest(
        task, turn.idx, turn.code, turn.compiled, turn.compile_feedback, turn.execution_feedback
    )


def handed(state: State, text: str | None) -> tuple[Turn, ...]:
    """The session's turns with ``text`` as the verbal feedback of the state's turn in place of
    the person's (None: no verbal feedback, the control): what a target's next turn is built
    from, as a static replay hands a reference's turns on (core/play/replay_turn.py)."""
    source = "none" if text is None else "fidelity"
    last = replace(state.turn, verbal_feedback=text, feedback_source=source, feedback_draft=None)
    return (*state.turns[:-1], last)


def target_config(config: SessionConfig, protocol: ProtocolName | None) -> SessionConfig:
    """The settings a target's turn is played by: the session's own, or under ``protocol``'s
    defaults with the session's Ω and turn budget when another protocol is asked for."""
    if protocol is None or protocol == config.protocol:
        return config
    return build_config(
        protocol,
        model=config.model,
        feedback=config.feedback,
        simulator=config.simulator,
        turns=config.max_turns - 1,
    )


@dataclass(frozen=True)
class SimulatorIdentity:
    """Who a simulated source is: its model spec, persona, the protocol whose prompts it was
    given and the SHA-256 of those prompts' templates (None where not known: a draft recorded
    by an earlier session)."""

    model: str
    persona: Persona
    protocol: str
    prompt_sha256: str | None

    @property
    def source(self) -> str:
        """The source label the tables use, as a simulated user's turns record it; one asked
        with ConvCodeWorld's prompts says so, so both can stand in one table."""
        label = f"simulator:{self.persona}:{self.model}"
        return label if self.protocol == "convtui" else f"{label} [{self.protocol}]"


def _templates(persona: Persona) -> tuple[str, ...]:
    """The templates a convtui simulator of ``persona`` is prompted with (core/feedback/
    simulators.py: its system and user messages, the feedback blocks, and for one that sees
    the reference its retry when it leaked it), in the order they are hashed."""
    retry = (f"{persona}_no_leak",) if sees_reference(persona) else ()
    own = (f"{persona}_system", f"{persona}_user")
    return (*own, "feedback_compile", "feedback_execution", *retry)


def prompt_sha256(persona: Persona, protocol: ProtocolName = "convtui") -> str:
    """The SHA-256 of the templates a ``persona`` simulator is prompted with under
    ``protocol``: convtui's, each name and text in order; ConvCodeWorld's, its data files
    (DSPy's signatures and fixed strings, core/ccw/template.py). The same digest means the
    same prompts."""
    if protocol == "convcodeworld":
        return templates_sha256()
    digest = hashlib.sha256()
    for name in _templates(persona):
        digest.update(name.encode() + b"\0" + template(name).template.encode() + b"\0")
    return digest.hexdigest()


def simulator_identity(
    model: str, persona: Persona, protocol: ProtocolName = "convtui"
) -> SimulatorIdentity:
    return SimulatorIdentity(model, persona, protocol, prompt_sha256(persona, protocol))


def ccw_simulator_inputs(state: State, task: Task, persona: Persona) -> TurnInputs:
    """What ConvCodeWorld's simulator (core/ccw/turn.py ``simulated_feedback``) is shown on
    ``state``: the task's instruct prompt, the code the person saw, the execution feedback
    they saw under the session's coverage (none when Ω had none), the ground truth for the
    expert; its compilation feedback is the reference's own text for that code. Replies are
    as long as the session's simulator was allowed."""
    coverage = state.config.feedback.execution
    return TurnInputs(
        prompt=task.prompt,
        previous_code=state.turn.code,
        execution=coverage,
        execution_feedback=(state.turn.execution_feedback or "") if coverage != "none" else None,
        user=user_kind(persona),
        ground_truth=task.ground_truth,
        max_tokens=state.config.simulator_params.max_tokens,
    )


def draft_identity(state: State) -> SimulatorIdentity | None:
    """The identity of the draft's simulator (prompt digest unknown: recorded before)."""
    if state.draft is None:
        return None
    config = state.config
    return SimulatorIdentity(
        config.simulator or config.model, session_persona(config), config.protocol, None
    )


def all_sources(simulators: Sequence[SimulatorIdentity]) -> tuple[str, ...]:
    """The control, the person, then each simulator, in the order given."""
    return (NO_FEEDBACK, PERSON, *(s.source for s in simulators))


def state_facts(state: State, task: Task) -> StateFacts:
    """What the state showed, for reading the words: the failing tests, the errors (the
    exception names the tracebacks end with, and the run's own error), the code, the
    reference solution and the entry point."""
    execution = state.turn.execution
    failing: list[str] = []
    errors: dict[str, None] = {}
    if execution is not None:
        for test in execution.tests:
            if test.status != "pass":
                failing.append(test.name)
                for name in _exceptions(test.traceback):
                    errors[name] = None
        for name in _exceptions(execution.error_traceback or execution.error_message):
            errors[name] = None
    if not state.turn.compiled:
        for name in _exceptions(state.turn.compile_feedback):
            errors[name] = None
    return StateFacts(
        state_id=state.state_id,
        failing_tests=tuple(failing),
        errors=tuple(errors),
        candidate=state.turn.code,
        reference=task.ground_truth,
        entry_point=task.entry_point,
    )


def _exceptions(text: str) -> list[str]:
    """Exception names at the start of ``text``'s lines (a traceback's last line)."""
    found = []
    for line in text.splitlines():
        match = _EXCEPTION.match(line)
        if match:
            found.append(match.group(1))
    return found
