"""CodeIF-Bench conversations round by round, with a scripted model and scripted verdicts
(no executor): what each round says and which instruction comes next, in static and dynamic
mode, including a feedback round, a dropped instruction, an instruction never given because
the code already follows it, and one given again after it was forgotten."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from convtui.core.codeif.conversation import (
    PlayedRound,
    RoundPlan,
    message_for,
    offered_drafts,
    offered_message,
    play,
)
from convtui.core.codeif.instructions import BASE, Instruction
from convtui.core.codeif.metrics import round_scores
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.models.types import ChatMessage

IO, EH, FE = "Input-Output Conditions", "Exception Handling", "Functionality Extension"
ORDER = (
    Instruction(BASE, "Write f.", (("test_1", "assert f(1) == 1"),)),
    Instruction(IO, "Accept strings too.", (("io_1", "assert f('1') == 1"),)),
    Instruction(EH, "Raise ValueError on None.", (("eh_1", "..."),)),
    Instruction(FE, "Add a scale argument.", (("fe_1", "..."),)),
)


def run(mode: str, script: Sequence[set[str]]) -> tuple[list[PlayedRound], list[tuple]]:
    """Round i's code follows the categories in script[i-1]."""
    asked: list[tuple] = []

    async def ask(messages: tuple[ChatMessage, ...], plan: RoundPlan) -> str:
        asked.append((plan.kind, plan.instruction.category, messages))
        return f"```python\n# round {plan.number}\n```"

    async def check(code: str, given: Sequence[Instruction]) -> ExecResult:
        number = int(code.split("round ")[1].split("\n")[0])
        ok = script[number - 1]
        tests = tuple(
            TestOutcome(name, "pass" if i.category in ok else "fail", 0.0, "")
            for i in given
            for name, _ in i.tests
        )
        return ExecResult("pass" if all(t.status == "pass" for t in tests) else "fail", tests)

    def extract(reply: str) -> tuple[str, str | None]:
        return reply.removeprefix("```python\n").removesuffix("```"), None

    async def main() -> list[PlayedRound]:
        return [r async for r in play(ORDER, mode, ask, check, extract)]  # type: ignore[arg-type]

    return asyncio.run(main()), asked


def test_a_static_conversation_gives_every_instruction_in_order_without_feedback() -> None:
    rounds, asked = run("static", [{BASE}, {BASE}, {BASE, IO, EH}, {IO, FE}])
    assert [(k, c) for k, c, _ in asked] == [("instruction", c) for c in (BASE, IO, EH, FE)]
    # Round 3 sees I1, A1, I2, A2, I3: its own answers, no feedback.
    messages = asked[2][2]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert (
        messages[0].content
        == "You are an expert Python programmer, and here is your task: Write f."
    )
    assert messages[4].content == (
        "The function should meet the following requirements:Raise ValueError on None."
    )
    # Each round is checked against the instructions given so far only.
    assert [list(r.checked) for r in rounds] == [
        [BASE],
        [BASE, IO],
        [BASE, IO, EH],
        [BASE, IO, EH, FE],
    ]
    assert [s.ia for s in round_scores([r.as_round() for r in rounds])] == [1, 0, 1, 1]


def test_a_dynamic_conversation_gives_feedback_drops_and_comes_back() -> None:
    script = [
        {BASE, EH},  # 1: Base followed; EH already followed without being asked
        {BASE, EH},  # 2: IO given, not followed
        {BASE, EH},  # 3: IO's feedback round fails too: IO is dropped
        {EH, FE},  # 4: EH is met, so FE is next; followed, but Base forgotten
        {BASE, EH, FE},  # 5: Base given again and followed: nothing left
    ]
    rounds, asked = run("dynamic", script)
    assert [(k, c) for k, c, _ in asked] == [
        ("instruction", BASE),
        ("instruction", IO),
        ("feedback", IO),
        ("instruction", FE),
        ("instruction", BASE),
    ]
    assert rounds[2].dropped == frozenset({IO}) and rounds[4].dropped == frozenset({IO})
    feedback = asked[2][2][-1].content
    assert "Accept strings too." in feedback and "Input-Output Conditions" in feedback
    # The metrics count what was given: EH never was.
    assert rounds[-1].followed == {BASE: True, IO: False, FE: True}
    scores = round_scores([r.as_round() for r in rounds])
    assert [s.ia for s in scores] == [1, 0, 0, 1, 1]
    # Round 4 forgets Base, the one instruction round 3 followed; round 5 keeps FE.
    assert [s.ifr for s in scores] == [0, 0, 0, 1, 0]


def test_a_dynamic_conversation_stops_at_twice_the_instructions() -> None:
    rounds, _ = run("dynamic", [set()] * 20)
    # Nothing is ever followed: each instruction gets a round and a feedback round.
    assert len(rounds) == 2 * len(ORDER)
    assert rounds[-1].dropped == frozenset({BASE, IO, EH, FE})


def test_a_person_is_offered_each_instruction_in_our_words_not_the_benchmark_glue() -> None:
    """The benchmark's "…following requirements:{text}" runs into the instruction's first
    word ("requirements:Raise"); a person about to edit and send a draft gets it as its own
    paragraph. Drafts recorded in the benchmark's words still count as offered on resume."""
    eh = ORDER[2]
    offered = offered_message(eh, ORDER[0].text)
    assert offered.endswith("\n\nRaise ValueError on None.")
    assert "requirements:" not in offered
    assert offered_message(ORDER[0], ORDER[0].text) == message_for(ORDER[0], ORDER[0].text)
    assert offered_drafts(eh, ORDER[0].text) == (offered, message_for(eh, ORDER[0].text))
