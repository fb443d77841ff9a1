"""Agreement between a study's annotators on the tasks several of them did (``convtui study
report``): Krippendorff's alpha, computed by the ``krippendorff`` package (the ``study``
extra, imported only when called), on two readings of each finished session:

- ``solved``: whether it solved the task within its budget, a nominal value (1 or 0);
- ``turns``: how many turns it took (``TaskOutcome.turns_to_solve``: an unsolved session
  counts as budget + 1), an interval value.

Units are the overlapped tasks (done by two or more annotators), coders the annotators; a
cell is missing where an annotator has no finished session of the task. An alpha that cannot
be computed comes back as None with a ``reason`` in words, never NaN: no task done twice, or
every value the same (alpha divides by the disagreement expected by chance, 0 then)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from convtui.core.extras import install_hint
from convtui.core.studies.outcomes import TaskOutcome

Level = Literal["nominal", "interval"]
Matrix = tuple[tuple[float, ...], ...]  # coders x units, NaN where missing
MISSING = math.nan
NEEDS_PACKAGE = f"needs the krippendorff package: {install_hint('study')}"


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's alpha at one level of measurement; ``value`` is None exactly when
    ``reason`` says why it could not be computed."""

    level: Level
    value: float | None
    reason: str = ""

    def to_json(self) -> dict[str, object]:
        value = None if self.value is None else round(self.value, 4)
        return {"level": self.level, "alpha": value, "reason": self.reason or None}


@dataclass(frozen=True)
class Agreement:
    """Agreement on the ``tasks`` done by two or more of ``annotators``: ``pairs`` counts
    the pairs of finished sessions of one task (two annotators who did it), ``agreed`` the
    share of them that agree on solved (None without pairs)."""

    annotators: tuple[str, ...]
    tasks: tuple[str, ...]
    pairs: int
    agreed: float | None
    solved: Alpha
    turns: Alpha
    unsolved_turns: tuple[int, ...]  # what an unsolved session counts as (budget + 1)


def outcome_matrix(
    outcomes: Mapping[str, Sequence[TaskOutcome]],
    tasks: Sequence[str],
    value: Callable[[TaskOutcome], float],
) -> Matrix:
    """One row per annotator (in ``outcomes``' order), one column per task of ``tasks``:
    ``value`` of their session of it, NaN where they have none (their first when several)."""
    matrix = []
    for sessions in outcomes.values():
        by_task: dict[str, TaskOutcome] = {}
        for o in sessions:
            by_task.setdefault(o.task_id, o)
        matrix.append(tuple(value(by_task[t]) if t in by_task else MISSING for t in tasks))
    return tuple(matrix)


def overlapped(outcomes: Mapping[str, Sequence[TaskOutcome]]) -> tuple[str, ...]:
    """The tasks with finished sessions of two or more annotators, in first-seen order."""
    holders: dict[str, set[str]] = {}
    for annotator, sessions in outcomes.items():
        for o in sessions:
            holders.setdefault(o.task_id, set()).add(annotator)
    return tuple(t for t, who in holders.items() if len(who) >= 2)


def agreement(outcomes: Mapping[str, Sequence[TaskOutcome]]) -> Agreement:
    """Agreement between the annotators of ``outcomes`` (annotator -> finished sessions)."""
    tasks = overlapped(outcomes)
    solved = outcome_matrix(outcomes, tasks, lambda o: float(o.solved))
    turns = outcome_matrix(outcomes, tasks, lambda o: float(o.turns_to_solve))
    pairs = [(a, b) for column in zip(*solved, strict=True) for a, b in _pairs(column)]
    budgets = {o.budget + 1 for sessions in outcomes.values() for o in sessions}
    return Agreement(
        annotators=tuple(outcomes),
        tasks=tasks,
        pairs=len(pairs),
        agreed=sum(a == b for a, b in pairs) / len(pairs) if pairs else None,
        solved=krippendorff_alpha(solved, "nominal", "solved"),
        turns=krippendorff_alpha(turns, "interval", "turns to solve"),
        unsolved_turns=tuple(sorted(budgets)),
    )


def _pairs(column: Sequence[float]) -> list[tuple[float, float]]:
    return list(combinations([v for v in column if not math.isnan(v)], 2))


def krippendorff_alpha(matrix: Matrix, level: Level, what: str = "value") -> Alpha:
    """Alpha of ``matrix`` (coders x units, NaN missing) at ``level``; ``what`` names the
    values in the reasons."""
    # Units with fewer than two values carry no information on agreement: left out, so that
    # the package's value domain is the one the pairs use.
    units = [c for c in zip(*matrix, strict=True) if sum(not math.isnan(v) for v in c) >= 2]
    values = [v for column in units for v in column if not math.isnan(v)]
    if not values:
        return Alpha(level, None, "no task was finished by two or more annotators")
    if len(set(values)) == 1:
        return Alpha(
            level,
            None,
            f"every overlapped session has the same {what} ({values[0]:g}): alpha is "
            "undefined without variation",
        )
    try:
        import krippendorff
    except ImportError:
        return Alpha(level, None, NEEDS_PACKAGE)
    try:
        value = float(
            krippendorff.alpha(
                reliability_data=[list(row) for row in zip(*units, strict=True)],
                level_of_measurement=level,
            )
        )
    except ValueError as exc:  # the checks above should leave none; say it rather than crash
        return Alpha(level, None, f"krippendorff could not compute it: {exc}")
    if math.isnan(value):
        return Alpha(level, None, "krippendorff gave no value (NaN)")
    return Alpha(level, value)
