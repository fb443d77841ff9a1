"""The session screen's controller for a CodeIF-Bench task played by a person.

The conversation is core/codeif's ``person`` mode: round 1 gives the task (the initial
instruction); after each answer every instruction's tests run, and the person is offered the
static order's next instruction, which they send as it is, edit, replace with their own
words or swap for another one from the checklist. Each round is recorded as one turn, as
``bench codeif`` records it (core/codeif/records.py), and what the person sent is recorded on
the turn it answers like assisted feedback: the offered text as the draft, the source
``codeif:<category>`` when sent unchanged, ``human`` when edited.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from convtui.core.codeif.conversation import (
    Mode,
    PlayedRound,
    RoundPlan,
    offered_drafts,
    offered_message,
    play,
)
from convtui.core.codeif.instructions import Instruction, instructions
from convtui.core.codeif.programs import round_request
from convtui.core.codeif.records import rebuild, round_status, round_turn
from convtui.core.errors import ConvtuiError
from convtui.core.execution.types import ExecRequest, ExecResult
from convtui.core.feedback.render import NO_SYNTAX_ERRORS, compile_feedback
from convtui.core.models.extract import extract_code
from convtui.core.models.types import ChatMessage, Completion
from convtui.core.play.journaled import journaled_call
from convtui.core.play.loop import CachedExecute, cached_execute
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.journal import request_hash
from convtui.core.turns.record import Turn
from convtui.tui import messages as msg
from convtui.tui.controller import STREAM_INTERVAL_S, SessionController
from convtui.tui.human import Answer, PersonUser
from convtui.tui.turn_calls import WatchedJournal

MODE: Mode = "person"


def offered_source(category: str) -> str:
    """The feedback source of an instruction sent as offered."""
    return f"codeif:{category}"


@dataclass
class _Play:
    """What the callbacks of one play of the rounds share."""

    journal: WatchedJournal
    execute: CachedExecute
    given: list[str]  # the categories of the instructions given so far, in order
    person: PersonUser
    closing: list[SessionStatus] = field(default_factory=list)  # how the person ended it


class CodeifController(SessionController):
    """Plays a CodeIF-Bench task with the person choosing each round's instruction."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.order: tuple[Instruction, ...] = instructions(self.task)
        # The rounds played by this process (a resumed session's earlier ones are recorded).
        self._made: dict[int, tuple[Completion, tuple[ChatMessage, ...]]] = {}
        # The cache key of each of those rounds' execution, by round number: the rounds do
        # not go through the turn loop, so the key is kept where they run, as the loop does.
        self._cache_keys: dict[int, str] = {}

    def request(self, code: str) -> ExecRequest:
        """The execution that checks ``code`` against every instruction (the one a rerun
        repeats, too)."""
        return round_request(
            self.task, code, self.order, preprocess=False, limits=self.config.limits
        )

    async def _turns(self) -> None:
        assert self.session_id is not None
        self.services.store.set_session_status(self.session_id, "running")
        prior = rebuild(self.turns, self.order, MODE)
        self.post(msg.InstructionsGiven(prior[-1].given if prior else ()))
        await self._rounds(prior)

    async def _rounds(self, prior: Sequence[PlayedRound]) -> None:
        assert self.session_id is not None
        store = self.services.store
        play_state = _Play(
            journal=WatchedJournal(store.journal(self.session_id), self._calls_changed),
            execute=cached_execute(self.services.executor, store.execution_cache()),
            given=list(prior[-1].given) if prior else [],
            person=PersonUser(lambda _request, _draft: None),
        )
        self._person = play_state.person
        last: PlayedRound | None = prior[-1] if prior else None
        async for played in play(
            self.order,
            MODE,
            partial(self._ask, play_state),
            partial(self._check, play_state),
            self._extract,
            prior,
            partial(self._choose, play_state),
        ):
            last = played
        self._end(play_state, last)

    async def _ask(
        self, play_state: _Play, messages: tuple[ChatMessage, ...], plan: RoundPlan
    ) -> str:
        """The model's reply to round ``plan``, streamed to the screen as it comes."""
        idx = plan.number - 1
        self.live_idx = idx
        given = play_state.given
        if plan.instruction.category not in given:
            given.append(plan.instruction.category)
            self.post(msg.InstructionsGiven(tuple(given)))
        self.post(msg.TurnBegan(idx))
        completion = await journaled_call(
            self.services.models.coder,
            play_state.journal,
            self.session_id or "",
            idx,
            "generate",
            messages,
            self.config.params,
            self._streamer(idx),
        )
        self._made[plan.number] = (completion, messages)
        return completion.text

    def _streamer(self, idx: int) -> Callable[[str], None]:
        """Posts round ``idx``'s text so far, at most every ``STREAM_INTERVAL_S``: the full
        reply follows anyway."""
        last_post = 0.0

        def streamed(text: str) -> None:
            nonlocal last_post
            now = time.monotonic()
            if now - last_post >= STREAM_INTERVAL_S:
                last_post = now
                self.post(msg.ReplyStreamed(idx, text))

        return streamed

    async def _check(
        self, play_state: _Play, code: str, _given: Sequence[Instruction]
    ) -> ExecResult:
        """Every instruction's tests on the live round's code; the cache key is kept for the
        round's record, as the turn loop keeps it."""
        self._last_code = code
        self.post(msg.ReplyReady(self.live_idx, self._made[self.live_idx + 1][0].text, code))
        key, result = await play_state.execute.keyed(self.request(code))
        self._cache_keys[self.live_idx + 1] = key
        self._executed_idx = self.live_idx
        self.post(msg.ExecutionDone(self.live_idx, result))
        return result

    def _extract(self, reply: str) -> tuple[str, str | None]:
        code = extract_code(reply, mode=self.config.extract, entry_point=self.task.entry_point)
        compiled = compile_feedback(code)
        return code, None if compiled.ok else compiled.text

    async def _choose(
        self, play_state: _Play, rounds: Sequence[PlayedRound], offered: RoundPlan | None
    ) -> RoundPlan | None:
        """The person's say after each round: the next round's instruction and words, or
        None once they end the session."""
        last = rounds[-1]
        fresh = last.plan.number in self._made
        if not fresh:
            # Resumed after the person answered this round: what they sent then is the
            # next round's message (its model call is in the journal), not asked again.
            sent = self._sent_after(last)
            if sent is not None:
                return sent
        self._offer(last, offered)
        answer = await play_state.person.wait()
        # A round recorded before a restart without an answer keeps its record; the new
        # answer goes with the next round (its received message).
        if answer.closes is not None:
            play_state.closing.append(answer.closes)
            if fresh:
                self._save_round(last, answer, offered=None, status=answer.closes)
            else:
                self.services.store.set_session_status(self.session_id or "", answer.closes)
            return None
        category = offered.instruction.category if offered else None
        chosen = self._instruction(answer.instruction or category)
        plan = RoundPlan(last.plan.number + 1, "instruction", chosen, answer.text)
        if fresh:
            self._save_round(last, answer, offered=chosen, status="running")
        return plan

    def _offer(self, last: PlayedRound, offered: RoundPlan | None) -> None:
        """Put the static order's next instruction (if any is left) before the person, with
        the round's compilation feedback."""
        category = offered.instruction.category if offered else None
        self.post(
            msg.InstructionOffered(
                last.plan.number - 1, category, offered.message if offered else None
            )
        )
        compiled = last.compile_error or NO_SYNTAX_ERRORS
        draft = offered.message if offered else None
        self.post(msg.FeedbackWanted(last.plan.number - 1, compiled, None, draft))

    def _end(self, play_state: _Play, last: PlayedRound | None) -> None:
        """Close the session once the rounds stop: as the person closed it, or, when the
        rounds ran out, with the last round saved without an answer."""
        if play_state.closing:
            self.post(msg.SessionFinished(play_state.closing[0]))
            return
        if last is not None and last.plan.number in self._made:
            # The rounds ran out: the last one is saved without an answer.
            status = round_status(last)
            self._save_round(last, None, offered=None, status=status)
            self.post(msg.SessionFinished(status))

    def _sent_after(self, played: PlayedRound) -> RoundPlan | None:
        """The round the person asked for after ``played``, as its recorded turn holds it;
        None when the turn records no answer. The instruction is the one whose offered
        words are the turn's draft (kept whether the person edited them or not)."""
        turn = next((t for t in self.turns if t.idx == played.plan.number - 1), None)
        if turn is None or turn.verbal_feedback is None or turn.feedback_draft is None:
            return None
        for instruction in self.order:
            if turn.feedback_draft in offered_drafts(instruction, self.order[0].text):
                number = played.plan.number + 1
                return RoundPlan(number, "instruction", instruction, turn.verbal_feedback)
        return None

    def _instruction(self, category: str | None) -> Instruction:
        for instruction in self.order:
            if instruction.category == category:
                return instruction
        raise ConvtuiError(f"{self.task.id} has no instruction {category!r}")

    def _save_round(
        self,
        played: PlayedRound,
        answer: Answer | None,
        *,
        offered: Instruction | None,
        status: SessionStatus,
    ) -> None:
        assert self.session_id is not None
        completion, messages = self._made[played.plan.number]
        key = request_hash(self.services.models.coder.spec, messages, self.config.params)
        turn: Turn = round_turn(played, completion, messages, key, MODE)
        if answer is not None and (answer.text or offered is not None):
            draft = offered_message(offered, self.order[0].text) if offered else None
            edited = draft is None or answer.text != draft
            turn = replace(
                turn,
                verbal_feedback=answer.text,
                feedback_draft=draft,
                feedback_source="human"
                if edited or offered is None
                else offered_source(offered.category),
            )
        # What the person's words were about, kept with them if another window recorded
        # this round first.
        about = offered.category if offered is not None else None
        if about is None and answer is not None:
            about = answer.instruction
        self._record(turn, status, self._cache_keys[played.plan.number], about)

    def _drop_unrecorded(self) -> None:
        super()._drop_unrecorded()
        # The rounds this window made past the store's are not the session's: played on,
        # the store's last round must not be taken for one of them (``choose``'s "fresh").
        self._made.clear()
        self._cache_keys.clear()
