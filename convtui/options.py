"""Options that several commands share, declared once, and the options each command takes.
A choice option is annotated with the library's own ``Literal``: typer checks the value,
``--help`` lists the values, and a bad one is one usage error naming them all. Each Literal is
imported from a module light enough for ``convtui --help``, which builds every command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtui.benchmarks.settings import ExportFormat
from convtui.core.catalog.tasks import SuiteOrAll
from convtui.core.codeif.conversation import BenchMode, Prompting
from convtui.core.codeif.metrics import MetricsDefinition
from convtui.core.codeif.programs import CodeifProtocol
from convtui.core.errors import ConvtuiError
from convtui.core.execution.choice import EXECUTOR_FORMS, ExecutorChoice, parse_executor
from convtui.core.execution.isolation import IsolationChoice
from convtui.core.execution.requests import Solution
from convtui.core.feedback.render import PartialRule
from convtui.core.settings.config import ContextMode, ProtocolName, UserKind, UserMode
from convtui.core.settings.omega import BadFeedbackError, FeedbackChoice, FeedbackSource
from convtui.core.turns.extract import ExtractMode

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


def _feedback_choice(value: str | FeedbackChoice) -> FeedbackChoice:
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
        "sandbox slot per CPU of every node (--jobs: slots per node), needs pip install -e "
        "'.\\[ray]'. ray alone joins the cluster on this machine or starts one; ray:auto joins "
        "the one `ray start` made here; ray:HOST:PORT the one at that address.",
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


# Options of `convtui sessions list|show|export`, over a store that must already exist.
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
    UserKind | None,
    typer.Option(
        "--user",
        help="Only sessions whose feedback came from: human, simulator, assist or none.",
        show_default=False,
    ),
]


# Options of one command each, named after it.
TaskIdArg = Annotated[str, typer.Argument(help="Task id, e.g. BigCodeBench/13 or CodeIF/11.")]
CheckTaskOpt = Annotated[str, typer.Option("--task", help="Task id, e.g. BigCodeBench/13.")]
CheckCodeOpt = Annotated[
    Path,
    typer.Option(
        "--code", help="File with the candidate (a model reply or plain Python; - for stdin)."
    ),
]
CheckFeedbackOpt = Annotated[
    FeedbackChoice,
    typer.Option(
        "--feedback",
        help="Feedback to render, e.g. CF,EF:partial or CF,EF:full.",
        parser=_feedback_choice,
        metavar="<str>",
    ),
]
SolutionOpt = Annotated[
    Solution,
    typer.Option(
        "--solution",
        help="ground-truth (are the tasks valid here?) or broken (bodies replaced "
        "by a raise: do the tests catch it?).",
    ),
]
FailUnderOpt = Annotated[
    float,
    typer.Option(
        "--fail-under",
        min=0.0,
        max=1.0,
        help="Exit 1 when fewer than this share of the tasks behave as expected (ground "
        "truth passing, broken solutions failing; missing libraries aside), e.g. 0.99.",
    ),
]
InstructionsOpt = Annotated[
    bool,
    typer.Option(
        "--instructions",
        help="With --suite codeif: check CodeIF-Bench's instruction tests per category (the "
        "reference code passes the initial asserts, every assert compiles, which follow-ups "
        "the reference code already meets), as written and after the benchmark's "
        "pre-processing.",
    ),
]
SessionStartTaskOpt = Annotated[
    str | None,
    typer.Option(
        "--task",
        help="Task id, e.g. BigCodeBench/123 (default: pick one in the app).",
        show_default=False,
    ),
]
ResumeOpt = Annotated[
    str | None,
    typer.Option(
        "--resume",
        help="Continue a recorded session by id or unique prefix (convtui sessions list "
        "shows them); one that ended (solved, given up, a benchmark's or an imported one) "
        "opens read-only.",
        show_default=False,
    ),
]
UserOpt = Annotated[
    UserMode,
    typer.Option(
        "--user",
        help="Who gives the verbal feedback: human (you), novice or expert (a simulator, "
        "shown as it speaks), assist:novice or assist:expert (the simulator drafts, you "
        "edit or replace).",
    ),
]
SessionSimulatorOpt = Annotated[
    str | None,
    typer.Option(
        "--simulator",
        help="Model that plays or drafts for the user, any --model spec (default: --model).",
        show_default=False,
    ),
]
SessionFeedbackOpt = Annotated[
    FeedbackChoice,
    typer.Option(
        "--feedback",
        help="Feedback configuration Ω. With --user human, VF names the persona you "
        "play: VF:expert also shows you the reference solution; without VF you only "
        "step through turns.",
        parser=_feedback_choice,
        metavar="<str>",
    ),
]
LiveSimulatorOpt = Annotated[
    str | None,
    typer.Option(
        "--simulator",
        help="Model that plays the novice or expert user, any --model spec (default: --model).",
        show_default=False,
    ),
]
LiveFeedbackOpt = Annotated[
    FeedbackChoice,
    typer.Option(
        "--feedback",
        help="Feedback configuration, e.g. CF,EF:partial,VF:novice, or all for the 9 combinations.",
        parser=_feedback_choice,
        metavar="<str>",
    ),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        min=1,
        help="Sessions played at once (default: 1 for local models, 8 otherwise).",
        show_default=False,
    ),
]
ReportRunOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--run",
        help="Only these run ids (repeatable; default: every run, newest first for "
        "repeated tasks).",
        show_default=False,
    ),
]
ReportOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="Folder for the CSV and JSON files (default: beside the database).",
        show_default=False,
    ),
]
CorrelateOpt = Annotated[
    bool,
    typer.Option(
        "--correlate",
        help="Per feedback setting, Spearman and Kendall rank correlation between live and "
        "static (replayed) MRR and Recall over the models that have both.",
    ),
]
PlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Folder for figures (PNG and SVG): Pass@1 per turn, a panel per feedback "
        "setting; a live-vs-static MRR scatter when some model has both.",
        show_default=False,
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", min=1, help="Show at most this many.", show_default=False),
]
SessionIdArg = Annotated[
    str,
    typer.Argument(
        help="Session id, or a unique prefix of at least 6 characters (sessions list "
        "shows the shortest unique one)."
    ),
]
SessionIdsArg = Annotated[
    list[str] | None,
    typer.Argument(help="Session ids or unique prefixes.", show_default=False),
]
ExportFormatOpt = Annotated[
    ExportFormat,
    typer.Option(
        "--format",
        help="jsonl (one object per session, every turn and prompt), convcodebench "
        "(static log sets: a folder per model and Ω, a file per turn, a manifest) or codeif "
        "(CodeIF-Bench's completions file: one object per round with task_id, requirement "
        "and completion; by default every CodeIF-Bench conversation).",
    ),
]
ExportOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help="jsonl: a file, or - for stdout (the default). convcodebench: a folder "
        "(default: <db name>-static-logs beside the database). codeif: a folder, one set of "
        "the benchmark's files per run (base.jsonl and n_round.jsonl as its scripts read "
        "them; default: <db name>-codeif beside the database), or a .jsonl file or - for one "
        "stream, one conversation per task.",
        show_default=False,
    ),
]
ExportAllOpt = Annotated[bool, typer.Option("--all", help="Every recorded session.")]
ExportModelNameOpt = Annotated[
    str | None,
    typer.Option(
        "--model-name",
        help="convcodebench: the model's name in the files, what ConvCodeWorld's "
        "print_results.py and run.py take as --model_name (e.g. an http:// server's "
        "Qwen/Qwen2.5-Coder-7B-Instruct); default: the spec, made file-safe. One model per "
        "export.",
        show_default=False,
    ),
]
ExportRunOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--run",
        help="Only sessions of these runs (ids or prefixes; repeatable).",
        show_default=False,
    ),
]
IncludeUnfinishedOpt = Annotated[
    bool,
    typer.Option("--include-unfinished", help="Also export sessions still planned or running."),
]


# Options of `convtui bench static`: which recorded sessions are replayed, and how.
LogsOpt = Annotated[
    Path,
    typer.Option(
        "--logs",
        help="Where the reference's logs are: a convtui database (a bench live or session "
        "--db; may be the same file as --db).",
    ),
]
StaticDbOpt = Annotated[
    Path,
    typer.Option(
        "--db",
        help="SQLite file the replays are recorded in; reference sessions from another "
        "database are copied in first, so the report can set the two side by side.",
    ),
]
StaticProtocolOpt = Annotated[
    ProtocolName | None,
    typer.Option(
        "--protocol",
        help="Must be the one the logs were recorded under (the default): convcodeworld "
        "replays as ConvCodeBench (the target plays on after its own pass, per-turn Pass@1); "
        "convtui stops at the target's first pass (cumulative Pass@1).",
        show_default=False,
    ),
]
StaticTurnsOpt = Annotated[
    int | None,
    typer.Option(
        "--turns",
        min=0,
        max=50,
        help="Feedback turns after turn 0 (default: the reference's).",
        show_default=False,
    ),
]
StaticContextOpt = Annotated[
    ContextMode | None,
    typer.Option(
        "--context",
        help="markov: at turn t the target sees the reference's turn t-1 and its feedback "
        "(ConvCodeBench). full: every reference turn before t (convtui protocol only). "
        "Default: the reference's.",
        show_default=False,
    ),
]
StaticFeedbackOpt = Annotated[
    list[FeedbackChoice] | None,
    typer.Option(
        "--feedback",
        help="Only log sets under these feedback configurations (repeatable; e.g. "
        "CF,EF:full,VF:novice, or all).",
        show_default=False,
        parser=_feedback_choice,
        metavar="<list[str]>",
    ),
]
StaticRunOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--run",
        help="Only sessions of these runs of the logs database (ids or prefixes; repeatable).",
        show_default=False,
    ),
]
RefModelOpt = Annotated[
    str | None,
    typer.Option(
        "--ref-model", help="Only log sets of this reference model spec.", show_default=False
    ),
]
LogUserOpt = Annotated[
    FeedbackSource | None,
    typer.Option(
        "--user",
        help="Only log sets whose feedback came from: human (people, one log set per "
        "annotator), novice or expert (simulators), none (no verbal feedback).",
        show_default=False,
    ),
]

AnnotatorOpt = Annotated[
    str | None,
    typer.Option(
        "--annotator",
        help="Who gives the feedback, recorded with human and assisted sessions so that "
        "replays and reports can tell annotators apart (default: your login name).",
        show_default=False,
    ),
]
ImportDirArg = Annotated[
    Path,
    typer.Argument(
        help="A folder in ConvCodeWorld's static layout: the one holding results/v0.3.6/ "
        "(bigcodebench_<model>_CF..._ITER=k.jsonl and their _eval_results.json) and "
        "bigcodebench/sanitized_calibrated_samples/instruct/ (turn 0), e.g. the published "
        "ConvCodeBench logs or a sessions export --format convcodebench.",
        show_default=False,
    ),
]
ImportDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file to load the logs into (created if missing).")
]

MergeSourcesArg = Annotated[
    list[Path],
    typer.Argument(help="convtui databases to merge from (left unchanged).", show_default=False),
]
MergeDbOpt = Annotated[
    Path, typer.Option("--db", help="SQLite file to merge into (created if missing).")
]

CodeifModeOpt = Annotated[
    BenchMode,
    typer.Option(
        "--mode",
        help="static: every instruction in the task's order, the model's own answers as "
        "context, no feedback (the paper's static conversation); dynamic: the first "
        "instruction the code does not follow, a feedback round after a miss, dropped after "
        "two; under --protocol codeif exactly as the authors' dynamic script plays it (the "
        "task's prompt alone first, Functionality Extension left out, each instruction on its "
        "own tests, at most 2 x requirements + 2 turns), under convtui by convtui's rules "
        "(every instruction, at most twice as many rounds as instructions).",
        case_sensitive=False,
    ),
]
CodeifProtocolOpt = Annotated[
    CodeifProtocol,
    typer.Option(
        "--protocol",
        help="codeif: check candidates as CodeIF-Bench's evaluation does (indented docstrings "
        "and blank lines removed first; dynamic conversations as the authors' dynamic script "
        "plays and checks them); convtui: check the code as written.",
        case_sensitive=False,
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
CodeifLogsOpt = Annotated[
    Path | None,
    typer.Option(
        "--logs",
        help="Replay the CodeIF-Bench conversations people recorded in the app (convtui "
        "session --task CodeIF/N) in this database against --model: each round's words as "
        "the person sent them, every instruction checked; one per task (the newest).",
        show_default=False,
    ),
]
CodeifScoreOnlyOpt = Annotated[
    Path | None,
    typer.Option(
        "--score-only",
        help="Call no model: score this completions file (CodeIF-Bench's layout: JSON lines "
        "of task_id, requirement and completion, as sessions export --format codeif writes "
        "them; a task's first record is its base answer) as static conversations, and record "
        "them as a run that report shows. The model is the file's, else scored:<file stem>.",
        show_default=False,
    ),
]

# --- convtui projects: DevEval's projects for CodeIF-Bench's repository tasks -----------------
ProjectsDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--projects",
        help="Where DevEval's projects live: Source_Code/ and envs/ under it "
        "(default: $CONVTUI_PROJECTS_DIR, else ~/.cache/convtui/projects).",
        show_default=False,
    ),
]
ProjectNamesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Projects to rebuild, by name (sqlitedict) or DevEval path (Database/sqlitedict); "
        "default: every project with a matching release.",
        show_default=False,
    ),
]
CodeifPromptingOpt = Annotated[
    Prompting,
    typer.Option(
        "--prompting",
        help="direct: each round's message as the benchmark words it; cot: each round also "
        "asks the model to reason step by step before giving the code (the paper's RQ4 "
        "Chain-of-Thought setting; its prompt is unpublished, so the words are convtui's). "
        "Recorded with the run; report keeps the two apart.",
        case_sensitive=False,
    ),
]
ProjectTreeOpt = Annotated[
    Path | None,
    typer.Option(
        "--tree",
        help="Take the one project named from this folder (a checkout of the commit "
        "releases.toml names) instead of its release on PyPI.",
        show_default=False,
    ),
]
