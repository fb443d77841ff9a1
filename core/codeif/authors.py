"""CodeIF-Bench's static metrics as its authors' scripts compute them, the default definition
(``--metrics authors``): the scripts produced every published number, so only they make our
scores comparable with the published tables. The paper's §3.2 formulas are metrics.py.

Each rule below is the script's, read from zhu-zhu-ding/CodeIF-Bench, branch v1,
``static_conversation/function/test/``:

1. **IA**: a follow-up is followed when its own asserts pass, without the initial ones
   (``evaluation.py`` ``way == 5``); the base answer when the base asserts pass (``way ==
   1``). Functionality Extension rounds count.
2. **CA**: a round is 1 when the base asserts and the own asserts of every instruction given
   so far pass in one script, Functionality Extension's left out (``way == 6``, or ``way ==
   3`` that wrote the published ``n_round`` verdicts); a Functionality Extension round has no
   CA at all (``continue``: the script writes no row for it).
3. **Positional rounds**: ``IA_CA.py`` numbers a task's rows as they come, Round 1 the base
   answer: so IA's round k+1 is the k-th follow-up, while CA's round k+1 is the k-th
   follow-up that is not Functionality Extension (every later one moves up a place).
4. **IFR** (``way == 7``, ``IFR.py``): 0 where the round's CA is 1; otherwise, of the
   instructions passed before (the base answer if its round passed, then each earlier
   follow-up whose CA round passed), the share whose own asserts now fail. The base answer's
   check is a quirk of the script: ``accumulated_tests`` *is* the task's ``test`` list,
   extended in place each round, so "Base" is checked on every accumulated assert, the very
   check that just failed: a base answer passed before always counts as broken here.
   ``IFR.py`` numbers its rounds from the first follow-up, without the base row: its Round k
   is CA's round k+1, and is shown there.
5. **Averages**: per round, over the tasks that have a row at that position (``round_total``).

Dynamic conversations are not scored by these rules: one played by the authors' dynamic
script (``--protocol codeif``) is scored as that script scores it (authors_dynamic.py); one
played by convtui's rules (``--protocol convtui``) by the paper's formulas, and its tables say
so.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.codeif.instructions import BASE, FUNCTIONALITY_EXTENSION
from convtui.core.codeif.metrics import Round

Metric = str  # "ia", "ca" or "ifr"


@dataclass(frozen=True)
class TaskRows:
    """One task's rows as the scripts see them (1 passed, 0 not; IFR a share), each list
    indexed by its own positional round."""

    ia: tuple[float, ...]
    ca: tuple[float, ...]
    ifr: tuple[float | None, ...]  # None at the base position: IFR.py has no base row


def task_rows(rounds: Sequence[Round]) -> TaskRows:
    """One static conversation's IA, CA and IFR rows (rules 1-4)."""
    if not rounds or rounds[0].instruction != BASE:
        raise ValueError("a static conversation starts with the initial instruction")
    base = rounds[0].own.get(BASE, False)
    ia: list[float] = [float(base)]
    ca: list[float] = [float(base)]
    ifr: list[float | None] = [None]
    passed_before = [BASE] if base else []
    for r in rounds[1:]:
        ia.append(float(r.own.get(r.instruction, False)))
        if r.instruction == FUNCTIONALITY_EXTENSION:
            continue
        counted = [c for c in r.followed if c != FUNCTIONALITY_EXTENSION]
        accumulated = all(r.own.get(c, False) for c in counted)
        ca.append(float(accumulated))
        if accumulated:
            ifr.append(0.0)
            passed_before.append(r.instruction)
            continue
        # Base: checked on the accumulated asserts (rule 4's quirk), which just failed.
        broken = sum(c == BASE or not r.own.get(c, False) for c in passed_before)
        ifr.append(broken / len(passed_before) if passed_before else 0.0)
    return TaskRows(tuple(ia), tuple(ca), tuple(ifr))


@dataclass(frozen=True)
class Cell:
    """One metric at one round: its mean and how many tasks had a row there."""

    value: float
    tasks: int


def authors_per_round(tasks: Sequence[Sequence[Round]]) -> list[dict[Metric, Cell]]:
    """Per positional round (index 0 = Round 1), each metric's mean over the tasks with a
    row there (rule 5); a metric with no row at a round is absent from its dict."""
    columns: dict[Metric, dict[int, list[float]]] = {m: defaultdict(list) for m in METRICS}
    for rounds in tasks:
        rows = task_rows(rounds)
        for metric, values in (("ia", rows.ia), ("ca", rows.ca), ("ifr", rows.ifr)):
            for i, v in enumerate(values):
                if v is not None:
                    columns[metric][i].append(v)
    most = max((i + 1 for c in columns.values() for i in c), default=0)
    return [
        {
            m: Cell(math.fsum(columns[m][i]) / len(columns[m][i]), len(columns[m][i]))
            for m in METRICS
            if columns[m].get(i)
        }
        for i in range(most)
    ]


METRICS: tuple[Metric, ...] = ("ia", "ca", "ifr")
