"""The options of ``convtui study …`` and of ``convtui session --study``, declared once (as
convtui/options.py declares the others)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_args

import typer

from convtui.benchmarks.settings import StudyExportFormat
from convtui.core.settings.config import ProtocolName
from convtui.core.settings.persona import PERSONAS, Persona


def models_option(flag: str, help: str) -> Any:
    """``flag``, repeatable: models named by any --model spec, each what ``help`` says."""
    return typer.Option(flag, metavar="MODEL", help=help, show_default=False)


StudyFileArg = Annotated[
    Path,
    typer.Argument(
        metavar="STUDY.toml",
        help="The study file (TOML): name, tasks (ids, or a table that filters them), model, "
        "feedback, "
        "turns, protocol, user, annotators, overlap, seed; the README's Studies section shows "
        "one.",
        show_default=False,
    ),
]
StudyInitDbOpt = Annotated[
    Path,
    typer.Option(
        "--db",
        help="SQLite file to hold the study and every session of it (a new file, or a convtui "
        "database without a study).",
        show_default=False,
    ),
]
StudyDbOpt = Annotated[
    Path,
    typer.Option(
        "--db", help="The study's database (made by convtui study init).", show_default=False
    ),
]
AnnotatorNameArg = Annotated[
    str, typer.Argument(metavar="NAME", help="The annotator's name.", show_default=False)
]
AddTasksOpt = Annotated[
    int,
    typer.Option(
        "--tasks",
        min=0,
        help="How many tasks to give them: the least covered of those they do not have.",
    ),
]
SessionStudyOpt = Annotated[
    Path | None,
    typer.Option(
        "--study",
        help="Annotate in a study: open --annotator's next assignment from this study "
        "database, under the study's model, feedback, turns, protocol and user (f10: the next "
        "assignment, f4: the list). Records into the study database.",
        show_default=False,
    ),
]
ServeHostOpt = Annotated[
    str,
    typer.Option(
        "--host",
        help="Address to listen on. The default answers this machine only; to reach people "
        "elsewhere put a reverse proxy with TLS in front (README, Studies) rather than "
        "0.0.0.0.",
    ),
]
ServePortOpt = Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")]
ServeMaxAppsOpt = Annotated[
    int,
    typer.Option(
        "--max-apps",
        min=1,
        help="Most annotators' apps running at once; past it a person gets a 'full, try "
        "again' page (each annotator runs one app: a new tab replaces the old).",
    ),
]
ServeMaxStartingOpt = Annotated[
    int | None,
    typer.Option(
        "--max-starting",
        min=1,
        show_default="this machine's cores",
        help="Apps starting at once (each takes a core for about a second); a crowd arriving "
        "together waits its turn instead of slowing everyone already typing.",
    ),
]
ServeAllowHostOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="NAME",
        help="A name besides an address, localhost and this machine's own name that requests "
        "may give in their Host header: a reverse proxy's public name (repeat for more). "
        "Others are refused, so no other site's page can reach the study by DNS rebinding.",
    ),
]
ServeMaxConnectionsOpt = Annotated[
    int,
    typer.Option(
        "--max-connections",
        min=8,
        help="Connections not yet signed in (no request with a right token yet), in all; "
        "past it the oldest idle one is closed to make room. Signed-in people's connections "
        "do not count.",
    ),
]
ServeMaxPerNetworkOpt = Annotated[
    int,
    typer.Option(
        "--max-per-network",
        min=4,
        help="Of the connections not yet signed in (--max-connections), most from one "
        "network: one address; every loopback address is one, an IPv6 /64 is one. Behind a "
        "proxy, give it --max-connections' value.",
    ),
]
ServeAppOpensOpt = Annotated[
    int,
    typer.Option(
        "--max-app-opens",
        min=1,
        metavar="PER_MINUTE",
        help="Apps one annotator may open a minute (a reload, a second tab each open one); "
        "past it their page says to wait a minute, and the app they have stays. Each start "
        "takes a core for about a second.",
    ),
]
ServeAppMemoryOpt = Annotated[
    int,
    typer.Option(
        "--app-memory-mb",
        min=0,
        metavar="MIB",
        help="Memory each annotator's app may use (its data, a limit the kernel enforces; 0: "
        "none). An app near it ends, its page says why, and every recorded turn is kept. "
        "An app peaks near 140 MiB on a served model, 780 MiB when it loads the embedded one.",
    ),
]
ServeIdleTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--idle-timeout",
        min=1.0,
        metavar="SECONDS",
        help="A connection that has not sent a whole request for this long (an unfinished "
        "request's headers, an idle keep-alive) is closed.",
    ),
]
StudyExportFormatOpt = Annotated[
    StudyExportFormat,
    typer.Option(
        "--format",
        help="parquet: one row per turn in data/transcripts.parquet, and README.md, a dataset "
        "card that datasets.load_dataset(OUT) reads.",
    ),
]
StudyExportOutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Folder to write the export into: a new or empty one, unless --force.",
        show_default=False,
    ),
]
StudyExportForceOpt = Annotated[
    bool,
    typer.Option(
        "--force", help="Write into a folder that is not empty, replacing an earlier export."
    ),
]
FinishedOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--finished-only",
        help="Leave out sessions still open (by default they are in, with status running).",
    ),
]
StudyTargetOpt = Annotated[
    list[str] | None,
    models_option(
        "--target",
        "A model to replay each annotator's finished sessions against, as a log set "
        "(bench static), any --model spec; repeat for several. The replays are recorded in "
        "the study database, so the same report again replays nothing. Without it the "
        "annotators' own sessions with the study's model are scored.",
    ),
]
StudyPlotOpt = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        help="Folder for figures (PNG and SVG): MRR and Recall per annotator beside the "
        "simulated users', and the annotators x tasks matrix of what was solved.",
        show_default=False,
    ),
]
FidelityDbOpt = Annotated[
    Path,
    typer.Option(
        "--db",
        help="A convtui database holding people's sessions: a study's, or any that convtui "
        "session --user human or assist recorded into. The simulators' feedback and the "
        "targets' turns are recorded in it beside them, never changing them.",
        show_default=False,
    ),
]
FidelitySimulatorOpt = Annotated[
    list[str] | None,
    models_option(
        "--simulator",
        "A model to play the simulated user on each state the person answered, any "
        "--model spec; repeat for several.",
    ),
]


def one_of(kind: Any) -> Callable[[str], str]:
    """A parser of one value of a repeated option whose values are the Literal ``kind``:
    typer takes no list of Literals, so each value is checked here."""
    names = get_args(kind)

    def check(value: str) -> str:
        if value not in names:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(names)}")
        return value

    return check


persona_choice = one_of(Persona)  # core/settings/persona.py, light enough for --help


FidelityPersonaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--persona",
        parser=persona_choice,
        metavar="|".join(PERSONAS),
        help="The simulators' persona: novice or expert (sees the reference solution); "
        "repeat for both. Default: the one each session's feedback setting names, the part "
        "the person played.",
        show_default=False,
    ),
]
FidelityTargetOpt = Annotated[
    list[str] | None,
    models_option(
        "--target",
        "A model handed each feedback (the person's, each simulator's, none) for one "
        "turn from each state, any --model spec; repeat for several.",
    ),
]
FidelityProtocolOpt = Annotated[
    ProtocolName | None,
    typer.Option(
        "--protocol",
        help="The protocol whose prompt the target's turn is built by (default: each "
        "session's own).",
        show_default=False,
    ),
]
FidelityPromptsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--simulator-prompts",
        parser=one_of(ProtocolName),
        metavar="convtui|convcodeworld",
        help="Whose prompts the simulators are asked with: convtui's (novice and expert as "
        "convtui plays them) or convcodeworld's (ConvCodeWorld's simulator, its DSPy prompts as "
        "raw completions); repeat for both, each its own source. Default: convtui.",
        show_default=False,
    ),
]
SeedOpt = Annotated[
    int, typer.Option("--seed", help="Seed of the bootstrap intervals: the same seed, the same.")
]
ResamplesOpt = Annotated[
    int, typer.Option("--resamples", min=1, help="Bootstrap resamples of the states.")
]
ReportSeedOpt = Annotated[
    int,
    typer.Option("--seed", min=0, help="Seed of the bootstrap intervals: the same seed, the same."),
]
ReportResamplesOpt = Annotated[
    int, typer.Option("--resamples", min=1, help="Bootstrap resamples of the tasks.")
]
FiguresOpt = Annotated[
    Path | None,
    typer.Option(
        "--figures",
        help="Folder for figures (PNG and SVG): the gain of each feedback source over none, "
        "and the person against each simulator per task, with intervals.",
        show_default=False,
    ),
]
