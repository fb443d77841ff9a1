"""Instructions that ``--protocol convtui`` leaves out of its scores: those whose every test
the errata (core/codeif/errata.csv) mark ``left out``, a test that cannot judge an answer and
has no certain repair (its text does not parse; it passes on a placeholder that does
nothing). Their rounds are still played and recorded; the report drops them (and their
verdicts in other rounds) and says how many it dropped, per category and level.
``--protocol codeif`` keeps them, as the authors' scripts scored them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from convtui.core.catalog.tasks import Task
from convtui.core.codeif.instructions import instructions
from convtui.core.codeif.metrics import Round
from convtui.core.codeif.repairs import Erratum, errata
from convtui.core.codeif.test_defects import text_digest

LEFT_OUT = "left out"


def left_out(
    task: Task, found: Mapping[tuple[str, str, str], Erratum] | None = None
) -> dict[str, str]:
    """Category -> why, for each instruction of ``task`` whose every test is left out."""
    found = errata() if found is None else found
    out: dict[str, str] = {}
    for instruction in instructions(task):
        rows = [found.get((task.id, name, text_digest(code))) for name, code in instruction.tests]
        if rows and all(r is not None and r.action == LEFT_OUT for r in rows):
            reasons = dict.fromkeys(f"{r.defect}: {r.evidence}" for r in rows if r is not None)
            out[instruction.category] = "; ".join(reasons)
    return out


def without(rounds: Sequence[Round], categories: Mapping[str, str]) -> tuple[Round, ...]:
    """``rounds`` without those that gave a left-out instruction, and without the left-out
    instructions' verdicts in the others, numbered again from 1."""
    kept = [r for r in rounds if r.instruction not in categories]
    return tuple(
        replace(
            r,
            number=i,
            followed={c: ok for c, ok in r.followed.items() if c not in categories},
            own={c: ok for c, ok in r.own.items() if c not in categories},
            dropped=r.dropped - set(categories),
        )
        for i, r in enumerate(kept, start=1)
    )
