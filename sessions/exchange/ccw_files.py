"""ConvCodeWorld's static-mode files: their names and what one line of each holds.

What ``run.py --option static`` reads for a reference model R under one Ω, and what
``print_results.py`` reads to score a model (learned from ConvCodeWorld's
``convcodeworld/run.py`` ``get_compact_gen_results_fn`` and ``main``, ``print_results.py``
``get_configs``, ``get_results_dict`` and its ``__main__``, and ``pot.py``; the layout, not
their code, is reproduced here):

- turn 0: ``bigcodebench/sanitized_calibrated_samples/instruct/<R, / as -->--bigcodebench-
  instruct--<backend>-0-1-sanitized-calibrated.jsonl``, lines ``{task_id, solution}``, and its
  ``..._eval_results.json``. ``print_results.py`` looks for backend ``openai`` when R is one
  of the OpenAI models its ``azure_open_ai.py`` lists, ``vllm`` otherwise;
- turn k >= 1: ``results/v0.3.6/bigcodebench_<R, / as _>_CF[_EF_UNIT|_EF_FULL][_SNF|_SEF]
  [_by_<simulator, / as _>][_ITER=k].jsonl`` (no ``_ITER`` for k = 1; ``_by_`` only when the
  simulator's name is not R's), lines ``{task_id, solution, compilation_feedback,
  execution_feedback, user_feedback, log, iteration}``: turn k's code and the feedback turn k
  was given about turn k-1's code (all three None where turn k-1 had passed: "Already
  solved", the code handed on). Every file holds every task;
- beside each, ``<stem>_eval_results.json`` (the name with ``.jsonl`` replaced):
  ``{"date", "eval": {task_id: [{task_id, solution, status: pass|fail|timeout, details:
  {test: traceback} or {"ALL": error}}]}}``, BigCodeBench's verdict on that turn's code;
- a target model T replayed against R's log set (``--option static``) writes its turn k to
  ``results/v0.3.6/static/<R's turn-1 stem>/bigcodebench_<T, / as _>_CF…[_by_<simulator>]
  [_ITER=k].jsonl`` (``_by_`` when the simulator's name is not T's), its turn 0 being its own
  sample file above.

Both scripts take one ``--model_name M`` and derive both spellings from it, so a turn file
and its turn-0 file pair only when one M gives both: :func:`file_model_name` picks such an M
for any model spec, :func:`name_problem` says why a name chosen by hand would not pair.

A static replay's turn k reads R's turn k-1 code and eval, and the user's words from R's
turn k file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions.database.errors import ExportError

RESULTS_DIR = "results/v0.3.6"
STATIC_DIR = f"{RESULTS_DIR}/static"
TURN0_DIR = "bigcodebench/sanitized_calibrated_samples/instruct"
# What print_results.py reads as turn 0: BigCodeBench's greedy sample (temperature 0, one
# sample) of the instruct split, sanitized and calibrated; only the backend varies.
TURN0_SUFFIXES = {
    backend: f"--bigcodebench-instruct--{backend}-0-1-sanitized-calibrated.jsonl"
    for backend in ("vllm", "openai")
}
EVAL_SUFFIX = "_eval_results.json"
# ConvCodeWorld's convcodeworld/azure_open_ai.py AZURE_OPENAI_MODEL_LIST: print_results.py
# reads the turn-0 file of these names with backend "openai", of any other with "vllm".
OPENAI_SAMPLE_NAMES = frozenset(
    {
        "gpt-4o",
        "gpt-4-turbo-2024-04-09",
        "gpt-4-0613",
        "gpt-4o-mini",
        "gpt-35-turbo-0613",
        "gpt-35-turbo-instruct-0914",
    }
)
# The longest file name a common file system takes (ext4, XFS, btrfs: 255 bytes).
NAME_MAX = 255

_EF_CODE = {"none": "", "partial": "_EF_UNIT", "full": "_EF_FULL"}
# ConvCodeWorld's codes for its two simulated users (its protocol data, not convtui's personas).
_VF_CODE = {"none": "", "novice": "_SNF", "expert": "_SEF"}
_EF_NAME = {code: name for name, code in _EF_CODE.items() if code}
_VF_NAME = {code: name for name, code in _VF_CODE.items() if code}
_TURN_FILE = re.compile(
    r"^bigcodebench_(?P<model>.+?)_CF(?P<ef>_EF_UNIT|_EF_FULL)?(?P<vf>_SNF|_SEF)?"
    r"(?:_by_(?P<by>.+?))?(?:_ITER=(?P<iter>\d+))?\.jsonl$"
)
# Every name BigCodeBench's generate + sanitize --calibrate give an instruct-split sample file
# (bigcode-project/bigcodebench, bigcodebench/generate.py and sanitize.py; ConvCodeWorld's
# submodule sfc-gh-hhan/bigcodebench is its 0.1 line):
#   0.1.x   <M, / as -->--bigcodebench-instruct--<backend>-<temperature>-<n>-sanitized-calibrated
#           (0.1.0: ...-sanitized-calibrate; 0.1.9 adds -hard before -instruct for the subset)
#   0.2.0   <M>--bigcodebench[-hard]-instruct--<backend>-<temperature>-<n>-sanitized_calibrated
#   0.2.1+  <M>[--skip_prefill]--<revision>--bigcodebench[-hard]-instruct--... (as 0.2.0)
# then .jsonl. The temperature is Python's str of a float or of 0 ("0", "0.0", "0.2").
BCB_BACKENDS = ("vllm", "hf", "hf-inference", "openai", "mistral", "anthropic", "google")
_TURN0_FILE = re.compile(
    r"^(?P<prefix>.+)--bigcodebench(?P<hard>-hard)?-instruct--"
    rf"(?P<backend>{'|'.join(re.escape(b) for b in BCB_BACKENDS)})-"
    r"(?P<temperature>\d+(?:\.\d+)?(?:e-?\d+)?)-(?P<n>\d+)"
    r"-sanitized(?P<sep>[-_])calibrated?\.jsonl$"
)


def file_model_name(spec: str) -> str:
    """The name a model spec gets in ConvCodeWorld's file names: the one to pass to its
    scripts as ``--model_name`` (and ``--simulator_name``/``--ref_model_name``). ``/`` stays
    (the scripts spell it ``_`` in turn files, ``--`` in the turn-0 file, so HF ids keep
    BigCodeBench's spelling); any other run of characters outside ``[A-Za-z0-9._-]`` (``:``
    of ``local:smollm2``, ``://`` of a URL) becomes ``_``, ``.jsonl`` becomes ``_jsonl``
    (the scripts cut it out of derived names), empty segments go: ``http://127.0.0.1:8000/v1``
    -> ``http/127.0.0.1_8000/v1``. The result always passes :func:`name_problem`."""
    segments = []
    for segment in spec.split("/"):
        segment = re.sub(r"[^A-Za-z0-9._-]+", "_", segment.replace(".jsonl", "_jsonl"))
        if segment.strip("_"):
            segments.append(segment.strip("_"))
    return "/".join(segments).lstrip("-") or "model"


def name_problem(name: str) -> str | None:
    """Why ConvCodeWorld's scripts could not pair files written under ``name`` (used as their
    ``--model_name``), or None when they can."""
    if not name.strip():
        return "is empty"
    if ".jsonl" in name:
        return (
            "holds '.jsonl', which ConvCodeWorld's run.py and print_results.py cut out of the "
            "names they derive (.replace('.jsonl', ...)): its eval files would not be found"
        )
    if any(ch.isspace() or not ch.isprintable() for ch in name):
        return (
            "holds whitespace or a control character (ConvCodeWorld's shell scripts pass the "
            "name unquoted)"
        )
    if name.startswith("-"):
        return "starts with '-', which print_results.py's argument parser takes for an option"
    longest = turn0_file(name).removesuffix(".jsonl") + EVAL_SUFFIX
    if len(longest.encode()) > NAME_MAX:
        return f"is too long: its turn-0 eval file name would pass {NAME_MAX} bytes"
    return None


def model_part(name: str) -> str:
    """A model's file name as ConvCodeWorld spells it in a turn file (``/`` as ``_``)."""
    return name.replace("/", "_")


def turn0_model_part(name: str) -> str:
    """A model's file name as BigCodeBench spells it in a sample file (``/`` as ``--``)."""
    return name.replace("/", "--")


def verbal_code(verbal: str) -> str:
    """The code a turn file's name gives Ω's verbal part; ConvCodeWorld's files name only its
    own two simulated users, so any other persona is refused with one line."""
    code = _VF_CODE.get(verbal)
    if code is None:
        known = " and ".join(f"{v} ({c})" for v, c in _VF_CODE.items() if c)
        raise ExportError(
            f"ConvCodeWorld's file names know only the simulated users {known}, not {verbal}"
        )
    return code


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
            f"{verbal_code(self.feedback.verbal)}"
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


def turn0_file(name: str) -> str:
    """The turn-0 sample file ``print_results.py --model_name name`` reads."""
    backend = "openai" if name in OPENAI_SAMPLE_NAMES else "vllm"
    return f"{turn0_model_part(name)}{TURN0_SUFFIXES[backend]}"


@dataclass(frozen=True)
class Turn0File:
    """What a BigCodeBench sample file's name says: the model as spelled there (``/`` as
    ``--``, with any revision BigCodeBench 0.2.1+ adds), and how it was generated."""

    prefix: str
    backend: str
    temperature: str
    samples: int
    hard: bool
    revised: bool  # the 0.2 spelling (sanitized_calibrated), which may add --<revision>

    def spellings(self) -> tuple[str, ...]:
        """The model as the file may spell it, best first: the whole prefix, then (0.2
        spelling) without the ``--<revision>`` and ``--skip_prefill`` BigCodeBench 0.2.1+
        appends."""
        found = [self.prefix]
        if self.revised and "--" in self.prefix:
            bare = self.prefix.rsplit("--", 1)[0]
            found.append(bare)
            if bare.endswith("--skip_prefill"):
                found.append(bare.removesuffix("--skip_prefill"))
        return tuple(found)


def parse_turn0_file(name: str) -> Turn0File | None:
    """What a turn-0 sample file's name says; None for any other name."""
    found = _TURN0_FILE.match(name)
    if found is None:
        return None
    return Turn0File(
        prefix=found["prefix"],
        backend=found["backend"],
        temperature=found["temperature"],
        samples=int(found["n"]),
        hard=found["hard"] is not None,
        revised=found["sep"] == "_",
    )


def paired_name(turn0_spelling: str, turn_part: str) -> str | None:
    """The ``--model_name`` that gives both ``turn0_spelling`` (``/`` as ``--``) and
    ``turn_part`` (``/`` as ``_``), or None when no name gives both. Where the spellings
    differ, ``--`` must face ``_`` (a ``/``); everywhere else they must agree."""
    out: list[str] = []
    i = j = 0
    while i < len(turn0_spelling) and j < len(turn_part):
        if turn0_spelling[i] == turn_part[j]:
            out.append(turn_part[j])
            i, j = i + 1, j + 1
        elif turn0_spelling.startswith("--", i) and turn_part[j] == "_":
            out.append("/")
            i, j = i + 2, j + 1
        else:
            return None
    if i != len(turn0_spelling) or j != len(turn_part):
        return None
    return "".join(out)


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
