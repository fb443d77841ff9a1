"""The progress bar the headless runs (bench live, static and codeif, doctor) draw on stderr
while they work: one look for all of them, and one rule for when it is left out. Where stderr
is not a terminal (a pipe, a file, a CI log) rich draws no bar, so a plain line says how far
the run got every ``CONVTUI_PROGRESS_EVERY`` seconds (30 by default; 0 turns it off)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from convtui.benchmarks.output import console
from convtui.sessions import SessionRow

if TYPE_CHECKING:
    from convtui.benchmarks.runs.live import TurnProgress

DEFAULT_EVERY_S = 30.0


def plain_every_s() -> float:
    """Seconds between plain progress lines: ``CONVTUI_PROGRESS_EVERY``, else 30; 0 (or
    less) turns them off; a value that is not a number keeps the default."""
    try:
        return float(os.environ.get("CONVTUI_PROGRESS_EVERY", DEFAULT_EVERY_S))
    except ValueError:
        return DEFAULT_EVERY_S


def elapsed_text(seconds: float) -> str:
    """``45s``, ``1m20s``, ``2h05m00s``: as short as the span allows."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class RunProgress(Progress):
    """rich's bar, plus a plain line now and then where the bar cannot be seen (the output
    is not a terminal), as pip and pytest do for logs: ``12/40 sessions done, 3 solved,
    elapsed 1m20s · <the bar's description>``. A line per interval rather than per
    session, so a run whose sessions each take minutes still shows it is alive."""

    def __init__(
        self,
        *columns: ProgressColumn,
        unit: str | None,
        every_s: float | None,
        counts_solved: bool,
        **options: Any,
    ) -> None:
        super().__init__(*columns, **options)
        self._unit = unit
        self._every_s = every_s
        self._counts_solved = counts_solved
        self._solved: dict[TaskID, int] = {}
        # What each line's work is doing now (key -> words), for the plain lines: the last
        # finished event can be minutes old while other turns are being written.
        self._working: dict[TaskID, dict[object, str]] = {}
        self._started_at = time.monotonic()
        self._stopping = threading.Event()
        self._ticker: threading.Thread | None = None

    @classmethod
    def on_stderr(
        cls,
        *columns: ProgressColumn,
        unit: str | None = None,
        quiet: bool = False,
        transient: bool = False,
        counts_solved: bool = False,
    ) -> Self:
        """A bar of ``columns`` on stderr; not drawn when ``quiet`` (the command prints
        JSON) or on CI, whose log it would only fill; plain lines instead where stderr is not a
        terminal and not ``quiet``."""
        screen = console(stderr=True)
        every_s = plain_every_s()
        plain = not quiet and not screen.is_terminal and every_s > 0
        return cls(
            *columns,
            unit=unit,
            every_s=every_s if plain else None,
            counts_solved=counts_solved,
            console=screen,
            disable=quiet or os.environ.get("CI") == "true",
            transient=transient,
        )

    def solved(self, task: TaskID, count: int = 1) -> None:
        """``count`` more sessions of ``task``'s line solved."""
        with self._lock:
            self._solved[task] = self._solved.get(task, 0) + count

    def working(self, task: TaskID, key: object, text: str) -> None:
        """``key`` (a session) of ``task``'s line is now doing ``text``."""
        with self._lock:
            now = self._working.setdefault(task, {})
            now.pop(key, None)  # the newest last
            now[key] = text

    def idle(self, task: TaskID, key: object) -> None:
        """``key`` of ``task``'s line is no longer at work."""
        with self._lock:
            self._working.get(task, {}).pop(key, None)

    def start(self) -> None:
        super().start()
        self._started_at = time.monotonic()
        if self._every_s is not None and self._ticker is None:
            self._stopping.clear()
            self._ticker = threading.Thread(
                target=self._tick, args=(self._every_s,), name="convtui-progress", daemon=True
            )
            self._ticker.start()

    def stop(self) -> None:
        if self._ticker is not None:
            self._stopping.set()
            self._ticker.join()
            self._ticker = None
        super().stop()

    def plain_lines(self) -> list[str]:
        """One line per bar line: what is done so far, as the plain output shows it."""
        elapsed = elapsed_text(time.monotonic() - self._started_at)
        unit = f" {self._unit}" if self._unit else ""
        lines = []
        for task in self.tasks:
            total = f"/{int(task.total)}" if task.total is not None else ""
            parts = [f"{int(task.completed)}{total}{unit} done"]
            if self._counts_solved:
                parts.append(f"{self._solved.get(task.id, 0)} solved")
            parts.append(f"elapsed {elapsed}")
            line = ", ".join(parts)
            now = self._now(task.id)
            if now:
                lines.append(f"{line} · now: {now}")
            else:
                lines.append(f"{line} · {task.description}" if task.description else line)
        return lines

    def _now(self, task: TaskID, shown: int = 2) -> str:
        """What is in progress on ``task``'s line, the newest first."""
        with self._lock:
            texts = list(reversed(self._working.get(task, {}).values()))
        more = f" (+{len(texts) - shown} more)" if len(texts) > shown else ""
        return ", ".join(texts[:shown]) + more

    def _tick(self, every_s: float) -> None:
        while not self._stopping.wait(every_s):
            for line in self.plain_lines():
                self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def progress_bar(
    unit: str | None = None,
    *,
    quiet: bool = False,
    transient: bool = False,
    counts_solved: bool = False,
) -> RunProgress:
    """A bar on stderr: its line's description, the bar, done/total (followed by ``unit``, what
    is counted, when given), time taken and time left; ``transient``: gone once done. Not
    drawn when ``quiet`` (the command prints JSON) or on CI, whose log it would only fill.
    Where stderr is not a terminal and not ``quiet``, plain lines instead (:class:`RunProgress`;
    ``counts_solved``: they say how many sessions were solved, which the caller reports
    through ``RunProgress.solved``)."""
    columns: list[ProgressColumn] = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if unit is not None:
        columns.append(TextColumn(unit))
    return RunProgress.on_stderr(
        *columns,
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        unit=unit,
        quiet=quiet,
        transient=transient,
        counts_solved=counts_solved,
    )


def sessions_task(bar: RunProgress, description: str, sessions: Sequence[SessionRow]) -> TaskID:
    """The bar's line for a run's sessions, those a resumed run finished (and solved) already
    counted."""
    task = bar.add_task(
        description, total=len(sessions), completed=sum(s.finished for s in sessions)
    )
    bar.solved(task, sum(s.status == "solved" for s in sessions))
    return task


def follow_turns(
    bar: RunProgress, task: TaskID, *, with_feedback: bool = True
) -> Callable[[TurnProgress], None]:
    """The handler of a run's turn events for ``task``'s line: the bar shows the last turn
    played, the plain lines what each session is doing now, and a finished session counts
    (solved ones too). ``with_feedback``: sessions are named with their Ω."""

    def progress(event: TurnProgress) -> None:
        key = (event.task_id, event.feedback)
        name = f"{event.task_id} {event.feedback}" if with_feedback else event.task_id
        if event.started is not None:
            bar.working(task, key, f"{name} turn {event.started}")
        elif event.turn is not None:
            mark = "✓" if event.turn.passed else "✗"
            bar.update(task, description=f"{name} turn {event.turn.idx} {mark}")
        else:
            bar.idle(task, key)
            bar.advance(task, 1)
            if event.session_status == "solved":
                bar.solved(task)

    return progress
