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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from convtui.benchmarks.runs.lifecycle import LEASE_S, NewRun, PlayedRun, play_run
from convtui.core.catalog.tasks import Task
from convtui.core.codeif import authors_dynamic
from convtui.core.codeif.conversation import (
    Mode,
    PlayedRound,
    Prompting,
    RoundPlan,
    play,
    prompted,
    rounds_limit,
)
from convtui.core.codeif.instructions import Instruction, instructions
from convtui.core.codeif.programs import first_python_block, round_request
from convtui.core.codeif.records import rebuild, round_status, round_turn
from convtui.core.execution.types import ExecResult
from convtui.core.feedback.evaluate import Execute
from convtui.core.feedback.render import compile_feedback
from convtui.core.models.base import ModelBackend
from convtui.core.models.extract import extract_code
from convtui.core.models.types import ChatMessage, Completion, ModelError
from convtui.core.play.journaled import journaled_call
from convtui.core.settings.config import SessionConfig, SessionStatus
from convtui.core.turns.journal import request_hash
from convtui.sessions import Store
from convtui.sessions.database.records import RunMode, SessionRow

# Every CodeIF run's selection starts so. Readers pick CodeIF runs by runs.benchmark; the
# prefix is what m007 read to fill that column for the runs recorded before it.
SELECTION_PREFIX = "codeif;"
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
    # ``--prompting cot``: each round asks the model to reason step by step before its code.
    prompting: Prompting = "direct"

    @property
    def authors_dynamic(self) -> bool:
        """A dynamic conversation as the authors' script plays it (``--protocol codeif``)."""
        return self.mode == "dynamic" and self.preprocess and not self.replay

    @property
    def run_mode(self) -> RunMode:
        """The run's mode (``runs.mode``): the selection's ``mode=`` field. Bench codeif
        plays static or dynamic conversations; only the app plays a person's."""
        if self.replay:
            return "replay"
        return "dynamic" if self.mode == "dynamic" else "static"

    @property
    def selection_prefix(self) -> str:
        protocol = "codeif" if self.preprocess else "convtui"
        mode = "replay" if self.replay else self.mode
        # Dynamic runs recorded before the authors' script was followed lack the field, so
        # they are neither resumed by it nor scored as its conversations.
        authors = f";conversation={AUTHORS_CONVERSATION}" if self.authors_dynamic else ""
        # Absent for direct prompting, so every run recorded before the option keeps its id.
        cot = f";prompting={self.prompting}" if self.prompting != "direct" else ""
        return f"{SELECTION_PREFIX}mode={mode};protocol={protocol}{authors}{cot}"

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


def codeif_run(
    settings: CodeifSettings, config: SessionConfig, selection: str, tasks: Sequence[Task]
) -> NewRun:
    """The run playing (or, with ``--score-only``, scoring) a conversation per task, for
    lifecycle.open_run."""
    return NewRun(
        config,
        selection,
        benchmark="codeif",
        mode=settings.run_mode,
        task_ids=[t.id for t in tasks],
    )


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
            messages = prompted(messages, self.settings.prompting)
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


async def run_codeif(player: CodeifPlayer, tasks: Sequence[Task], concurrency: int) -> PlayedRun:
    """Play the run's pending sessions, ``concurrency`` at a time. A session whose model gave
    up is recorded ``failed`` (the same command retries it) and the others go on."""
    by_id = {t.id: t for t in tasks}

    async def one(row: SessionRow) -> bool:
        try:
            await player.session(row, by_id[row.task_id])
        except ModelError as exc:
            player.store.set_session_status(row.id, "failed", str(exc))
            if player.on_progress:
                player.on_progress(CodeifProgress(row.task_id, None, "failed", str(exc)))
            return False
        return True

    return await play_run(player.store, player.run_id, one, concurrency)
