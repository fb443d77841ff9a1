"""CodeIF-Bench results for ``convtui report``: IA, CA and IFR per round (IFE too for
dynamic conversations) and IA by instruction category, one group per model × mode × protocol
× metric definition × data file, as rich tables, CSV and JSON. The JSON also holds every
session's rounds (the instruction each gave, and every instruction's verdict both ways: with
the initial asserts as the paper checks, on its own asserts as the authors' scripts check),
so anyone can recompute the metrics without convtui.

Two definitions, named in every table, CSV row and JSON group (``--metrics``, else what the
run recorded, else ``authors``): ``authors``, what the authors' scripts compute
(core/codeif/authors.py for static conversations, the published numbers), and ``paper``, the
paper's §3.2 formulas (core/codeif/metrics.py). A dynamic conversation played by the authors'
dynamic script (``--protocol codeif``, core/codeif/authors_dynamic.py) is scored under
``authors`` as that script scores each turn, and its table is ``report.py``'s: the turns
averaged in pairs ("1-2", "3-4", ...) and an "avg" row. One played by convtui's rules
(``--protocol convtui``) is scored by the paper's formulas under either, and its tables say so.

Verdicts are not re-run: each round's recorded execution is read back through
:func:`convtui.core.codeif.records.rebuild`, the same code that resumes a run, against the
data file the run was checked on (its path and hash are recorded with the run).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, get_args

from convtui.benchmarks.reports import interval_cells
from convtui.benchmarks.reports.codeif_left_out import (
    left_out_by_category,
    left_out_json,
    left_out_table,
)
from convtui.benchmarks.runs.codeif import AUTHORS_CONVERSATION
from convtui.core.catalog.loaders import TaskCatalog
from convtui.core.codeif import authors_dynamic
from convtui.core.codeif.authors import Cell, authors_per_round, task_rows
from convtui.core.codeif.authors_dynamic import PAIR_METRICS, ScriptTurn, pair_rows, task_pairs
from convtui.core.codeif.conversation import MODES, Mode, PlayedRound
from convtui.core.codeif.data_file import catalog_for_run
from convtui.core.codeif.instructions import BASE, CATEGORIES, instructions
from convtui.core.codeif.leave_out import left_out, without
from convtui.core.codeif.metrics import (
    MetricsDefinition,
    Round,
    category_ia,
    ia_by_category,
    per_round,
    round_scores,
)
from convtui.core.codeif.records import rebuild
from convtui.sessions import Store
from convtui.sessions.reading.results import benchmark_sessions

if TYPE_CHECKING:  # the class only: importing stats imports numpy (see interval_cells)
    from convtui.core.metrics.stats import Estimate

REPLAY = "replay"  # bench codeif --logs: people's conversations replayed
AUTHORS: MetricsDefinition = "authors"
PAPER: MetricsDefinition = "paper"
DEFINITIONS: tuple[MetricsDefinition, ...] = get_args(MetricsDefinition)
# The note of the authors' definition for their dynamic script's conversations.
AUTHORS_DYNAMIC_NOTE = "authors (dynamic)"
METRICS_NOTES = {
    AUTHORS: (
        "authors: as the CodeIF-Bench authors' scripts compute them (IA_CA.py, IFR.py, "
        "evaluation.py; the published numbers). IA: the instruction's own asserts pass. CA: "
        "the base asserts and every non-Functionality-Extension instruction's asserts so far "
        "pass together (1 or 0); Functionality Extension rounds have no CA row. Rounds are "
        "positional per metric (round 1 the base answer; CA's round k+1 is the k-th follow-up "
        "that is not Functionality Extension). IFR: 0 where CA passes, else the share of the "
        "instructions passed before (base, earlier CA passes) whose own asserts now fail "
        "(IFR.py's Round k is shown at round k+1). Averages over the tasks with a row there."
    ),
    PAPER: (
        "paper: the paper's §3.2. IA: the round's instruction is followed (with the initial "
        "asserts, but Functionality Extension). CA: share of the instructions given so far "
        "that are followed (Functionality Extension left out). IFR: share of the instructions "
        "followed in the previous round that are no longer followed. IFE (dynamic): "
        "instructions followed per round played. Averages over the tasks that reached a round."
    ),
    AUTHORS_DYNAMIC_NOTE: (
        "authors (dynamic): as the CodeIF-Bench authors' dynamic conversation scores each turn "
        "and averages the turns (zhu-zhu-ding/CodeIF-Bench, branch v1, dynamic_conversation/"
        "multi_turn_function_eval.py and report.py). Each "
        "instruction is checked on its own tests. IA: the turn's instruction is followed. CA: "
        "share of the instructions given so far (an instruction given again counts again; the "
        "base one always) that are followed. IFR: share of the instructions still asked whose "
        "passed flag is set (followed in their turn or retry, never cleared) that now fail. "
        "IFE: the number CA counts divided by the turn's number. The base answer's turn and its "
        "retry score IA = CA = pass, IFR 0, IFE 1 (0.5 on the retry). Rows are report.py's: "
        "each task's turns in pairs (1-2, 3-4, ...; an odd last turn alone), each pair averaged "
        "over the tasks that have it; avg is the mean of the pairs' averages. All in percent."
    ),
}


def _played_as(model: str, mode: str, protocol: str, conversation: str | None) -> dict:
    """How a session or a group was played, as the JSON names it in both: the model, the
    mode, the protocol and, for a dynamic conversation by the authors' script, that."""
    played = {"model": model, "mode": mode, "protocol": protocol}
    return played | ({"conversation": conversation} if conversation else {})


@dataclass(frozen=True)
class CodeifSession:
    """One recorded CodeIF-Bench conversation, with the definition it is scored by."""

    session_id: str
    run_id: str
    task_id: str
    model: str
    mode: str  # static, dynamic or replay
    protocol: str
    status: str
    rounds: tuple[Round, ...]
    metrics: str = AUTHORS  # the definition asked for (see scored_by)
    data: str = ""  # the first 16 hex digits of the data file's SHA-256, "" if not recorded
    # "authors": a dynamic conversation played by the authors' script (authors_dynamic.py),
    # with its rows as that script logs them in ``script_turns``; "" for any other.
    conversation: str = ""
    script_turns: tuple[ScriptTurn, ...] = ()
    level: str = ""  # Task.level: the levels are scored apart, never pooled
    prompting: str = "direct"  # the run's --prompting: cot runs are scored apart
    # Instructions --protocol convtui leaves out of its scores (core/codeif/leave_out.py):
    # category -> why; their rounds are not in ``rounds``.
    left_out: Mapping[str, str] = field(default_factory=dict)

    @property
    def authors_dynamic(self) -> bool:
        return self.mode == "dynamic" and self.conversation == AUTHORS_CONVERSATION

    @property
    def scored_by(self) -> str:
        """The definition asked for, but a dynamic conversation by convtui's rules is scored
        by the paper's formulas under either."""
        return PAPER if self.mode == "dynamic" and not self.authors_dynamic else self.metrics

    def to_json(self) -> dict:
        conversation = self.conversation if self.authors_dynamic else None
        return {
            "session_id": self.session_id,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "level": self.level,
            "prompting": self.prompting,
            **_played_as(self.model, self.mode, self.protocol, conversation),
            "status": self.status,
            "data_sha256": self.data,
            "rounds": [
                {
                    "round": r.number,
                    "kind": r.kind,
                    "instruction": r.instruction,
                    "followed": dict(r.followed),
                    "own": dict(r.own),
                    "dropped": sorted(r.dropped),
                }
                for r in self.rounds
            ],
            "left_out": dict(self.left_out),
            "scores": self._scores(),
        }

    def _scores(self) -> dict:
        if self.scored_by == AUTHORS and self.authors_dynamic:
            # Each turn as the script logs it, then report.py's pairs of this session alone.
            return {
                "metrics": AUTHORS,
                "turns": [
                    {"turn": t.number, "kind": t.kind, "instruction": t.instruction}
                    | {m: getattr(t, m) for m in PAIR_METRICS}
                    | {"given": list(t.given), "dropped": sorted(t.dropped)}
                    for t in self.script_turns
                ],
                "pairs": [
                    {"turns": name} | values for name, values in task_pairs(self.script_turns)
                ],
            }
        if self.scored_by == AUTHORS:
            rows = task_rows(self.rounds)
            # Positional lists, as the scripts number them (authors.py rule 3).
            return {"metrics": AUTHORS, "ia": rows.ia, "ca": rows.ca, "ifr": rows.ifr}
        scores = round_scores(self.rounds)
        return {
            "metrics": PAPER,
            "rounds": [
                {"round": r.number, "ia": s.ia, "ca": s.ca, "ifr": s.ifr, "ife": s.ife}
                for r, s in zip(self.rounds, scores, strict=True)
            ],
        }


@dataclass(frozen=True)
class CodeifIntervals:
    """A group's numbers with their intervals over tasks (benchmarks/reports/intervals.py):
    ``rounds`` as the group's rounds (a metric with no row at a round is absent),
    ``categories`` by category."""

    rounds: tuple[Mapping[str, Estimate], ...]
    categories: Mapping[str, Estimate]

    def all(self) -> list[Estimate]:
        return [*(e for r in self.rounds for e in r.values()), *self.categories.values()]


@dataclass(frozen=True)
class CodeifGroup:
    """The scores of one model × mode × protocol × definition × data file: per round (index
    0 = round 1), each metric's cell; a metric with no row at a round is absent. The authors'
    dynamic conversations scored by their definition have report.py's rows instead, named in
    ``labels`` ("1-2", "3-4", ..., "avg")."""

    model: str
    mode: str
    protocol: str
    metrics: str
    data: str
    tasks: int
    rounds: tuple[Mapping[str, Cell], ...]
    categories: dict[str, tuple[int, float]]  # category -> (rounds that gave it, mean IA)
    conversation: str = ""  # "authors": the authors' dynamic script played it
    labels: tuple[str, ...] = ()  # the rows' names when they are not rounds 1, 2, ...
    level: str = ""  # Task.level of every task in it
    prompting: str = "direct"
    # The sessions scored, one per task: what the intervals resample.
    sessions: tuple[CodeifSession, ...] = field(default=(), repr=False)
    intervals: CodeifIntervals | None = None  # None: not asked for (--no-intervals)

    @property
    def label(self) -> str:
        level = f" · {self.level}" if self.level else ""
        cot = " · cot" if self.prompting != "direct" else ""
        return f"{self.model} · {self.mode} · {self.protocol} · {self.metrics}{level}{cot}"

    @property
    def note(self) -> str:
        """The key of its definition's note in METRICS_NOTES."""
        return AUTHORS_DYNAMIC_NOTE if self.labels else self.metrics

    def row_name(self, i: int) -> str:
        return self.labels[i] if self.labels else str(i + 1)

    def to_json(self) -> dict:
        return {
            **_played_as(self.model, self.mode, self.protocol, self.conversation or None),
            "metrics": self.metrics,
            "metrics_note": METRICS_NOTES[self.note],
            "data_sha256": self.data,
            "level": self.level,
            "prompting": self.prompting,
            "tasks": self.tasks,
            "rounds": [
                ({"turns": self.labels[i]} if self.labels else {"round": i + 1})
                | {m: c.value for m, c in row.items()}
                | {f"{m}_tasks": c.tasks for m, c in row.items()}
                | self._round_intervals(i)
                for i, row in enumerate(self.rounds)
            ],
            "ia_by_category": {
                c: {"rounds": n, "ia": ia} | self._category_interval(c)
                for c, (n, ia) in self.categories.items()
            },
            "left_out": left_out_json(self.sessions),
        }

    # Intervals in JSON are on the values' own scale: shares (IFE a count), 4 digits.
    def _round_intervals(self, i: int) -> dict[str, object]:
        if self.intervals is None:
            return {}
        found = self.intervals.rounds[i]
        return {f"{m}_interval": interval_cells.interval_json(e, 1.0, 4) for m, e in found.items()}

    def _category_interval(self, category: str) -> dict[str, object]:
        if self.intervals is None or category not in self.intervals.categories:
            return {}
        return {
            "ia_interval": interval_cells.interval_json(self.intervals.categories[category], 1.0, 4)
        }


def selection_fields(selection: str) -> dict[str, str]:
    """``codeif;mode=static;protocol=codeif;ids=…`` -> its ``key=value`` fields."""
    return dict(p.split("=", 1) for p in selection.split(";")[1:] if "=" in p)


def read_codeif(
    db_store: Store, run_ids: Sequence[str] | None, metrics: str | None = None
) -> tuple[CodeifSession, ...]:
    """Every CodeIF-Bench session of the store (or of ``run_ids``) with its rounds rebuilt
    against its run's data file, scored by ``metrics`` (None: what each run recorded, else
    the authors'); sessions that recorded no round yet are left out."""
    found = benchmark_sessions(db_store, "codeif", run_ids)
    catalogs: dict[str, tuple[TaskCatalog, str, str]] = {}
    sessions = []
    for s in found:
        if s.run_id not in catalogs:
            settings = db_store.run(s.run_id).settings
            catalog, digest = catalog_for_run(settings)
            catalogs[s.run_id] = (catalog, digest, metrics or settings.get("metrics", AUTHORS))
        catalog, digest, definition = catalogs[s.run_id]
        fields = selection_fields(s.selection)
        mode = s.mode
        if mode not in (*MODES, REPLAY) or s.task_id not in catalog:
            continue
        turns = db_store.load_turns(s.session_id)
        if not turns:
            continue
        task = catalog[s.task_id]
        conversation = fields.get("conversation", "") if mode == "dynamic" else ""
        script_turns: tuple[ScriptTurn, ...] = ()
        if conversation == AUTHORS_CONVERSATION:
            script = authors_dynamic.Script.of(task)
            played: list[PlayedRound] = authors_dynamic.rebuild(turns, script)
            script_turns = authors_dynamic.turn_rows(script, played)
        else:
            # A replay checks every instruction each round, as the person's conversation did.
            checks: Mode = "person" if mode == REPLAY else mode  # type: ignore[assignment]
            played = rebuild(turns, instructions(task), checks)
        protocol = fields.get("protocol", "convtui")
        rounds = tuple(p.as_round() for p in played)
        left = left_out(task) if protocol == "convtui" else {}
        sessions.append(
            CodeifSession(
                session_id=s.session_id,
                run_id=s.run_id,
                task_id=s.task_id,
                model=s.model,
                mode=mode,
                protocol=protocol,
                status=s.status,
                rounds=without(rounds, left) if left else rounds,
                metrics=definition,
                data=digest,
                conversation=conversation,
                script_turns=script_turns,
                level=task.level,
                prompting=fields.get("prompting", "direct"),
                left_out=left,
            )
        )
    return tuple(sessions)


class GroupKey(NamedTuple):
    model: str
    mode: str
    protocol: str
    definition: str
    data: str
    conversation: str
    level: str
    prompting: str


def build_groups(sessions: Sequence[CodeifSession]) -> tuple[CodeifGroup, ...]:
    """One group per model × mode × protocol × definition × data file × level × prompting; a
    task recorded by several runs of one group counts once (the newest run's session)."""
    newest: dict[GroupKey, dict[str, CodeifSession]] = {}
    for s in sorted(sessions, key=lambda s: s.run_id):
        key = GroupKey(
            s.model, s.mode, s.protocol, s.scored_by, s.data, s.conversation, s.level,
            s.prompting,
        )  # fmt: skip
        newest.setdefault(key, {})[s.task_id] = s
    groups = []
    for key, by_task in sorted(newest.items()):
        model, mode, protocol, definition, data, conversation, level, prompting = key
        tasks = [s.rounds for s in by_task.values()]
        labels: tuple[str, ...] = ()
        rounds: tuple[Mapping[str, Cell], ...]
        if definition == AUTHORS and conversation == AUTHORS_CONVERSATION:
            rows = pair_rows([s.script_turns for s in by_task.values()])
            labels = tuple(r.label for r in rows)
            rounds = tuple({m: Cell(r.values[m], r.tasks) for m in PAIR_METRICS} for r in rows)
        else:
            rounds = _rounds(tasks, definition, mode)
        groups.append(
            CodeifGroup(
                model=model,
                mode=mode,
                protocol=protocol,
                metrics=definition,
                data=data,
                tasks=len(tasks),
                rounds=rounds,
                categories=_categories_ia(tasks, definition),
                conversation=conversation,
                labels=labels,
                level=level,
                prompting=prompting,
                sessions=tuple(by_task.values()),
            )
        )
    return tuple(groups)


def _rounds(
    tasks: Sequence[Sequence[Round]], definition: str, mode: str
) -> tuple[Mapping[str, Cell], ...]:
    if definition == AUTHORS:
        return tuple(authors_per_round(tasks))
    metrics = ("ia", "ca", "ifr", "ife") if mode == "dynamic" else ("ia", "ca", "ifr")
    return tuple({m: Cell(getattr(a, m), a.tasks) for m in metrics} for a in per_round(tasks))


def _categories_ia(
    tasks: Sequence[Sequence[Round]], definition: str
) -> dict[str, tuple[int, float]]:
    # The authors' IA of an instruction is on its own asserts (authors.py rule 1).
    return ia_by_category(tasks, own=definition != PAPER)


Term = tuple[int, str]  # (row index, metric): one number of a group's round tables


def task_terms(group: CodeifGroup) -> dict[str, dict[Term, float]]:
    """Each task's terms of the group's per-round means (the "avg" row aside), by task id:
    what those means average over the tasks with a row there, computed by the functions
    that compute the means."""
    if group.labels:  # the authors' dynamic script: report.py's pairs of one task each
        place = {label: i for i, label in enumerate(group.labels)}
        return {
            s.task_id: {
                (place[name], m): v
                for name, values in task_pairs(s.script_turns)
                for m, v in values.items()
            }
            for s in group.sessions
        }
    if group.metrics == AUTHORS:  # positional rows (authors.py rule 3)
        terms = {}
        for s in group.sessions:
            rows = task_rows(s.rounds)
            terms[s.task_id] = {
                (i, m): v
                for m, values in (("ia", rows.ia), ("ca", rows.ca), ("ifr", rows.ifr))
                for i, v in enumerate(values)
                if v is not None
            }
        return terms
    # The paper's: per_round averages each round number over the tasks that reached it.
    numbers = sorted({r.number for s in group.sessions for r in s.rounds})
    index = {number: i for i, number in enumerate(numbers)}
    return {
        s.task_id: {
            (index[r.number], m): getattr(scores, m)
            for r, scores in zip(s.rounds, round_scores(s.rounds), strict=True)
            for m in group.rounds[index[r.number]]
        }
        for s in group.sessions
    }


def task_categories(group: CodeifGroup) -> list[tuple[str, str, float]]:
    """(task id, category, 1 or 0 followed) for every instruction round of the group: the
    terms of its IA by category, several of one task pooled in one category."""
    own = group.metrics != PAPER  # as _categories_ia
    return [
        (s.task_id, category, ia)
        for s in group.sessions
        for category, ia in category_ia(s.rounds, own=own)
    ]


def metrics_notes(groups: Sequence[CodeifGroup]) -> dict[str, str]:
    """The notes of the definitions ``groups`` are scored by."""
    return {key: METRICS_NOTES[key] for key in sorted({g.note for g in groups})}


def codeif_json(groups: Sequence[CodeifGroup], sessions: Sequence[CodeifSession]) -> dict:
    return {
        "groups": [g.to_json() for g in groups],
        "sessions": [s.to_json() for s in sessions],
        "metrics": metrics_notes(groups),
    }


CSV_METRICS = ("ia", "ca", "ifr", "ife")


_GROUP_COLUMNS = ("model", "mode", "protocol", "metrics", "data_sha256", "level", "prompting")


def _group_values(g: CodeifGroup) -> tuple[str, ...]:
    return (g.model, g.mode, g.protocol, g.metrics, g.data, g.level, g.prompting)


def rounds_csv(groups: Sequence[CodeifGroup]) -> str:
    """One row per group and round; each metric with the tasks it averages over (blank
    where the definition has no row at that round), then, where intervals were computed,
    each metric's bounds. The authors' dynamic rows are report.py's, their ``round`` its row
    name ("1-2", ..., "avg")."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with_bounds = any(g.intervals for g in groups)
    bounds = [f"{m}_{side}" for m in CSV_METRICS for side in ("low", "high")]
    writer.writerow(
        [*_GROUP_COLUMNS, "round"]
        + [f"{m}{suffix}" for m in CSV_METRICS for suffix in ("", "_tasks")]
        + (bounds if with_bounds else [])
    )
    for g in groups:
        for i, row in enumerate(g.rounds):
            values: list[str | int] = []
            for m in CSV_METRICS:
                cell = row.get(m)
                values += [f"{cell.value:.4f}", cell.tasks] if cell else ["", ""]
            if with_bounds:
                found = g.intervals.rounds[i] if g.intervals else {}
                values += [b for m in CSV_METRICS for b in _csv_bounds(found.get(m))]
            writer.writerow([*_group_values(g), g.row_name(i), *values])
    return out.getvalue()


def _csv_bounds(estimate: Estimate | None) -> list[str]:
    # On the CSV values' scale: shares (IFE a count), 4 digits.
    return interval_cells.csv_bounds(estimate, 1.0, 4)


def categories_csv(groups: Sequence[CodeifGroup]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    with_bounds = any(g.intervals for g in groups)
    writer.writerow(
        [*_GROUP_COLUMNS, "category", "rounds", "ia"]
        + (["ia_low", "ia_high"] if with_bounds else [])
    )
    for g in groups:
        for category in _categories(groups):
            if category in g.categories:
                n, ia = g.categories[category]
                bounds = _csv_bounds(_category_estimate(g, category)) if with_bounds else []
                writer.writerow([*_group_values(g), category, n, f"{ia:.4f}", *bounds])
    return out.getvalue()


def _category_estimate(group: CodeifGroup, category: str) -> Estimate | None:
    return group.intervals.categories.get(category) if group.intervals else None


def _round_estimate(group: CodeifGroup, i: int, metric: str) -> Estimate | None:
    return group.intervals.rounds[i].get(metric) if group.intervals else None


def round_table(groups: Sequence[CodeifGroup], metric: str, title: str, method: str = ""):
    """One metric per round (rows) for every group (columns); where intervals were
    computed, each under its value, and ``method`` with any n/a's reasons below."""
    from rich.table import Table

    estimates = [_round_estimate(g, i, metric) for g in groups for i in range(len(g.rounds))]
    table = Table(
        title=title,
        header_style="bold",
        min_width=30,
        caption=interval_cells.caption(
            [_definitions_caption(groups), *interval_cells.notes(method, estimates)]
        ),
    )
    table.add_column("round", justify="right")
    for g in groups:
        table.add_column(_header(g), justify="right")
    most = max((len(g.rounds) for g in groups), default=0)
    for i in range(most):
        row = []
        for g in groups:
            cell = g.rounds[i].get(metric) if i < len(g.rounds) else None
            shown = f"{_shown(metric, cell.value)} ({cell.tasks})" if cell else ""
            row.append(_with_bounds(shown, _round_estimate(g, i, metric) if cell else None, metric))
        table.add_row(str(i + 1), *row)
    return table


def _with_bounds(shown: str, estimate: Estimate | None, metric: str = "ia") -> str:
    scale, digits = (1.0, 2) if metric == "ife" else (100.0, 1)  # as _shown shows the value
    return interval_cells.cell(shown, estimate, scale, digits)


def pair_table(group: CodeifGroup, method: str = ""):
    """The authors' dynamic rows of one group, as report.py prints them: a row per pair of
    turns, then avg; IA, IFR, CA and IFE in percent."""
    from rich.table import Table

    title = "CodeIF-Bench dynamic, per pair of turns as the authors' report.py averages (%)"
    rule = " · ".join(
        [*_header(group).split("\n"), "(n) = tasks with that pair; avg = mean of the pairs."]
    )
    notes = interval_cells.notes(method, group.intervals.all() if group.intervals else [])
    table = Table(
        title=title,
        min_width=len(title),
        header_style="bold",
        caption=interval_cells.caption([rule, *notes]),
    )
    table.add_column("turns", justify="right")
    for metric in PAIR_METRICS:
        table.add_column(metric.upper(), justify="right")
    for i, row in enumerate(group.rounds):
        shown = [
            # report.py shows IFE in percent too.
            _with_bounds(f"{100 * row[m].value:.1f} ({row[m].tasks})", _round_estimate(group, i, m))
            for m in PAIR_METRICS
        ]
        table.add_row(group.row_name(i), *shown)
    return table


def _header(g: CodeifGroup) -> str:
    data = f" · data {g.data}" if g.data else ""
    mode = f"{g.mode} (authors' script)" if g.conversation else g.mode
    level = f"\n{g.level}" if g.level else ""
    cot = " · prompting: cot" if g.prompting != "direct" else ""
    return f"{g.model}\n{mode} · {g.protocol}{cot}\nmetrics: {g.metrics}{data}{level}"


def _definitions_caption(groups: Sequence[CodeifGroup]) -> str:
    found = sorted({g.metrics for g in groups})
    captions: dict[str, str] = {
        AUTHORS: "authors = the CodeIF-Bench authors' scripts (positional rounds; "
        "published numbers)",
        PAPER: "paper = the paper's §3.2 formulas",
    }
    shown = "; ".join(captions[d] for d in found)
    by_paper = any(g.mode == "dynamic" and not g.conversation for g in groups)
    tail = (
        "; dynamic conversations by convtui's rules (--protocol convtui) are scored by the "
        "paper's formulas"
        if by_paper
        else ""
    )
    return f"(n) = tasks with a row at that round. Metrics: {shown}{tail}."


def category_table(groups: Sequence[CodeifGroup], method: str = ""):
    from rich.table import Table

    estimates = [_category_estimate(g, c) for g in groups for c in g.categories]
    rule = (
        "Instruction rounds only (not feedback rounds); (n) = rounds that gave it. "
        "IA under authors: the instruction's own asserts; under paper: with the initial ones."
    )
    table = Table(
        title="CodeIF-Bench IA by instruction category (%)",
        header_style="bold",
        caption=interval_cells.caption([rule, *interval_cells.notes(method, estimates)]),
    )
    table.add_column("category")
    for g in groups:
        table.add_column(_header(g), justify="right")
    for category in _categories(groups):
        row = []
        for g in groups:
            n, ia = g.categories.get(category, (0, 0.0))
            estimate = _category_estimate(g, category)
            row.append(_with_bounds(f"{100 * ia:.1f} ({n})", estimate) if n else "-")
        table.add_row(category, *row)
    return table


def codeif_tables(groups: Sequence[CodeifGroup], method: str = "") -> list:
    """The paper's tables: IA, CA and IFR per round; IFE per round for dynamic groups; IA by
    category. Cells read ``score (tasks that reached the round)``, with the interval below
    where intervals were computed (``method`` names how). The authors' dynamic groups have
    report.py's table each (:func:`pair_table`) instead of the per-round ones."""
    by_round = [g for g in groups if not g.labels]
    tables = []
    if by_round:
        tables += [
            round_table(by_round, "ia", "CodeIF-Bench IA per round (%)", method),
            round_table(by_round, "ca", "CodeIF-Bench CA per round (%)", method),
            round_table(by_round, "ifr", "CodeIF-Bench IFR per round (%)", method),
        ]
    dynamic = [g for g in by_round if g.mode == "dynamic"]
    if dynamic:
        title = "CodeIF-Bench IFE per round (dynamic; instructions followed per round)"
        tables.append(round_table(dynamic, "ife", title, method))
    tables += [pair_table(g, method) for g in groups if g.labels]
    tables.append(category_table(groups, method))
    if any(left_out_by_category(g.sessions) for g in groups):
        tables.append(left_out_table(groups))
    return tables


def _shown(metric: str, value: float) -> str:
    # IFE counts instructions per round; the others are shares, shown in percent.
    return f"{value:.2f}" if metric == "ife" else f"{100 * value:.1f}"


def _categories(groups: Sequence[CodeifGroup]) -> list[str]:
    seen = {c for g in groups for c in g.categories}
    order = [BASE, *CATEGORIES]
    return [c for c in order if c in seen] + sorted(seen - set(order))
