"""Wiring for ``convtui check``: read the candidate, run it against the task's tests under
the protocol's rules, print its verdict and feedback."""

from __future__ import annotations

import sys
from pathlib import Path

from convtui.benchmarks.output import console, print_json
from convtui.benchmarks.runs.check import check_candidate
from convtui.benchmarks.settings import ExecutorSettings, ProtocolSettings, TaskSelection
from convtui.benchmarks.views import check_view
from convtui.core.errors import ConvtuiError
from convtui.core.settings.protocol import DEFAULTS


def check_command(
    task_id: str,
    code: Path,
    rules: ProtocolSettings,
    selection: TaskSelection,
    executor: ExecutorSettings,
    as_json: bool,
) -> int:
    """Exit code 0 when the candidate passes, 1 when it does not. Of ``rules``, the protocol,
    one Ω, the partial-coverage rule and the code extraction apply: one candidate has no
    turns, context or simulator."""
    chosen = DEFAULTS[rules.protocol]
    omega = rules.feedback.one("check renders one feedback configuration: name one, not all")
    reply = read_code(code)
    task = selection.task(task_id)
    with executor.open(model_code=False) as running:
        outcome = check_candidate(
            task,
            reply,
            omega,
            running,
            partial_rule=rules.partial_rule or chosen.partial_rule,
            extract=rules.extract or chosen.extract,
            source_lines=chosen.ef_source_lines,
            compile_compat="ccw" if rules.protocol == "convcodeworld" else "convtui",
            source="stdin" if str(code) == "-" else f"--code file {code}",
        )
    if as_json:
        print_json(outcome.to_json())
    else:
        console().print(
            check_view(
                task,
                outcome.result,
                outcome.compilation_feedback,
                outcome.execution_feedback,
                omega.label,
            )
        )
    return 0 if outcome.result.passed else 1


def read_code(path: Path) -> str:
    """The candidate's text from ``path``, or from stdin for ``-``."""
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConvtuiError(f"--code file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConvtuiError(f"cannot read --code file {path}: {exc}") from None
