"""CodeIF-Bench's metrics on round matrices (the paper's §3.2).

A task's conversation is a list of :class:`Round`: which instruction the round gave (or, in a
dynamic feedback round, gave again with feedback) and, for every instruction given so far,
whether the round's code follows it. From that, per round:

- **IA** (instruction accuracy): the round's instruction is followed (1 or 0);
- **CA** (conversation accuracy): the share of the instructions given so far that are
  followed, Functionality Extension left out (it changes the function, so the others' tests
  need not all hold with it);
- **IFR** (instruction forgetting rate): of the instructions followed after the previous
  round, the share no longer followed (0 in round 1, and when none was followed);
- **IFE** (instruction-following efficiency, dynamic conversations): the instructions
  followed, Functionality Extension left out, per round played so far.

Averages are over the tasks that reached a round; IA by category is over the instruction
rounds that gave an instruction of that category (feedback rounds excluded).

These are the ``paper`` definition, and what scores convtui's dynamic conversation
(``--protocol convtui``) under either definition. Where the benchmark's scripts differ from the
paper, the paper wins here: its dynamic script leaves Functionality Extension out of the
conversation altogether and checks follow-ups without the initial asserts; in convtui's
dynamic conversation it takes part, and every instruction is checked as the static evaluation
checks it (programs.py). An instruction dropped in a dynamic conversation (failed in its round
and in its feedback round) still counts in CA and IFE, as in the script: it was given. The
authors' own definitions are authors.py (static) and authors_dynamic.py (their dynamic script,
played under ``--protocol codeif``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from convtui.core.codeif.instructions import FUNCTIONALITY_EXTENSION

RoundKind = Literal["instruction", "feedback"]
# Which formulas score the rounds: the CodeIF-Bench authors' scripts (core/codeif/authors.py,
# the published numbers) or the paper's §3.2 (here).
MetricsDefinition = Literal["authors", "paper"]


@dataclass(frozen=True)
class Round:
    """One round of one task: ``followed`` maps every instruction given so far (the round's
    own included) to whether this round's code follows it (the paper's check: the initial
    asserts too, but for Functionality Extension); ``own`` maps every instruction the round
    checked to whether its own asserts pass (the authors' scripts' check, authors.py)."""

    number: int  # 1-based
    kind: RoundKind
    instruction: str
    followed: Mapping[str, bool]
    dropped: frozenset[str] = field(default_factory=frozenset)
    own: Mapping[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.instruction not in self.followed:
            raise ValueError(f"round {self.number}: {self.instruction!r} has no verdict")


@dataclass(frozen=True)
class RoundScores:
    ia: float
    ca: float
    ifr: float
    ife: float


def round_scores(rounds: Sequence[Round]) -> list[RoundScores]:
    """One task's IA, CA, IFR and IFE after each of its rounds."""
    scores = []
    for i, r in enumerate(rounds):
        counted = [ok for c, ok in r.followed.items() if c != FUNCTIONALITY_EXTENSION]
        before = rounds[i - 1].followed if i else {}
        kept = [c for c, ok in before.items() if ok]
        forgotten = [c for c in kept if not r.followed.get(c, False)]
        scores.append(
            RoundScores(
                ia=float(r.followed[r.instruction]),
                ca=_mean([float(ok) for ok in counted]),
                ifr=len(forgotten) / len(kept) if kept else 0.0,
                ife=sum(counted) / r.number,
            )
        )
    return scores


@dataclass(frozen=True)
class RoundAverage:
    number: int
    tasks: int
    ia: float
    ca: float
    ifr: float
    ife: float


def per_round(tasks: Sequence[Sequence[Round]]) -> list[RoundAverage]:
    """Each round's scores averaged over the tasks that reached it."""
    by_round: dict[int, list[RoundScores]] = defaultdict(list)
    for rounds in tasks:
        for r, s in zip(rounds, round_scores(rounds), strict=True):
            by_round[r.number].append(s)
    return [
        RoundAverage(
            number,
            len(found),
            _mean([s.ia for s in found]),
            _mean([s.ca for s in found]),
            _mean([s.ifr for s in found]),
            _mean([s.ife for s in found]),
        )
        for number, found in sorted(by_round.items())
    ]


def ia_by_category(
    tasks: Sequence[Sequence[Round]], *, own: bool = False
) -> dict[str, tuple[int, float]]:
    """Category -> (instruction rounds that gave it, their mean IA). ``own``: IA on the
    instruction's own asserts (the authors' scripts), else with the initial ones (the paper)."""
    found: dict[str, list[float]] = defaultdict(list)
    for rounds in tasks:
        for category, ia in category_ia(rounds, own=own):
            found[category].append(ia)
    return {c: (len(v), _mean(v)) for c, v in found.items()}


def category_ia(rounds: Sequence[Round], *, own: bool = False) -> list[tuple[str, float]]:
    """One task's terms of :func:`ia_by_category`: (category, 1 or 0 followed) for each of
    its instruction rounds, in order."""
    found = []
    for r in rounds:
        if r.kind == "instruction":
            verdicts = r.own if own else r.followed
            found.append((r.instruction, float(verdicts.get(r.instruction, False))))
    return found


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0
