"""The log sets a ``sessions export --format convcodebench`` writes: recorded sessions
grouped by model and Ω (a static replay's also by the reference set it replayed), checked to
share one config and one kind of user, and named as ConvCodeWorld's scripts name their files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from convtui.core.settings.config import SessionConfig
from convtui.sessions.database.errors import ExportError
from convtui.sessions.database.records import SessionRow
from convtui.sessions.database.store import Store
from convtui.sessions.exchange.ccw_files import (
    RESULTS_DIR,
    STATIC_DIR,
    LogSetName,
    file_model_name,
    model_part,
    name_problem,
    verbal_code,
)


@dataclass(frozen=True)
class LogSetPlan:
    """One log set to write: its sessions sorted by task, all under ``config``.

    ``model_name`` is the model's name in the files (ConvCodeWorld's ``--model_name``),
    ``simulator_name`` the name of whoever gave the verbal feedback (its
    ``--simulator_name``; None without verbal feedback). A static replay's set has the
    ``reference`` set it replayed; ``added`` marks a reference set written only because a
    selected replay needs it."""

    log_set: LogSetName
    config: SessionConfig
    user_kind: str
    simulator: str | None
    sessions: tuple[SessionRow, ...]
    model_name: str
    simulator_name: str | None
    reference: LogSetPlan | None = None
    added: bool = False

    @property
    def name(self) -> str:
        """The set's file stem (its turn-1 file without ``.jsonl``)."""
        return self.log_set.stem

    @property
    def turns(self) -> int:
        """Turn 0 and the feedback turns its files hold."""
        return max([self.config.max_turns, *(row.turns_done for row in self.sessions)])

    @property
    def folder(self) -> str:
        """Where the set's turn files go, under the export folder."""
        if self.reference is None:
            return RESULTS_DIR
        return f"{STATIC_DIR}/{self.reference.name}"


def task_order(task_id: str) -> tuple[str, int, int, str]:
    """Tasks in catalog order: ``BigCodeBench/2`` before ``BigCodeBench/10``."""
    prefix, _, number = task_id.rpartition("/")
    if number.isdigit():
        return (prefix, 0, int(number), task_id)
    return (task_id, 1, 0, task_id)


def plan_log_sets(
    store: Store, sessions: Sequence[SessionRow], *, model_name: str | None = None
) -> list[LogSetPlan]:
    """Group sessions into log sets by (model, Ω), refusing a set that would mix configs,
    kinds of user, or two sessions of one task (a replay has one reference per task).

    Replayed sessions are grouped by (target model, Ω, reference set) and the reference
    sessions they were handed join the plain sets. ``model_name`` names the selection's
    model in the files instead of :func:`file_model_name` of its spec; it is refused when
    ConvCodeWorld's scripts could not pair files under it, or when the selection holds more
    than one model."""
    selected = {row.id for row in sessions}
    replays = [row for row in sessions if row.reference_session_id]
    plain = {row.id: row for row in sessions if not row.reference_session_id}
    for row in replays:
        ref_id = row.reference_session_id
        assert ref_id is not None
        if ref_id not in plain:
            plain[ref_id] = _reference_row(store, row, ref_id)
    names = _model_names(sessions, model_name)
    groups: dict[tuple[str, str], list[SessionRow]] = defaultdict(list)
    for row in plain.values():
        groups[(row.model, row.feedback)].append(row)
    plans = [
        _plan(store, rows, names, added=not any(row.id in selected for row in rows))
        for _, rows in sorted(groups.items())
    ]
    _no_shared_folder(plans)
    of_session = {row.id: plan for plan in plans for row in plan.sessions}
    static: dict[tuple[str, str, str], list[SessionRow]] = defaultdict(list)
    for row in replays:
        assert row.reference_session_id is not None
        reference = of_session[row.reference_session_id]
        static[(row.model, row.feedback, reference.name)].append(row)
    by_name = {plan.name: plan for plan in plans}
    replayed = [
        _plan(store, rows, names, reference=by_name[key[2]]) for key, rows in sorted(static.items())
    ]
    _no_shared_folder(replayed)
    return sorted(plans, key=lambda plan: plan.name) + sorted(
        replayed, key=lambda plan: (plan.folder, plan.name)
    )


def _reference_row(store: Store, row: SessionRow, ref_id: str) -> SessionRow:
    try:
        return store.session(ref_id)
    except LookupError:
        raise ExportError(
            f"session {row.id} replayed session {ref_id}, which is not in this database: "
            "ConvCodeWorld's static results are read beside the reference's logs"
        ) from None


def _model_names(sessions: Sequence[SessionRow], chosen: str | None) -> dict[str, str]:
    """Model spec -> its name in the files, for the selection's models (a reference model
    not among them keeps its default name)."""
    models = sorted({row.model for row in sessions})
    if chosen is None:
        return {}
    problem = name_problem(chosen)
    if problem is not None:
        raise ExportError(f"--model-name {chosen!r} {problem}")
    if len(models) > 1:
        raise ExportError(
            f"--model-name names one model, and the selection holds {len(models)} "
            f"({', '.join(models[:3])}{', ...' if len(models) > 3 else ''}): export them "
            "separately"
        )
    return {models[0]: chosen}


def _no_shared_folder(plans: Sequence[LogSetPlan]) -> None:
    seen: dict[tuple[str, str], LogSetPlan] = {}
    for plan in plans:
        other = seen.setdefault((plan.folder, plan.name), plan)
        if other is not plan:
            raise ExportError(
                f"models {other.config.model!r} and {plan.config.model!r} would both be "
                f"written to the files {plan.name}: export them separately"
                + ("" if other.config.model == plan.config.model else " or give --model-name")
            )


def _plan(
    store: Store,
    rows: Sequence[SessionRow],
    names: Mapping[str, str],
    *,
    reference: LogSetPlan | None = None,
    added: bool = False,
) -> LogSetPlan:
    first = rows[0]
    label = f"{first.model} · {first.feedback}"
    config = store.session_config(first.id)
    for row in rows[1:]:
        other = store.session_config(row.id)
        if other.config_hash != config.config_hash:
            fields = _differing(config.to_dict(), other.to_dict())
            raise ExportError(
                f"sessions {first.id} and {row.id} ({label}) ran under different configs "
                f"({', '.join(fields)} differ); a log set holds one config: export them "
                "separately"
            )
        if (row.user_kind, row.simulator) != (first.user_kind, first.simulator):
            raise ExportError(
                f"sessions {first.id} and {row.id} ({label}) had different users "
                f"({_who(first)} and {_who(row)}); a log set holds one kind of feedback: "
                "export them separately"
            )
    by_task: dict[str, str] = {}
    for row in rows:
        if row.task_id in by_task:
            raise ExportError(
                f"sessions {by_task[row.task_id]} and {row.id} ({label}) both hold task "
                f"{row.task_id}; a log set has one reference session per task: name the "
                "sessions to export"
            )
        by_task[row.task_id] = row.id
    ordered = sorted(rows, key=lambda row: task_order(row.task_id))
    verbal_code(config.feedback.verbal)  # a persona ConvCodeWorld's file names lack: one line
    model_name = names.get(config.model) or file_model_name(config.model)
    if reference is None:
        simulator_name = _simulator_name(config, model_name, first.user_kind, first.simulator)
    else:
        # The replay's user is the reference's: print_results.py names both with one
        # --simulator_name, left out of a file whose model has that very name.
        simulator_name = reference.simulator_name
    by = None
    if simulator_name is not None and simulator_name != model_name:
        by = model_part(simulator_name)
    return LogSetPlan(
        log_set=LogSetName(model_part(model_name), config.feedback, by),
        config=config,
        user_kind=first.user_kind,
        simulator=first.simulator,
        sessions=tuple(ordered),
        model_name=model_name,
        simulator_name=simulator_name,
        reference=reference,
        added=added,
    )


def _differing(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(key for key in a.keys() | b.keys() if a.get(key) != b.get(key))


def _who(row: SessionRow) -> str:
    return f"{row.user_kind}:{row.simulator}" if row.simulator else row.user_kind


def _simulator_name(
    config: SessionConfig, model_name: str, user_kind: str, simulator: str | None
) -> str | None:
    """Who gave the verbal feedback, named as the files name it (ConvCodeWorld's
    ``--simulator_name``): the simulator, or the model itself when it played its own user
    (the files then carry no ``_by_``); people (our extension) are ``human`` or
    ``assist-<simulator>``. None for sets without verbal feedback (no ``_by_`` either)."""
    if user_kind == "human":
        return "human"
    if user_kind == "assist":
        return f"assist-{model_part(file_model_name(simulator))}" if simulator else "assist"
    if config.feedback.verbal == "none":
        return None
    if user_kind == "simulator" and simulator and simulator != config.model:
        return model_part(file_model_name(simulator))
    return model_name


def print_results_args(plan: LogSetPlan) -> list[str]:
    """The arguments of ConvCodeWorld's ``print_results.py`` that read ``plan``'s files (run
    in the export folder, which holds the ``bigcodebench/`` and ``results/`` it expects)."""
    args = ["--option", "static" if plan.reference else "live", "--model_name", plan.model_name]
    if plan.simulator_name is not None:
        args += ["--simulator_name", plan.simulator_name]
    turns = plan.turns
    if plan.reference is not None:
        args += ["--ref_model_name", plan.reference.model_name]
        turns = min(turns, plan.reference.turns)  # it reads both sets' files, turn by turn
    return [*args, "--max_iteration", str(turns - 1)]
