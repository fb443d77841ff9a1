"""CodeIF-Bench's dynamic conversation as its authors' script plays and scores it: ``bench
codeif --mode dynamic --protocol codeif``. (``--protocol convtui`` plays convtui's dynamic
conversation, conversation.py, scored by the paper's formulas, metrics.py.)

Every rule below is read from zhu-zhu-ding/CodeIF-Bench, branch v1,
``dynamic_conversation/multi_turn_function_eval.py`` (``dynamic_test_dialogue``,
``test_completions``, ``build_feedback_prompt``, ``extract_python``,
``remove_blank_lines_with_spaces``) and ``dynamic_conversation/report.py``:

1. **Requirements**: the follow-ups the task's ``multi-turn`` names, in that order,
   Functionality Extension left out; a requirement ``multi-turn`` does not name is never
   given (CodeIF/36 and CodeIF/51 leave out Edge Case Handling).
2. **Turn limit**: ``max_turns = 2 * len(requirements) + 2`` (rule 9 says when it ends).
3. **Turn 1** sends the task's ``prompt`` alone: no template, no list of requirements
   (``build_initial_prompt`` is never called).
4. **Code**: the first block opened by ```` ```python ```` and a newline (``\\n`` only, not
   ``\\r\\n``), else the whole reply (``extract_python``), then blank and whitespace-only
   lines dropped (``remove_blank_lines_with_spaces``). No docstring is removed, and the base
   answer is read the same way.
5. **Checks** (``test_completions``): one script per instruction, the code, a blank line,
   then each of the instruction's own tests and a newline (the base instruction's are the
   task's ``test``; no instruction is checked with another's tests); followed when ``python``
   exits with 0 within 10 seconds. A ``unit_test`` that the data file holds as one string,
   not a list, is iterated character by character, one character a line: that script never
   compiles, so the instruction is never followed (CodeIF/50's Code Complexity and Code
   Standard and CodeIF/51's Input-Output Conditions in today's file; most of v0's).
6. **The base answer**: when turn 1's code fails the base tests, turn 2 is one retry with
   ``build_feedback_prompt(prompt, error)``. Turn 1 scores IA = CA = IFE = 1 or 0 and IFR 0;
   the retry IA = CA = 1 or 0, IFR 0, IFE 0.5 or 0. If either passes, the base instruction
   goes first among the requirements with its ``passed`` flag set; if both fail it is never
   given again (it still counts in CA, rule 10).
7. **Selection**: each later turn gives the first requirement (the base one first when it is
   there) whose own tests fail on the current code (the last turn's); when none fails, the
   conversation ends. The message is the requirement's text as is (the task's prompt for the
   base instruction). Every such turn appends its requirement to the list of instructions
   given, repeats included: one given again after it was forgotten counts twice in CA.
8. **Retry**: when the turn's requirement fails its tests, the next turn sends
   ``build_feedback_prompt(text, error)``, ``error`` what the failed check printed on stderr
   (or the timeout's text). Passed there (or in its own turn) the requirement's ``passed``
   flag is set, and no flag is ever cleared. Failed there, every requirement with its text is
   removed: never given again, no longer in IFR.
9. **End**: after a requirement's turn, when the turn counter (the next turn's number) has
   reached ``max_turns`` the conversation ends, before its retry and before its flag is set;
   the ``while`` loop also ends once the counter passes ``max_turns``. So a conversation
   plays at most ``max_turns`` turns.
10. **Metrics per turn** (after rule 6's): IA, the turn's requirement passes its tests; CA,
    the share of the instructions given so far (rule 7's list) that pass theirs; IFR, the
    share of the requirements still there whose ``passed`` flag is set that now fail (0 when
    no flag is set); IFE, CA's count (not share) divided by the turn's number.
11. **Averages** (``report.py``): a task's turns are paired in order, "1-2", "3-4", ... (an
    odd last turn stands alone under its pair's name); each pair's four metrics are averaged
    over the tasks that have it, in percent; the "avg" row is the mean of the pairs' averages,
    not weighted by how many tasks reached each pair.

The model sees what their script sends (rules 3, 7, 8), including its quirks: the task's
prompt alone at turn 1, the base prompt sent again when the base answer is forgotten, a
retry's words carrying their script's error text, the requirement that can never be followed
of rule 5 asked for and retried. What differs, and why:

- their script calls one model whatever ``--model`` says (``qwen-coder-turbo``); here the
  model is the run's;
- one execution per turn checks every instruction (each test in a fresh copy of the code's
  namespace, programs.py), not one script per instruction: the 10-second limit holds for each
  test, and ten seconds per instruction for the whole execution;
- the error text is rebuilt from that execution as their script's Python would print it for
  a script at :data:`SCRIPT_PATH` (their temporary file has a random name): a script that does
  not compile as ``compile`` reports it; a failing test's traceback (chained exceptions
  included) with that path, the script's line numbers and the script's lines as the
  interpreter shows them, without the position lines (``^^^``) Python 3.11 added (their
  ``environment.txt`` pins Python 3.9); error texts otherwise follow this machine's Python.
  Our executor keeps only the message of an exception raised while the code loads, so that
  message alone is the error text there; and a script stopped by our executor's other limits
  (memory, output) reads as what the executor says.

``scripts/codeif_dynamic_check.py`` plays their script itself, unmodified, against the answers
a run recorded, and compares every turn, message, code, metric and report.py line with ours.
"""

from __future__ import annotations

import re
import tomllib
import traceback
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from string import Template

from convtui.core.catalog.repo_rows import as_held
from convtui.core.catalog.tasks import Task, TestSpec
from convtui.core.codeif.conversation import Ask, PlayedRound, RoundPlan
from convtui.core.codeif.instructions import (
    BASE,
    FUNCTIONALITY_EXTENSION,
    Instruction,
    instructions,
)
from convtui.core.codeif.metrics import RoundKind
from convtui.core.codeif.programs import own_verdicts, verdicts
from convtui.core.codeif.records import round_plan
from convtui.core.execution.requests import task_imports, task_modules
from convtui.core.execution.types import ExecRequest, ExecResult, Limits
from convtui.core.feedback.render import compile_feedback
from convtui.core.models.types import ChatMessage
from convtui.core.settings.config import SessionStatus
from convtui.core.turns.record import Turn

# Their script's limit for one instruction's script (``subprocess.run(..., timeout=10)``).
SCRIPT_TIMEOUT_S = 10
# Their repository script (multi_turn_repo_eval.py): 60 s for one check's pytest runs, and an
# error text of at most 1,024 characters (``extract_key_error_message``).
REPO_TIMEOUT_S = 60
REPO_ERROR_CHARS = 1024
# Stands for the temporary file their script runs (``tempfile.NamedTemporaryFile(mode="w",
# suffix=".py")``: /tmp/tmp, eight random characters, .py) in the error texts we rebuild.
SCRIPT_PATH = "/tmp/tmpcodeif00.py"
# extract_python's pattern: "```python" then "\n" only (their "\r?\n" variant is commented out).
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
# The position lines Python 3.11 added under a traceback's source lines.
_POSITION_LINE = re.compile(r"^[ \t]*[\^~]+[ \t]*$")
_MODULE_FILE = (
    "__test__.py"  # the file our sandbox runs the code as (core/execution/sandbox/runner.py)
)

Verdicts = Mapping[str, bool]  # instruction category -> its own tests pass


@cache
def _texts() -> dict[str, Template]:
    path = resources.files("convtui.core.codeif").joinpath("prompts", "dynamic_conversation.toml")
    return {k: Template(v) for k, v in tomllib.loads(path.read_text("utf-8"))["text"].items()}


def feedback_prompt(instruction_text: str, error: str | None) -> str:
    """``build_feedback_prompt``: the instruction not followed, then the error (rule 8)."""
    texts = _texts()
    message = texts["feedback"].substitute(instruction=instruction_text)
    if error:  # their ``if error_msg:`` tests the text before it is stripped
        message += texts["error"].substitute(error=error.strip())
    return message


def script_code(reply: str) -> str:
    """The code their script checks from a reply (rule 4)."""
    found = _PYTHON_BLOCK.search(reply)
    code = found.group(1) if found else reply
    return "\n".join(line for line in code.splitlines() if line.strip())


@dataclass(frozen=True)
class Script:
    """What their script reads from one task: the base instruction and the requirements it
    gives, in order (rule 1), and which requirements' tests are one string (rule 5)."""

    base: Instruction
    requirements: tuple[Instruction, ...]
    one_string: frozenset[str] = frozenset()
    repository: bool = False  # a repository task: checked by their repository script

    @classmethod
    def of(cls, task: Task) -> Script:
        order = instructions(task)
        by_category = {i.category: i for i in order[1:]}
        missing = [c for c in task.instruction_order if c not in by_category]
        if missing:  # their script stops there: raw_requirements[k] raises KeyError
            raise ValueError(f"{task.id}: multi-turn names {missing[0]!r}, no requirement")
        # L-3 rows have no ``multi-turn``: their script would stop at its KeyError; the
        # requirements come in the file's order instead (the README lists it).
        named = task.instruction_order or tuple(by_category)
        follow_ups = tuple(by_category[c] for c in named if c != FUNCTIONALITY_EXTENSION)
        # A repository task's ``test`` is one pytest id, which their script iterates
        # character by character; it evidently means the one test (the README lists it).
        one_string = frozenset(
            r.category for r in task.requirements if r.one_string and task.site is None
        )
        return cls(order[0], follow_ups, one_string, repository=task.site is not None)

    @property
    def max_turns(self) -> int:
        """Rule 2."""
        return 2 * len(self.requirements) + 2

    @property
    def checked(self) -> tuple[Instruction, ...]:
        """Every instruction a turn's code is checked on: the base one, then the
        requirements (each once)."""
        unique = {i.category: i for i in (self.base, *self.requirements)}
        return tuple(unique.values())

    def tests(self, instruction: Instruction) -> tuple[tuple[str, str], ...]:
        """The instruction's tests as their script writes them (rule 5): a one-string
        ``unit_test`` becomes one test of its characters, one a line."""
        if instruction.category in self.one_string:
            (name, text), *_ = instruction.tests
            return ((name, "\n".join(text)),)
        return instruction.tests


def script_request(
    task: Task, code: str, script: Script, limits: Limits | None = None
) -> ExecRequest:
    """The execution that checks ``code`` (already read as rule 4 reads it) on every
    instruction of ``script``, each on its own tests (rule 5)."""
    checked = script.checked
    snippets = tuple(test for i in checked for test in script.tests(i))
    if task.site is not None:
        return _project_request(task, code, snippets, limits)
    return ExecRequest(
        code=code + "\n\n",  # their script: the code, "\n\n", then the tests
        tests=TestSpec("snippets", snippets=snippets),
        known_modules=task_modules(task),
        task_imports=task_imports(task),
        limits=replace(
            limits or Limits(),
            per_test_s=float(SCRIPT_TIMEOUT_S),
            wall_s=float(SCRIPT_TIMEOUT_S * len(checked)),
        ),
        task_id=task.id,
        as_main=True,  # their script runs `python file.py`
    )


def _project_request(
    task: Task, code: str, tests: tuple[tuple[str, str], ...], limits: Limits | None
) -> ExecRequest:
    """A repository task's checks: pytest on every instruction's tests in the project, under
    their repository script's limit (``func_set_timeout(60)``), the code indented as the row
    says (their ``adjust_indent``)."""
    from convtui.core.projects.checkout import PROJECT_LIMITS, project_request

    return project_request(
        task,
        code,
        TestSpec("pytest", snippets=as_held(task, tests)),  # what their copy held
        limits=replace(
            limits or PROJECT_LIMITS,
            per_test_s=float(REPO_TIMEOUT_S),
            wall_s=float(REPO_TIMEOUT_S),
        ),
        indent=task.site.indent if task.site else None,
        skips_pass=True,  # their script reads pytest's exit status
    )


def repository_error(tests: Sequence[str], result: ExecResult) -> str:
    """``extract_key_error_message`` of their repository script, rebuilt: the failures of the
    instruction's tests as pytest reports them, then one ``FAILED`` line each, cut to 1,024
    characters; the timeout's text when the run was stopped."""
    outcomes = {t.name: t for t in result.tests}
    failing = [outcomes[n] for n in tests if n in outcomes and outcomes[n].status != "pass"]
    if result.status == "timeout" and any(t.status in ("timeout", "missing") for t in failing):
        return "time out"
    # Tests that never ran (the module did not import) are pytest's ERRORS, not FAILURES:
    # their extraction finds neither a FAILURES section nor a FAILED line, so no text.
    failing = [t for t in failing if t.status not in ("not_run", "missing")]
    if not failing:
        return ""
    blocks = []
    for outcome in failing:
        title = outcome.name.split("::", 1)[-1].replace("::", ".")
        body = outcome.traceback or result.error_traceback or result.detail
        blocks.append(f"{f' {title} ':_^80}\n{body.rstrip()}")
    summary = [f"FAILED {t.name}" for t in failing]
    text = "\n".join(blocks) + "\n\n" + "\n".join(summary)
    return text if len(text) <= REPO_ERROR_CHARS else text[: REPO_ERROR_CHARS - 3] + "..."


def script_error(
    script: Script, instruction: Instruction, code: str, result: ExecResult, *, repo: bool = False
) -> str:
    """What their script would print on stderr checking ``instruction`` on ``code`` (or the
    timeout's text), rebuilt from ``result`` (see the module's notes); "" when it passed.
    ``repo``: their repository script's text instead (:func:`repository_error`)."""
    if repo:
        return repository_error([name for name, _ in instruction.tests], result)
    tests = script.tests(instruction)
    source = code + "\n\n" + "".join(test + "\n" for _, test in tests)
    try:
        compile(source, SCRIPT_PATH, "exec", dont_inherit=True)
    except Exception as exc:  # Python prints a script that does not compile so, on stderr
        return "".join(traceback.format_exception_only(type(exc), exc))
    timed_out = f"Command '['python', '{SCRIPT_PATH}']' timed out after {SCRIPT_TIMEOUT_S} seconds"
    outcomes = {t.name: t for t in result.tests}
    line = code.count("\n") + 3  # where the first test starts: after the code and a blank line
    for name, test in tests:
        outcome = outcomes.get(name)
        first = line
        line += test.count("\n") + 1
        if outcome is None or outcome.status == "pass":
            continue
        unreached = outcome.status in ("not_run", "missing")
        if outcome.status == "timeout" or (unreached and result.status == "timeout"):
            return timed_out
        if unreached or not outcome.traceback:
            return result.error_message or result.detail
        return _script_traceback(outcome.traceback, name, first, source)
    return ""


def _script_traceback(text: str, name: str, first: int, source: str) -> str:
    """A test's traceback from our executor as Python prints it for their one-file script
    ``source``: its frames in the code and in this test at the script's path and lines, each
    with the script's line under it as the interpreter shows it (leading whitespace dropped,
    trailing kept, where the traceback module strips both), and no position lines."""
    script_lines = source.split("\n")
    frame = re.compile(
        rf'^(  File )"({re.escape(f"<{name}>")}|{re.escape(_MODULE_FILE)})", line (\d+)(.*)$'
    )
    shown: list[str] = []
    at: int | None = None  # the script line the last frame named, until its source line
    for line in text.splitlines():
        found = frame.match(line)
        if found:
            number = int(found.group(3))
            at = number if found.group(2) == _MODULE_FILE else first + number - 1
            shown.append(f'{found.group(1)}"{SCRIPT_PATH}", line {at}{found.group(4)}')
            continue
        if at is not None and line.startswith("    ") and 0 < at <= len(script_lines):
            line = "    " + script_lines[at - 1].lstrip(" \t\f")
        at = None
        if not _POSITION_LINE.match(line):
            shown.append(line)
    return "\n".join(shown) + "\n"


@dataclass(frozen=True)
class ScriptTurn:
    """One turn as their script logs it: its metrics (rules 6 and 10), the instructions given
    so far (rule 7's list, repeats included) and the requirements removed (rule 8)."""

    number: int
    kind: RoundKind
    instruction: str
    ia: float
    ca: float
    ifr: float
    ife: float
    given: tuple[str, ...]
    dropped: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Step:
    """A turn their script plays: its number (from 1), kind and instruction."""

    number: int
    kind: RoundKind
    instruction: Instruction


@dataclass
class _Requirement:
    instruction: Instruction
    passed: bool = False


def _dialogue(script: Script, log: list[ScriptTurn]) -> Generator[Step, Verdicts, None]:
    """``dynamic_test_dialogue``: yields each turn it plays and is sent that turn's code's
    verdicts (every instruction on its own tests); appends each turn's row to ``log``."""
    base = script.base
    requirements = [_Requirement(i) for i in script.requirements]
    given: list[Instruction] = []
    dropped: set[str] = set()

    def row(step: Step, own: Verdicts, *, base_ife: float | None = None) -> ScriptTurn:
        category = step.instruction.category
        names = tuple(i.category for i in given)
        if base_ife is not None:  # rule 6: the base turns' fixed rows
            ok = float(own[category])
            return ScriptTurn(step.number, step.kind, category, ok, ok, 0.0, base_ife, names)
        kept = sum(own[i.category] for i in given)
        flagged = [r for r in requirements if r.passed]
        forgotten = sum(not own[r.instruction.category] for r in flagged)
        return ScriptTurn(
            step.number,
            step.kind,
            category,
            ia=float(own[category]),
            ca=kept / len(given),
            ifr=forgotten / len(flagged) if flagged else 0.0,
            ife=kept / step.number,
            given=names,
            dropped=frozenset(dropped),
        )

    turn = 1
    step = Step(turn, "instruction", base)
    own = yield step
    given.append(base)
    log.append(row(step, own, base_ife=float(own[BASE])))
    turn += 1
    passed = own[BASE]
    if not passed:
        step = Step(turn, "feedback", base)
        own = yield step
        passed = own[BASE]
        log.append(row(step, own, base_ife=0.5 if passed else 0.0))
        turn += 1
    if passed:
        requirements.insert(0, _Requirement(base, passed=True))
    while turn <= script.max_turns:
        current = next((r for r in requirements if not own[r.instruction.category]), None)
        if current is None:
            return
        category = current.instruction.category
        step = Step(turn, "instruction", current.instruction)
        own = yield step
        given.append(current.instruction)
        log.append(row(step, own))
        turn += 1
        if turn >= script.max_turns:
            return
        if own[category]:
            current.passed = True
            continue
        step = Step(turn, "feedback", current.instruction)
        own = yield step
        scored = row(step, own)  # IFR before the removal below, as their script counts it
        turn += 1
        if own[category]:
            current.passed = True
            log.append(scored)
            continue
        text = current.instruction.text
        dropped.update(r.instruction.category for r in requirements if r.instruction.text == text)
        requirements = [r for r in requirements if r.instruction.text != text]
        log.append(replace(scored, dropped=frozenset(dropped)))


@dataclass(frozen=True)
class Replay:
    """Their script run over recorded verdicts: the turn it played for each (``steps``),
    its rows (``turns``), and the turn it plays next (None: the conversation is over)."""

    steps: tuple[Step, ...]
    turns: tuple[ScriptTurn, ...]
    next: Step | None


def replay(script: Script, verdicts_by_turn: Sequence[Verdicts]) -> Replay:
    """Their script over ``verdicts_by_turn`` (each turn's code's own-test verdicts)."""
    log: list[ScriptTurn] = []
    steps: list[Step] = []
    dialogue = _dialogue(script, log)
    step: Step | None = next(dialogue)
    for own in verdicts_by_turn:
        if step is None:
            raise ValueError(
                f"{len(verdicts_by_turn)} turns, but the script ends after {len(steps)}"
            )
        steps.append(step)
        try:
            step = dialogue.send(own)
        except StopIteration:
            step = None
    return Replay(tuple(steps), tuple(log), step)


Check = Callable[[str], Awaitable[ExecResult]]  # code -> its execution on script.checked


async def play(
    script: Script, ask: Ask, check: Check, prior: Sequence[PlayedRound] = ()
) -> AsyncIterator[PlayedRound]:
    """Play their dynamic conversation, yielding each turn as a round when it ends;
    ``prior`` rounds (a resumed session, :func:`rebuild`) are not played again."""
    messages: list[ChatMessage] = []
    for done in prior:
        messages += [ChatMessage("user", done.plan.message), ChatMessage("assistant", done.reply)]
    rounds = list(prior)
    while True:
        step = replay(script, [r.own for r in rounds]).next
        if step is None:
            return
        plan = RoundPlan(step.number, step.kind, step.instruction, _message(script, step, rounds))
        messages.append(ChatMessage("user", plan.message))
        reply = await ask(tuple(messages), plan)
        messages.append(ChatMessage("assistant", reply))
        code = script_code(reply)
        compiled = compile_feedback(code)
        error = None if compiled.ok else compiled.text
        played = _played(script, rounds, plan, reply, code, await check(code), error)
        rounds.append(played)
        yield played


def _message(script: Script, step: Step, rounds: Sequence[PlayedRound]) -> str:
    if step.kind == "instruction":  # rules 3 and 7: the text as is (the base one: the prompt)
        return step.instruction.text
    last = rounds[-1]  # rule 8: the check of the turn before, on this instruction
    return feedback_prompt(
        step.instruction.text,
        script_error(script, step.instruction, last.code, last.result, repo=script.repository),
    )


def _played(
    script: Script,
    rounds: Sequence[PlayedRound],
    plan: RoundPlan,
    reply: str,
    code: str,
    result: ExecResult,
    compile_error: str | None,
) -> PlayedRound:
    own = own_verdicts(result, script.checked)
    done = replay(script, [*(r.own for r in rounds), own])
    step, turn = done.steps[-1], done.turns[-1]
    if (step.number, step.kind, step.instruction.category) != (
        plan.number,
        plan.kind,
        plan.instruction.category,
    ):
        raise ValueError(
            f"turn {plan.number} gives {plan.kind} {plan.instruction.category!r}; the authors' "
            f"dynamic script gives {step.kind} {step.instruction.category!r} there"
        )
    return PlayedRound(
        plan,
        reply,
        code,
        result,
        compile_error,
        verdicts(result, script.checked),
        tuple(dict.fromkeys(turn.given)),
        turn.dropped,
        own,
    )


def rebuild(turns: Sequence[Turn], script: Script) -> list[PlayedRound]:
    """The rounds a session of this mode recorded, their verdicts read back from the
    recorded executions; raises ValueError where the recording is not the script's."""
    rounds: list[PlayedRound] = []
    for turn in turns:
        plan = round_plan(turn, script.checked)
        result = turn.execution or ExecResult("error", detail="not run")
        error = None if turn.compiled else turn.compile_feedback
        rounds.append(_played(script, rounds, plan, turn.reply, turn.code, result, error))
    return rounds


def turn_rows(script: Script, rounds: Sequence[PlayedRound]) -> tuple[ScriptTurn, ...]:
    """Each round's row as their script logs it."""
    return replay(script, [r.own for r in rounds]).turns


def round_status(last: PlayedRound) -> SessionStatus:
    """Solved when the last code follows every instruction the script checks (each on its
    own tests); else exhausted."""
    return "solved" if all(last.own.values()) else "exhausted"


PAIR_METRICS = ("ia", "ifr", "ca", "ife")  # report.py's order
AVERAGE = "avg"  # report.py's last row


@dataclass(frozen=True)
class PairRow:
    """One row of report.py: a pair of turns ("1-2") or "avg", each metric's mean (a
    share; report.py prints it in percent) and how many tasks it averages over."""

    label: str
    values: Mapping[str, float]
    tasks: int


def task_pairs(turns: Sequence[ScriptTurn]) -> list[tuple[str, dict[str, float]]]:
    """One task's turns paired as ``compute_pairwise_metrics`` pairs them (rule 11)."""
    pairs = []
    i = 0
    while i < len(turns):
        name = f"{i + 1}-{i + 2}"
        if i + 1 < len(turns):
            first, second = turns[i], turns[i + 1]
            pairs.append(
                (name, {m: (getattr(first, m) + getattr(second, m)) / 2 for m in PAIR_METRICS})
            )
            i += 2
        else:
            pairs.append((name, {m: getattr(turns[i], m) for m in PAIR_METRICS}))
            i += 1
    return pairs


def pair_rows(tasks: Sequence[Sequence[ScriptTurn]]) -> list[PairRow]:
    """report.py's rows: each pair averaged over the tasks that have it, in the order of its
    first turn, then "avg", the mean of those averages (rule 11). The "avg" row's ``tasks``
    is every task."""
    found: dict[str, dict[str, list[float]]] = defaultdict(lambda: {m: [] for m in PAIR_METRICS})
    for turns in tasks:
        for name, values in task_pairs(turns):
            for m in PAIR_METRICS:
                found[name][m].append(values[m])
    rows = [
        PairRow(name, {m: sum(v) / len(v) for m, v in found[name].items()}, len(found[name]["ia"]))
        for name in sorted(found, key=lambda name: int(name.split("-")[0]))
    ]
    if rows:
        mean = {m: sum(r.values[m] for r in rows) / len(rows) for m in PAIR_METRICS}
        rows.append(PairRow(AVERAGE, mean, len(tasks)))
    return rows
