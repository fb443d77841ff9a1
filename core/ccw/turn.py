"""One ConvCodeWorld feedback turn, as pure logic: ``ProgramOfThought.forward``
(CCW:``convcodeworld/pot.py:543-691``, github.com/sfc-gh-hhan/convcodeworld@83bdc84) on the
previous turn's code (``use_generated_code`` or ``iteration > 1``), live or as a static replay.

:func:`feedback_turn` is a generator: it yields every model request as a :class:`ModelCall`
and is sent back the reply, so the caller does the I/O (and may batch, cache or journal the
calls). It returns a :class:`TurnOutcome` with the code and the feedback CCW records for the
turn (CCW:``convcodeworld/run.py:198-204``). The caller supplies what CCW reads from disk: the
previous turn's solution (import header included, as CCW:``convcodeworld/run.py:187-189`` wrote it),
whether it passed, and its execution feedback text. The caller prefixes the import header to the
outcome's code, as CCW:``convcodeworld/run.py:187-189`` does (:meth:`TurnOutcome.solution`).

A reply is the completion text, ``None`` when the API answered without any text (DSPy 2.4
then raises ``AttributeError``), or :class:`CallFailed` when the request raised (an HTTP error,
a prompt longer than the context window). CCW handles these per call site, as each method's
docstring says; where CCW lets an exception reach CCW:``convcodeworld/pot.py:679-682`` its process
exits, which the outcome reports as ``aborted``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar, get_args

from convtui.core.ccw.template import (
    NO_SYNTAX_ERRORS,
    PASSED_ALL_TEST_RUNS,
    IncompleteError,
    Mode,
    NoTextError,
    fence_for_simulator,
    parse_code,
    predict,
    simulated_user_feedback,
)
from convtui.core.errors import ConvtuiError
from convtui.core.feedback.render import (
    CompileResult,
    compile_feedback,
    trim_feedback,
    trim_schedule,
)

__all__ = [
    "MAX_ITERS",
    "CallFailed",
    "CallRecord",
    "ModelCall",
    "Purpose",
    "Reply",
    "Role",
    "TurnInputs",
    "TurnOutcome",
    "ccw_compile",
    "feedback_turn",
    "run_turn",
]

# ProgramOfThought(max_iters=3) (CCW:convcodeworld/pot.py:30): hops, i.e. code calls that
# count, per turn.
MAX_ITERS = 3

Role = Literal["code", "simulator"]
# generate: the turn's refinement; repair: a regeneration from compilation feedback;
# stale_ef: a refinement of repaired code from the execution feedback of the code it replaced;
# simulate: the user simulator.
Purpose = Literal["generate", "repair", "stale_ef", "simulate"]
Coverage = Literal["none", "partial", "full"]
_R = TypeVar("_R")
UserKind = Literal["none", "novice", "expert"]
USER_KINDS: tuple[UserKind, ...] = get_args(UserKind)


def user_kind(verbal: str) -> UserKind:
    """Ω's verbal part (``none`` or a persona) as CCW's ``user_expertise``: the reference has
    these two simulated users alone, so any other persona is refused with one line."""
    for kind in USER_KINDS:
        if verbal == kind:
            return kind
    raise ConvtuiError(
        f"protocol convcodeworld plays only the simulated users {' and '.join(USER_KINDS[1:])}, "
        f"not {verbal}: use protocol convtui"
    )


@dataclass(frozen=True)
class ModelCall:
    """One request to send as a raw completion: ``prompt`` with ``max_tokens`` (2048, halved
    on DSPy's follow-up requests), temperature 0 and stop ``"\\n\\n---\\n\\n"``
    (:func:`convtui.core.ccw.template.generation_defaults`)."""

    role: Role
    purpose: Purpose
    mode: Mode
    prompt: str
    max_tokens: int
    follow_up: int = 0


@dataclass(frozen=True)
class CallFailed:
    """The request raised instead of answering; ``message`` says why."""

    message: str


Reply = str | CallFailed | None


@dataclass(frozen=True)
class CallRecord:
    call: ModelCall
    reply: Reply


CompileCheck = Callable[[str], CompileResult]


def ccw_compile(code: str) -> CompileResult:
    """CCW's ``get_compilation_feedback`` text (CCW:``convcodeworld/pot.py:21-26``,
    ``:437-447``)."""
    return compile_feedback(code, compat="ccw")


@dataclass(frozen=True)
class TurnInputs:
    """What ``forward`` reads for one task in one feedback turn.

    - ``prompt``: the task's instruct prompt (the ``Input:`` field).
    - ``previous_code``: the previous turn's solution, import header included.
    - ``previous_passed``: its execution status was ``pass``.
    - ``execution``: execution feedback off, ``partial`` (CCW's ``unit_test``) or ``full``;
      ``execution_feedback`` is then the previous code's feedback text under that coverage,
      *untrimmed* (``convtui.core.feedback.render.execution_feedback(..., trim=None)``): the turn
      applies CCW's 8,000-character rule and its shrinking schedule itself.
    - ``user``: no simulated user, or CCW's ``user_expertise``; the expert needs
      ``ground_truth`` (``code_prompt + canonical_solution``).
    - ``compilation``: CCW's ``compilation_feedback`` flag (on in all nine published settings).
    - ``iteration``: CCW's ``--iteration`` (1 for the first feedback turn), where the hop
      counter starts.
    - ``space_retries``: how many times a reply without text may be retried with a space
      appended to a feedback value; CCW has no bound (``None``).
    - ``static``: a static replay (ConvCodeBench, ``run.py --option static``): the reference
      run's ``recorded_user_feedback`` for this turn (``None`` where its novice was silent)
      stands in for the simulator (CCW:``convcodeworld/pot.py:500-502``).
    """

    prompt: str
    previous_code: str
    previous_passed: bool = False
    execution: Coverage = "none"
    execution_feedback: str | None = None
    user: UserKind = "none"
    ground_truth: str = ""
    compilation: bool = True
    iteration: int = 1
    compile_check: CompileCheck = ccw_compile
    max_tokens: int | None = None
    space_retries: int | None = None
    static: bool = False
    recorded_user_feedback: str | None = None

    def __post_init__(self) -> None:
        if self.execution != "none" and self.execution_feedback is None:
            raise ValueError("execution feedback is on but no execution_feedback text was given")
        if self.user == "expert" and not self.ground_truth and not self.static:
            raise ValueError("the expert simulator needs the ground truth")


@dataclass(frozen=True)
class TurnOutcome:
    """``forward``'s result (CCW:``convcodeworld/pot.py:687-691``). ``code`` is
    ``final_generated_code``: the last prediction's parsed code (no header), or the previous
    solution as it was when no prediction replaced it; the three feedback values are what CCW
    records for the turn, appended spaces and trimming included; ``iteration`` is the hop counter.
    ``aborted`` says why CCW's process would have exited (CCW:``convcodeworld/pot.py:679-682``): CCW
    then writes nothing for the turn and ``code`` is the previous code."""

    code: str
    compilation_feedback: str | None
    execution_feedback: str | None
    user_feedback: str | None
    iteration: int
    calls: tuple[CallRecord, ...]
    already_solved: bool = False
    aborted: str | None = None

    def solution(self, header: str) -> str:
        """The turn's solution as CCW:``convcodeworld/run.py:187-189`` writes it: the import header
        (the code prompt before ``def task_func``) prefixed, even when the code already carries
        it."""
        return header + self.code


class _CallError(Exception):
    """A :class:`CallFailed` reply, raised where DSPy's client raised."""


class _Abort(Exception):
    """An exception CCW does not catch before CCW:``convcodeworld/pot.py:679``."""


@dataclass(frozen=True)
class _CodeData:
    """``code_data``: the previous solution (a string, which ``parse_code`` returns as is) or
    a prediction's ``generated_code`` (which ``parse_code`` cuts and unfences)."""

    text: str
    predicted: bool

    def parse(self) -> str:
        return parse_code(self.text) if self.predicted else self.text


def _failed(value: str | None) -> bool:
    return value is not None and value != NO_SYNTAX_ERRORS


def _not_passed(value: str | None) -> bool:
    return value is not None and value != PASSED_ALL_TEST_RUNS


class _Turn:
    def __init__(self, inputs: TurnInputs) -> None:
        self.inputs = inputs
        self.calls: list[CallRecord] = []
        self.code_data = _CodeData(inputs.previous_code, predicted=False)
        self.code = self.code_data.parse()  # CCW:convcodeworld/pot.py:555
        self.cf: str | None = None
        self.ef: str | None = None
        self.uf: str | None = None
        self.hop = inputs.iteration
        self.kwargs: dict[str, str | None] = {"input": inputs.prompt}
        self.spaces = 0

    def outcome(self, aborted: str | None = None, already_solved: bool = False) -> TurnOutcome:
        # CCW:convcodeworld/pot.py:685
        code = self.inputs.previous_code if aborted else self.code_data.parse()
        return TurnOutcome(
            code, self.cf, self.ef, self.uf, self.hop, tuple(self.calls), already_solved, aborted
        )

    def ask(
        self, role: Role, purpose: Purpose, mode: Mode, values: Mapping[str, str | None]
    ) -> Generator[ModelCall, Reply, str]:
        """One DSPy ChainOfThought call (up to three requests); returns its output field."""
        requests = predict(mode, values, self.inputs.max_tokens)
        request = next(requests)
        while True:
            call = ModelCall(
                role, purpose, mode, request.prompt, request.max_tokens, request.follow_up
            )
            reply = yield call
            self.calls.append(CallRecord(call, reply))
            if isinstance(reply, CallFailed):
                raise _CallError(f"{mode}: {reply.message}")
            try:
                request = requests.send(reply)
            except StopIteration as done:
                return str(done.value)

    def space(self, value: str | None, what: str) -> str:
        """CCW's retry after ``AttributeError``: the feedback value plus one space."""
        if value is None:
            # `None += " "` raises TypeError, which reaches CCW:convcodeworld/pot.py:679.
            raise _Abort(f"{what} is None and cannot take the appended space")
        self.spaces += 1
        limit = self.inputs.space_retries
        if limit is not None and self.spaces > limit:
            raise _Abort(f"more than {limit} replies without text")
        return value + " "

    def forward(self) -> Generator[ModelCall, Reply, None]:
        """CCW:``convcodeworld/pot.py:571-678``, one pass per hop."""
        inputs = self.inputs
        while self.hop < inputs.iteration + MAX_ITERS:  # :572
            if inputs.compilation:  # :573-574
                self.code = self.code_data.parse()
                self.cf = inputs.compile_check(self.code).text
            if _failed(self.cf):  # :576-594
                self.kwargs.update(previous_code=self.code, compilation_feedback=self.cf)
                if inputs.user != "novice":  # :579-580: the novice path handles it below
                    yield from self.repair()
                    self.hop += 1
                    continue
            self.kwargs["compilation_feedback"] = self.cf  # :596
            if inputs.execution != "none":  # :598-599
                self.ef = trim_feedback(inputs.execution_feedback or "")
            if _not_passed(self.ef) and inputs.user == "none":  # :601-619
                self.kwargs.update(previous_code=self.code, execution_feedback=self.ef)
                yield from self.refine_from_execution()
                self.hop += 1
                break
            if inputs.execution != "none" or not inputs.static:  # :621-622
                self.kwargs["execution_feedback"] = self.ef
            if inputs.user != "none":  # :624-675
                self.uf = yield from self.simulate()
                self.kwargs.update(previous_code=self.code, user_feedback=self.uf)
                if (yield from self.refine_with_user()):
                    break  # :671-672: the novice had nothing to say
                self.hop += 1
                break
            self.hop += 1  # :677-678
            break

    def repair(self) -> Generator[ModelCall, Reply, None]:
        """CCW:``convcodeworld/pot.py:582-592``: regenerate from compilation feedback. A reply
        without text is retried with a space appended to the compilation feedback; any other failure
        reaches CCW:``convcodeworld/pot.py:679``."""

        def spaced() -> None:
            self.cf = self.space(self.cf, "compilation feedback")
            self.kwargs["compilation_feedback"] = self.cf

        yield from self.regenerate("repair", "refine_from_compilation_feedback", spaced)

    def refine_from_execution(self) -> Generator[ModelCall, Reply, None]:
        """CCW:``convcodeworld/pot.py:605-616``: regenerate from execution feedback. After a repair
        this turn, the feedback is still that of the previous turn's code (``stale_ef``). Failures
        are handled as in :meth:`repair`, with the space appended to the execution feedback."""

        def spaced() -> None:
            self.ef = self.space(self.ef, "execution feedback")
            self.kwargs["execution_feedback"] = self.ef

        purpose: Purpose = "stale_ef" if self.hop > self.inputs.iteration else "generate"
        yield from self.regenerate(purpose, "refine_from_execution_feedback", spaced)

    def regenerate(
        self, purpose: Purpose, mode: Mode, spaced: Callable[[], None]
    ) -> Generator[ModelCall, Reply, None]:
        """The code call of :meth:`repair` and :meth:`refine_from_execution`: after a reply
        without text ``spaced()`` appends CCW's space to the feedback and the call is made
        again; any other failure propagates."""
        while True:
            try:
                out = yield from self.ask("code", purpose, mode, self.kwargs)
            except NoTextError:
                spaced()
                continue
            self.code_data = _CodeData(out, predicted=True)
            return

    def simulate(self) -> Generator[ModelCall, Reply, str | None]:
        """``get_simulated_user_feedback`` (CCW:``convcodeworld/pot.py:499-538``) on the current
        code, which after a repair is the repaired code; in a static replay the recorded feedback,
        without a call. The expert sees the ground truth and the execution feedback when it is not a
        pass, never the compilation feedback; the novice is silent (``None``, no call) when
        execution feedback is on and says ``Passed all test runs``, or when it is off and the
        code compiles. Any failure reaches CCW:``convcodeworld/pot.py:679``."""
        inputs = self.inputs
        if inputs.static:  # :500-502
            return inputs.recorded_user_feedback
        values = dict(self.kwargs)
        values["previous_code"] = fence_for_simulator(self.code)  # :510
        mode: Mode
        if inputs.user == "expert":  # :511-516
            values["ground_truth_code"] = fence_for_simulator(inputs.ground_truth)
            if _not_passed(values.get("execution_feedback")):
                mode = "execution_simulate_user_feedback"
            else:
                mode = "simulate_user_feedback"
        elif inputs.execution != "none":  # :518-524
            if _not_passed(values.get("execution_feedback")):
                mode = "execution_simulate_novice_feedback"
            elif values.get("execution_feedback") == PASSED_ALL_TEST_RUNS:
                return None
            else:
                mode = "simulate_novice_feedback"
        elif _failed(values.get("compilation_feedback")):  # :525-529
            mode = "simulate_novice_feedback"
        else:
            return None
        out = yield from self.ask("simulator", "simulate", mode, values)
        expertise: Literal["novice", "expert"] = "expert" if inputs.user == "expert" else "novice"
        return simulated_user_feedback(out, expertise)  # :532-536

    def refine_with_user(self) -> Generator[ModelCall, Reply, bool]:
        """CCW:``convcodeworld/pot.py:628-669``; returns True when the novice path ends the turn
        unchanged.

        - Execution feedback that is not a pass: regenerate from execution and user feedback.
          Any failure (no text, an incomplete reply, a failed request such as a context
          overflow) re-renders the execution feedback trimmed, on CCW's schedule
          (:func:`convtui.core.feedback.render.trim_schedule`), and retries; past the schedule CCW's
          assertion reaches CCW:``convcodeworld/pot.py:679``.
        - Otherwise the expert, or the novice on code that does not compile, regenerates from
          user feedback (``None`` when the novice was silent: DSPy then shows the field open).
          Three incomplete replies keep the current code; a reply without text is retried with
          a space appended to the user feedback; a failed request reaches
          CCW:``convcodeworld/pot.py:679``.
        - Otherwise (the novice on code that compiles) nothing happens.
        """
        inputs = self.inputs
        schedule = trim_schedule()
        while True:
            try:
                if _not_passed(self.ef):
                    try:
                        out = yield from self.ask(
                            "code", "generate", "refine_from_execution_user_feedback", self.kwargs
                        )
                    except (NoTextError, IncompleteError, _CallError) as exc:
                        limits = next(schedule, None)
                        if limits is None:
                            raise _Abort(f"{exc}; input too long even after trimming") from exc
                        front, rear = limits
                        self.ef = trim_feedback(
                            inputs.execution_feedback or "", front, rear, force=True
                        )
                        self.kwargs["execution_feedback"] = self.ef
                        continue
                    self.code_data = _CodeData(out, predicted=True)
                elif inputs.user == "expert" or _failed(self.cf):
                    try:
                        out = yield from self.ask(
                            "code", "generate", "refine_from_user_feedback", self.kwargs
                        )
                        self.code_data = _CodeData(out, predicted=True)
                    except IncompleteError:
                        self.code_data = _CodeData(self.code, predicted=False)
                else:
                    return True
            except NoTextError:
                self.uf = self.space(self.uf, "user feedback")
                self.kwargs["user_feedback"] = self.uf
                continue
            return False


def feedback_turn(inputs: TurnInputs) -> Generator[ModelCall, Reply, TurnOutcome]:
    """One feedback turn of one task; send each yielded call's :data:`Reply`.

    Previous code that passed is returned unchanged without any call ("Already solved",
    CCW:``convcodeworld/pot.py:563-570``)."""
    turn = _Turn(inputs)
    if inputs.previous_passed:
        return turn.outcome(already_solved=True)
    try:
        yield from turn.forward()
    except _Abort as exc:
        return turn.outcome(aborted=str(exc))
    except _CallError as exc:
        return turn.outcome(aborted=f"request failed: {exc}")
    except NoTextError as exc:
        return turn.outcome(aborted=f"reply without text: {exc}")
    except IncompleteError as exc:
        return turn.outcome(aborted=f"incomplete replies: {exc}")
    return turn.outcome()


@dataclass(frozen=True)
class SimulatedFeedback:
    """:func:`simulated_feedback`'s result: the simulator's words (``None``: silent, as the
    novice is on code whose visible tests pass), the calls made, and why the reference would
    have stopped instead of answering (``aborted``), if it would have."""

    text: str | None
    calls: tuple[CallRecord, ...]
    aborted: str | None = None


def simulated_feedback(inputs: TurnInputs) -> Generator[ModelCall, Reply, SimulatedFeedback]:
    """ConvCodeWorld's user simulator alone (``get_simulated_user_feedback``,
    CCW:``convcodeworld/pot.py:499-538``) on ``inputs.previous_code`` as it stands: shown the
    code's compilation feedback (``inputs.compile_check``) and its execution feedback trimmed
    as the turn trims it (CCW:``convcodeworld/pot.py:598-599``), with the fields the turn has
    set when it asks. Where the reference's expert would first have repaired code that does
    not compile, this asks on the code as it was shown: it answers "what would the simulator
    have said to this code", not "what would the reference's turn have done"."""
    turn = _Turn(inputs)
    if inputs.compilation:
        turn.cf = inputs.compile_check(turn.code).text
    turn.kwargs["compilation_feedback"] = turn.cf
    if inputs.execution != "none":
        turn.ef = trim_feedback(inputs.execution_feedback or "")
    turn.kwargs["execution_feedback"] = turn.ef
    try:
        text = yield from turn.simulate()
    except (_CallError, NoTextError, IncompleteError) as exc:
        return SimulatedFeedback(None, tuple(turn.calls), aborted=str(exc))
    return SimulatedFeedback(text, tuple(turn.calls))


def run_turn(inputs: TurnInputs, answer: Callable[[ModelCall], Reply]) -> TurnOutcome:
    """Drive :func:`feedback_turn` with a synchronous ``answer``."""
    return answered(feedback_turn(inputs), answer)


def answered(calls: Generator[ModelCall, Reply, _R], answer: Callable[[ModelCall], Reply]) -> _R:
    """Send each call ``calls`` yields (a turn, or the simulator alone) to ``answer`` until it
    returns; its result."""
    try:
        call = next(calls)
        while True:
            call = calls.send(answer(call))
    except StopIteration as done:
        result: _R = done.value
        return result
