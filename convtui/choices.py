"""The values that choice-valued options accept, as ``StrEnum``s: typer checks them, ``--help``
lists them, and a bad value is one usage error naming them all.

Each enum's values are those of the library's ``Literal`` its docstring names
(tests/test_cli_options.py keeps them equal); commands hand ``.value`` to the front ends, which
know nothing of typer."""

from __future__ import annotations

from enum import StrEnum


class ProtocolChoice(StrEnum):
    """core.session.ProtocolName"""

    convcodeworld = "convcodeworld"
    convtui = "convtui"


class ContextChoice(StrEnum):
    """core.session.ContextMode"""

    markov = "markov"
    full = "full"


class PartialRuleChoice(StrEnum):
    """core.feedback.PartialRule"""

    ccw = "ccw"
    first_tests = "first-tests"


class ExtractChoice(StrEnum):
    """core.extract.ExtractMode"""

    robust = "robust"
    ccw = "ccw"


class SuiteChoice(StrEnum):
    """core.loaders.SUITES, or all of them."""

    bigcodebench = "bigcodebench"
    codeif = "codeif"
    all = "all"


class IsolationChoice(StrEnum):
    """core.isolation.IsolationChoice"""

    auto = "auto"
    bwrap = "bwrap"
    namespaces = "namespaces"
    landlock = "landlock"
    none = "none"


class SolutionChoice(StrEnum):
    """benchmarks.doctor.Solution"""

    ground_truth = "ground-truth"
    broken = "broken"


class UserChoice(StrEnum):
    """tui.controller.UserMode: who gives a session's verbal feedback."""

    human = "human"
    novice = "novice"
    expert = "expert"
    assist_novice = "assist:novice"
    assist_expert = "assist:expert"


class UserKindChoice(StrEnum):
    """sessions.records.UserKind: where a recorded session's feedback came from."""

    human = "human"
    simulator = "simulator"
    assist = "assist"
    none = "none"


class ExportFormatChoice(StrEnum):
    """benchmarks.sessions_command.ExportFormat"""

    jsonl = "jsonl"
    convcodebench = "convcodebench"
    codeif = "codeif"


class LogUserChoice(StrEnum):
    """``bench static --user``: whose feedback the replayed log sets hold."""

    human = "human"
    novice = "novice"
    expert = "expert"
    none = "none"


class CodeifModeChoice(StrEnum):
    static = "static"
    dynamic = "dynamic"


class CodeifProtocolChoice(StrEnum):
    codeif = "codeif"
    convtui = "convtui"


class CodeifMetricsChoice(StrEnum):
    """benchmarks.codeif_report.DEFINITIONS"""

    authors = "authors"
    paper = "paper"
