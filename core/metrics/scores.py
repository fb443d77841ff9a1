"""Benchmark metrics as pure functions of per-turn verdicts (docs/design.md#metrics).

A task's outcome is a :data:`TurnPasses`: one bool per turn, index = turn, True when that
turn's code passed every test. Index 0 is the first attempt and 1..N the feedback turns, so the
published ConvCodeWorld setting (10 feedback turns) gives vectors of 11. Every task handed to
one function must have the same number of turns; :func:`carry_forward` stretches a session
that stopped early to that length the way ConvCodeWorld would have recorded it.

Two protocols share these definitions (docs/design.md#parity-with-convcodeworld):

- ``convcodeworld`` reproduces ConvCodeWorld's ``print_results.py`` exactly: live MRR, Recall
  and per-turn Pass@1 (:func:`live_mrr`, :func:`live_recall`, :func:`live_pass_at_turn`), and
  ConvCodeBench's static replay, where the target is also credited with the reference model's
  successes (:func:`static_mrr`, :func:`static_recall`, :func:`static_pass_at_turn`).
- ``convtui`` uses the same MRR and Recall but a cumulative Pass@1
  (:func:`cumulative_pass_at_turn`, "solved at any turn <= t").

Means are over tasks as fractions in [0, 1]; an empty task list gives 0.0 (the reference would
give NaN or fail an assertion). Rounding to percentages is the caller's (the reference shows
``round(mean * 100, 1)``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

TurnPasses = Sequence[bool]
"""One task's verdict per turn: index 0 is the first attempt, index t the t-th feedback turn."""


def carry_forward(recorded: Sequence[bool], turns: int) -> list[bool]:
    """``recorded`` (the verdicts of the turns a session actually ran, in order) stretched to
    ``turns`` turns, as ConvCodeWorld would have recorded the turns that never ran.

    A turn that never ran takes the verdict of the turn before it. After a pass that is a pass:
    a convtui session stops once its code passes, while ConvCodeWorld's live loop keeps going
    but hands back the previous turn's code unchanged when it passed ("Already solved",
    ``pot.py`` ``forward``), so that code is re-run and passes again. After a fail it is a fail:
    the session was cut short (a model error, a stall, an interrupted run) and nothing after
    it passed. A session with no recorded turn fails every turn.

    Raises ValueError when more turns were recorded than ``turns``."""
    if len(recorded) > turns:
        raise ValueError(f"{len(recorded)} turns recorded, more than the {turns} expected")
    last = bool(recorded[-1]) if recorded else False
    return [bool(p) for p in recorded] + [last] * (turns - len(recorded))


def first_pass(passes: TurnPasses) -> int | None:
    """The index of the first passing turn, None when no turn passed."""
    return next((t for t, passed in enumerate(passes) if passed), None)


# --- live (ConvCodeWorld) ---------------------------------------------------------------------


def live_mrr(tasks: Sequence[TurnPasses], *, exclude_init_solved: bool = False) -> float:
    """Live MRR, ConvCodeWorld ``print_results.get_mrr`` (option ``live``): per task 1/(t+1)
    for its first passing turn t (a pass at turn 0 scores 1), 0 when no turn passed; the
    mean over tasks. The same in both protocols.

    ``exclude_init_solved`` (the reference's option of that name, off for published tables)
    leaves out the tasks whose turn 0 passed."""
    _turns(tasks)
    return _mean([live_task_mrr(p) for p in _kept(tasks, exclude_init_solved)])


def live_task_mrr(passes: TurnPasses) -> float:
    """One task's reciprocal rank, the term :func:`live_mrr` averages: 1/(t+1) for its first
    passing turn t, 0 when no turn passed."""
    return 0.0 if (t := first_pass(passes)) is None else 1.0 / (t + 1)


def live_task_recall(passes: TurnPasses) -> float:
    """One task's term of :func:`live_recall`: 1 when some turn passed, else 0."""
    return 1.0 if any(passes) else 0.0


def live_recall(tasks: Sequence[TurnPasses], *, exclude_init_solved: bool = False) -> float:
    """Live Recall, ConvCodeWorld ``print_results.get_recall`` (option ``live``): the share of
    tasks with a passing turn. The same in both protocols. ``exclude_init_solved`` as in
    :func:`live_mrr`."""
    _turns(tasks)
    return _mean([live_task_recall(p) for p in _kept(tasks, exclude_init_solved)])


def live_pass_at_turn(tasks: Sequence[TurnPasses]) -> list[float]:
    """Per-turn Pass@1, the ``convcodeworld`` protocol: ConvCodeWorld ``print_results``
    ``pass_at_1(results_t, init_results)`` for the rows t = 0..N of its live table. Row t is the
    share of tasks whose turn t passed or whose turn 0 passed.

    Not cumulative: a task that passed at turn 2 and failed at turn 3 is not counted at turn 3
    unless its turn 0 passed. Use :func:`carry_forward` for sessions that stopped early."""
    return _column_means([live_task_pass_at_turn(p) for p in tasks], _turns(tasks))


def live_task_pass_at_turn(passes: TurnPasses) -> list[float]:
    """One task's terms of :func:`live_pass_at_turn`, one per turn t: 1 when turn t or turn 0
    passed, else 0."""
    return [1.0 if p or passes[0] else 0.0 for p in passes]


def cumulative_pass_at_turn(tasks: Sequence[TurnPasses]) -> list[float]:
    """Cumulative Pass@1, the ``convtui`` protocol (docs/design.md#metrics): row t (t = 0..N) is
    the share of tasks that passed at any turn <= t, so the curve never decreases. Not
    ConvCodeWorld's rule; see :func:`live_pass_at_turn`."""
    return _column_means([cumulative_task_pass_at_turn(p) for p in tasks], _turns(tasks))


def cumulative_task_pass_at_turn(passes: TurnPasses) -> list[float]:
    """One task's terms of :func:`cumulative_pass_at_turn`, one per turn t: 1 when some turn
    up to t passed, else 0."""
    first = first_pass(passes)
    return [1.0 if first is not None and first <= t else 0.0 for t in range(len(passes))]


def live_task_terms(passes: TurnPasses, protocol: str) -> tuple[float, ...]:
    """One task's term of every live number, in the order a report lists them: Pass@1 at each
    turn by ``protocol``'s rule (``convtui``: cumulative; else ConvCodeWorld's), then its
    reciprocal rank (MRR's term) and 1 or 0 solved (Recall's). What an interval over tasks
    resamples and a paired comparison pairs."""
    if protocol == "convtui":
        at = cumulative_task_pass_at_turn(passes)
    else:
        at = live_task_pass_at_turn(passes)
    return (*at, live_task_mrr(passes), live_task_recall(passes))


# --- static (ConvCodeBench) -------------------------------------------------------------------
#
# ``target[t]``: the target model's turn t. Turn 0 is its own first attempt; at turn t >= 1 it
# was given the reference's turn t-1 code and the feedback recorded for it.
# ``reference[t]``: the reference model's own live run, turn t.


def static_task_mrr(target: TurnPasses, reference: TurnPasses, *, compensate_init: bool) -> float:
    """One task's static MRR, ConvCodeBench ``print_results.get_mrr`` (option ``static``).

    1 when the reference's turn 0 passed. Otherwise scan t from 0 when ``compensate_init``
    (the reference CLI's default, used for the published tables) or from 1 (the function's
    default there) up to the last turn N: if t > 0 and the reference's turn t-1 passed (the
    target was handed passing code) score 1/t and stop; else if the target's turn t passed
    score 1/(t+1) and stop. 0 when the scan ends without either. Without ``compensate_init``
    the target's own turn 0 is never looked at, and the reference's turn N never is."""
    _pair(target, reference)
    return _static_scan(target, reference, 0 if compensate_init else 1, reciprocal=True)


def static_task_recall(target: TurnPasses, reference: TurnPasses) -> float:
    """One task's static Recall, ConvCodeBench ``print_results.get_recall`` (option
    ``static``): the scan of :func:`static_task_mrr` always from t = 0 (the reference ignores
    ``compensate_init`` here), scoring 1 instead of a reciprocal rank."""
    _pair(target, reference)
    return _static_scan(target, reference, 0, reciprocal=False)


def static_mrr(
    targets: Sequence[TurnPasses],
    references: Sequence[TurnPasses],
    *,
    compensate_init: bool,
    exclude_init_solved: bool = False,
) -> float:
    """Static MRR: the mean over tasks of :func:`static_task_mrr`; ``targets[i]`` and
    ``references[i]`` are the same task. ``exclude_init_solved`` leaves out the tasks whose
    target turn 0 passed (the reference's option, which looks at the target's own turn 0)."""
    pairs = _pairs(targets, references, exclude_init_solved)
    return _mean([static_task_mrr(t, r, compensate_init=compensate_init) for t, r in pairs])


def static_recall(
    targets: Sequence[TurnPasses],
    references: Sequence[TurnPasses],
    *,
    exclude_init_solved: bool = False,
) -> float:
    """Static Recall: the mean over tasks of :func:`static_task_recall` (arguments as in
    :func:`static_mrr`)."""
    pairs = _pairs(targets, references, exclude_init_solved)
    return _mean([static_task_recall(t, r) for t, r in pairs])


def static_pass_at_turn(
    targets: Sequence[TurnPasses], references: Sequence[TurnPasses]
) -> list[float]:
    """Static per-turn Pass@1, ConvCodeBench ``print_results`` static table: rows for turns
    t = 1..N only (element 0 is turn 1). Row t is the share of tasks whose target turn t passed
    or whose reference turn 0 passed. Not cumulative, and not compensated: the target's own
    turn 0 is not counted."""
    pairs = _pairs(targets, references, False)
    rows = [static_task_pass_at_turn(target, reference) for target, reference in pairs]
    return _column_means(rows, max(_turns(targets) - 1, 0))


def static_task_pass_at_turn(target: TurnPasses, reference: TurnPasses) -> list[float]:
    """One task's terms of :func:`static_pass_at_turn`, for turns t = 1..N: 1 when the
    target's turn t or the reference's turn 0 passed, else 0."""
    _pair(target, reference)
    return [1.0 if target[t] or reference[0] else 0.0 for t in range(1, len(target))]


def static_task_terms(
    target: TurnPasses, reference: TurnPasses, *, compensate_init: bool
) -> tuple[float, ...]:
    """One task's term of every static number: Pass@1 at turns 1..N, then the static
    reciprocal rank and recall (see :func:`live_task_terms`)."""
    return (
        *static_task_pass_at_turn(target, reference),
        static_task_mrr(target, reference, compensate_init=compensate_init),
        static_task_recall(target, reference),
    )


# --- helpers ------------------------------------------------------------------------------------


def _static_scan(target: TurnPasses, reference: TurnPasses, start: int, reciprocal: bool) -> float:
    if reference and reference[0]:
        return 1.0
    for t in range(start, len(target)):
        if t > 0 and reference[t - 1]:
            return 1.0 / t if reciprocal else 1.0
        if target[t]:
            return 1.0 / (t + 1) if reciprocal else 1.0
    return 0.0


def _turns(tasks: Sequence[TurnPasses]) -> int:
    """The common number of turns of ``tasks`` (0 for none); ValueError when they differ."""
    lengths = {len(p) for p in tasks}
    if len(lengths) > 1:
        raise ValueError(
            f"tasks have different numbers of turns ({sorted(lengths)}); "
            "stretch them to one length with carry_forward"
        )
    return lengths.pop() if lengths else 0


def _pair(target: TurnPasses, reference: TurnPasses) -> None:
    if len(target) != len(reference):
        raise ValueError(
            f"the target has {len(target)} turns and the reference {len(reference)}; "
            "a static replay pairs them turn by turn"
        )


def _pairs(
    targets: Sequence[TurnPasses], references: Sequence[TurnPasses], exclude_init_solved: bool
) -> list[tuple[TurnPasses, TurnPasses]]:
    if len(targets) != len(references):
        raise ValueError(f"{len(targets)} target tasks but {len(references)} reference tasks")
    _turns([*targets, *references])
    return [
        (t, r)
        for t, r in zip(targets, references, strict=True)
        if not (exclude_init_solved and t and t[0])
    ]


def _kept(tasks: Sequence[TurnPasses], exclude_init_solved: bool) -> list[TurnPasses]:
    return [p for p in tasks if not (exclude_init_solved and p and p[0])]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _column_means(rows: Sequence[Sequence[float]], width: int) -> list[float]:
    """The mean over ``rows`` (one per task, ``width`` values each) of each position."""
    return [_mean([row[t] for row in rows]) for t in range(width)]
