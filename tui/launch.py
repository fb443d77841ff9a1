"""``convtui session``, decided: from command-line options to what the app opens with (a new
session, a resumed one, the task picker, or with --study an annotator's next assignment), the
:class:`Launch` the app takes, and the options a study's machine passes on to each app.
tui/entry.py opens the services and runs the app with them."""

from __future__ import annotations

import getpass
import os
import shlex
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.errors import ConvtuiError, UnknownTaskError
from convtui.core.execution.choice import LOCAL, ExecutorChoice
from convtui.core.services import ModelOptions, open_execution, open_models
from convtui.core.settings.config import (
    ContextMode,
    ExtractMode,
    PartialRule,
    ProtocolName,
    SessionConfig,
)
from convtui.core.settings.omega import FeedbackChoice
from convtui.core.settings.protocol import PlayRules
from convtui.sessions import AmbiguousIdError, NotFoundError, Store
from convtui.sessions.reading.browse import resolve_session_id
from convtui.sessions.studies.study_rows import (
    AssignmentRow,
    annotators,
    load_study,
    next_assignment,
)
from convtui.tui.controller import AppServices, SessionError, SessionPlan, StudyRef, UserMode
from convtui.tui.runner import AsyncRunner
from convtui.tui.web.lifeline import SERVER_PID


@dataclass(frozen=True)
class SessionOptions:
    """The command line of ``convtui session``, validated by ``session_config``."""

    task: str | None
    resume: str | None
    model: str
    model_name: str | None
    simulator: str | None
    feedback: FeedbackChoice
    user: UserMode
    turns: int
    context: ContextMode | None
    max_tokens: int | None
    db: Path
    python: str | None
    jobs: int | None
    isolation: str
    protocol: ProtocolName = "convtui"
    partial_rule: PartialRule | None = None
    extract: ExtractMode | None = None
    chat_template: Path | None = None
    annotator: str | None = None  # None: the login name (default_annotator)
    suite: str = "all"
    data: Path | None = None
    executor: ExecutorChoice = LOCAL

    @property
    def rules(self) -> PlayRules:
        """The rules its sessions play by."""
        return PlayRules(
            self.protocol, self.turns, self.context, self.partial_rule, self.extract, self.simulator
        )

    @property
    def machine(self) -> MachineOptions:
        """What else opened this app's backends, executor and catalog: a command that
        resumes one of its sessions must give them again."""
        return MachineOptions(
            self.suite,
            self.data,
            self.model_name,
            self.chat_template,
            self.python,
            self.jobs,
            self.isolation,
            self.executor,
        )


def session_config(options: SessionOptions, user: UserMode) -> SessionConfig:
    return options.rules.settings(
        model=options.model,
        feedback=options.feedback.one("--feedback must be one configuration here, not 'all'"),
        user=user,
        max_tokens=options.max_tokens,
    )


def resumed_plan(store: Store, catalog: TaskCatalog, session_id: str) -> SessionPlan:
    """The plan that continues a recorded session, under the config it was recorded with, or
    shows it read-only when it ended. ``session_id`` may be a unique prefix, as ``convtui
    sessions list`` shows it."""
    try:
        session_id = resolve_session_id(store, session_id)
        row = store.session(session_id)
    except NotFoundError:
        raise SessionError(
            f"no session {session_id} in {store.path}: convtui sessions list shows them"
        ) from None
    except AmbiguousIdError as exc:
        raise SessionError(f"{exc}; give more of the id") from None
    config = store.session_config(session_id)
    kind = config.feedback.verbal
    user: UserMode = "human"
    if row.user_kind == "simulator" and kind != "none":
        user = kind  # type: ignore[assignment]
    elif row.user_kind == "assist" and kind != "none":
        user = f"assist:{kind}"  # type: ignore[assignment]
    if row.task_id not in catalog:
        raise SessionError(
            f"session {session_id} is of task {row.task_id}, which the loaded suite lacks: "
            "add --suite all (or the task's suite)"
        )
    # A session that ended (solved, given up, a benchmark's, an imported one) opens read-only.
    ended = row.status if row.finished else None
    return SessionPlan(catalog.get(row.task_id), config, user, resume_id=session_id, ended=ended)


def open_services(options: SessionOptions, config: SessionConfig) -> AppServices:
    """Everything the app shares; the backends are checked later, inside the app, so that an
    unreachable server is a message on screen rather than a crash at start."""
    models = open_models(config, ModelOptions(options.model_name, options.chat_template))
    executor = open_execution(
        options.executor, python=options.python, jobs=options.jobs, isolation=options.isolation
    )
    store = Store.open(options.db)
    return AppServices(store, models, executor, AsyncRunner())


def plan_launch(
    options: SessionOptions, catalog: TaskCatalog, store: Store, config: SessionConfig
) -> Launch:
    """What the app opens with. An unknown --task is not fatal: the picker opens on it, with
    the error shown, so the person picks the task they meant."""
    user = options.user
    who = options.annotator or default_annotator()
    machine = options.machine
    if options.resume:
        plan = resumed_plan(store, catalog, options.resume)
        return Launch(catalog, config, user, plan, machine=machine)
    if options.task:
        try:
            plan = SessionPlan(catalog.get(options.task), config, user, annotator=who)
            return Launch(catalog, config, user, plan, annotator=who, machine=machine)
        except UnknownTaskError as exc:
            error = f"{exc}; pick one here"
            return Launch(
                catalog,
                config,
                user,
                query=options.task,
                error=error,
                annotator=who,
                machine=machine,
            )
    return Launch(catalog, config, user, annotator=who, machine=machine)


def default_annotator() -> str:
    """The login name: who sits at the terminal, unless ``--annotator`` says otherwise."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (containers) or no environment
        return "anonymous"


def served_by_textual() -> bool:
    """Whether the app draws to a browser page: `convtui serve` (textual-serve) starts it
    with pipes for stdin and stdout and names Textual's web driver."""
    return bool(os.environ.get("TEXTUAL_DRIVER"))


def served_by_convtui() -> bool:
    """Whether `convtui serve` started the app, for a browser: what the app saves or opens
    then lands on the study's host, which the person at the browser never sees (the server
    passes no files or links on to the page, tui/web/apps.py)."""
    return bool(os.environ.get(SERVER_PID))


def has_screen() -> bool:
    """Whether the app has somewhere to draw and keys to read. Without either, Textual would
    draw into a pipe and wait for keys that never come."""
    return served_by_textual() or (sys.stdin.isatty() and sys.stdout.isatty())


# --- convtui session --study: an annotator's assignments ----------------------------------------


@dataclass(frozen=True)
class MachineOptions:
    """What the machine that runs a study's sessions decides for them; the study fixes the
    model, Ω, turns, protocol and user. `convtui serve` passes them on to each app."""

    suite: str = "all"
    data: Path | None = None
    model_name: str | None = None
    chat_template: Path | None = None
    python: str | None = None
    jobs: int | None = None
    isolation: str = "auto"
    executor: ExecutorChoice = LOCAL

    def as_flags(self) -> tuple[str, ...]:
        """The same, as `convtui session` takes them (paths made absolute: the app may run
        in another folder)."""
        given: list[tuple[str, object]] = [
            ("--suite", None if self.suite == "all" else self.suite),
            ("--data", self.data and self.data.resolve()),
            ("--model-name", self.model_name),
            ("--chat-template", self.chat_template and self.chat_template.resolve()),
            ("--python", self.python),
            ("--jobs", self.jobs),
            ("--isolation", None if self.isolation == "auto" else self.isolation),
            ("--executor", None if self.executor == LOCAL else self.executor.label),
        ]
        return tuple(item for flag, value in given if value for item in (flag, str(value)))


@dataclass(frozen=True)
class Launch:
    """What the app opens with: a session (``plan``), or the task picker prefilled with
    ``query``; tasks picked there run under ``config`` with ``user``. ``error`` is shown
    first (an unknown --task lands here, in the picker). With ``study`` the app plays that
    annotator's assignments (tui/study_app.py)."""

    catalog: TaskCatalog
    config: SessionConfig
    user: UserMode = "human"
    plan: SessionPlan | None = None
    query: str = ""
    error: str = ""
    annotator: str | None = None
    study: StudyRef | None = None
    machine: MachineOptions = field(default_factory=MachineOptions)
    """How this machine opened the backends, executor and catalog (resume commands repeat it)."""


def resume_command(
    session_id: str, db: Path, config: SessionConfig, machine: MachineOptions, opened_model: str
) -> str:
    """The command that opens a recorded session again, whole: the store, the models its
    config names and what this machine opened them with (``opened_model`` is the model the
    app was started on: its --model-name and --chat-template belong to that model only)."""
    if config.model != opened_model:
        machine = replace(machine, model_name=None, chat_template=None)
    words = ["convtui", "session", "--resume", session_id, "--db", str(db.absolute())]
    words += ["--model", config.model]
    if config.simulator and config.simulator != config.model:
        words += ["--simulator", config.simulator]
    return shlex.join([*words, *machine.as_flags()])


@dataclass(frozen=True)
class StudySessionOptions:
    """``convtui session --study DB --annotator NAME``."""

    db: Path
    annotator: str
    machine: MachineOptions = MachineOptions()


def open_study_store(db: Path) -> Store:
    """The study's database, which must exist: a mistyped --study creates nothing."""
    if not db.exists():
        raise ConvtuiError(
            f"no study database at {db}: give the --study that `convtui study init` made"
        )
    return Store.open(db)


def study_ref(store: Store, annotator: str) -> tuple[StudyRef, SessionConfig, UserMode]:
    """Who annotates in the store's study, the config its sessions run and its user mode;
    one error for an annotator the study does not know, or who left it."""
    study = load_study(store)
    enrolled = dict(annotators(store, study.id))
    if annotator not in enrolled:
        raise ConvtuiError(
            f"study {study.name!r} has no annotator {annotator!r} (it has {', '.join(enrolled)})"
        )
    if not enrolled[annotator]:
        raise ConvtuiError(f"{annotator} has left study {study.name!r}: their work was handed on")
    return StudyRef(study.id, study.name, annotator), study.config, study.spec.user


def next_plan(
    store: Store, catalog: TaskCatalog, study: StudyRef, config: SessionConfig, user: UserMode
) -> SessionPlan | None:
    """The annotator's next assignment as the app plays it: a new session of its task, or
    the session they started on it, resumed; None when they have done them all."""
    row = next_assignment(store, study.study_id, study.annotator)
    return None if row is None else assignment_plan(store, catalog, study, config, user, row)


def assignment_plan(
    store: Store,
    catalog: TaskCatalog,
    study: StudyRef,
    config: SessionConfig,
    user: UserMode,
    row: AssignmentRow,
) -> SessionPlan:
    if row.session_id is not None:
        return replace(resumed_plan(store, catalog, row.session_id), study=study)
    try:
        task = catalog.get(row.task_id)
    except UnknownTaskError:
        raise SessionError(
            f"assignment {row.task_id} is not among the tasks loaded here: check --suite and --data"
        ) from None
    return SessionPlan(task, config, user, annotator=study.annotator, study=study)
