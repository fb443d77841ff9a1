"""``convtui bench codeif``: CodeIF-Bench conversations (core/codeif/conversation.py) played
against a model and recorded like any session: one turn per round, the round's message kept
as what the turn was given (``Turn.received``: the user's words, their source naming the
round's kind and instruction), every model call journaled, every execution cached. The same
command after a kill continues: the recorded rounds are rebuilt and the conversation goes on.

A run's mode (static or dynamic) and protocol are part of its selection, so runs of the two
modes never mix; ``--protocol codeif`` checks candidates as the benchmark's evaluation does
(pre-processed, programs.py), ``convtui`` as written. A dynamic conversation under ``--protocol
codeif`` is the authors' dynamic script's (core/codeif/authors_dynamic.py: its turns, words,
code reading and checks), and its selection says so (``conversation=authors``); under
``convtui`` it is convtui's (core/codeif/conversation.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from convtui.benchmarks.live import LEASE_S, claim_run
from convtui.core.calls import journaled_call
from convtui.core.codeif import authors_dynamic
from convtui.core.codeif.conversation import Mode, PlayedRound, RoundPlan, play, rounds_limit
from convtui.core.codeif.instructions import Instruction, instructions
from convtui.core.codeif.programs import first_python_block, round_request
from convtui.core.codeif.records import rebuild, round_status, round_turn
from convtui.core.evaluate import Execute
from convtui.core.execution import ExecResult
from convtui.core.extract import extract_code
from convtui.core.feedback import compile_feedback
from convtui.core.models.base import ModelBackend
from convtui.core.models.types import ChatMessage, Completion, ModelError
from convtui.core.session import SessionConfig, SessionStatus, request_hash
from convtui.core.tasks import Task
from convtui.sessions import Store, run_config_hash
from convtui.sessions.records import SessionRow

SELECTION_PREFIX = "codeif;"  # every CodeIF run's selection starts so: report keeps them apart
AUTHORS_CONVERSATION = "authors"  # selection field conversation=: the authors' dynamic script


@dataclass(frozen=True)
class CodeifSettings:
    mode: Mode
    # --protocol codeif: replies read and code checked as the benchmark's harness does
    # (programs.first_python_block, round_request's pre-processing and time limit).
    preprocess: bool
    # ``bench codeif --logs``: recorded conversations replayed (their rounds' words, in their
    # order), every instruction checked each round as a person's conversation is.
    replay: bool = False

    @property
    def authors_dynamic(self) -> bool:
        """A dynamic conversation as the authors' script plays it (``--protocol codeif``)."""
        return self.mode == "dynamic" and self.preprocess and not self.replay

    @property
    def selection_prefix(self) -> str:
        protocol = "codeif" if self.preprocess else "convtui"
        mode = "replay" if self.replay else self.mode
        # Dynamic runs recorded before the authors' script was followed lack the field, so
        # they are neither resumed by it nor scored as its conversations.
        authors = f";conversation={AUTHORS_CONVERSATION}" if self.authors_dynamic else ""
        return f"{SELECTION_PREFIX}mode={mode};protocol={protocol}{authors}"

    def rounds_limit(self, task: Task) -> int:
        """The most rounds one conversation of ``task`` plays."""
        if self.authors_dynamic:
            return authors_dynamic.Script.of(task).max_turns
        return rounds_limit(instructions(task), self.play_mode)

    @property
    def play_mode(self) -> Mode:
        return "person" if self.replay else self.mode


@dataclass(frozen=True)
class CodeifProgress:
    task_id: str
    round: PlayedRound | None
    status: str
    error: str = ""


def most_rounds(tasks: Sequence[Task], settings: CodeifSettings) -> int:
    """The most rounds any of ``tasks`` plays under ``settings``."""
    return max(settings.rounds_limit(t) for t in tasks)


def plan_codeif_run(
    store: Store, config: SessionConfig, selection: str, tasks: Sequence[Task]
) -> tuple[str, bool]:
    key = run_config_hash(config, [config.feedback.label])
    run_id = store.find_resumable_run(key, selection) or store.find_finished_run(key, selection)
    resumed = run_id is not None
    if run_id is None:
        run_id = store.create_run("live", config, selection, [t.id for t in tasks])
    claim_run(store, run_id)
    return run_id, resumed


@dataclass
class CodeifPlayer:
    """Plays the sessions of one CodeIF run."""

    store: Store
    run_id: str
    config: SessionConfig
    settings: CodeifSettings
    backend: ModelBackend
    execute: Execute
    on_progress: Callable[[CodeifProgress], None] | None = None
    # A replay: session id -> the rounds after the first, as the reference recorded them.
    scripts: Mapping[str, Sequence[RoundPlan]] = field(default_factory=dict)

    async def session(self, row: SessionRow, task: Task) -> SessionStatus:
        """Play (or go on with) one session; its status at the end."""
        store, mode = self.store, self.settings.play_mode
        order = instructions(task)
        journal = store.journal(row.id)
        turns = store.load_turns(row.id)
        authors = authors_dynamic.Script.of(task) if self.settings.authors_dynamic else None
        if authors is None:
            prior = rebuild(turns, order, mode)
        else:
            prior = authors_dynamic.rebuild(turns, authors)
        store.set_session_status(row.id, "running")
        made: dict[int, tuple[Completion, tuple[ChatMessage, ...]]] = {}

        async def ask(messages: tuple[ChatMessage, ...], plan: RoundPlan) -> str:
            completion = await journaled_call(
                self.backend,
                journal,
                row.id,
                plan.number - 1,
                "generate",
                messages,
                self.config.params,
            )
            made[plan.number] = (completion, messages)
            return completion.text

        async def check(code: str, given: Sequence[Instruction]) -> ExecResult:
            request = round_request(
                task, code, given, preprocess=self.settings.preprocess, limits=self.config.limits
            )
            return await self.execute(request)

        def extract(reply: str) -> tuple[str, str | None]:
            if self.settings.preprocess:  # the benchmark's harness reads replies so
                code = first_python_block(reply)
            else:
                code = extract_code(reply, mode=self.config.extract, entry_point=task.entry_point)
            compiled = compile_feedback(code)
            return code, None if compiled.ok else compiled.text

        choose = None
        if self.settings.replay:
            script = {p.number: p for p in self.scripts[row.id]}

            async def choose(
                rounds: Sequence[PlayedRound], _offered: RoundPlan | None
            ) -> RoundPlan | None:
                return script.get(len(rounds) + 1)

        if authors is None:
            rounds = play(order, mode, ask, check, extract, prior, choose)
            status_of = round_status
        else:
            rounds = authors_dynamic.play(authors, ask, partial(self._check, task, authors), prior)
            status_of = authors_dynamic.round_status
        limit = self.settings.rounds_limit(task)
        last = prior[-1] if prior else None
        async for played in rounds:
            completion, messages = made[played.plan.number]
            key = request_hash(self.backend.spec, messages, self.config.params)
            ended = played.plan.number >= limit
            status: SessionStatus = status_of(played) if ended else "running"
            store.save_turn(row.id, round_turn(played, completion, messages, key, mode), status)
            store.take_lease(self.run_id, seconds=LEASE_S)
            last = played
            if self.on_progress:
                self.on_progress(CodeifProgress(task.id, played, status))
        final = status_of(last) if last is not None else "stalled"
        store.set_session_status(row.id, final)
        return final

    async def _check(self, task: Task, script: authors_dynamic.Script, code: str) -> ExecResult:
        """The authors' dynamic script's checks of ``code`` (authors_dynamic.script_request)."""
        request = authors_dynamic.script_request(task, code, script, self.config.limits)
        return await self.execute(request)


async def run_codeif(player: CodeifPlayer, tasks: Sequence[Task], concurrency: int) -> int:
    """Play the run's pending sessions, ``concurrency`` at a time; returns how many failed
    on model errors (they stay resumable: the same command retries them)."""
    by_id = {t.id: t for t in tasks}
    gate = asyncio.Semaphore(max(1, concurrency))
    failed = 0

    async def one(row: SessionRow) -> None:
        nonlocal failed
        async with gate:
            try:
                await player.session(row, by_id[row.task_id])
            except ModelError as exc:
                failed += 1
                player.store.set_session_status(row.id, "failed", str(exc))
                if player.on_progress:
                    player.on_progress(CodeifProgress(row.task_id, None, "failed", str(exc)))

    await asyncio.gather(*(one(row) for row in player.store.pending_sessions(player.run_id)))
    player.store.finish_run(player.run_id, "done" if failed == 0 else "interrupted")
    return failed
