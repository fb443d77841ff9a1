"""Options that several commands share, declared once, and the options each command takes.
A choice option is annotated with the library's own ``Literal``: typer checks the value,
``--help`` lists the values, and a bad one is one usage error naming them all. Each Literal is
imported from a module light enough for ``convtui --help``, which builds every command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from convtui.core.catalog.tasks import SuiteOrAll
from convtui.core.codeif.metrics import MetricsDefinition
from convtui.core.errors import ConvtuiError
from convtui.core.execution.choice import EXECUTOR_FORMS, ExecutorChoice, parse_executor
from convtui.core.execution.isolation import IsolationChoice
from convtui.core.models.extract import ExtractMode
from convtui.core.settings.config import ContextMode, ProtocolName
from convtui.core.settings.omega import BadFeedbackError, FeedbackChoice, PartialRule


def runs_option(help: str) -> Any:
    """``--run``, repeatable: the runs a command keeps, as ``help`` says for that command."""
    return typer.Option("--run", help=help, show_default=False)


DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Dataset file or folder (default: $CONVTUI_DATA_DIR, then the user cache, "
        "then a download).",
        show_default=False,
    ),
]
SuiteOpt = Annotated[
    SuiteOrAll,
    typer.Option("--suite", case_sensitive=False, help="bigcodebench, codeif, or all."),
]
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
    IsolationChoice,
    typer.Option(
        "--isolation",
        help="How candidates are confined. auto: the first that works of: bwrap (bubblewrap, "
        "the system's or the bundled one: read-only files, private /tmp, loopback-only "
        "network, own PIDs); namespaces (the same made by convtui where bubblewrap cannot, "
        "without own PIDs); landlock (writes only in the run's folder, no TCP at all: tasks "
        "that use /tmp or local servers fail); none (unconfined).",
    ),
]
# The defaults, parsed as a typed value would be (the help shows their spelling).
FULL_EF = FeedbackChoice.parse("CF,EF:full")
NOVICE_USER = FeedbackChoice.parse("CF,EF:full,VF:novice")


def _executor_choice(value: str | ExecutorChoice) -> ExecutorChoice:
    """``--executor`` parsed once, here: a bad one is one usage error naming the forms."""
    if isinstance(value, ExecutorChoice):  # the default
        return value
    try:
        return parse_executor(value)
    except ConvtuiError:
        raise typer.BadParameter(f"{value!r}: use {EXECUTOR_FORMS}") from None


def feedback_choice(value: str | FeedbackChoice) -> FeedbackChoice:
    """``--feedback`` parsed once, here: commands get the configurations it names."""
    if isinstance(value, FeedbackChoice):  # the default
        return value
    try:
        return FeedbackChoice.parse(value)
    except BadFeedbackError as exc:
        raise typer.BadParameter(str(exc)) from None


ExecutorOpt = Annotated[
    ExecutorChoice,
    typer.Option(
        "--executor",
        metavar="local|ray[:ADDRESS]",
        # "\\[" keeps rich's markup from taking "[ray]" for a style tag.
        help="Where candidates run. local: this machine's cores. ray: a Ray cluster, one "
        "sandbox slot per CPU of every node (--jobs: slots per node), needs pip install "
        '"convtui\\[ray]". ray alone joins the cluster on this machine or starts one; ray:auto '
        "joins the one `ray start` made here; ray:HOST:PORT the one at that address.",
        parser=_executor_choice,
    ),
]
ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="local:smollm2 (embedded), http://host:port/v1, openai:MODEL, "
        "azure:DEPLOYMENT, vllm:HF_MODEL, or mock:FILE.jsonl (scripted replies, for tests). "
        "Replicas of one model: their URLs joined by commas, http://a:8000/v1,http://b:8000/v1 "
        "(each call goes to the least loaded; a server that fails is skipped until it answers "
        "again).",
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
ChatTemplateOpt = Annotated[
    Path | None,
    typer.Option(
        "--chat-template",
        help="The http:// server's model's chat template: its tokenizer_config.json, model "
        "folder or .gguf file. With it, --protocol convcodeworld sends turn 0 as BigCodeBench "
        "sends open models (its prompt through the template, as raw text); without it, as its "
        "OpenAI chat request. Local and vllm: models read their own.",
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
DbOpt = Annotated[Path, typer.Option("--db", help="SQLite file that records every turn.")]
# Options that `session`, `bench live` and `check` share. Where the default is None, the protocol
# decides (core/settings/protocol.py): the help says what each protocol picks.
ProtocolOpt = Annotated[
    ProtocolName,
    typer.Option(
        "--protocol",
        help="convcodeworld: ConvCodeWorld's reference exactly, for scores comparable with its "
        "tables (BigCodeBench's own turn 0 with sanitize --calibrate, DSPy's prompts and repair "
        "calls in feedback turns, ccw extraction and EF:partial rule, markov context, "
        "2048-token replies stopped at its separator). convtui: our own design (robust "
        "extraction, the first three real tests for EF:partial, full context, leak-guarded "
        "simulator).",
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
    ContextMode | None,
    typer.Option(
        "--context",
        help="markov (task + last code + its feedback; convcodeworld's default) or full (the "
        "whole conversation; convtui's default).",
        show_default=False,
    ),
]
PartialRuleOpt = Annotated[
    PartialRule | None,
    typer.Option(
        "--partial-rule",
        help="Tests EF:partial shows: ccw (ConvCodeWorld's rule; convcodeworld's default) or "
        "first-tests (convtui's default).",
        show_default=False,
    ),
]
ExtractOpt = Annotated[
    ExtractMode | None,
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
TaskIdArg = Annotated[str, typer.Argument(help="Task id, e.g. BigCodeBench/13 or CodeIF/11.")]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        min=1,
        help="Sessions played at once (default: 1 for local models, 8 otherwise).",
        show_default=False,
    ),
]
_METRICS_HELP = (
    "authors: CodeIF-Bench's metrics as its authors' scripts compute them, the published "
    "numbers' definition (IA on an instruction's own asserts; CA 1 only when every "
    "accumulated assert passes, Functionality Extension rounds left out, rounds positional; "
    "IFR only where CA fails, against every instruction passed before); paper: the paper's "
    "§3.2 formulas (CA a share per round, IFR against the previous round). Dynamic "
    "conversations of --protocol codeif are scored under authors as the authors' dynamic "
    "script scores each turn, averaged in pairs of turns as its report.py does; those of "
    "--protocol convtui by the paper's formulas under either."
)
CodeifMetricsOpt = Annotated[
    MetricsDefinition,
    typer.Option(
        "--metrics",
        help=_METRICS_HELP + " Recorded with the run: what report shows unless told otherwise.",
        case_sensitive=False,
    ),
]
ReportMetricsOpt = Annotated[
    MetricsDefinition | None,
    typer.Option(
        "--metrics",
        help="CodeIF-Bench tables: " + _METRICS_HELP + " Default: what each run recorded.",
        case_sensitive=False,
        show_default=False,
    ),
]
