"""Wiring for ``convtui study fidelity``: is the simulated user a person? (issue 32; docs/
design.md, "Is the simulated user a person?")

On every state of the database (a turn where a person gave verbal feedback,
core/studies/fidelity_states.py), each ``--simulator`` is asked for the feedback it would
have given, shown exactly what the person saw, with convtui's prompts (core/feedback/
simulators.py, the novice's or expert's) or ConvCodeWorld's (``--simulator-prompts
convcodeworld``: core/ccw/turn.py, its simulator alone); then each feedback source (the
person's words, an assisted session's draft, each simulator's, and none at all: the control)
is handed to each ``--target`` for one turn, the turn a static replay plays
(core/play/replay_turn.py: the session's protocol builds its prompt), whose code runs
through the executor and its cache. Everything is written as it happens
(sessions/studies/fidelity.py), so the same command again asks and runs nothing, and a killed one
goes on where it stopped.

The tables come from core/studies/fidelity.py and feedback_words.py; printed by
study_fidelity_views.py, drawn by fidelity_plots.py."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from convtui.benchmarks.commands.study.fidelity_result import FidelityResult
from convtui.benchmarks.progress import progress_bar
from convtui.benchmarks.settings import ExecutorSettings, TaskSelection
from convtui.core.catalog.tasks import Task
from convtui.core.ccw import drive as ccw_drive
from convtui.core.ccw.turn import ModelCall
from convtui.core.errors import ConvtuiError
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.feedback.simulators import Simulator
from convtui.core.models.base import ModelBackend
from convtui.core.models.registry import open_backend
from convtui.core.models.types import ChatMessage, Completion, GenerationParams, ModelError
from convtui.core.play.in_flight import InFlight
from convtui.core.play.journaled import journaled_call
from convtui.core.play.loop import CachedExecute, cached_execute, choose_policy
from convtui.core.play.policy import TurnContext
from convtui.core.settings.config import ProtocolName
from convtui.core.settings.persona import Persona
from convtui.core.studies.feedback_words import FeedbackText, words_report
from convtui.core.studies.fidelity import NO_FEEDBACK, PERSON, FeedbackOutcome, fidelity
from convtui.core.studies.fidelity_states import (
    SimulatorIdentity,
    State,
    ccw_simulator_inputs,
    draft_identity,
    feedback_request,
    handed,
    session_persona,
    simulator_identity,
    state_facts,
    target_config,
)
from convtui.core.turns.journal import CallPurpose, request_hash
from convtui.sessions import Store
from convtui.sessions.studies.fidelity import (
    FeedbackRow,
    FidelityJournal,
    abandon_started_calls,
    feedback_rows,
    read_states,
    save_feedback,
    save_target_turn,
    served_models,
    target_turn_rows,
)

_T = TypeVar("_T")
NO_STATES = (
    "{db} holds no turn where a person gave verbal feedback: record some with convtui "
    "session --user human --db {db} (or --user assist:novice|expert), or run a study "
    "(convtui study init, then convtui session --study or convtui serve)"
)


@dataclass(frozen=True)
class FidelityOptions:
    """The command's options: the simulators, their personas (none: each state's own, the
    persona its session's Ω names) and whose prompts they are asked with, the targets, the
    protocol of the target's turn (None: each session's own), the data, how many calls at
    once, the executor, and the bootstrap's seed and resamples."""

    db: Path
    simulators: tuple[str, ...]
    targets: tuple[str, ...]
    personas: tuple[Persona, ...] = ()
    protocol: ProtocolName | None = None
    data: Path | None = None
    concurrency: int | None = None
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    seed: int = 0
    resamples: int = 2000
    quiet: bool = False
    prompts: tuple[ProtocolName, ...] = ("convtui",)


def build_fidelity(
    options: FidelityOptions, open_model: Callable[[str], ModelBackend] = open_backend
) -> FidelityResult:
    """Ask, play and record what is missing, then read every table back; ``open_model``
    turns a model spec into its backend (a test hands its own models in)."""
    if not options.db.is_file():
        raise ConvtuiError(f"no database at {options.db}: " + NO_STATES.format(db=options.db))
    if not options.targets:
        raise ConvtuiError("name at least one --target model to hand each feedback to")
    with Store.open(options.db) as store:
        states = tuple(read_states(store))
        if not states:
            raise ConvtuiError(NO_STATES.format(db=options.db))
        selection = TaskSelection("all", options.data)
        tasks = {t: selection.task(t) for t in dict.fromkeys(s.task_id for s in states)}
        # One backend per model named: opening contacts nothing, and an unknown spec is one
        # line before anything is asked.
        specs = dict.fromkeys(options.simulators + options.targets)
        backends = {spec: open_model(spec) for spec in specs}
        work = _play(store, states, tasks, backends, options)
        asked, played, failed = asyncio.run(_closing(backends.values(), work))
        return _read(store, options, states, tasks, asked, played, failed)


def identities(options: FidelityOptions, state: State) -> list[SimulatorIdentity]:
    """The simulators asked on ``state``: each model under each persona asked for, or the
    persona the state's session played, with each protocol's prompts asked for."""
    personas = options.personas or (session_persona(state.config),)
    return [
        simulator_identity(m, p, protocol)
        for m in dict.fromkeys(options.simulators)
        for p in personas
        for protocol in dict.fromkeys(options.prompts)
    ]


class _KeepKey:
    """The ``execute`` a target's turn is given: it remembers the cache key of the run, so
    the turn is linked to the execution row of exactly that key."""

    def __init__(self, execute: CachedExecute) -> None:
        self._execute = execute
        self.key: str | None = None

    async def __call__(self, request: ExecRequest) -> ExecResult:
        self.key, result = await self._execute.keyed(request)
        return result


async def _closing(backends: Iterable[ModelBackend], work: Awaitable[_T]) -> _T:
    """``work``'s result; the backends are closed after it, whatever happened."""
    try:
        return await work
    finally:
        for backend in backends:
            await backend.aclose()


async def _play(
    store: Store,
    states: Sequence[State],
    tasks: dict[str, Task],
    backends: dict[str, ModelBackend],
    options: FidelityOptions,
) -> tuple[int, int, tuple[str, ...]]:
    """The missing simulator feedback, then the missing target turns; (simulator steps
    done, target turns played, what failed)."""
    abandon_started_calls(store)
    known = feedback_rows(store)
    asks = [
        (state, who)
        for state in states
        for who in identities(options, state)
        if (state.state_id, who.source) not in known
    ]
    limit = asyncio.Semaphore(options.concurrency or _default_concurrency(backends))
    shared: InFlight[Completion] = InFlight()
    failed: list[str] = []
    executor = None
    with progress_bar("steps", quiet=options.quiet) as bar:
        line = bar.add_task("simulators", total=len(asks))

        async def ask(state: State, who: SimulatorIdentity) -> None:
            async with limit:
                try:
                    task = tasks[state.task_id]
                    await _simulate(store, state, task, who, backends[who.model], shared)
                except ModelError as exc:
                    failed.append(f"{who.source} on {state.state_id}: {exc}")
                bar.advance(line)

        await asyncio.gather(*(ask(s, w) for s, w in asks))
        texts = _texts(states, feedback_rows(store), options)
        done = target_turn_rows(store)
        turns = [
            (state, source, text, target)
            for state in states
            for source, text in texts[state.state_id].items()
            for target in dict.fromkeys(options.targets)
            if (state.state_id, source, target, _protocol(state, options)) not in done
        ]
        line = bar.add_task("target turns", total=len(turns))
        if turns:
            executor = options.executor.open()
        try:
            execute = cached_execute(executor, store.execution_cache()) if executor else None

            async def play(state: State, source: str, text: str | None, target: str) -> None:
                assert execute is not None
                async with limit:
                    try:
                        await _target_turn(
                            store, state, tasks[state.task_id], source, text,
                            target, backends[target], execute, options.protocol,
                        )  # fmt: skip
                    except ModelError as exc:
                        failed.append(f"{target} from {state.state_id} given {source}: {exc}")
                    bar.advance(line)

            await asyncio.gather(*(play(*job) for job in turns))
        finally:
            if executor is not None:
                executor.close()
    return len(asks), len(turns), tuple(failed)


def _default_concurrency(backends: dict[str, ModelBackend]) -> int:
    """In-process models answer one call at a time; servers batch (as bench live)."""
    return 1 if any(spec.startswith("local:") for spec in backends) else 8


async def _simulate(
    store: Store,
    state: State,
    task: Task,
    who: SimulatorIdentity,
    backend: ModelBackend,
    shared: InFlight[Completion],
) -> None:
    """``who``'s feedback on ``state``, asked as the session's simulator would have been
    (its parameters), journaled, then recorded. A request identical to one in flight for
    another state waits for that call's answer (``shared``) instead of being sent again."""
    key = f"fidelity:{state.state_id}:{who.source}"
    journal = FidelityJournal(store, state, "simulator", who.source, key)
    if who.protocol == "convcodeworld":
        await _simulate_ccw(store, state, task, who, backend, journal, key, shared)
        return
    hashes: list[str] = []

    async def ask(
        purpose: CallPurpose,
        messages: tuple[ChatMessage, ...],
        params: GenerationParams,
        model: ModelBackend,
    ) -> Completion:
        hashed = request_hash(model.spec, messages, params)
        hashes.append(hashed)
        return await shared.call(
            (hashed, purpose, 0),
            lambda: journaled_call(model, journal, key, state.turn_idx, purpose, messages, params),
        )

    simulator = Simulator(who.persona, backend, state.config.simulator_params)
    said = await simulator.feedback(feedback_request(task, state.turn), ask)
    save_feedback(
        store,
        state,
        who,
        said.text if said is not None else None,
        hashes[-1] if hashes else None,
        said.call if said is not None else None,
        said.notes if said is not None else (),
    )


async def _simulate_ccw(
    store: Store,
    state: State,
    task: Task,
    who: SimulatorIdentity,
    backend: ModelBackend,
    journal: FidelityJournal,
    key: str,
    shared: InFlight[Completion],
) -> None:
    """``who``'s feedback on ``state`` with ConvCodeWorld's prompts: its simulator alone
    (core/ccw/drive.py ``simulate``), each DSPy request a raw completion as the reference
    sends it, journaled (one call for identical requests in flight, ``shared``), then
    recorded. A reply the reference could not have parsed is recorded as silence with a
    note saying why."""
    params = state.config.simulator_params
    last: list[tuple[str, Completion]] = []

    async def ask(call: ModelCall, seq: int) -> str:
        prompt = (ChatMessage("user", call.prompt),)
        sent = replace(params, max_tokens=call.max_tokens)
        hashed = request_hash(backend.spec, prompt, sent, "text")

        def start() -> Awaitable[Completion]:
            turn = state.turn_idx
            return journaled_call(
                backend, journal, key, turn, "simulate", prompt, sent, seq=seq, kind="text"
            )

        done = await shared.call((hashed, "simulate", seq), start)
        last.append((hashed, done))
        return done.text

    said = await ccw_drive.simulate(ccw_simulator_inputs(state, task, who.persona), ask)
    notes = (
        () if said.aborted is None else (f"the reference's simulator stops here: {said.aborted}",)
    )
    hashed, call = last[-1] if last else (None, None)
    save_feedback(store, state, who, said.text, hashed, call, notes)


async def _target_turn(
    store: Store,
    state: State,
    task: Task,
    source: str,
    text: str | None,
    target: str,
    backend: ModelBackend,
    execute: CachedExecute,
    protocol: ProtocolName | None,
) -> None:
    """``target``'s one turn from ``state`` handed ``text`` in the person's place, played as
    a static replay plays the turn after a reference's (choose_policy), then recorded."""
    config = target_config(state.config, protocol)
    key = f"fidelity:{state.state_id}:{source}:{target}"
    journal = FidelityJournal(store, state, "target", source, key)
    kept = _KeepKey(execute)
    context = TurnContext(task, config, backend, kept, None, journal, key)
    reference = handed(state, text)
    idx = len(reference)
    played = await choose_policy(context, idx, reference).play(idx, (), _ignore)
    save_target_turn(store, state, source, target, config.protocol, played.turn, kept.key)


def _protocol(state: State, options: FidelityOptions) -> str:
    """The protocol the target's turn from ``state`` is built by."""
    return options.protocol or state.config.protocol


def _ignore(_event: object) -> None:
    """The turn's events: nobody watches a fidelity turn stream."""


def _texts(
    states: Sequence[State], known: dict[tuple[str, str], FeedbackRow], options: FidelityOptions
) -> dict[str, dict[str, str | None]]:
    """state id -> source -> the words handed to the targets (None: none at all). A
    simulator that said nothing hands on no words, as the control does; one whose feedback
    is missing (its call failed) hands on nothing and has no turn."""
    out: dict[str, dict[str, str | None]] = {}
    for state in states:
        mine: dict[str, str | None] = {NO_FEEDBACK: None, PERSON: state.person_text}
        if state.draft_source is not None:
            mine[state.draft_source] = state.draft
        for who in identities(options, state):
            row = known.get((state.state_id, who.source))
            if row is not None:
                mine[who.source] = row.text
        out[state.state_id] = mine
    return out


def _read(
    store: Store,
    options: FidelityOptions,
    states: Sequence[State],
    tasks: dict[str, Task],
    asked: int,
    played: int,
    failed: tuple[str, ...],
) -> FidelityResult:
    """Every table over what the file holds for these states, simulators and targets."""
    known = feedback_rows(store)
    texts = _texts(states, known, options)
    turns = target_turn_rows(store)
    by_id = {s.state_id: s for s in states}
    targets = tuple(dict.fromkeys(options.targets))
    outcomes = [
        FeedbackOutcome(
            state_id,
            by_id[state_id].session_id,
            by_id[state_id].task_id,
            by_id[state_id].annotator,
            source,
            target,
            row.passed,
            row.tests_passed,
            row.tests_total,
        )
        for (state_id, source, target, protocol), row in sorted(turns.items())
        if state_id in by_id
        and target in targets
        and source in texts[state_id]
        and protocol == _protocol(by_id[state_id], options)
    ]
    report = fidelity(outcomes, seed=options.seed, resamples=options.resamples)
    said = [
        FeedbackText(state_id, source, text)
        for state_id, mine in texts.items()
        for source, text in mine.items()
        if source != NO_FEEDBACK and text is not None
    ]
    words = words_report(said, {s.state_id: state_facts(s, tasks[s.task_id]) for s in states})
    found: dict[str, SimulatorIdentity] = {}
    for state in states:
        draft = draft_identity(state)
        if draft is not None and state.draft_source is not None:
            found.setdefault(state.draft_source, draft)
        for who in identities(options, state):
            found.setdefault(who.source, who)
    return FidelityResult(
        options.db,
        tuple(states),
        targets,
        report,
        words,
        found,
        asked,
        played,
        failed,
        served_models(store),
    )


def fidelity_command(options: FidelityOptions, as_json: bool, figures: Path | None) -> int:
    """Print the report (and write the figures); 1 when a call failed (the same command
    again retries it), else 0."""
    from convtui.benchmarks.commands.report import need
    from convtui.benchmarks.output import print_json

    if figures is not None:
        need("matplotlib", "--figures")  # before the calls, not after them
    result = build_fidelity(options)
    written: list[Path] = []
    if figures is not None:
        from convtui.benchmarks.commands.study.fidelity_plots import write_fidelity_plots

        written = write_fidelity_plots(result, figures)
    if as_json:
        data = result.to_json()
        if figures is not None:
            data["figures"] = [str(p) for p in written]
        print_json(data)
    else:
        from convtui.benchmarks.commands.study.study_fidelity_views import print_fidelity

        print_fidelity(result, written)
    return 1 if result.failed else 0
