"""``convtui bench``: headless benchmarks, live or replayed, and CodeIF-Bench's
conversations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from convtui.bench_options import (
    CodeifLogsOpt,
    CodeifModeOpt,
    CodeifPromptingOpt,
    CodeifProtocolOpt,
    CodeifScoreOnlyOpt,
    LiveFeedbackOpt,
    LiveSimulatorOpt,
    LogsOpt,
    LogUserOpt,
    RefModelOpt,
    StaticContextOpt,
    StaticDbOpt,
    StaticFeedbackOpt,
    StaticProtocolOpt,
    StaticRunOpt,
    StaticTurnsOpt,
)
from convtui.errors import user_errors
from convtui.option_groups import (
    CONVCODEWORLD_TURNS,
    ExecutorGroup,
    ModelGroup,
    SelectionGroup,
    TurnGroup,
    takes_groups,
)
from convtui.options import (
    FULL_EF,
    CodeifMetricsOpt,
    ConcurrencyOpt,
    DataOpt,
    DbOpt,
    IdsOpt,
    JsonOpt,
    MaxTokensOpt,
)

bench_app = typer.Typer(no_args_is_help=True, help="Headless benchmarks: live or replayed.")


@bench_app.command("codeif")
@takes_groups
def bench_codeif(
    *,
    mode: CodeifModeOpt = "static",
    model: ModelGroup,
    protocol: CodeifProtocolOpt = "codeif",
    ids: IdsOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
    score_only: CodeifScoreOnlyOpt = None,
    logs: CodeifLogsOpt = None,
    metrics: CodeifMetricsOpt = "authors",
    prompting: CodeifPromptingOpt = "direct",
) -> None:
    """Run CodeIF-Bench conversations: does the model keep following every instruction as
    they accumulate? Each round is a recorded turn (sessions list/show browse them).

    Killed or failed? Run the same command again: it continues where it stopped.
    With --score-only FILE no model is called: the file's completions are scored instead.
    With --logs DB the conversations people recorded in the app are replayed against --model.

    Task ids are the benchmark's own: CodeIF/11 to CodeIF/60 (--ids 11-20 takes ten).

    Example: [bold]convtui bench codeif --mode dynamic --ids 11-20 --db codeif.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.codeif import CodeifOptions, bench_codeif_command
        from convtui.benchmarks.settings import RunTarget, TaskSelection

        exit_code = bench_codeif_command(
            CodeifOptions(
                mode,
                protocol,
                model.settings(max_tokens),
                TaskSelection("codeif", data, ids),
                executor.settings(),
                RunTarget(db, concurrency, as_json),
                score_only=score_only,
                logs=logs,
                metrics=metrics,
                prompting=prompting,
            )
        )
    raise typer.Exit(exit_code)


@bench_app.command("live")
@takes_groups
def bench_live(
    *,
    model: ModelGroup,
    simulator: LiveSimulatorOpt = None,
    feedback: LiveFeedbackOpt = FULL_EF,
    turn: TurnGroup = CONVCODEWORLD_TURNS,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    selection: SelectionGroup,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
) -> None:
    """Run a live benchmark: the model codes, the harness and a simulated user give feedback.

    Killed or failed? Run the same command again: it continues where it stopped.

    Example: [bold]convtui bench live --ids 0-19 --feedback all --turns 10 --db results.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.live import bench_live_command
        from convtui.benchmarks.settings import ProtocolSettings, RunTarget

        exit_code = bench_live_command(
            selection.settings(),
            model.settings(max_tokens),
            ProtocolSettings(
                turn.protocol,
                turn.turns,
                turn.context,
                turn.partial_rule,
                turn.extract,
                simulator,
                feedback=feedback,
            ),
            executor.settings(),
            RunTarget(db, concurrency, as_json),
        )
    raise typer.Exit(exit_code)


@bench_app.command("static")
@takes_groups
def bench_static(
    *,
    logs: LogsOpt,
    model: ModelGroup,
    db: StaticDbOpt = Path("results.db"),
    protocol: StaticProtocolOpt = None,
    turns: StaticTurnsOpt = None,
    context: StaticContextOpt = None,
    max_tokens: MaxTokensOpt = None,
    feedback: StaticFeedbackOpt = None,
    run: StaticRunOpt = None,
    ref_model: RefModelOpt = None,
    user: LogUserOpt = None,
    ids: IdsOpt = None,
    data: DataOpt = None,
    concurrency: ConcurrencyOpt = None,
    executor: ExecutorGroup,
    as_json: JsonOpt = False,
) -> None:
    """Replay recorded sessions against a model (ConvCodeBench): no user is asked again.

    Each log set (one reference model under one feedback setting, or one annotator's
    sessions) becomes a run. Turn 0 is the target's own; at turn t it gets the reference's
    turn t-1 code, its recorded verdict and feedback, and writes the next code, which is run
    and recorded as its own session, linked to the reference's. Where the reference's turn
    t-1 passed, that code is the target's turn t. Killed? Run the same command again.

    Example: [bold]convtui bench static --logs live.db --db replay.db[/bold]"""
    with user_errors(), _interruptible(db):
        from convtui.benchmarks.commands.static import StaticOptions, bench_static_command
        from convtui.benchmarks.settings import RunTarget, TaskSelection
        from convtui.sessions.reading.log_sets import LogSetFilter

        exit_code = bench_static_command(
            StaticOptions(
                logs,
                model.settings(max_tokens),
                LogSetFilter(runs=tuple(run or ()), ref_model=ref_model, user=user),
                TaskSelection("all", data, ids),  # --ids across the suites: 13 is BigCodeBench/13
                executor.settings(),
                RunTarget(db, concurrency, as_json),
                protocol=protocol,
                turns=turns,
                context=context,
                feedback=tuple(feedback or ()),
            )
        )
    raise typer.Exit(exit_code)


@contextmanager
def _interruptible(db: Path) -> Iterator[None]:
    """Ctrl+C in a bench command: what was kept and the command that goes on (exit 130)."""
    from convtui.benchmarks.commands.interrupted import INTERRUPTED_EXIT, say_interrupted

    try:
        yield
    except KeyboardInterrupt:
        say_interrupted(db)
        raise typer.Exit(INTERRUPTED_EXIT) from None
