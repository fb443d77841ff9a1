"""ConvCodeWorld's feedback-turn prompts, rendered and parsed as DSPy 2.4.12 does.

ConvCodeWorld (CCW, github.com/sfc-gh-hhan/convcodeworld@83bdc84) builds every feedback-turn
prompt with ``dspy.ChainOfThought`` over the signatures of CCW:``convcodeworld/pot.py`` and pins
``dspy-ai==2.4.12`` (CCW:``environment.yml:101``). The text of those signatures and DSPy's fixed
strings are data (``core/prompts/convcodeworld/*.json``); this module applies DSPy's rules to
them. Rules and where DSPy v2.4.12 (commit ce0333e) states them:

- Fields: the ``input`` field of ``Signature("input -> output")``, the mode's input fields,
  then the outputs: ChainOfThought's ``rationale`` and the mode's output
  (DSPy:``dspy/signatures/signature.py`` ``fields``; DSPy:``dspy/predict/chain_of_thought.py``).
  A field's label is its prefix stripped; its separator is one space, or a newline when the
  formatted value holds one (DSPy:``dsp/adapters/base_template.py:41-46``,
  DSPy:``dsp/adapters/template.py:45``). CCW declares every field ``format=str``, so values are
  shown verbatim; the rationale has no format and DSPy's default joins its words with single
  spaces (DSPy:``dsp/adapters/template.py:40-42``).
- Prompt: instructions, guidelines ("Follow the following format." and one ``label desc``
  entry per field), then the query, joined by ``"\\n\\n---\\n\\n"`` after stripping each part,
  and stripped as a whole (DSPy:``dsp/adapters/template.py:138-220``). The output field's value is
  dropped (``:145-146``); a field that is absent or ``None`` is not shown; the field after the last
  one holding a non-empty value is shown empty, as ``"Label "`` (``:15-32``), so the prompt ends
  with that label once stripped. Entries are joined by blank lines when the signature has more
  than three fields or a description with a newline, or when the single-spaced query has more
  lines than the signature has fields; otherwise by single newlines (``:70-73``, ``:178-191``).
- Parsing a completion (DSPy:``dsp/adapters/template.py:75-136``, ``dsp.settings.release == 0`` so
  nothing but whitespace is stripped): the text goes into the first field that is absent or ``None``
  and is cut at ``"\\n" + next label``, field by field; the last field takes all that is left.
- Completeness (DSPy:``dsp/primitives/predict.py:62-102``): when the field after the last one set is
  missing, that field is set to the empty string and the LM is asked again with ``max_tokens``
  halved (at least 75, at most the previous) at temperature 0; the third incomplete
  completion raises ``AssertionError`` (here :class:`IncompleteError`). A completion with no
  text at all (``None``, as a chat API's null content) fails in parsing with
  ``AttributeError`` (here :class:`NoTextError`).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Literal, cast, get_args

from convtui.core.models.extract import extract_code

__all__ = [
    "MODES",
    "NO_SYNTAX_ERRORS",
    "PASSED_ALL_TEST_RUNS",
    "Expertise",
    "Field",
    "IncompleteError",
    "Mode",
    "NoTextError",
    "Request",
    "Signature",
    "extract_fields",
    "fence_for_simulator",
    "generation_defaults",
    "missing_field",
    "parse_code",
    "predict",
    "render_prompt",
    "signature",
    "simulated_user_feedback",
    "templates_hash",
    "templates_sha256",
]

Mode = Literal[
    "generate",
    "refine_from_compilation_feedback",
    "refine_from_execution_feedback",
    "refine_from_user_feedback",
    "refine_from_execution_user_feedback",
    "simulate_user_feedback",
    "simulate_novice_feedback",
    "execution_simulate_user_feedback",
    "execution_simulate_novice_feedback",
]
MODES: tuple[Mode, ...] = get_args(Mode)
Expertise = Literal["novice", "expert"]

_DATA_FILES = ("signatures.json", "dspy_template.json", "feedback_examples.json")


@functools.cache
def _data(name: str) -> dict[str, Any]:
    folder = resources.files("convtui.core").joinpath("prompts", "convcodeworld")
    return cast(dict[str, Any], json.loads(folder.joinpath(name).read_text("utf-8")))


def _texts() -> dict[str, str]:
    return cast(dict[str, str], _data("signatures.json")["texts"])


NO_SYNTAX_ERRORS: str = _texts()["no_syntax_errors"]
PASSED_ALL_TEST_RUNS: str = _texts()["passed_all_test_runs"]


class NoTextError(Exception):
    """DSPy 2.4's ``AttributeError`` on a completion without text (``None.strip()`` in
    ``Template.extract``). CCW retries some calls with a space appended to a feedback value."""


class IncompleteError(Exception):
    """DSPy 2.4's ``AssertionError`` (``assert max_depth > 0``): three completions in a row
    left the output field unset."""


@dataclass(frozen=True)
class Field:
    """One DSPy field: ``name`` is the keyword it is filled from, ``prefix`` and ``desc`` are
    what the prompt shows. ``verbatim`` is CCW's ``format=str``; without it DSPy's default
    formatter joins the words with single spaces."""

    name: str
    prefix: str
    desc: str
    verbatim: bool = True

    @property
    def label(self) -> str:
        return self.prefix.strip()

    def format(self, value: str) -> str:
        return value if self.verbatim else " ".join(value.split())

    @property
    def separator(self) -> str:
        """What follows the label before any value is known
        (DSPy:``dsp/adapters/base_template.py:41-43``)."""
        stripped = self.prefix.rstrip()
        return " " if stripped == self.prefix and self.prefix else self.prefix[len(stripped) :]

    def entry(self, value: str) -> str:
        text = self.format(value)
        separator = "\n" if self.separator == " " and "\n" in text else self.separator
        return f"{self.label}{separator}{text}"


@dataclass(frozen=True)
class Signature:
    """A mode's ChainOfThought signature: ``fields`` are the inputs, then ``rationale`` and
    the output, in prompt order."""

    mode: Mode
    instructions: str
    fields: tuple[Field, ...]

    @property
    def output(self) -> Field:
        return self.fields[-1]

    @property
    def inputs(self) -> tuple[Field, ...]:
        return self.fields[:-2]

    @property
    def spaced(self) -> bool:
        """``Template._has_augmented_guidelines``: entries are separated by blank lines."""
        return len(self.fields) > 3 or any(
            "\n" in f.separator or "\n" in f.desc for f in self.fields
        )

    def guidelines(self) -> str:
        heading = _data("dspy_template.json")["guidelines_heading"]
        joiner = "\n\n" if self.spaced else "\n"
        return heading + "\n\n" + joiner.join(f.entry(f.desc) for f in self.fields)


@functools.cache
def signature(mode: Mode) -> Signature:
    """The signature CCW builds for ``mode`` (CCW:``convcodeworld/pot.py:96-156``,
    ``_generate_signature``, ``_generate_instruction``) with DSPy's input and rationale fields
    around it."""
    ccw = _data("signatures.json")
    dspy = _data("dspy_template.json")
    spec = ccw["modes"][mode]
    base = dspy["input_field"]
    inputs = [Field(base["name"], base["prefix"], base["desc"])]
    for name in spec["inputs"]:
        field = ccw["fields"][name]
        inputs.append(Field(name, field["prefix"], field["desc"]))
    out = ccw["fields"][spec["output"]]
    desc = out["desc"]
    if "example" in spec:
        desc += ccw["example_joiner"] + _example(spec["example"])
    output = Field(spec["output"], out["prefix"], desc)
    cot = dspy["rationale_field"]
    rationale = Field(
        cot["name"],
        cot["prefix"],
        cot["desc_before_output"] + output.name + cot["desc_after_output"],
        verbatim=False,
    )
    names = [f.name for f in inputs]
    values = {
        "inputs": ", ".join(f"`{n}`" for n in names),
        "feedback_inputs": ", ".join(f"`{n}`" for n in names if "feedback" in n),
    }
    template_lines = ccw["instructions"][spec["instructions"]]
    lines = [Template(line).substitute(values) for line in template_lines]
    # DSPy keeps a signature's instructions as inspect.cleandoc(__doc__)
    # (DSPy:dspy/signatures/signature.py).
    instructions = inspect.cleandoc("\n".join(lines))
    return Signature(mode, instructions, (*inputs, rationale, output))


def _example(name: str) -> str:
    return "\n".join(_data("feedback_examples.json")["examples"][name]["text"])


# --- rendering --------------------------------------------------------------------------------

Values = Mapping[str, str | None]


def _shown(sig: Signature, values: Values) -> dict[str, str | None]:
    """The values the query shows: the output dropped, and the field after the last non-empty
    one opened as ``""`` (DSPy:``dsp/adapters/template.py:15-32``, ``:145-146``)."""
    shown = {f.name: values.get(f.name) for f in sig.fields}
    shown[sig.output.name] = None
    filled = [shown[f.name] not in (None, "") for f in sig.fields]
    if not any(filled):
        shown[sig.fields[0].name] = ""
    else:
        for i in range(1, len(sig.fields)):
            if filled[i - 1] and not any(filled[i:]):
                shown[sig.fields[i].name] = ""
                break
    return shown


def render_prompt(mode: Mode, values: Values) -> str:
    """The completion prompt DSPy 2.4 sends for ``mode`` with these field values.

    ``values`` maps field names (``input``, ``previous_code``, ..., and after a first
    incomplete completion ``rationale``) to text; a name that is missing or ``None`` is not
    shown, an empty string is shown as an empty field."""
    sig = signature(mode)
    shown = _shown(sig, values)
    entries = [f.entry(v) for f in sig.fields if (v := shown[f.name]) is not None]
    query = ("\n\n" if sig.spaced else "\n").join(entries)
    if not sig.spaced and len(query.split("\n")) > len(sig.fields):
        query = "\n\n".join(entries)
    parts = [sig.instructions, sig.guidelines(), query]
    separator = _data("dspy_template.json")["part_separator"]
    return separator.join(p.strip() for p in parts if p).strip()


# --- parsing ----------------------------------------------------------------------------------


def extract_fields(mode: Mode, values: Values, completion: str) -> dict[str, str | None]:
    """``Template.extract``: ``values`` with the fields ``completion`` fills set."""
    fields = signature(mode).fields
    out: dict[str, str | None] = {f.name: values.get(f.name) for f in fields}
    rest = completion.strip()
    idx = next((i for i, f in enumerate(fields) if out[f.name] is None), len(fields))
    idx = min(idx, len(fields) - 1)
    while rest and idx < len(fields) - 1:
        marker = "\n" + fields[idx + 1].label
        at = rest.find(marker)
        if at < 0:
            out[fields[idx].name] = rest
            return out
        out[fields[idx].name] = rest[:at].strip()
        rest = rest[at + len(marker) :].strip()
        idx += 1
    if rest:
        out[fields[idx].name] = rest
    return out


def missing_field(mode: Mode, values: Values) -> str | None:
    """The field DSPy asks again for: the one after the last field set, or ``None`` when the
    last field (the output) is set (DSPy:``dsp/primitives/predict.py:76-92``, one completion)."""
    fields = signature(mode).fields
    last = max((i for i, f in enumerate(fields) if values.get(f.name) is not None), default=-1)
    return fields[last + 1].name if last + 1 < len(fields) else None


@dataclass(frozen=True)
class Request:
    """One LM request of a DSPy call: ``follow_up`` is 0 for the first, 1 or 2 for DSPy's
    requests after an incomplete completion."""

    prompt: str
    max_tokens: int
    follow_up: int


def predict(
    mode: Mode, inputs: Values, max_tokens: int | None = None
) -> Generator[Request, str | None, str]:
    """``dspy.ChainOfThought(signature(mode))(**inputs)`` with one completion per request.

    Yields each request, receives the completion text (``None`` for a reply without text) and
    returns the output field's value. Keys of ``inputs`` that are not input fields of the mode
    are ignored, as DSPy's template ignores them. Raises :class:`NoTextError` or
    :class:`IncompleteError` where DSPy raises ``AttributeError`` or ``AssertionError``."""
    sig = signature(mode)
    values: dict[str, str | None] = {f.name: inputs.get(f.name) for f in sig.inputs}
    tokens = generation_defaults()["max_tokens"] if max_tokens is None else max_tokens
    for follow_up in range(3):
        completion = yield Request(render_prompt(mode, values), tokens, follow_up)
        if completion is None:
            raise NoTextError(f"{mode}: the completion has no text")
        values = extract_fields(mode, values, completion)
        missing = missing_field(mode, values)
        if missing is None:
            return cast(str, values[sig.output.name])
        values[missing] = ""
        tokens = min(max(75, tokens // 2), tokens)
    raise IncompleteError(f"{mode}: three completions left `{sig.output.name}` unset")


# --- CCW's post-processing --------------------------------------------------------------------


def parse_code(generated_code: str) -> str:
    """``ProgramOfThought.parse_code`` on a prediction's ``generated_code``
    (CCW:``convcodeworld/pot.py:408-434``): :func:`convtui.core.models.extract.extract_code` in
    ``ccw`` mode, without the header (``run.py`` prefixes it when the turn's solution is
    written)."""
    return extract_code(generated_code, mode="ccw")


def simulated_user_feedback(output: str, expertise: Expertise) -> str:
    """``get_simulated_user_feedback``'s cuts of the simulator's ``user_feedback`` field
    (CCW:``convcodeworld/pot.py:532-536``): at the first ``---``, then at the first two blank lines,
    and for the expert at the first line that opens a code fence."""
    text = output.split("---", 1)[0].split("\n\n\n", 1)[0]
    if expertise == "expert":
        text = text.split("\n```")[0]
    return text


def fence_for_simulator(code: str) -> str:
    """How the simulator is shown code (CCW:``convcodeworld/pot.py:510``, ``:512``): inside a bare
    fence."""
    fence = _data("signatures.json")["simulator_code_fence"]
    return f"{fence['before']}{code}{fence['after']}"


def generation_defaults() -> dict[str, Any]:
    """CCW's generation settings for every model call: ``max_tokens``, ``stop``,
    ``temperature``."""
    settings = _data("signatures.json")["generation"]
    return {k: v for k, v in settings.items() if not k.startswith("_")}


@functools.cache
def templates_sha256() -> str:
    """The SHA-256 over the protocol's data files, each name and bytes in order: every prompt
    text a ConvCodeWorld model or simulator is shown comes from them."""
    folder = resources.files("convtui.core").joinpath("prompts", "convcodeworld")
    digest = hashlib.sha256()
    for name in _DATA_FILES:
        digest.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes())
    return digest.hexdigest()


def templates_hash() -> str:
    """A short hash over the protocol's data files, to record with every call."""
    return templates_sha256()[:12]
