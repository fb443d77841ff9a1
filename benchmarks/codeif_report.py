"""CodeIF-Bench results for ``convtui report``: the paper's tables (§3.2) from the recorded
rounds of ``bench codeif`` runs — IA, CA and IFR per round (IFE too for dynamic
conversations) and IA by instruction category, one group per model × mode × protocol — as
rich tables, CSV and JSON. The JSON also holds every session's rounds (the instruction each
gave and whether every instruction given so far was followed), so anyone can recompute the
metrics without convtui.

Verdicts are not re-run: each round's recorded execution is read back through
:func:`convtui.core.codeif.records.rebuild`, the same code that resumes a run.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.benchmarks.codeif import SELECTION_PREFIX
from convtui.core.codeif.conversation import MODES, Mode, PlayedRound
from convtui.core.codeif.instructions import BASE, CATEGORIES, instructions
from convtui.core.codeif.metrics import (
    Round,
    RoundAverage,
    ia_by_category,
    per_round,
    round_scores,
)
from convtui.core.codeif.records import rebuild
from convtui.core.errors import ConvtuiError
from convtui.core.loaders import load_catalog
from convtui.sessions import Store
from convtui.sessions.results import sessions_by_selection

REPLAY = "replay"  # bench codeif --logs: people's conversations replayed
METRICS_NOTE = (
    "IA: the round's instruction is followed. CA: share of the instructions given so far "
    "that are followed (Functionality Extension left out). IFR: share of the instructions "
    "followed in the previous round that are no longer followed. IFE (dynamic): "
    "instructions followed per round played. Averages over the tasks that reached a round."
)


@dataclass(frozen=True)
class CodeifSession:
    """One recorded CodeIF-Bench conversation."""

    session_id: str
    run_id: str
    task_id: str
    model: str
    mode: str  # static, dynamic or replay
    protocol: str
    status: str
    rounds: tuple[Round, ...]

    def to_json(self) -> dict:
        scores = round_scores(self.rounds)
        return {
            "session_id": self.session_id,
            "run_id": self.run_id,
            "task_id": self.task_id,
            "model": self.model,
            "mode": self.mode,
            "protocol": self.protocol,
            "status": self.status,
            "rounds": [
                {
                    "round": r.number,
                    "kind": r.kind,
                    "instruction": r.instruction,
                    "followed": dict(r.followed),
                    "dropped": sorted(r.dropped),
                    "ia": s.ia,
                    "ca": s.ca,
                    "ifr": s.ifr,
                    "ife": s.ife,
                }
                for r, s in zip(self.rounds, scores, strict=True)
            ],
        }


@dataclass(frozen=True)
class CodeifGroup:
    """The scores of one model × mode × protocol, over its sessions."""

    model: str
    mode: str
    protocol: str
    tasks: int
    rounds: tuple[RoundAverage, ...]
    categories: dict[str, tuple[int, float]]  # category -> (rounds that gave it, mean IA)

    @property
    def label(self) -> str:
        return f"{self.model} · {self.mode} · {self.protocol}"

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "mode": self.mode,
            "protocol": self.protocol,
            "tasks": self.tasks,
            "rounds": [
                {"round": a.number, "tasks": a.tasks, "ia": a.ia, "ca": a.ca, "ifr": a.ifr}
                | ({"ife": a.ife} if self.mode == "dynamic" else {})
                for a in self.rounds
            ],
            "ia_by_category": {
                c: {"rounds": n, "ia": ia} for c, (n, ia) in self.categories.items()
            },
        }


def selection_fields(selection: str) -> dict[str, str]:
    """``codeif;mode=static;protocol=codeif;ids=…`` -> its ``key=value`` fields."""
    return dict(p.split("=", 1) for p in selection.split(";")[1:] if "=" in p)


def read_codeif(db_store: Store, run_ids: Sequence[str] | None) -> tuple[CodeifSession, ...]:
    """Every CodeIF-Bench session of the store (or of ``run_ids``) with its rounds rebuilt;
    sessions that recorded no round yet are left out."""
    found = sessions_by_selection(db_store, SELECTION_PREFIX, run_ids)
    if not found:
        return ()
    try:
        catalog = load_catalog("codeif")
    except ConvtuiError as exc:
        raise ConvtuiError(f"reading CodeIF-Bench results needs the tasks: {exc}") from exc
    sessions = []
    for s in found:
        fields = selection_fields(s.selection)
        mode = fields.get("mode", "static")
        if mode not in (*MODES, REPLAY) or s.task_id not in catalog:
            continue
        turns = db_store.load_turns(s.session_id)
        if not turns:
            continue
        # A replay checks every instruction each round, as the person's conversation did.
        checks: Mode = "person" if mode == REPLAY else mode  # type: ignore[assignment]
        played: list[PlayedRound] = rebuild(turns, instructions(catalog[s.task_id]), checks)
        sessions.append(
            CodeifSession(
                session_id=s.session_id,
                run_id=s.run_id,
                task_id=s.task_id,
                model=s.model,
                mode=mode,
                protocol=fields.get("protocol", "convtui"),
                status=s.status,
                rounds=tuple(p.as_round() for p in played),
            )
        )
    return tuple(sessions)


def build_groups(sessions: Sequence[CodeifSession]) -> tuple[CodeifGroup, ...]:
    """One group per model × mode × protocol; a task recorded by several runs of one group
    counts once (the newest run's session)."""
    newest: dict[tuple[str, str, str], dict[str, CodeifSession]] = {}
    for s in sorted(sessions, key=lambda s: s.run_id):
        newest.setdefault((s.model, s.mode, s.protocol), {})[s.task_id] = s
    groups = []
    for (model, mode, protocol), by_task in sorted(newest.items()):
        tasks = [s.rounds for s in by_task.values()]
        groups.append(
            CodeifGroup(
                model=model,
                mode=mode,
                protocol=protocol,
                tasks=len(tasks),
                rounds=tuple(per_round(tasks)),
                categories=ia_by_category(tasks),
            )
        )
    return tuple(groups)


def codeif_json(groups: Sequence[CodeifGroup], sessions: Sequence[CodeifSession]) -> dict:
    return {
        "groups": [g.to_json() for g in groups],
        "sessions": [s.to_json() for s in sessions],
        "metrics": METRICS_NOTE,
    }


def rounds_csv(groups: Sequence[CodeifGroup]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model", "mode", "protocol", "round", "tasks", "ia", "ca", "ifr", "ife"])
    for g in groups:
        for a in g.rounds:
            ife = f"{a.ife:.4f}" if g.mode == "dynamic" else ""
            writer.writerow(
                [g.model, g.mode, g.protocol, a.number, a.tasks]
                + [f"{v:.4f}" for v in (a.ia, a.ca, a.ifr)]
                + [ife]
            )
    return out.getvalue()


def categories_csv(groups: Sequence[CodeifGroup]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["model", "mode", "protocol", "category", "rounds", "ia"])
    for g in groups:
        for category in _categories(groups):
            if category in g.categories:
                n, ia = g.categories[category]
                writer.writerow([g.model, g.mode, g.protocol, category, n, f"{ia:.4f}"])
    return out.getvalue()


def round_table(groups: Sequence[CodeifGroup], metric: str, title: str):
    """One metric per round (rows) for every group (columns)."""
    from rich.table import Table

    table = Table(title=title, header_style="bold", min_width=30)
    table.add_column("round", justify="right")
    for g in groups:
        table.add_column(f"{g.model}\n{g.mode} · {g.protocol}", justify="right")
    most = max((len(g.rounds) for g in groups), default=0)
    for i in range(most):
        cells = []
        for g in groups:
            a = g.rounds[i] if i < len(g.rounds) else None
            cells.append(f"{_shown(metric, getattr(a, metric))} ({a.tasks})" if a else "")
        table.add_row(str(i + 1), *cells)
    return table


def category_table(groups: Sequence[CodeifGroup]):
    from rich.table import Table

    table = Table(
        title="CodeIF-Bench IA by instruction category (%)",
        header_style="bold",
        caption="Instruction rounds only (not feedback rounds); (n) = rounds that gave it.",
    )
    table.add_column("category")
    for g in groups:
        table.add_column(f"{g.model}\n{g.mode} · {g.protocol}", justify="right")
    for category in _categories(groups):
        cells = []
        for g in groups:
            n, ia = g.categories.get(category, (0, 0.0))
            cells.append(f"{100 * ia:.1f} ({n})" if n else "-")
        table.add_row(category, *cells)
    return table


def codeif_tables(groups: Sequence[CodeifGroup]) -> list:
    """The paper's tables: IA, CA and IFR per round; IFE per round for dynamic groups; IA by
    category. Cells read ``score (tasks that reached the round)``."""
    tables = [
        round_table(groups, "ia", "CodeIF-Bench IA per round (%)"),
        round_table(groups, "ca", "CodeIF-Bench CA per round (%)"),
        round_table(groups, "ifr", "CodeIF-Bench IFR per round (%)"),
    ]
    dynamic = [g for g in groups if g.mode == "dynamic"]
    if dynamic:
        title = "CodeIF-Bench IFE per round (dynamic; instructions followed per round)"
        tables.append(round_table(dynamic, "ife", title))
    tables.append(category_table(groups))
    return tables


def _shown(metric: str, value: float) -> str:
    # IFE counts instructions per round; the others are shares, shown in percent.
    return f"{value:.2f}" if metric == "ife" else f"{100 * value:.1f}"


def _categories(groups: Sequence[CodeifGroup]) -> list[str]:
    seen = {c for g in groups for c in g.categories}
    order = [BASE, *CATEGORIES]
    return [c for c in order if c in seen] + sorted(seen - set(order))
