"""The convtui command line: parse, call, print. Front ends are imported inside commands so
that ``convtui --help`` stays fast."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
import typer.core
from typer.core import TyperGroup

from convtui.core.errors import one_of

# click's exceptions as typer raises them: recent typers ship their own copy of click
# (typer._click), older ones use click itself.
_click: Any = getattr(typer.core, "_click", None)
if _click is None:  # pragma: no cover - typer before its bundled click
    import click as _click


def _print_error(message: str) -> None:
    """``error: …`` on stderr, one line however narrow the terminal (README: bad input is
    one line and exit code 2)."""
    from rich.text import Text

    line = " ".join(message.split())
    _console(stderr=True).print(Text.assemble(("error: ", "bold red"), line), soft_wrap=True)


class _OneLineErrors(TyperGroup):
    """click reports a bad option value, an unknown option or a missing argument as a usage
    box of several lines; here it becomes the same ``error: …`` line as the library's own
    errors, with the ``--help`` to read, and exit code 2. Runs for every command, and under
    typer's CliRunner too (it calls ``main``)."""

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except _click.exceptions.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":
                sys.exit(exc.exit_code)  # the help was printed as the error was made
            _print_error(_click_message(exc))
            sys.exit(exc.exit_code)
        except typer.Abort:
            _print_error("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _click_message(exc: Any) -> str:
    """click's message, lower-cased as ours are, with the help that lists what is accepted:
    ``invalid value for '--turns': … (see convtui session --help)``."""
    message = exc.format_message().strip().rstrip(".")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, _click.exceptions.UsageError) and ctx is not None:
        message = f"{message} (see {ctx.command_path} --help)"
    return message


app = typer.Typer(
    cls=_OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    help="convtui: how well does a code LLM use feedback? Run, record and replay multi-turn "
    "code generation on BigCodeBench and CodeIF-Bench.",
)
tasks_app = typer.Typer(no_args_is_help=True, help="Browse the task catalog.")
app.add_typer(tasks_app, name="tasks")

DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Dataset file or folder (default: $CONVTUI_DATA_DIR, then the user cache, "
        "then a download).",
        show_default=False,
    ),
]
SuiteOpt = Annotated[str, typer.Option("--suite", help="bigcodebench, codeif, or all.")]
IdsOpt = Annotated[
    str | None,
    typer.Option("--ids", help="Task numbers: 13, 0-19 or 0-9,42,100-110.", show_default=False),
]
LibOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--lib", help="Only tasks that use this library (repeatable).", show_default=False
    ),
]
StdlibOpt = Annotated[
    bool,
    typer.Option(
        "--stdlib-only", help="Only tasks that need nothing beyond Python's standard library."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object for scripts.")]
PythonOpt = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="Interpreter that runs candidates, with the task libraries installed "
        "(default: $CONVTUI_EXEC_PYTHON, else this one).",
        show_default=False,
    ),
]
IsolationOpt = Annotated[
    str,
    typer.Option(
        "--isolation",
        help="How candidates are confined. auto: the first that works of: bwrap (bubblewrap, "
        "the system's or the bundled one: read-only files, private /tmp, loopback-only "
        "network, own PIDs); namespaces (the same made by convtui where bubblewrap cannot, "
        "without own PIDs); landlock (writes only in the run's folder, no TCP at all: tasks "
        "that use /tmp or local servers fail); none (unconfined).",
    ),
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="local:smollm2 (embedded), http://host:port/v1, openai:MODEL, "
        "azure:DEPLOYMENT, vllm:HF_MODEL, or mock:FILE.jsonl (scripted replies, for tests).",
    ),
]
ModelNameOpt = Annotated[
    str | None,
    typer.Option(
        "--model-name",
        help="Model name on an http:// server (default: its first model).",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Runs at once (default: the number of cores).",
        show_default=False,
    ),
]


# Options that `session`, `bench live` and `check` share. Where the default is None, the protocol
# decides (core/protocol.py): the help says what each protocol picks.
ProtocolOpt = Annotated[
    str,
    typer.Option(
        "--protocol",
        help="convcodeworld: ConvCodeWorld's reference exactly, for scores comparable with its "
        "tables (ccw extraction and EF:partial rule, markov context, 2048-token replies "
        "stopped at its separator). convtui: our own design (robust extraction, the first "
        "three real tests for EF:partial, full context, leak-guarded simulator).",
    ),
]
TurnsOpt = Annotated[
    int,
    typer.Option(
        "--turns",
        min=0,
        max=50,
        help="Feedback turns after turn 0: N+1 generations in all (ConvCodeWorld's "
        "published setting is 10, turns 0..10).",
    ),
]
ContextOpt = Annotated[
    str | None,
    typer.Option(
        "--context",
        help="markov (task + last code + its feedback; convcodeworld's default) or full (the "
        "whole conversation; convtui's default).",
        show_default=False,
    ),
]
PartialRuleOpt = Annotated[
    str | None,
    typer.Option(
        "--partial-rule",
        help="Tests EF:partial shows: ccw (ConvCodeWorld's rule; convcodeworld's default) or "
        "first-tests (convtui's default).",
        show_default=False,
    ),
]
ExtractOpt = Annotated[
    str | None,
    typer.Option(
        "--extract",
        help="Code extraction: ccw (ConvCodeWorld's parser; convcodeworld's default) or "
        "robust (convtui's default).",
        show_default=False,
    ),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Reply length cap in tokens (convcodeworld: 2048; convtui: 1024).",
        show_default=False,
    ),
]


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the library's input errors into one clear line and exit code 2."""
    from convtui.core.errors import ConvtuiError

    try:
        yield
    except ConvtuiError as exc:
        _print_error(str(exc))
        raise typer.Exit(2) from None


def _catalog(suite: str, data: Path | None):
    from convtui.core.loaders import load_catalog

    return load_catalog(suite, data)


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


@app.callback()
def main() -> None:
    """convtui: how well does a code LLM use feedback?"""


@tasks_app.command("list")
def tasks_list(
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """List tasks, filtered by number, library or standard-library-only.

    Example: [bold]convtui tasks list --lib pandas --ids 0-99[/bold]"""
    with _errors():
        tasks = _catalog(suite, data).select(ids, lib, stdlib_only)
    if as_json:
        _print_json(
            [{"id": t.id, "libs": list(t.libs), "entry_point": t.entry_point} for t in tasks]
        )
        return
    from convtui.benchmarks.views import task_table

    _console().print(task_table(tasks))


@tasks_app.command("show")
def tasks_show(
    task_id: Annotated[str, typer.Argument(help="Task id, e.g. BigCodeBench/13 or CodeIF/11.")],
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a task: prompt, code header, libraries, tests and ground truth."""
    with _errors():
        task = _catalog(_suite_for(task_id, suite), data).get(task_id)
    if as_json:
        from dataclasses import asdict

        _print_json(asdict(task))
        return
    from convtui.benchmarks.views import task_detail

    _console().print(task_detail(task))


def _suite_for(task_id: str, suite: str) -> str:
    """Load only the suite an id names, so a missing other dataset does not get in the way."""
    if suite != "all":
        return suite
    prefix = task_id.split("/", 1)[0].lower() if "/" in task_id else "bigcodebench"
    return {"bigcodebench": "bigcodebench", "codeif": "codeif"}.get(prefix, "all")


def _warn_isolation(label: str) -> None:
    """One line on stderr when the isolation in force changes verdicts."""
    from convtui.core.isolation import verdict_warning

    warning = verdict_warning(label)
    if warning is not None:
        from rich.text import Text

        _console(stderr=True).print(
            Text.assemble(("warning: ", "bold yellow"), warning), soft_wrap=True
        )


def _executor(python: str | None, jobs: int | None, isolation: str):
    from convtui.core.executor import Executor

    return Executor(python=python, jobs=jobs, isolation=isolation)


@app.command()
def check(
    task_id: Annotated[str, typer.Option("--task", help="Task id, e.g. BigCodeBench/13.")],
    code: Annotated[
        Path,
        typer.Option(
            "--code", help="File with the candidate (a model reply or plain Python; - for stdin)."
        ),
    ],
    feedback: Annotated[
        str,
        typer.Option("--feedback", help="Feedback to render, e.g. CF,EF:partial or CF,EF:full."),
    ] = "CF,EF:full",
    protocol: ProtocolOpt = "convtui",
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    python: PythonOpt = None,
    isolation: IsolationOpt = "auto",
    as_json: JsonOpt = False,
) -> None:
    """Run one candidate against a task's tests and print the feedback a model would receive.

    --protocol convcodeworld shows what a default `bench live` run sends (its lossy code
    parser cuts a reply at its first two blank lines).

    Example:
    [bold]convtui check --task BigCodeBench/13 --code reply.md --feedback CF,EF:partial[/bold]"""
    from convtui.core.errors import ConvtuiError

    with _errors():
        from convtui.core.protocol import DEFAULTS, protocol_name
        from convtui.core.session import ExtractMode, PartialRule

        chosen = DEFAULTS[protocol_name(protocol)]
        rule = one_of("--partial-rule", partial_rule or chosen.partial_rule, get_args(PartialRule))
        mode = one_of("--extract", extract or chosen.extract, get_args(ExtractMode))
        from convtui.core.omega import parse_feedback

        configs = parse_feedback(feedback)
        if len(configs) != 1:
            raise ConvtuiError("check renders one feedback configuration: name one, not all")
        omega = configs[0]
        reply = _read_code(code)
        task = _catalog(_suite_for(task_id, suite), data).get(task_id)
        from convtui.benchmarks.check import check_candidate

        with _executor(python, 1, isolation) as executor:
            outcome = check_candidate(
                task,
                reply,
                omega,
                executor,
                partial_rule=rule,
                extract=mode,
                source_lines=chosen.ef_source_lines,
                source="stdin" if str(code) == "-" else f"--code file {code}",
            )
    if as_json:
        _print_json(outcome.to_json())
    else:
        from convtui.benchmarks.views import check_view

        _console().print(
            check_view(
                task,
                outcome.result,
                outcome.compilation_feedback,
                outcome.execution_feedback,
                omega.label,
            )
        )
    raise typer.Exit(0 if outcome.result.passed else 1)


def _read_code(path: Path) -> str:
    from convtui.core.errors import ConvtuiError

    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConvtuiError(f"--code file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConvtuiError(f"cannot read --code file {path}: {exc}") from None


@app.command()
def doctor(
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    solution: Annotated[
        str,
        typer.Option(
            "--solution",
            help="ground-truth (are the tasks valid here?) or broken (bodies replaced "
            "by a raise: do the tests catch it?).",
        ),
    ] = "ground-truth",
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    fail_under: Annotated[
        float,
        typer.Option(
            "--fail-under",
            min=0.0,
            max=1.0,
            help="Exit 1 when fewer than this share of the tasks behave as expected (ground "
            "truth passing, broken solutions failing; missing libraries aside), e.g. 0.99.",
        ),
    ] = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Check the task environment: run ground-truth solutions and report what fails and why.

    Example: [bold]convtui doctor --stdlib-only[/bold]"""

    with _errors():
        from convtui.benchmarks.doctor import Solution

        kind = one_of("--solution", solution, get_args(Solution))
        tasks = _catalog(suite, data).select(ids, lib, stdlib_only)
        from convtui.benchmarks.doctor import run_doctor

        with _executor(python, jobs, isolation) as executor:
            _warn_isolation(executor.isolation.label)
            report = _with_progress(
                len(tasks),
                as_json,
                lambda tick: run_doctor(
                    tasks,
                    executor,
                    solution=kind,
                    progress=tick,
                ),
            )
    if as_json:
        _print_json(report.to_json())
    else:
        from convtui.benchmarks.views import doctor_view

        _console().print(doctor_view(report))
    checked = report.total - report.env_error
    behaved = 1 - len(report.unexpected) / checked if checked else 1.0
    raise typer.Exit(0 if behaved >= fail_under else 1)


def _with_progress(total: int, quiet: bool, work: Callable[[Callable], Any]) -> Any:
    """Run ``work(tick)`` under a progress bar on stderr (none when ``quiet`` or not a tty)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = _console(stderr=True)
    disable = (quiet and not console.is_terminal) or os.environ.get("CI") == "true"
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=disable,
        transient=True,
    ) as progress:
        bar = progress.add_task("running", total=total)
        failed = 0

        def tick(outcome) -> None:
            nonlocal failed
            failed += outcome.status != "pass"
            progress.update(bar, advance=1, description=f"{outcome.id} · {failed} not passing")

        return work(tick)


bench_app = typer.Typer(no_args_is_help=True, help="Headless benchmarks: live or replayed.")
app.add_typer(bench_app, name="bench")

DbOpt = Annotated[Path, typer.Option("--db", help="SQLite file that records every turn.")]


def _session_config(
    protocol: str,
    model: str,
    feedback: tuple,
    simulator: str | None,
    turns: int,
    context: str | None,
    partial_rule: str | None,
    extract: str | None,
    max_tokens: int | None,
):
    """The config shared by `session` and `bench live`, checked option by option."""
    from convtui.core.protocol import build_config, protocol_name, simulator_for
    from convtui.core.session import ContextMode, ExtractMode, PartialRule

    return build_config(
        protocol_name(protocol),
        model=model,
        feedback=feedback[0],
        simulator=simulator_for(model, simulator, feedback),
        turns=turns,
        context=one_of("--context", context, get_args(ContextMode)) if context else None,
        partial_rule=(
            one_of("--partial-rule", partial_rule, get_args(PartialRule)) if partial_rule else None
        ),
        extract=one_of("--extract", extract, get_args(ExtractMode)) if extract else None,
        max_tokens=max_tokens,
    )


@app.command()
def session(
    task: Annotated[
        str | None,
        typer.Option(
            "--task",
            help="Task id, e.g. BigCodeBench/123 (default: pick one in the app).",
            show_default=False,
        ),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Continue a recorded session by id or unique prefix (convtui sessions list "
            "shows them).",
            show_default=False,
        ),
    ] = None,
    user: Annotated[
        str,
        typer.Option(
            "--user",
            help="Who gives the verbal feedback: human (you), novice or expert (a simulator, "
            "shown as it speaks), assist:novice or assist:expert (the simulator drafts, you "
            "edit or replace).",
        ),
    ] = "human",
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    simulator: Annotated[
        str | None,
        typer.Option(
            "--simulator",
            help="Model that plays or drafts for the user, any --model spec (default: --model).",
            show_default=False,
        ),
    ] = None,
    feedback: Annotated[
        str,
        typer.Option(
            "--feedback",
            help="Feedback configuration Ω. With --user human, VF names the persona you "
            "play: VF:expert also shows you the reference solution; without VF you only "
            "step through turns.",
        ),
    ] = "CF,EF:full,VF:novice",
    protocol: ProtocolOpt = "convtui",
    turns: TurnsOpt = 10,
    context: ContextOpt = None,
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    suite: SuiteOpt = "all",
    data: DataOpt = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
) -> None:
    """Play one task in the terminal app: the model codes, the tests run, you give feedback.

    Every turn is saved as it ends; quit any time and continue with --resume. f1 lists the
    keys, ctrl+p every command.

    Example: [bold]convtui session --task BigCodeBench/123 --db results.db[/bold]"""
    with _errors():
        from convtui.tui.launch import SessionOptions, run_session

        options = SessionOptions(
            task,
            resume,
            model,
            model_name,
            simulator,
            feedback,
            user,
            turns,
            context,
            max_tokens,
            db,
            python,
            jobs,
            isolation,
            protocol,
            partial_rule,
            extract,
        )
        code = run_session(options, _catalog(suite, data))
    raise typer.Exit(code)


@bench_app.command("live")
def bench_live(
    model: ModelOpt = "local:smollm2",
    model_name: ModelNameOpt = None,
    simulator: Annotated[
        str | None,
        typer.Option(
            "--simulator",
            help="Model that plays the novice or expert user, any --model spec (default: --model).",
            show_default=False,
        ),
    ] = None,
    feedback: Annotated[
        str,
        typer.Option(
            "--feedback",
            help="Feedback configuration, e.g. CF,EF:partial,VF:novice, or all for "
            "the 9 combinations.",
        ),
    ] = "CF,EF:full",
    protocol: ProtocolOpt = "convcodeworld",
    turns: TurnsOpt = 10,
    context: ContextOpt = None,
    partial_rule: PartialRuleOpt = None,
    extract: ExtractOpt = None,
    max_tokens: MaxTokensOpt = None,
    db: DbOpt = Path("results.db"),
    suite: SuiteOpt = "bigcodebench",
    data: DataOpt = None,
    ids: IdsOpt = None,
    lib: LibOpt = None,
    stdlib_only: StdlibOpt = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            help="Sessions played at once (default: 1 for local models, 8 otherwise).",
            show_default=False,
        ),
    ] = None,
    python: PythonOpt = None,
    jobs: JobsOpt = None,
    isolation: IsolationOpt = "auto",
    as_json: JsonOpt = False,
) -> None:
    """Run a live benchmark: the model codes, the harness and a simulated user give feedback.

    Killed or failed? Run the same command again: it continues where it stopped.

    Example: [bold]convtui bench live --ids 0-19 --feedback all --turns 10 --db results.db[/bold]"""
    with _errors():
        from convtui.core.omega import parse_feedback

        omegas = parse_feedback(feedback)
        config = _session_config(
            protocol, model, omegas, simulator, turns, context, partial_rule, extract, max_tokens
        )
        tasks = _catalog(suite, data).select(ids, lib, stdlib_only)
        from convtui.benchmarks.live import default_concurrency
        from convtui.benchmarks.live_command import LiveOptions, execute_live

        selection = (
            f"suite={suite};ids={ids or ''};lib={','.join(lib or [])};stdlib_only={stdlib_only}"
        )
        options = LiveOptions(
            config,
            omegas,
            model_name,
            db,
            selection,
            concurrency or default_concurrency(model),
            jobs,
            python,
            isolation,
            quiet=as_json,
        )
        result = execute_live(options, tasks)
    if as_json:
        _print_json(
            {
                "run_id": result.run_id,
                "resumed": result.resumed,
                "sessions_played": result.sessions,
                "failed": result.failed,
                "db": str(db),
            }
        )
    else:
        _console().print(
            f"run {result.run_id}: {result.sessions} session(s) played"
            f"{', resumed' if result.resumed else ''}; {result.failed} failed on "
            f"model errors. Tables: convtui report --db {db}"
        )
    raise typer.Exit(0 if result.failed == 0 else 1)


@app.command()
def report(
    db: DbOpt = Path("results.db"),
    run: Annotated[
        list[str] | None,
        typer.Option(
            "--run",
            help="Only these run ids (repeatable; default: every run, newest first for "
            "repeated tasks).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for the CSV and JSON files (default: beside the database).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print ConvCodeWorld's tables: Pass@1 per turn, and MRR/Recall, per feedback setting.

    Example: [bold]convtui report --db results.db[/bold]"""
    from convtui.core.errors import ConvtuiError

    with _errors():
        if not db.exists():
            raise ConvtuiError(f"no results database at {db}: run convtui bench live first")
        from convtui.benchmarks.report_command import make_report, write_files

        report_obj = make_report(db, run)
        files = write_files(report_obj, out or db.parent, db.stem)
    if as_json:
        _print_json({**report_obj.to_json(), "files": [str(f) for f in files]})
        return
    from rich.text import Text

    from convtui.benchmarks.report import pass_table, summary_table

    console = _console()
    for warning in report_obj.warnings:  # a header above the tables they qualify
        console.print(Text.assemble(("warning: ", "bold yellow"), warning), soft_wrap=True)
    console.print(pass_table(report_obj))
    console.print(
        summary_table(
            report_obj,
            [
                "MRR: mean of 1/(k+1) over tasks, k the first passing turn (0 if never).",
                "Recall: share of tasks solved at some turn. Turns count from 0.",
            ],
        )
    )
    console.print(f"written: {', '.join(str(f) for f in files)}", soft_wrap=True)


# --- convtui sessions: browse and export what was recorded -------------------------------------

sessions_app = typer.Typer(
    no_args_is_help=True, help="Browse and export recorded sessions (TUI and benchmark runs)."
)
app.add_typer(sessions_app, name="sessions")

SessionDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file that records every turn (must exist).")
]
SessionTaskOpt = Annotated[
    str | None, typer.Option("--task", help="Only sessions of this task id.", show_default=False)
]
SessionStatusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--status",
        help="Only sessions in this status (repeatable or comma-separated: solved, exhausted, "
        "stalled, failed, accepted, abandoned, planned, running).",
        show_default=False,
    ),
]
SessionUserOpt = Annotated[
    str | None,
    typer.Option(
        "--user",
        help="Only sessions whose feedback came from: human, simulator, assist or none.",
        show_default=False,
    ),
]


@sessions_app.command("list")
def sessions_list(
    db: SessionDbOpt = Path("results.db"),
    task: SessionTaskOpt = None,
    status: SessionStatusOpt = None,
    user: SessionUserOpt = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Show at most this many.", show_default=False),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List recorded sessions, newest first.

    Example: [bold]convtui sessions list --user human --status solved[/bold]"""
    with _errors():
        from convtui.benchmarks.sessions_command import list_command

        listing = list_command(db, task=task, status=status, user=user, limit=limit)
    if as_json:
        from dataclasses import asdict

        _print_json([asdict(s) for s in listing.sessions])
        return
    from convtui.benchmarks.sessions_views import session_table

    console = _console()
    console.print(session_table(listing.sessions, console.width, listing.id_length))


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[
        str,
        typer.Argument(
            help="Session id, or a unique prefix of at least 6 characters (sessions list "
            "shows the shortest unique one)."
        ),
    ],
    db: SessionDbOpt = Path("results.db"),
    as_json: JsonOpt = False,
) -> None:
    """Show one session as a transcript: each turn's code, tests and feedback.

    Example: [bold]convtui sessions show 01jv3k8mw2xq[/bold]"""
    with _errors():
        from convtui.benchmarks.sessions_command import show_command

        detail = show_command(db, session_id)
    if as_json:
        from convtui.sessions.transcript import session_record

        _print_json(session_record(detail))
        return
    from convtui.benchmarks.sessions_views import session_detail

    _console().print(session_detail(detail))


@sessions_app.command("export")
def sessions_export(
    ids: Annotated[
        list[str] | None,
        typer.Argument(help="Session ids or unique prefixes.", show_default=False),
    ] = None,
    db: SessionDbOpt = Path("results.db"),
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl (one object per session, every turn and prompt) or convcodebench "
            "(static log sets: a folder per model and Ω, a file per turn, a manifest).",
        ),
    ] = "jsonl",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="jsonl: a file, or - for stdout (the default). convcodebench: a folder "
            "(default: <db name>-static-logs beside the database).",
            show_default=False,
        ),
    ] = None,
    all_sessions: Annotated[bool, typer.Option("--all", help="Every recorded session.")] = False,
    task: SessionTaskOpt = None,
    status: SessionStatusOpt = None,
    user: SessionUserOpt = None,
    include_unfinished: Annotated[
        bool,
        typer.Option("--include-unfinished", help="Also export sessions still planned or running."),
    ] = False,
) -> None:
    """Export sessions as JSONL transcripts or as ConvCodeBench-style static logs.

    Example: [bold]convtui sessions export --user human --format convcodebench --out logs[/bold]"""
    with _errors():
        one_of("--format", fmt, ("jsonl", "convcodebench"))
        from convtui.benchmarks.sessions_command import ExportOptions, export_command

        result = export_command(
            ExportOptions(
                db=db,
                format=fmt,
                out=out,
                ids=tuple(ids or ()),
                all=all_sessions,
                task=task,
                status=tuple(status or ()),
                user=user,
                include_unfinished=include_unfinished,
            )
        )
    if result.out == "-":
        return  # stdout holds the export itself
    from convtui.benchmarks.sessions_views import export_view

    _console().print(export_view(result), soft_wrap=True)
