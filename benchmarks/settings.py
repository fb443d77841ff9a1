"""What the headless commands take, grouped so that each group is declared once: which tasks
(:class:`TaskSelection`), the executor (:class:`ExecutorSettings`), the model
(:class:`ModelSettings`), the protocol (:class:`ProtocolSettings`) and where a benchmark run
is recorded (:class:`RunTarget`). The command line builds them from its options; the commands
read them, so neither lists every option again.

Light on purpose: ``convtui --help`` reads :data:`ExportFormat` here (the store's modules,
where the export formats are written, are too heavy for it), so the executor and the model
backends are imported only when a command opens them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from convtui.core.catalog.tasks import SuiteOrAll, Task
from convtui.core.execution.choice import LOCAL, ExecutorChoice
from convtui.core.execution.isolation import IsolationChoice
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackChoice, FeedbackConfig
from convtui.core.settings.protocol import PlayRules

if TYPE_CHECKING:
    from convtui.core.catalog.loaders import TaskCatalog
    from convtui.core.execution.backend import ExecutionBackend
    from convtui.core.services import ModelOptions

# What ``sessions export --format`` writes: jsonl, one object per session; convcodebench,
# static log sets, a folder per model and Ω; codeif, CodeIF-Bench's completions file, one
# object per round (sessions/exchange/codeif_export.py).
ExportFormat = Literal["jsonl", "convcodebench", "codeif"]
# What ``study export --format`` writes: parquet, one row per turn and a dataset card
# (sessions/studies/study_share.py). A Literal, so a second format is one more value here.
StudyExportFormat = Literal["parquet"]
# What ``compare --by`` splits the sessions by, and which sessions ``compare --kind`` reads:
# live BigCodeBench runs or static replays (benchmarks/reports/compare.py).
CompareBy = Literal["model", "feedback", "run", "db", "annotator", "log-set"]
CompareKind = Literal["live", "static"]


@dataclass(frozen=True)
class TaskSelection:
    """``--suite``, ``--data``, ``--ids``, ``--lib`` and ``--stdlib-only``: which tasks."""

    suite: SuiteOrAll = "bigcodebench"
    data: Path | None = None
    ids: str | None = None
    lib: Sequence[str] = ()
    stdlib_only: bool = False

    def tasks(self) -> list[Task]:
        """The tasks of the suite that every given filter keeps, in catalog order."""
        return self.catalog().select(self.ids, list(self.lib) or None, self.stdlib_only)

    def catalog(self) -> TaskCatalog:
        from convtui.core.catalog.loaders import load_catalog

        return load_catalog(self.suite, self.data)

    def task(self, task_id: str) -> Task:
        """One task, from only the suite its id names under ``all``: a missing dataset of
        another suite does not get in the way."""
        from convtui.core.catalog.loaders import load_catalog

        return load_catalog(suite_for(task_id, self.suite), self.data).get(task_id)

    def key(self) -> str:
        """The selection as a run records it: the same options, the same run to resume."""
        return (
            f"suite={self.suite};ids={self.ids or ''};lib={','.join(self.lib)};"
            f"stdlib_only={self.stdlib_only}"
        )


def suite_for(task_id: str, suite: str) -> str:
    """The suite to load for ``task_id``: the one its prefix names when ``suite`` is all."""
    if suite != "all":
        return suite
    prefix = task_id.split("/", 1)[0].lower() if "/" in task_id else "bigcodebench"
    return {"bigcodebench": "bigcodebench", "codeif": "codeif"}.get(prefix, "all")


@dataclass(frozen=True)
class ExecutorSettings:
    """``--python``, ``--jobs``, ``--isolation`` and ``--executor``: where and how candidates
    run (``executor``: ``local`` or ``ray[:ADDRESS]``, parsed, core/execution/choice.py)."""

    python: str | None = None
    jobs: int | None = None
    isolation: IsolationChoice = "auto"
    executor: ExecutorChoice = LOCAL

    def open(self, *, model_code: bool = True) -> ExecutionBackend:
        """The executor. For ``model_code`` it refuses to run unconfined unless ``--isolation
        none`` asked for it; the dataset's own solutions or a file the person gives may run
        where no sandbox works."""
        from convtui.core.services import open_execution

        backend = open_execution(
            self.executor,
            python=self.python,
            jobs=self.jobs,
            isolation=self.isolation,
            model_code=model_code,
        )
        _threads_for(backend.jobs)
        return backend


def _threads_for(jobs: int) -> None:
    """The turn loop runs each execution with asyncio.to_thread, on the running loop's
    default pool of min(32, cores + 4) threads: fewer than a cluster has slots, which would
    then idle however many sessions play at once. Where a loop runs (the bench commands),
    give it one thread per slot and a few more; asyncio.run shuts the pool down."""
    import asyncio
    import os
    from concurrent.futures import ThreadPoolExecutor

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # check, doctor: no loop
        return
    if jobs + 4 > min(32, (os.cpu_count() or 1) + 4):
        loop.set_default_executor(ThreadPoolExecutor(jobs + 4, thread_name_prefix="convtui-run"))


@dataclass(frozen=True)
class ModelSettings:
    """``--model``, ``--model-name``, ``--chat-template`` and ``--max-tokens``."""

    model: str
    model_name: str | None = None
    chat_template: Path | None = None
    max_tokens: int | None = None

    def options(self) -> ModelOptions:
        """What opening the backends needs beyond the run's config."""
        from convtui.core.services import ModelOptions

        return ModelOptions(self.model_name, self.chat_template)


@dataclass(frozen=True)
class ProtocolSettings(PlayRules):
    """The rules a session plays by (:class:`PlayRules`) and ``--feedback``: every Ω a run
    plays."""

    feedback: FeedbackChoice = field(kw_only=True)

    def config(self, models: ModelSettings) -> tuple[SessionConfig, tuple[FeedbackConfig, ...]]:
        """The run's config (under the first Ω) and every Ω that ``--feedback`` names."""
        omegas = self.feedback.configs
        config = self.settings(
            model=models.model, feedback=omegas[0], max_tokens=models.max_tokens, covering=omegas
        )
        return config, omegas


@dataclass(frozen=True)
class RunTarget:
    """``--db``, ``--concurrency`` and ``--json``: where a benchmark run is recorded, how many
    sessions play at once (None: default_concurrency) and whether the result is one JSON
    object (and no progress bar)."""

    db: Path
    concurrency: int | None = None
    as_json: bool = False
