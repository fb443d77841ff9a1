"""ConvCodeWorld's static-mode files: their names and what one line of each holds.

What ``run.py --option static`` reads for a reference model R under one Ω (learned from
ConvCodeWorld's ``run.py`` ``get_compact_gen_results_fn`` and ``pot.py``; the layout, not
their code, is reproduced here):

- turn 0: ``bigcodebench/sanitized_calibrated_samples/instruct/<R, / as -->--bigcodebench-
  instruct--vllm-0-1-sanitized-calibrated.jsonl``, lines ``{task_id, solution}``, and its
  ``..._eval_results.json``;
- turn k >= 1: ``results/v0.3.6/bigcodebench_<R, / as _>_CF[_EF_UNIT|_EF_FULL][_SNF|_SEF]
  [_by_<simulator>][_ITER=k].jsonl`` (no ``_ITER`` for k = 1; ``_by_`` only when the
  simulator is not R itself), lines ``{task_id, solution, compilation_feedback,
  execution_feedback, user_feedback, log, iteration}``: turn k's code and the feedback turn k
  was given about turn k-1's code (all three None where turn k-1 had passed: "Already
  solved", the code handed on). Every file holds every task;
- beside each, ``<stem>_eval_results.json``: ``{"date", "eval": {task_id: [{task_id,
  solution, status: pass|fail|timeout, details: {test: traceback} or {"ALL": error}}]}}``,
  BigCodeBench's verdict on that turn's code.

A static replay's turn k reads R's turn k-1 code and eval, and the user's words from R's
turn k file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from convtui.core.omega import FeedbackConfig

RESULTS_DIR = "results/v0.3.6"
TURN0_DIR = "bigcodebench/sanitized_calibrated_samples/instruct"
TURN0_SUFFIX = "--bigcodebench-instruct--vllm-0-1-sanitized-calibrated.jsonl"
EVAL_SUFFIX = "_eval_results.json"

_EF_CODE = {"none": "", "partial": "_EF_UNIT", "full": "_EF_FULL"}
_VF_CODE = {"none": "", "novice": "_SNF", "expert": "_SEF"}
_EF_NAME = {code: name for name, code in _EF_CODE.items() if code}
_VF_NAME = {code: name for name, code in _VF_CODE.items() if code}
_TURN_FILE = re.compile(
    r"^bigcodebench_(?P<model>.+?)_CF(?P<ef>_EF_UNIT|_EF_FULL)?(?P<vf>_SNF|_SEF)?"
    r"(?:_by_(?P<by>.+?))?(?:_ITER=(?P<iter>\d+))?\.jsonl$"
)


def model_part(model: str) -> str:
    """A model as ConvCodeWorld spells it in a turn file (``/`` as ``_``); characters a file
    name should not hold (``:`` in ``local:smollm2``, whole URLs) become ``_`` too."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


def turn0_model_part(model: str) -> str:
    """A model as BigCodeBench spells it in a sample file (``/`` as ``--``)."""
    return model_part(model.replace("/", "--"))


@dataclass(frozen=True)
class LogSetName:
    """What a turn file's name says: the reference model (as spelled there), Ω and who
    simulated the user (None: nobody, or the model itself)."""

    model: str
    feedback: FeedbackConfig
    by: str | None = None

    @property
    def stem(self) -> str:
        name = (
            f"bigcodebench_{self.model}_CF{_EF_CODE[self.feedback.execution]}"
            f"{_VF_CODE[self.feedback.verbal]}"
        )
        return f"{name}_by_{self.by}" if self.by else name

    def turn_file(self, turn: int) -> str:
        """The file of feedback turn ``turn`` (>= 1)."""
        if turn < 1:
            raise ValueError("turn 0 lives in the sample file (turn0_file)")
        return f"{self.stem}.jsonl" if turn == 1 else f"{self.stem}_ITER={turn}.jsonl"


def parse_turn_file(name: str) -> tuple[LogSetName, int] | None:
    """(log set, turn) for a turn file's name; None for any other name."""
    found = _TURN_FILE.match(name)
    if found is None or name.endswith(EVAL_SUFFIX):
        return None
    feedback = FeedbackConfig(
        _EF_NAME.get(found["ef"] or "", "none"),  # type: ignore[arg-type]
        _VF_NAME.get(found["vf"] or "", "none"),  # type: ignore[arg-type]
    )
    return LogSetName(found["model"], feedback, found["by"]), int(found["iter"] or 1)


def turn0_file(model: str) -> str:
    return f"{turn0_model_part(model)}{TURN0_SUFFIX}"


def eval_file(jsonl_name: str) -> str:
    return jsonl_name.removesuffix(".jsonl") + EVAL_SUFFIX


def turn_line(
    task_id: str,
    solution: str,
    feedback: tuple[str | None, str | None, str | None],
    log: str | None,
    iteration: int,
) -> dict[str, Any]:
    compilation, execution, user = feedback
    return {
        "task_id": task_id,
        "solution": solution,
        "compilation_feedback": compilation,
        "execution_feedback": execution,
        "user_feedback": user,
        "log": log,
        "iteration": iteration,
    }


def eval_entry(task_id: str, solution: str, status: str, details: dict[str, str]) -> list[dict]:
    return [{"task_id": task_id, "solution": solution, "status": status, "details": details}]
