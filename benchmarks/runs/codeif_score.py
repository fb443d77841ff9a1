"""``convtui bench codeif --score-only FILE``: score completions written elsewhere.

The file is in CodeIF-Bench's completions layout (sessions/exchange/codeif_export.py): JSON lines
(or one JSON array) of ``task_id``, ``requirement`` and ``completion``, as ``sessions export
--format codeif`` writes and as the benchmark's own inference scripts write once their base answers
(no ``requirement``) are put before the follow-ups; or a folder holding the base answers
(``base.jsonl``) and the follow-ups (``n_round.jsonl``), the layout the export writes per run and
the authors' scripts read. Each task's records, in file order, are the rounds of one static
conversation: the first answers the initial instruction, round i is checked against every
instruction given up to it, through the executor exactly as ``bench codeif`` checks a model's answer
(programs.round_request). No model is called.

Each round is recorded as the turn bench codeif would have recorded (records.round_turn), in
a run whose selection names the data file's digest and the file scored
(``codeif;mode=static;protocol=…;data=<digest>;scored=<name>;sha256=<digest>``), so
``convtui report`` shows its tables and the same file scored again is the same run (nothing
runs twice), while a changed file is a new one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from convtui.benchmarks.runs.codeif import CodeifSettings
from convtui.benchmarks.runs.lifecycle import LEASE_S, limited, play_run
from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.catalog.tasks import Task
from convtui.core.codeif.conversation import PlayedRound, RoundPlan, message_for
from convtui.core.codeif.instructions import BASE, Instruction, instructions
from convtui.core.codeif.programs import (
    first_python_block,
    own_verdicts,
    round_request,
    verdicts,
)
from convtui.core.codeif.records import rebuild, round_status, round_turn
from convtui.core.errors import ConvtuiError
from convtui.core.feedback.evaluate import Execute
from convtui.core.feedback.render import compile_feedback
from convtui.core.models.extract import extract_code
from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.sessions import Store
from convtui.sessions.database.records import SessionRow
from convtui.sessions.exchange.codeif_export import (
    BASE_FILE,
    COMPLETION,
    FOLLOW_UP_FILE,
    MODEL,
    REQUIREMENT,
    TASK_ID,
    convtui_task_id,
)

# The keys of the authors' repository-level completions (repo/Experiments): the task's dotted
# name and the instruction's category.
NAMESPACE = "namespace"
TYPE = "type"


class CompletionsFileError(ConvtuiError):
    """A completions file that cannot be scored as it is."""


@dataclass(frozen=True)
class ScoredRound:
    where: str  # "line 3" (JSON lines) or "record 3" (a JSON array), for messages and notes
    instruction: Instruction
    completion: str


@dataclass(frozen=True)
class ScoredTask:
    task: Task
    rounds: tuple[ScoredRound, ...]


@dataclass(frozen=True)
class CompletionsFile:
    path: Path
    digest: str  # the first 16 hex digits of the content's SHA-256
    model: str  # the records' ``model``, else scored:<file stem>
    tasks: tuple[ScoredTask, ...]

    @property
    def rounds(self) -> int:
        return sum(len(t.rounds) for t in self.tasks)

    @property
    def most_rounds(self) -> int:
        return max(len(t.rounds) for t in self.tasks)

    def selection(self, settings: CodeifSettings, data: str) -> str:
        """The run's identity: mode, protocol, the data file's digest, the file scored."""
        name = self.path.name.replace(";", "_")  # selection fields are ;-separated
        return f"{settings.selection_prefix};data={data};scored={name};sha256={self.digest}"


def read_completions(path: Path, catalog: TaskCatalog) -> CompletionsFile:
    """The file's conversations, every record checked before anything runs."""
    parts = _parts(path)
    raw = b"".join(part.read_bytes() for part in parts)
    by_task: dict[str, list[ScoredRound]] = {}
    models: set[str] = set()
    found = (
        (f"{part.name} {where}" if part != path else where, record)
        for part in parts
        for where, record in _records(part, _text(part))
    )
    for where, record in found:
        task = _task(path, where, record, catalog)
        scored = _round(path, where, record, task)
        if task.id not in by_task and scored.instruction.category != BASE:
            raise CompletionsFileError(
                f"{path} {where}: task {task.number}'s first completion answers "
                f"{scored.instruction.category!r}, not the initial instruction: put its base "
                f"completion (requirement {BASE!r}, or none) first"
            )
        by_task.setdefault(task.id, []).append(scored)
        model = record.get(MODEL)
        if isinstance(model, str) and model.strip():
            models.add(model.strip())
    if not by_task:
        raise CompletionsFileError(f"{path} holds no completions")
    if len(models) > 1:
        raise CompletionsFileError(
            f"{path} holds completions of several models ({', '.join(sorted(models))}): "
            "score one model's completions at a time"
        )
    return CompletionsFile(
        path=path,
        digest=hashlib.sha256(raw).hexdigest()[:16],
        model=models.pop() if models else f"scored:{path.stem}",
        tasks=tuple(
            ScoredTask(catalog[task_id], tuple(rounds)) for task_id, rounds in by_task.items()
        ),
    )


def _parts(path: Path) -> list[Path]:
    """The files to read: ``path``, or a folder's base answers then its follow-ups (the
    layout ``sessions export --format codeif`` writes per run, and the authors' scripts
    read)."""
    if path.is_dir():
        base, follow_ups = path / BASE_FILE, path / FOLLOW_UP_FILE
        if not base.is_file():
            raise CompletionsFileError(
                f"{path} is a folder without {BASE_FILE}: give a completions file, or a folder "
                f"holding {BASE_FILE} and {FOLLOW_UP_FILE}"
            )
        return [base, follow_ups] if follow_ups.is_file() else [base]
    if not path.is_file():
        raise CompletionsFileError(f"no completions file at {path}")
    return [path]


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CompletionsFileError(f"{path} is not UTF-8 text: {exc}") from None


def _records(path: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) for each record: JSON lines, or one JSON array of objects."""
    if text.lstrip().startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CompletionsFileError(
                f"{path} line {exc.lineno}: not valid JSON ({exc.msg})"
            ) from None
        found = [(f"record {i}", v) for i, v in enumerate(values, start=1)]
    else:
        found = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                found.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CompletionsFileError(
                    f"{path} line {number}: not valid JSON ({exc.msg})"
                ) from None
    for where, value in found:
        if not isinstance(value, dict):
            raise CompletionsFileError(
                f"{path} {where}: expected an object with {TASK_ID}, {REQUIREMENT} and {COMPLETION}"
            )
        yield where, value


def _task(path: Path, where: str, record: dict[str, Any], catalog: TaskCatalog) -> Task:
    if NAMESPACE in record and TASK_ID not in record:
        return _repository_task(path, where, record[NAMESPACE], catalog)
    if TASK_ID not in record:
        raise CompletionsFileError(f"{path} {where}: no {TASK_ID} (nor {NAMESPACE})")
    task_id = convtui_task_id(record[TASK_ID])
    if task_id is None or task_id not in catalog:
        numbers = [t.number for t in catalog]
        raise CompletionsFileError(
            f"{path} {where}: unknown task id {record[TASK_ID]!r} (CodeIF-Bench's ids run "
            f"{min(numbers)} to {max(numbers)})"
        )
    return catalog[task_id]


def _repository_task(path: Path, where: str, namespace: Any, catalog: TaskCatalog) -> Task:
    """A repository task by the dotted name the authors' repository files key it by."""
    found = next((t for t in catalog if t.site and t.site.namespace == namespace), None)
    if found is None:
        raise CompletionsFileError(
            f"{path} {where}: no repository task {namespace!r} in the data read (pass --data "
            "with the level's file, e.g. CodeIF-Bench-L2-repo-v0.jsonl)"
        )
    return found


def _round(path: Path, where: str, record: dict[str, Any], task: Task) -> ScoredRound:
    order = instructions(task)
    # The authors' repository files name the instruction ``type``.
    category = record.get(REQUIREMENT, record.get(TYPE) if task.site else None)
    if category is None:  # the benchmark's base answers name no requirement
        category = BASE
    found = next((i for i in order if i.category == category), None)
    if found is None:
        known = ", ".join(repr(i.category) for i in order)
        raise CompletionsFileError(
            f"{path} {where}: unknown requirement {category!r} for task {task.number} "
            f"(its instructions: {known})"
        )
    completion = record.get(COMPLETION)
    if not isinstance(completion, str):
        raise CompletionsFileError(f"{path} {where}: {COMPLETION} must be a string")
    return ScoredRound(where, found, completion)


@dataclass
class CodeifScorer:
    """Scores the sessions of one ``--score-only`` run."""

    store: Store
    run_id: str
    config: SessionConfig
    settings: CodeifSettings
    execute: Execute
    scored: CompletionsFile

    async def session(self, row: SessionRow, scored: ScoredTask) -> SessionStatus:
        """Score (or go on scoring) one task's conversation; its status at the end."""
        store, task = self.store, scored.task
        order = instructions(task)
        prior = rebuild(store.load_turns(row.id), order, "static")
        store.set_session_status(row.id, "running")
        plans = _plans(scored, order, self.config, self.settings.preprocess)
        todo = plans[len(prior) :]
        results = await asyncio.gather(
            *(
                self.execute(
                    round_request(
                        task,
                        c.code,
                        c.checked_on,
                        preprocess=self.settings.preprocess,
                        limits=self.config.limits,
                    )
                )
                for c in todo
            )
        )
        last = prior[-1] if prior else None
        for check, result in zip(todo, results, strict=True):
            plan, reply = check.plan, scored.rounds[check.plan.number - 1]
            found = verdicts(result, check.checked_on)
            played = PlayedRound(
                plan,
                reply.completion,
                check.code,
                result,
                check.compile_error,
                found,
                check.given,
                frozenset(),
                own_verdicts(result, check.checked_on),
            )
            ended = plan.number == len(plans)
            status: SessionStatus = round_status(played) if ended else "running"
            turn = round_turn(played, None, (), "", "static")
            note = f"scored from {self.scored.path.name} {reply.where} (no model call)"
            store.save_turn(row.id, replace(turn, notes=(*turn.notes, note)), status)
            store.take_lease(self.run_id, seconds=LEASE_S)
            last = played
        final = round_status(last) if last is not None else "stalled"
        store.set_session_status(row.id, final)
        return final


@dataclass(frozen=True)
class _Check:
    """One round to check: the categories given so far, its code and compile error, and the
    instructions it is checked against (those given so far, in the task's order: what bench
    codeif's static conversation and records.rebuild check)."""

    plan: RoundPlan
    given: tuple[str, ...]
    code: str
    compile_error: str | None
    checked_on: list[Instruction]


def _plans(
    scored: ScoredTask, order: Sequence[Instruction], config: SessionConfig, preprocess: bool
) -> list[_Check]:
    plans: list[_Check] = []
    given: tuple[str, ...] = ()
    for number, r in enumerate(scored.rounds, start=1):
        category = r.instruction.category
        given = given if category in given else (*given, category)
        message = message_for(r.instruction, order[0].text)
        code = _code(r.completion, scored.task, config, preprocess)
        compiled = compile_feedback(code)
        plans.append(
            _Check(
                RoundPlan(number, "instruction", r.instruction, message),
                given,
                code,
                None if compiled.ok else compiled.text,
                [i for i in order if i.category in given],
            )
        )
    return plans


def _code(completion: str, task: Task, config: SessionConfig, preprocess: bool) -> str:
    """A completion with a markdown fence is a model's reply: its code is read out as bench
    codeif reads a reply (under ``--protocol codeif`` as the benchmark's harness reads it:
    the first python block, else the whole text). One without is the code itself (what
    sessions export writes, and what CodeIF-Bench's evaluation runs when it finds no fence)."""
    if preprocess:
        return first_python_block(completion)
    if "```" in completion or "~~~" in completion:
        return extract_code(completion, mode=config.extract, entry_point=task.entry_point)
    return completion


async def score_codeif(
    scorer: CodeifScorer,
    concurrency: int,
    on_session: Callable[[str, SessionStatus], None] | None = None,
) -> int:
    """Score the run's pending sessions, ``concurrency`` executions at a time (every
    conversation at once: a task's rounds run side by side, so a few tasks keep the executor
    busy); returns how many were scored."""
    gated_scorer = replace(scorer, execute=limited(scorer.execute, concurrency))
    by_id = {t.task.id: t for t in scorer.scored.tasks}

    async def one(row: SessionRow) -> bool:
        status = await gated_scorer.session(row, by_id[row.task_id])
        if on_session:
            on_session(row.task_id, status)
        return True  # no model is asked, so none gives up: the run always ends done

    played = await play_run(scorer.store, scorer.run_id, one, None)
    return played.sessions
