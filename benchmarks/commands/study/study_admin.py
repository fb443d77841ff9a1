"""Wiring for ``convtui study init|status|token|add-annotator|reassign``: read the study file,
resolve its tasks through the catalog, deal the assignment and the tokens (core/studies/spec.py),
store them (sessions/studies/study_rows.py), and print what a person needs, each token only once."""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from rich.console import Group
from rich.table import Table
from rich.text import Text

from convtui.benchmarks.commands.records.session_views import session_status
from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.settings import TaskSelection, suite_for
from convtui.core.catalog.tasks import SuiteOrAll
from convtui.core.errors import ConvtuiError
from convtui.core.plural import counted
from convtui.core.studies.guidelines import Guidelines
from convtui.core.studies.spec import (
    Assignment,
    StudyError,
    StudySpec,
    TaskFilter,
    assign,
    assign_more,
    checked_name,
    new_token,
    reassign,
    token_hash,
)
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import (
    AssignmentRow,
    StudyRow,
    add_annotator,
    annotators,
    assignments,
    create_study,
    hand_over,
    open_study,
    set_token,
    study_tasks,
)

_STATES = ("done", "started", "pending", "reassigned")


# --- study init -----------------------------------------------------------------------------------


def init_command(spec_path: Path, db: Path, data: Path | None, as_json: bool) -> None:
    """Read, resolve and check everything before the database is opened: a study that
    cannot be made leaves no file behind (and Store.open removes one it made in vain)."""
    spec = StudySpec.from_toml(spec_path)
    tasks = resolve_tasks(spec, spec_path, data)
    config = spec.config()
    given = assign(tasks, spec.annotators, spec.overlap, spec.seed)
    tokens = {name: new_token() for name in spec.annotators}
    with Store.open(db) as store:
        create_study(store, spec, config, given, {n: token_hash(t) for n, t in tokens.items()})
    people = list(tasks_of(given, spec.annotators).items())
    if as_json:
        print_json(
            {
                "study": spec.name,
                "db": str(db),
                "tasks": tasks,
                "assignments": len(given),
                "guidelines_sha256": guidelines_digest(spec),
                "annotators": [
                    {"name": name, "tasks": theirs, "token": tokens[name]}
                    for name, theirs in people
                ],
            }
        )
        return
    screen = console()
    screen.print(
        Text(
            f"Study {spec.name!r} in {db}: {counted(len(tasks), 'task')}, "
            f"{counted(len(spec.annotators), 'annotator')}, each task to {spec.overlap} of them "
            f"({counted(len(given), 'assignment')})."
        ),
        soft_wrap=True,
    )
    if spec.guidelines is not None:
        screen.print(guidelines_line(spec.guidelines), soft_wrap=True)
    screen.print(token_table([(name, theirs, tokens[name]) for name, theirs in people]))
    screen.print(tokens_note(db), soft_wrap=True)


def tasks_of(given: Sequence[Assignment], names: Sequence[str]) -> dict[str, list[str]]:
    """Each of ``names``' tasks, in the order ``given`` deals them, in one pass over
    ``given`` (a pass per annotator took a study of 100,000 annotators 18 s)."""
    theirs: dict[str, list[str]] = {name: [] for name in names}
    for a in given:
        theirs[a.annotator].append(a.task_id)
    return theirs


def resolve_tasks(spec: StudySpec, spec_path: Path, data: Path | None) -> list[str]:
    """The study's task ids as the catalog spells them, in the file's order (a filter: the
    catalog's); an unknown id or a filter that keeps nothing is one error naming the file."""
    try:
        if isinstance(spec.tasks, TaskFilter):
            wanted = spec.tasks
            selection = TaskSelection(
                cast(SuiteOrAll, wanted.suite), data, wanted.ids, wanted.lib, wanted.stdlib_only
            )
            found = [task.id for task in selection.tasks()]
            if not found:
                raise StudyError("the [tasks] filter keeps no task")
            return found
        suites = {suite_for(task_id, "all") for task_id in spec.tasks}
        suite = suites.pop() if len(suites) == 1 else "all"
        catalog = TaskSelection(cast(SuiteOrAll, suite), data).catalog()
        unknown = [task_id for task_id in spec.tasks if task_id not in catalog]
        if len(unknown) == 1:
            catalog.get(unknown[0])  # raises the catalog's error, with the nearest ids
        if unknown:
            raise StudyError(
                f"unknown tasks {', '.join(map(repr, unknown))}; convtui tasks list shows them"
            )
        return list(dict.fromkeys(catalog.get(task_id).id for task_id in spec.tasks))
    except ConvtuiError as exc:
        raise StudyError(f"{spec_path}: {exc}") from None


def guidelines_digest(spec: StudySpec) -> str | None:
    return None if spec.guidelines is None else spec.guidelines.sha256


def guidelines_line(guidelines: Guidelines) -> Text:
    """What ``study init`` and ``study status`` say of the study's guidelines."""
    return Text(
        f"Guidelines (sha256 {guidelines.sha256}), kept in the study: shown to each "
        "annotator before their first assignment and again from help (f1)."
    )


def token_table(people: Sequence[tuple[str, Sequence[str], str]]) -> Table:
    """annotator · their tasks · token: the token column is never cut or folded."""
    table = Table(header_style="bold", expand=False)
    table.add_column("annotator", no_wrap=True)
    table.add_column("assigned tasks", overflow="fold", min_width=16)
    width = max((len(token) for _n, _t, token in people), default=5)
    table.add_column("token", no_wrap=True, min_width=width)
    for name, theirs, token in people:
        listed = f"{len(theirs)}: {', '.join(theirs)}" if theirs else "none yet"
        table.add_row(Text(name), listed, token)
    return table


def tokens_note(db: Path) -> Text:
    return Text(
        "Tokens are shown only now (the database keeps a hash of each): give each person "
        f"theirs. `convtui study token NAME --db {shlex.quote(str(db))}` issues a new one."
    )


# --- opening a study ------------------------------------------------------------------------------


def known_annotator(store: Store, study: StudyRow, name: str, *, active: bool = True) -> None:
    """Refuse a name the study does not know, or (``active``) one who left it."""
    enrolled = dict(annotators(store, study.id))
    if name not in enrolled:
        raise StudyError(
            f"study {study.name!r} has no annotator {name!r} (it has {', '.join(enrolled)})"
        )
    if active and not enrolled[name]:
        raise StudyError(
            f"{name} has left study {study.name!r} (study reassign handed on their work)"
        )


def held(rows: Sequence[AssignmentRow]) -> list[Assignment]:
    """The assignments someone still holds (a reassigned one belongs to its new holder)."""
    return [Assignment(r.task_id, r.annotator, r.position) for r in rows if r.state != "reassigned"]


# --- study status ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnnotatorProgress:
    name: str
    active: bool
    assigned: int
    done: int
    started: int
    pending: int
    reassigned: int


@dataclass(frozen=True)
class TaskProgress:
    task_id: str
    holders: list[AssignmentRow]

    @property
    def done(self) -> int:
        return sum(r.state == "done" for r in self.holders)


@dataclass(frozen=True)
class StudyProgress:
    """How far a study got: per annotator, per task, and assignments done of all held."""

    annotators: list[AnnotatorProgress]
    tasks: list[TaskProgress]

    @property
    def total(self) -> int:
        return sum(len(t.holders) for t in self.tasks)

    @property
    def done(self) -> int:
        return sum(t.done for t in self.tasks)


def study_progress(store: Store, study: StudyRow) -> StudyProgress:
    """The study's progress (``study status``, and the first part of ``study report``)."""
    people = annotators(store, study.id)
    rows = assignments(store, study.id)
    tasks = study.spec.in_file_order(study_tasks(store, study.id))
    # Counted in one pass over the assignments, not one per annotator and per task: a study
    # of 100,000 annotators is 100,000 x their assignments otherwise.
    states: dict[str, Counter[str]] = {name: Counter() for name, _active in people}
    holders: dict[str, list[AssignmentRow]] = {t: [] for t in tasks}
    for r in rows:
        states.setdefault(r.annotator, Counter())[r.state] += 1
        if r.state != "reassigned":
            holders.setdefault(r.task_id, []).append(r)
    progress = [
        AnnotatorProgress(
            name,
            active,
            states[name].total(),
            *(states[name][s] for s in _STATES),
        )
        for name, active in people
    ]
    return StudyProgress(progress, [TaskProgress(t, holders[t]) for t in tasks])


def status_command(db: Path, as_json: bool) -> None:
    with open_study(db) as (store, study):
        found = study_progress(store, study)
    progress, per_task, total, done = found.annotators, found.tasks, found.total, found.done
    if as_json:
        print_json(
            {
                "study": study.name,
                "done": done,
                "assignments": total,
                "guidelines_sha256": guidelines_digest(study.spec),
                "annotators": [vars(p) for p in progress],
                "tasks": [
                    {
                        "task_id": t.task_id,
                        "done": t.done,
                        "annotators": [
                            {
                                "name": r.annotator,
                                "state": r.state,
                                "session_id": r.session_id,
                                "session_status": r.session_status,
                            }
                            for r in t.holders
                        ],
                    }
                    for t in per_task
                ],
            }
        )
        return
    screen = console()
    screen.print(Group(annotator_table(progress), task_table(per_task)))
    screen.print(Text(f"{done}/{total} assignments done", style="bold"))
    if study.spec.guidelines is not None:
        screen.print(guidelines_line(study.spec.guidelines), soft_wrap=True)


def annotator_table(progress: Sequence[AnnotatorProgress]) -> Table:
    table = Table(title="per annotator", header_style="bold", expand=False)
    table.add_column("annotator", no_wrap=True)
    for column in ("assigned", *_STATES):
        table.add_column(column, justify="right", no_wrap=True)
    for p in progress:
        name = Text(p.name) if p.active else Text(f"{p.name} (left)", style="dim")
        counts = (p.assigned, p.done, p.started, p.pending, p.reassigned)
        table.add_row(name, *(str(n) for n in counts))
    return table


def task_table(per_task: Sequence[TaskProgress]) -> Table:
    table = Table(title="per task", header_style="bold", expand=False)
    table.add_column("task", no_wrap=True)
    table.add_column("done", justify="right", no_wrap=True)
    table.add_column("annotators (session status)", overflow="fold")
    for t in per_task:
        who = Text()
        for i, r in enumerate(t.holders):
            if i:
                who.append(" · ")
            who.append(f"{r.annotator} ")
            who.append(session_status(r.session_status or "pending"))
        table.add_row(Text(t.task_id), f"{t.done}/{len(t.holders)}", who)
    return table


# --- study token, add-annotator, reassign ---------------------------------------------------------


def token_command(db: Path, name: str, as_json: bool) -> None:
    token = new_token()
    with open_study(db) as (store, study):
        known_annotator(store, study, name)
        set_token(store, study.id, name, token_hash(token))
    if as_json:
        print_json({"study": study.name, "annotator": name, "token": token})
        return
    screen = console()
    screen.print(
        Text(f"New token for {name} in study {study.name!r}; the old one no longer works:")
    )
    screen.print(Text(token), soft_wrap=True)
    screen.print(tokens_note(db), soft_wrap=True)


def add_annotator_command(db: Path, name: str, count: int, as_json: bool) -> None:
    name = checked_name("annotator name", name)
    token = new_token()
    with open_study(db) as (store, study):
        rows = assignments(store, study.id)
        given = assign_more(held(rows), name, count, study_tasks(store, study.id))
        add_annotator(store, study.id, name, token_hash(token), given)
    theirs = [a.task_id for a in given]
    if as_json:
        print_json({"study": study.name, "annotator": name, "tasks": theirs, "token": token})
        return
    screen = console()
    dealt = counted(len(theirs), "assignment")
    screen.print(Text(f"{name} joins study {study.name!r} with {dealt}."))
    screen.print(token_table([(name, theirs, token)]))
    screen.print(tokens_note(db), soft_wrap=True)


def reassign_command(db: Path, name: str, as_json: bool) -> None:
    with open_study(db) as (store, study):
        known_annotator(store, study, name)
        rows = assignments(store, study.id)
        done = frozenset(r.task_id for r in rows if r.annotator == name and r.state == "done")
        staying = [n for n, active in annotators(store, study.id) if active and n != name]
        moves = reassign(held(rows), name, done, staying)
        hand_over(store, study.id, name, moves)
    if as_json:
        print_json(
            {
                "study": study.name,
                "annotator": name,
                "kept_done": sorted(done),
                "moves": [{"task_id": a.task_id, "to": to} for a, to in moves],
            }
        )
        return
    screen = console()
    kept = f"; the {len(done)} they finished stay theirs" if done else ""
    screen.print(Text(f"{name} left study {study.name!r}: their token no longer works{kept}."))
    if not moves:
        screen.print(Text("They had nothing unfinished to hand on."))
        return
    table = Table(title="handed on", header_style="bold", expand=False)
    table.add_column("task", no_wrap=True)
    table.add_column("now with", no_wrap=True)
    for moved, to in moves:
        table.add_row(Text(moved.task_id), Text(to))
    screen.print(table)
