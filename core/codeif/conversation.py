"""A CodeIF-Bench conversation, round by round (the paper's §3.1), with the model and the
executor passed in: :func:`play` decides what each round says and what its verdicts mean;
who answers (a model, a script) and where the checks run is the caller's.

- **static** (①): round 1 gives the initial instruction, round i the i-th instruction of the
  task's order; the model sees (I1, A1, I2, A2, ..., I_i), its own earlier answers and no
  feedback; round i's code is checked against every instruction given so far.
- **dynamic** (②, ``--protocol convtui``; under ``--protocol codeif`` the authors' dynamic
  script is played instead, authors_dynamic.py): instruction rounds and feedback rounds, at
  most twice as many rounds as instructions. An instruction round gives the first
  instruction, in the task's order, that the current code does not follow and that was not
  dropped (so an instruction already met is never given, and one forgotten is given again);
  when it is not followed, a feedback round repeats it with what went wrong (compiler
  errors, the instructions not followed); an instruction failed in both is dropped. The
  conversation ends when the code follows every instruction not dropped. Every round checks
  every instruction, given or not, since the next choice depends on all of them; the metrics
  count the given ones.
- **person**: a person plays the user (``convtui session --task CodeIF/…``). Round 1 gives
  the initial instruction; before each later round ``choose`` is handed the static order's
  next instruction not yet given and returns what the round says (that instruction, edited,
  another one, or the person's own words about one), or None to end. Every instruction is
  checked every round, so the person sees which the code follows; at most twice as many
  rounds as instructions, as dynamic.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal, get_args

from convtui.core.codeif.instructions import BASE, Instruction
from convtui.core.codeif.metrics import Round, RoundKind
from convtui.core.codeif.programs import own_verdicts, unmet, verdicts
from convtui.core.execution.types import ExecResult
from convtui.core.models.types import ChatMessage

# What bench codeif plays; a person plays ``person`` conversations in the app.
BenchMode = Literal["static", "dynamic"]
Mode = Literal[BenchMode, "person"]
MODES: tuple[BenchMode, ...] = get_args(BenchMode)
CHECKS_ALL: tuple[Mode, ...] = ("dynamic", "person")  # every round checks every instruction


@cache
def _prompt(name: str) -> str:
    return resources.files("convtui.core.codeif").joinpath("prompts", name).read_text("utf-8")


@dataclass(frozen=True)
class RoundPlan:
    """What one round says: its number (from 1), kind, instruction and message."""

    number: int
    kind: RoundKind
    instruction: Instruction
    message: str


@dataclass(frozen=True)
class PlayedRound:
    """A round played: what was said, replied, extracted and found. ``followed`` covers the
    instructions given so far; ``checked`` every instruction the round's execution checked,
    ``own`` the same instructions on their own asserts alone."""

    plan: RoundPlan
    reply: str
    code: str
    result: ExecResult
    compile_error: str | None
    checked: dict[str, bool]
    given: tuple[str, ...]
    dropped: frozenset[str]
    own: dict[str, bool] = field(default_factory=dict)

    @property
    def followed(self) -> dict[str, bool]:
        return {c: self.checked[c] for c in self.given}

    def as_round(self) -> Round:
        return Round(
            self.plan.number,
            self.plan.kind,
            self.plan.instruction.category,
            self.followed,
            self.dropped,
            dict(self.own),
        )


Ask = Callable[[tuple[ChatMessage, ...], RoundPlan], Awaitable[str]]
Check = Callable[[str, Sequence[Instruction]], Awaitable[ExecResult]]
Extract = Callable[[str], tuple[str, str | None]]  # reply -> (code, compile error or None)
# (rounds so far, the suggested next round or None when every instruction was given) -> the
# round to play, or None to end the conversation.
Choose = Callable[[Sequence[PlayedRound], RoundPlan | None], Awaitable[RoundPlan | None]]


# How a round's message is put to the model: as the benchmark words it, or with a request to
# reason step by step first (the paper's RQ4 runs every round with a Chain-of-Thought prompt;
# its text is not published, so the words are ours, prompts/cot.md).
Prompting = Literal["direct", "cot"]
PROMPTINGS: tuple[Prompting, ...] = get_args(Prompting)


def prompted(messages: tuple[ChatMessage, ...], prompting: Prompting) -> tuple[ChatMessage, ...]:
    """``messages`` as the model is sent them: under ``cot`` the last (the round's) message
    asks for reasoning before the code; earlier rounds' messages stay as they were said."""
    if prompting == "direct" or not messages or messages[-1].role != "user":
        return messages
    last = messages[-1]
    return (*messages[:-1], ChatMessage("user", f"{last.content}\n\n{_prompt('cot.md').strip()}"))


def message_for(instruction: Instruction, task_prompt: str) -> str:
    """The benchmark's own words for giving ``instruction`` (static and dynamic rounds)."""
    if instruction.category == BASE:
        return _prompt("task.md").format(prompt=task_prompt)
    return _prompt("requirement.md").format(requirement=instruction.text)


def offered_message(instruction: Instruction, task_prompt: str) -> str:
    """The draft a person is offered for giving ``instruction`` (``person`` mode, our own
    words: the benchmark's glue "requirements:" runs straight into the instruction's first
    word, which reads as a typo to someone about to edit and send it)."""
    if instruction.category == BASE:
        return message_for(instruction, task_prompt)
    # Without trailing whitespace: the composer sends what it shows stripped, so the draft
    # sent unedited equals the draft offered.
    return _prompt("offered.md").format(requirement=instruction.text).rstrip()


def offered_drafts(instruction: Instruction, task_prompt: str) -> tuple[str, ...]:
    """Every draft a recorded person round may hold for ``instruction``: today's, and the
    benchmark's words that sessions recorded before the person wording had."""
    return (offered_message(instruction, task_prompt), message_for(instruction, task_prompt))


def feedback_message(instruction: Instruction, previous: PlayedRound) -> str:
    problems = ""
    if previous.compile_error:
        problems += _prompt("compile_error.md").format(error=previous.compile_error.strip())
    missing = [c for c in unmet(previous.checked) if c in previous.given]
    if missing:
        problems += _prompt("unmet.md").format(names=", ".join(missing))
    return _prompt("feedback.md").format(instruction=instruction.text, problems=problems)


async def play(
    given_order: Sequence[Instruction],
    mode: Mode,
    ask: Ask,
    check: Check,
    extract: Extract,
    prior: Sequence[PlayedRound] = (),
    choose: Choose | None = None,
) -> AsyncIterator[PlayedRound]:
    """Play the conversation over ``given_order`` (instructions() of the task), yielding each
    round as it ends; ``prior`` rounds (a resumed session) are not played again. ``choose``
    is the person's say in ``person`` mode (required there, unused otherwise)."""
    if (mode == "person") != (choose is not None):
        raise ValueError("a person conversation needs choose, and only it takes one")
    messages: list[ChatMessage] = []
    for done in prior:
        messages += [ChatMessage("user", done.plan.message), ChatMessage("assistant", done.reply)]
    rounds = list(prior)
    limit = rounds_limit(given_order, mode)
    while len(rounds) < limit:
        plan = _next_plan(given_order, mode, rounds)
        if choose is not None and rounds:
            plan = await choose(tuple(rounds), plan)
        if plan is None:
            return
        messages.append(ChatMessage("user", plan.message))
        reply = await ask(tuple(messages), plan)
        messages.append(ChatMessage("assistant", reply))
        code, error = extract(reply)
        given = _given(rounds, plan)
        checked_on = (
            given_order if mode in CHECKS_ALL else [i for i in given_order if i.category in given]
        )
        result = await check(code, checked_on)
        found = verdicts(result, list(checked_on))
        dropped = _dropped(rounds, plan, found)
        own = own_verdicts(result, list(checked_on))
        played = PlayedRound(plan, reply, code, result, error, found, given, dropped, own)
        rounds.append(played)
        yield played


def rounds_limit(order: Sequence[Instruction], mode: Mode) -> int:
    """The most rounds a conversation over ``order`` plays."""
    return len(order) if mode == "static" else 2 * len(order)


def _given(rounds: Sequence[PlayedRound], plan: RoundPlan) -> tuple[str, ...]:
    before = rounds[-1].given if rounds else ()
    category = plan.instruction.category
    return before if category in before else (*before, category)


def _dropped(
    rounds: Sequence[PlayedRound], plan: RoundPlan, found: dict[str, bool]
) -> frozenset[str]:
    before = rounds[-1].dropped if rounds else frozenset()
    if plan.kind == "feedback" and not found[plan.instruction.category]:
        return before | {plan.instruction.category}
    return before


def _next_plan(
    order: Sequence[Instruction], mode: Mode, rounds: Sequence[PlayedRound]
) -> RoundPlan | None:
    number = len(rounds) + 1
    prompt = order[0].text
    if mode == "static":
        instruction = order[len(rounds)]
        return RoundPlan(number, "instruction", instruction, message_for(instruction, prompt))
    if mode == "person":  # a suggestion: the static order's first instruction not yet given
        given = rounds[-1].given if rounds else ()
        for instruction in order:
            if instruction.category not in given:
                return RoundPlan(
                    number, "instruction", instruction, offered_message(instruction, prompt)
                )
        return None
    if rounds:
        last = rounds[-1]
        current = last.plan.instruction
        if last.plan.kind == "instruction" and not last.checked[current.category]:
            return RoundPlan(number, "feedback", current, feedback_message(current, last))
    checked = rounds[-1].checked if rounds else {}
    dropped = rounds[-1].dropped if rounds else frozenset()
    for instruction in order:
        if instruction.category in dropped or checked.get(instruction.category, False):
            continue
        return RoundPlan(number, "instruction", instruction, message_for(instruction, prompt))
    return None
