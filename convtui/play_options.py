"""The options of ``convtui check``, ``doctor`` and ``session``, each declared once (the
shared ones are in convtui/options.py, the groups in convtui/option_groups.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtui.core.execution.requests import Solution
from convtui.core.settings.config import UserMode
from convtui.core.settings.omega import FeedbackChoice
from convtui.options import feedback_choice

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
        parser=feedback_choice,
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
AuditOpt = Annotated[
    bool,
    typer.Option(
        "--audit",
        help="With --suite codeif: run every instruction test on the reference solution and "
        "on a placeholder answer (the signature, a body that does nothing) under --protocol "
        "convtui, and class it: judges answers, cannot pass (and why), never runs, passes for "
        "any answer, unconfirmed, not run (project not usable here). Reads today's files and "
        "the -v0 ones beside them unless --data names one file.",
    ),
]
ErrataOpt = Annotated[
    Path | None,
    typer.Option(
        "--errata",
        help="With --audit: write one CSV row per test (task, level, id, category, class, "
        "defect, evidence, what --protocol convtui does) to this file.",
        show_default=False,
    ),
]
CompletionsOpt = Annotated[
    Path | None,
    typer.Option(
        "--completions",
        help="With --audit: a folder of published completions (function/Experiments of "
        "zhu-zhu-ding/CodeIF-Bench at commit 93b17ef, or a part of it; *.jsonl rows with "
        "task_id and completion): each runs against its task's tests, and a test both "
        "answers fail is confirmed where one passes it.",
        show_default=False,
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
        parser=feedback_choice,
        metavar="<str>",
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
