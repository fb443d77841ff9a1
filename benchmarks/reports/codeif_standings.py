"""CodeIF-Bench models ranked, and what the protocol changes, for ``convtui report`` (issue 49:
what the errata change).

- **Ranking.** The models of one cell (mode, protocol, definition, data file, level,
  prompting) are ranked by CA, each task's CA averaged over its rows (the round-by-round
  numbers of the group's tables, task by task: ``codeif_report.task_terms``), on the tasks
  every model of the cell played; the rank intervals resample those tasks jointly
  (core/metrics/stats.py). One task is one unit, whatever its number of rounds.
- **Protocol shift.** A model scored under ``--protocol codeif`` and ``--protocol convtui``
  (the cell otherwise alike) is compared paired by task: convtui − codeif of each task's mean
  IA, CA and IFR, with its interval and test.
- **Ranking under both protocols.** Where both protocols rank the same models, the ranks side
  by side and whether any moved.

A cell with one model has no ranking; the standings need intervals (none under
``--no-intervals``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rich.table import Table

from convtui.benchmarks.reports.codeif_report import CodeifGroup, task_terms
from convtui.core.metrics.stats import (
    Bootstrap,
    Comparison,
    Rank,
    paired_comparison,
    rank_intervals,
)

RANKED_BY = "ca"
SHIFT_METRICS = ("ia", "ca", "ifr")
PROTOCOLS = ("codeif", "convtui")  # (second, first): a shift is convtui − codeif


class Cell(NamedTuple):
    """What the models of a ranking share; a protocol shift pairs two cells that differ only
    in ``protocol``."""

    mode: str
    protocol: str
    metrics: str
    data: str
    level: str
    prompting: str
    conversation: str

    @property
    def label(self) -> str:
        level = f" · {self.level}" if self.level else ""
        cot = " · cot" if self.prompting != "direct" else ""
        return f"{self.mode} · {self.protocol} · {self.metrics}{level}{cot}"

    def to_json(self) -> dict[str, str]:
        return self._asdict()


def cell_of(group: CodeifGroup) -> Cell:
    return Cell(
        group.mode, group.protocol, group.metrics, group.data, group.level, group.prompting,
        group.conversation,
    )  # fmt: skip


def task_means(group: CodeifGroup, metric: str) -> dict[str, float]:
    """Each task's ``metric`` averaged over the rows it has one in (tasks with none left out)."""
    means = {}
    for task, terms in task_terms(group).items():
        values = [v for (_, m), v in terms.items() if m == metric]
        if values:
            means[task] = sum(values) / len(values)
    return means


@dataclass(frozen=True)
class Ranking:
    """The models of ``cell`` ranked by CA on ``tasks`` shared tasks (``left_out``: tasks some
    model did not play)."""

    cell: Cell
    tasks: int
    left_out: int
    ranks: tuple[Rank, ...]

    def rank_of(self, model: str) -> Rank | None:
        return next((r for r in self.ranks if r.side == model), None)

    def to_json(self) -> dict[str, object]:
        return {
            **self.cell.to_json(),
            "ranked_by": RANKED_BY,
            "tasks": self.tasks,
            "tasks_not_shared": self.left_out,
            "ranks": [r.to_json(1.0, 4) for r in self.ranks],
        }


@dataclass(frozen=True)
class Shift:
    """One model's convtui − codeif per metric, paired by task."""

    model: str
    cell: Cell  # the codeif side's cell
    tasks: int
    comparisons: Mapping[str, Comparison]

    def to_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            **{k: v for k, v in self.cell.to_json().items() if k != "protocol"},
            "first": PROTOCOLS[1],
            "second": PROTOCOLS[0],
            "tasks": self.tasks,
            **{m: c.to_json(1.0, 4) for m, c in self.comparisons.items()},
        }


@dataclass(frozen=True)
class Standings:
    rankings: tuple[Ranking, ...]
    shifts: tuple[Shift, ...]

    def __bool__(self) -> bool:
        return bool(self.rankings or self.shifts)

    def to_json(self) -> dict[str, object]:
        return {
            "rankings": [r.to_json() for r in self.rankings],
            "protocol_shifts": [s.to_json() for s in self.shifts],
            "rank_moves": [
                {**pair[0].cell.to_json(), "protocol": "both", "moved": moved(*pair)}
                for pair in protocol_pairs(self.rankings)
            ],
        }


def standings(groups: Sequence[CodeifGroup], bootstrap: Bootstrap) -> Standings:
    by_cell: dict[Cell, list[CodeifGroup]] = defaultdict(list)
    for g in groups:
        by_cell[cell_of(g)].append(g)
    rankings = tuple(
        _ranking(cell, members, bootstrap)
        for cell, members in sorted(by_cell.items())
        if len(members) > 1
    )
    shifts = tuple(
        _shift(first, second, bootstrap)
        for second in groups
        if second.protocol == PROTOCOLS[0]
        for first in by_cell.get(cell_of(second)._replace(protocol=PROTOCOLS[1]), [])
        if first.model == second.model
    )
    return Standings(
        tuple(r for r in rankings if r.ranks), tuple(s for s in shifts if s is not None)
    )


def _ranking(cell: Cell, members: Sequence[CodeifGroup], bootstrap: Bootstrap) -> Ranking:
    means = {g.model: task_means(g, RANKED_BY) for g in members}
    every = set.union(*(set(m) for m in means.values()))
    shared = sorted(set.intersection(*(set(m) for m in means.values())))
    if not shared:
        return Ranking(cell, 0, len(every), ())
    sides = {model: [m[t] for t in shared] for model, m in means.items()}
    return Ranking(
        cell, len(shared), len(every) - len(shared), tuple(rank_intervals(sides, bootstrap))
    )


def _shift(first: CodeifGroup, second: CodeifGroup, bootstrap: Bootstrap) -> Shift | None:
    comparisons = {}
    tasks = 0
    for metric in SHIFT_METRICS:
        a, b = task_means(first, metric), task_means(second, metric)
        pairs = [(t, a[t], b[t]) for t in sorted(set(a) & set(b))]
        if pairs:
            comparisons[metric] = paired_comparison(pairs, bootstrap, test="permutation")
            tasks = max(tasks, len(pairs))
    if not comparisons:
        return None
    return Shift(first.model, cell_of(second), tasks, comparisons)


def protocol_pairs(rankings: Sequence[Ranking]) -> list[tuple[Ranking, Ranking]]:
    """(codeif, convtui) rankings of cells alike but for the protocol."""
    by_cell = {r.cell: r for r in rankings}
    return [
        (r, by_cell[r.cell._replace(protocol=PROTOCOLS[1])])
        for r in rankings
        if r.cell.protocol == PROTOCOLS[0] and r.cell._replace(protocol=PROTOCOLS[1]) in by_cell
    ]


def moved(codeif: Ranking, convtui: Ranking) -> list[dict[str, object]]:
    """The models whose rank differs between the two rankings, with both ranks."""
    out = []
    for r in codeif.ranks:
        other = convtui.rank_of(r.side)
        if other is not None and other.rank != r.rank:
            out.append({"model": r.side, "codeif": r.rank, "convtui": other.rank})
    return out


def _rank_cell(rank: Rank | None) -> str:
    if rank is None:
        return "—"
    return f"{100 * rank.value:.1f}\n#{rank.rank:g} ({rank.low:g}–{rank.high:g})"


def ranking_tables(found: Standings, method: str) -> list[Table]:
    """One table per ranking, but a codeif ranking with its convtui twin share one, with each
    model's shift beside its ranks."""
    paired = protocol_pairs(found.rankings)
    in_pair = {r.cell for pair in paired for r in pair}
    shifts = {(s.model, s.cell): s for s in found.shifts}
    tables = [_both_table(codeif, convtui, shifts, method) for codeif, convtui in paired]
    for ranking in found.rankings:
        if ranking.cell not in in_pair:
            tables.append(_one_table(ranking, method))
    return tables


def _one_table(ranking: Ranking, method: str) -> Table:
    table = Table(
        title=f"CodeIF-Bench models ranked by CA · {ranking.cell.label}",
        caption=_caption(ranking, method),
    )
    table.add_column("model")
    table.add_column("CA %\nrank (interval)", justify="right")
    for r in ranking.ranks:
        table.add_row(r.side, _rank_cell(r))
    return table


def _both_table(
    codeif: Ranking, convtui: Ranking, shifts: Mapping[tuple[str, Cell], Shift], method: str
) -> Table:
    label = codeif.cell.label.replace(" · codeif", "")
    changes = moved(codeif, convtui)
    verdict = (
        "the ranking is the same under both protocols"
        if not changes
        else "ranks moved: "
        + ", ".join(f"{c['model']} #{c['codeif']:g} → #{c['convtui']:g}" for c in changes)
    )
    table = Table(
        title=f"CodeIF-Bench models ranked by CA · {label} · codeif and convtui protocols",
        caption="\n".join([verdict, _caption(codeif, method)]),
    )
    table.add_column("model")
    table.add_column("codeif\nCA % · rank", justify="right")
    table.add_column("convtui\nCA % · rank", justify="right")
    for metric in SHIFT_METRICS:
        table.add_column(f"Δ {metric.upper()} pts\n(interval)", justify="right")
    for r in codeif.ranks:
        shift = shifts.get((r.side, codeif.cell))
        table.add_row(
            r.side,
            _rank_cell(r),
            _rank_cell(convtui.rank_of(r.side)),
            *(_delta(shift, m) for m in SHIFT_METRICS),
        )
    return table


def _delta(shift: Shift | None, metric: str) -> str:
    if shift is None or metric not in shift.comparisons:
        return "—"
    d = shift.comparisons[metric].difference
    if d.low is None or d.high is None:
        return f"{_points(d.value)}\nn/a"
    return f"{_points(d.value)}\n{_points(d.low)}–{_points(d.high)}"


def _points(share: float) -> str:
    """``+1.9``; a value that rounds to zero is ``0.0``, never ``-0.0``."""
    text = f"{100 * share:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def _caption(ranking: Ranking, method: str) -> str:
    shared = f"{ranking.tasks} tasks every model played"
    if ranking.left_out:
        shared += f" ({ranking.left_out} played by some models only left out)"
    return (
        f"CA: each task's CA averaged over its rows, then over the {shared}; rank 1 is "
        f"highest, its interval from resampling the tasks jointly ({method}). Δ: convtui − "
        "codeif, paired by task (IFR: lower is better)."
    )
