"""The authors' dynamic conversation (core/codeif/authors_dynamic.py, after
zhu-zhu-ding/CodeIF-Bench, branch v1, ``dynamic_conversation/multi_turn_function_eval.py`` and
``dynamic_conversation/report.py``) turn by turn, with a scripted model and scripted verdicts
(no executor): which turn comes next, what the model is sent, each turn's IA, CA, IFR and IFE,
and report.py's pairs. Every expected number is worked out by hand in the comments from the
script's rules, numbered as the module numbers them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.authors_dynamic import (
    AVERAGE,
    SCRIPT_PATH,
    Script,
    ScriptTurn,
    feedback_prompt,
    pair_rows,
    play,
    replay,
    script_code,
    script_error,
    task_pairs,
    turn_rows,
)
from convtui.core.codeif.conversation import PlayedRound, RoundPlan
from convtui.core.codeif.instructions import BASE, FUNCTIONALITY_EXTENSION, Instruction
from convtui.core.execution.types import ExecResult, TestOutcome
from convtui.core.models.types import ChatMessage

IO, EH = "Input-Output Conditions", "Exception Handling"
PROMPT = "Write f."
BASE_I = Instruction(BASE, PROMPT, (("test_1", "assert f(1) == 1"),))
IO_I = Instruction(IO, "Accept strings too.", (("io_1", "assert f('1') == 1"),))
EH_I = Instruction(EH, "Raise ValueError on None.", (("eh_1", "assert g(None)"),))
# Two requirements (rule 1), so max_turns = 2 * 2 + 2 = 6 (rule 2).
SCRIPT = Script(BASE_I, (IO_I, EH_I))


def traceback_of(name: str, line: str) -> str:
    """A failing assert's traceback as our executor reports it (Python 3.11's shape)."""
    return (
        f'Traceback (most recent call last):\n  File "<{name}>", line 1, in <module>\n'
        f"    {line}\n    {'^' * len(line)}\nAssertionError\n"
    )


def run(script: Script, verdicts: Sequence[set[str]]) -> tuple[list[PlayedRound], list[tuple]]:
    """Play ``script``; turn t's code passes the own tests of the categories in
    verdicts[t - 1]. Returns the rounds and, per model call, (kind, category, messages)."""
    asked: list[tuple] = []

    async def ask(messages: tuple[ChatMessage, ...], plan: RoundPlan) -> str:
        asked.append((plan.kind, plan.instruction.category, messages))
        return f"Here:\n```python\n# turn {plan.number}\n\n```"

    async def check(code: str) -> ExecResult:
        ok = verdicts[int(code.removeprefix("# turn ")) - 1]
        tests = tuple(
            TestOutcome(name, "pass")
            if i.category in ok
            else TestOutcome(name, "fail", 0.0, traceback_of(name, test))
            for i in script.checked
            for name, test in script.tests(i)
        )
        return ExecResult("pass" if all(t.status == "pass" for t in tests) else "fail", tests)

    async def main() -> list[PlayedRound]:
        return [r async for r in play(script, ask, check)]

    return asyncio.run(main()), asked


def metrics(turns: Sequence[ScriptTurn]) -> list[tuple[float, float, float, float]]:
    """Each turn's (IA, CA, IFR, IFE)."""
    return [(t.ia, t.ca, t.ifr, t.ife) for t in turns]


# Scenario 1: the base answer fails and its retry passes; a requirement failed twice is
# removed; the base instruction, forgotten, is given again; the limit ends the conversation.
FIRST = [
    set(),  # 1: the base answer fails its tests -> turn 2 retries it (rule 6)
    {BASE, EH},  # 2: passes -> Base first among the requirements, flag set; counter 3
    {BASE, EH},  # 3: IO (Base passes, IO is the first that fails; rule 7), missed
    {EH},  # 4: IO's retry fails too, and Base is forgotten -> IO removed (rule 8)
    {BASE},  # 5: Base again (it fails now, and comes first); counter 6 = max_turns: the end
]


def test_a_failed_base_answer_is_retried_and_the_first_failing_requirement_comes_next() -> None:
    rounds, asked = run(SCRIPT, FIRST)
    assert [(k, c) for k, c, _ in asked] == [
        ("instruction", BASE),
        ("feedback", BASE),
        ("instruction", IO),
        ("feedback", IO),
        ("instruction", BASE),
    ]
    # Turn 5 leaves Exception Handling failing, but the counter reached max_turns (rule 9):
    # EH, followed until then, was never given.
    assert EH not in {c for _, c, _ in asked}
    # Rule 3: the task's prompt alone; rule 7: a requirement's text as is, the prompt again
    # for the base instruction; each turn sees the whole conversation.
    assert [m.content for m in asked[0][2]] == [PROMPT]
    assert asked[2][2][-1].content == "Accept strings too."
    assert asked[4][2][-1].content == PROMPT
    assert [m.role for m in asked[4][2]] == ["user", "assistant"] * 4 + ["user"]
    # Rule 8: the retry's words (build_feedback_prompt), with what the failed script printed:
    # the first failing test's traceback at the script's path, turn 1's code ("# turn 1"
    # once the blank line is dropped, rule 4) on line 1, a blank line, the test on line 3;
    # no position line.
    assert asked[1][2][-1].content == (
        'Please note that you have not followed the instructions below:\n"Write f."\n\n'
        "Error message:\n```\nTraceback (most recent call last):\n"
        f'  File "{SCRIPT_PATH}", line 3, in <module>\n    assert f(1) == 1\n'
        "AssertionError\n```\n\n"
    )
    assert rounds[0].code == "# turn 1"
    assert [r.dropped for r in rounds] == [frozenset()] * 3 + [frozenset({IO})] * 2
    assert rounds[-1].given == (BASE, IO)  # given, each once (rule 7's list repeats Base)
    rows = turn_rows(SCRIPT, rounds)
    assert rows[-1].given == (BASE, IO, BASE)
    assert metrics(rows) == [
        (0, 0, 0, 0),  # rule 6: IA = CA = IFE = 0, IFR 0
        (1, 1, 0, 0.5),  # rule 6: the retry passes, IFE 0.5
        # IO fails; given [Base, IO], Base passes: CA 1/2; Base is flagged and passes:
        # IFR 0/1; IFE = 1 passing / turn 3.
        (0, 1 / 2, 0, 1 / 3),
        # Retry: Base and IO fail: CA 0/2; Base (flag still set) fails: IFR 1/1; IFE 0/4.
        (0, 0, 1, 0),
        # Base passes: given [Base, IO, Base], 2 of 3 pass; IFR 0/1; IFE 2/5.
        (1, 2 / 3, 0, 2 / 5),
    ]


# Scenario 2: a retry on the turn before the limit lets one more turn through.
SECOND = [
    {BASE},  # 1: passes: no retry; counter 2
    {BASE},  # 2: IO, missed; counter 3
    {BASE},  # 3: IO's retry, missed -> IO removed; counter 4
    {BASE},  # 4: EH (Base passes, IO is gone), missed; counter 5 < 6
    set(),  # 5: EH's retry, missed, Base forgotten -> EH removed; counter 6 <= 6
    {BASE},  # 6: Base again; counter 7 >= 6: the end, max_turns turns in all
]


def test_the_turn_limit_counts_turns_as_the_script_does() -> None:
    rounds, asked = run(SCRIPT, SECOND)
    assert len(rounds) == SCRIPT.max_turns == 6
    assert [(k, c) for k, c, _ in asked] == [
        ("instruction", BASE),
        ("instruction", IO),
        ("feedback", IO),
        ("instruction", EH),
        ("feedback", EH),
        ("instruction", BASE),
    ]
    assert metrics(turn_rows(SCRIPT, rounds)) == [
        (1, 1, 0, 1),  # rule 6
        (0, 1 / 2, 0, 1 / 2),  # given [Base, IO]: Base passes; Base flagged, passes
        (0, 1 / 2, 0, 1 / 3),
        (0, 1 / 3, 0, 1 / 4),  # given [Base, IO, EH]
        (0, 0, 1, 0),  # Base fails: IFR 1/1
        (1, 2 / 4, 0, 2 / 6),  # given [Base, IO, EH, Base]
    ]


def test_an_instruction_turn_at_the_limit_gets_no_retry() -> None:
    # Nothing ever passes: 1 base, 2 its retry (Base is then never given again), 3/4 IO and
    # its retry, 5 EH: the counter reaches 6 = max_turns after it, before its retry.
    rounds, asked = run(SCRIPT, [set()] * 10)
    assert [(k, c) for k, c, _ in asked] == [
        ("instruction", BASE),
        ("feedback", BASE),
        ("instruction", IO),
        ("feedback", IO),
        ("instruction", EH),
    ]
    # Base, never followed, stays in CA's count: CA is 0 of 2, then 0 of 3.
    assert metrics(turn_rows(SCRIPT, rounds)) == [(0, 0, 0, 0)] * 5
    assert rounds[-1].dropped == frozenset({IO})  # EH had no retry to fail


def test_the_conversation_ends_when_nothing_fails() -> None:
    rounds, asked = run(SCRIPT, [{BASE, IO, EH}])
    assert len(asked) == 1 and replay(SCRIPT, [rounds[0].own]).next is None
    assert metrics(turn_rows(SCRIPT, rounds)) == [(1, 1, 0, 1)]


def test_a_retry_failed_removes_every_requirement_with_the_same_words() -> None:
    # Their script removes requirements by text (item['instruction'] != ...): EH, worded as
    # IO, goes with it and is never given.
    twin = Script(BASE_I, (IO_I, Instruction(EH, IO_I.text, EH_I.tests)))
    _, asked = run(twin, [{BASE}] * 3 + [{BASE, IO, EH}])
    assert [(k, c) for k, c, _ in asked] == [
        ("instruction", BASE),
        ("instruction", IO),
        ("feedback", IO),
    ]


def test_report_py_pairs_turns_and_averages_pairs_over_the_tasks_that_have_them() -> None:
    first = replay(SCRIPT, [{c: c in ok for c in (BASE, IO, EH)} for ok in FIRST]).turns
    second = replay(SCRIPT, [{c: c in ok for c in (BASE, IO, EH)} for ok in SECOND]).turns
    # One task: turns 1+2, 3+4, then turn 5 alone under the name "5-6".
    assert [name for name, _ in task_pairs(first)] == ["1-2", "3-4", "5-6"]
    assert task_pairs(first)[2][1] == {"ia": 1, "ifr": 0, "ca": 2 / 3, "ife": 2 / 5}
    rows = {r.label: r for r in pair_rows([first, second])}
    assert list(rows) == ["1-2", "3-4", "5-6", AVERAGE]
    expected = {
        # first: 1-2 = IA (0+1)/2, IFR 0, CA (0+1)/2, IFE (0+.5)/2 = .25;
        # second: 1-2 = IA (1+0)/2, IFR 0, CA (1+.5)/2 = .75, IFE (1+.5)/2 = .75.
        "1-2": {"ia": 0.5, "ifr": 0.0, "ca": (0.5 + 0.75) / 2, "ife": (0.25 + 0.75) / 2},
        # first: IA 0, IFR (0+1)/2, CA (1/2+0)/2 = 1/4, IFE (1/3+0)/2 = 1/6;
        # second: IA 0, IFR 0, CA (1/2+1/3)/2 = 5/12, IFE (1/3+1/4)/2 = 7/24.
        "3-4": {"ia": 0.0, "ifr": 0.25, "ca": (1 / 4 + 5 / 12) / 2, "ife": (1 / 6 + 7 / 24) / 2},
        # first: turn 5 alone, IA 1, IFR 0, CA 2/3, IFE 2/5;
        # second: IA (0+1)/2, IFR (1+0)/2, CA (0+1/2)/2 = 1/4, IFE (0+1/3)/2 = 1/6.
        "5-6": {"ia": 0.75, "ifr": 0.25, "ca": (2 / 3 + 1 / 4) / 2, "ife": (2 / 5 + 1 / 6) / 2},
    }
    for name, values in expected.items():
        assert rows[name].tasks == 2
        assert rows[name].values == pytest.approx(values)
    # avg: the mean of the three pairs' averages, each pair counted once.
    assert rows[AVERAGE].values == pytest.approx(
        {m: sum(v[m] for v in expected.values()) / 3 for m in ("ia", "ifr", "ca", "ife")}
    )
    assert rows[AVERAGE].values["ia"] == pytest.approx(5 / 12)  # (.5 + 0 + .75) / 3


def test_feedback_words_and_code_reading_are_the_scripts() -> None:
    # build_feedback_prompt: the error block only when the text is not empty, stripped.
    assert feedback_prompt("Do X.", " boom \n") == (
        'Please note that you have not followed the instructions below:\n"Do X."\n\n'
        "Error message:\n```\nboom\n```\n\n"
    )
    assert feedback_prompt("Do X.", "") == (
        'Please note that you have not followed the instructions below:\n"Do X."\n\n'
    )
    # extract_python: the first "```python\n" block; a "\r\n" after the fence is not one, so
    # the whole reply is the code. remove_blank_lines_with_spaces; docstrings stay.
    reply = (
        'Sure.\n```python\ndef f():\n    """Doc."""\n\n    return 1\n   \n```\n```python\nx\n```'
    )
    assert script_code(reply) == 'def f():\n    """Doc."""\n    return 1'
    assert script_code("```python\r\nx = 1\n```") == "```python\nx = 1\n```"


def test_the_error_text_is_what_their_script_would_print() -> None:
    code = "def f(x):\n    return x"
    timed_out = ExecResult("timeout", (TestOutcome("test_1", "timeout"),))
    assert script_error(SCRIPT, BASE_I, code, timed_out) == (
        f"Command '['python', '{SCRIPT_PATH}']' timed out after 10 seconds"
    )
    loading = ExecResult("error", (TestOutcome("test_1", "not_run"),), error_message="boom")
    assert script_error(SCRIPT, BASE_I, code, loading) == "boom"
    # A frame in the code keeps its line (the code comes first in their script); the test's
    # line is counted after the code's 2 lines and a blank line. Each source line is the
    # script's as the interpreter prints it: leading whitespace dropped, trailing kept.
    code = "def f(x):\n    return x  "
    inner = (
        "Traceback (most recent call last):\n"
        '  File "<test_1>", line 1, in <module>\n    assert f(1) == 1\n           ^^^^\n'
        '  File "__test__.py", line 2, in f\n    return x\n           ^\nNameError: oops\n'
    )
    failed = ExecResult("fail", (TestOutcome("test_1", "error", 0.0, inner),))
    assert script_error(SCRIPT, BASE_I, code, failed) == (
        "Traceback (most recent call last):\n"
        f'  File "{SCRIPT_PATH}", line 4, in <module>\n    assert f(1) == 1\n'
        f'  File "{SCRIPT_PATH}", line 2, in f\n    return x  \nNameError: oops\n'
    )
    # Code that does not compile: the script's SyntaxError, as Python prints it.
    error = script_error(SCRIPT, BASE_I, "def f(:", ExecResult("error"))
    assert error.startswith(f'  File "{SCRIPT_PATH}", line 1\n') and "SyntaxError" in error


skip_without_data = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)


@skip_without_data
def test_the_requirements_are_multi_turns_without_functionality_extension() -> None:
    catalog = load_catalog("codeif", DATA)
    script = Script.of(catalog.get("CodeIF/11"))
    order = catalog.get("CodeIF/11").instruction_order
    assert [i.category for i in script.requirements] == [
        c for c in order if c != FUNCTIONALITY_EXTENSION
    ]
    assert script.max_turns == 2 * 6 + 2
    assert FUNCTIONALITY_EXTENSION not in [i.category for i in script.checked]
    # CodeIF/36's multi-turn leaves out Edge Case Handling: never given, never checked.
    other = Script.of(catalog.get("CodeIF/36"))
    assert "Edge Case Handling" not in [i.category for i in other.checked]
    assert other.max_turns == 2 * 5 + 2


@skip_without_data
def test_a_one_string_unit_test_is_written_a_character_a_line() -> None:
    task = load_catalog("codeif", DATA).get("CodeIF/50")
    script = Script.of(task)
    assert {"Code Complexity", "Code Standard"} <= script.one_string
    complexity = next(i for i in script.requirements if i.category == "Code Complexity")
    ((name, text),) = script.tests(complexity)
    ((_, whole),) = complexity.tests
    assert name == "code_complexity_1" and text == "\n".join(whole)
    # So their script never compiles: whatever the code, that is the error text.
    assert "SyntaxError" in script_error(script, complexity, "x = 1", ExecResult("fail"))
