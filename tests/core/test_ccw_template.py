"""ConvCodeWorld's feedback-turn prompts as DSPy 2.4.12 renders and parses them.

The vectors were checked once against dspy-ai 2.4.12 itself (pydantic 2.5.0, as CCW's
environment.yml pins), driving CCW's pot.py with a recording fake LM; DSPy is not a dependency
of convtui, so the tests spell the expected text out."""

import hashlib
import json
from importlib import resources

import pytest

from convtui.core.ccw.template import (
    MODES,
    NO_SYNTAX_ERRORS,
    PASSED_ALL_TEST_RUNS,
    IncompleteError,
    NoTextError,
    Request,
    extract_fields,
    fence_for_simulator,
    generation_defaults,
    missing_field,
    parse_code,
    predict,
    render_prompt,
    signature,
    simulated_user_feedback,
    templates_hash,
)
from convtui.core.feedback import render as feedback

PART = "\n\n---\n\n"
REASONING = "Reasoning: Let's think step by step in order to"
REFINE_CF = (
    "You are given `input`, `previous_code`, `compilation_feedback` due to an error in previous"
    " code.\nYour task is to correct the error and provide the new `generated_code`."
)
GUIDE_REFINE_CF = (
    "Follow the following format.\n\n"
    "Input: ${input}\n\n"
    "Previous Code: previously-generated python code that errored\n\n"
    "Compilation Feedback: error message from previously-generated python code\n\n"
    "Reasoning: Let's think step by step in order to ${produce the generated_code}. We ...\n\n"
    "Code: python code that satisfies user requirements"
)

# sha256 of the four strings of CCW:convcodeworld/user_feedback_examples.py@83bdc84.
REFERENCE_EXAMPLES = {
    "EXPERT_FEEDBACK_EXAMPLE": "73635a17ef9ad1bfb856d0ba06acb1e282990ffc39fc7f5ab687445cd4d8f444",
    "NOVICE_FEEDBACK_EXAMPLE": "40cc07523d6f5a75a90ff75b409cc5d6f871815f4e45dcf8008ee4a9802ad33b",
    "EXECUTION_EXPERT_FEEDBACK_EXAMPLE": (
        "f6ffde8d776173af6a0b64ebac43bd3b8318f55a8b55f2be4378cc3cfc733aea"
    ),
    "EXECUTION_NOVICE_FEEDBACK_EXAMPLE": (
        "7d16816ecbf674530bd9ca340a9766b8cb149a09c332dffead5278140da0fb6e"
    ),
}


def _data(name: str) -> dict:
    folder = resources.files("convtui.core").joinpath("prompts", "convcodeworld")
    return json.loads(folder.joinpath(name).read_text("utf-8"))


# --- the data files -----------------------------------------------------------------------------


def test_data_files_ship_with_the_package_and_name_their_source() -> None:
    for name in ("signatures.json", "dspy_template.json", "feedback_examples.json"):
        assert "source" in _data(name)
    assert "83bdc84" in _data("signatures.json")["source"]
    assert "83bdc84" in _data("feedback_examples.json")["source"]
    assert "v2.4.12" in _data("dspy_template.json")["source"]
    assert len(templates_hash()) == 12


def test_one_shot_examples_are_the_reference_strings_byte_for_byte() -> None:
    examples = _data("feedback_examples.json")["examples"]
    assert set(examples) == set(REFERENCE_EXAMPLES)
    for name, digest in REFERENCE_EXAMPLES.items():
        text = "\n".join(examples[name]["text"])
        assert hashlib.sha256(text.encode()).hexdigest() == digest, name


def test_fixed_feedback_texts_agree_with_the_feedback_module() -> None:
    assert NO_SYNTAX_ERRORS == feedback.NO_SYNTAX_ERRORS == "No syntax errors"
    assert PASSED_ALL_TEST_RUNS == feedback.PASSED_ALL_TEST_RUNS == "Passed all test runs"


def test_generation_settings_are_ccws() -> None:
    assert generation_defaults() == {
        "max_tokens": 2048,
        "stop": ["\n\n---\n\n"],
        "temperature": 0.0,
    }


# --- signatures ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "names"),
    [
        ("generate", ["input", "rationale", "generated_code"]),
        (
            "refine_from_compilation_feedback",
            ["input", "previous_code", "compilation_feedback", "rationale", "generated_code"],
        ),
        (
            "refine_from_execution_user_feedback",
            [
                "input",
                "previous_code",
                "execution_feedback",
                "user_feedback",
                "rationale",
                "generated_code",
            ],
        ),
        (
            "execution_simulate_novice_feedback",
            [
                "input",
                "previous_code",
                "compilation_feedback",
                "execution_feedback",
                "rationale",
                "user_feedback",
            ],
        ),
    ],
)
def test_fields_are_input_then_mode_inputs_then_rationale_and_output(mode, names) -> None:
    assert [f.name for f in signature(mode).fields] == names


def test_instructions_per_mode() -> None:
    """CCW:convcodeworld/pot.py:350-405, including its quirks: `output` (not `generated_code`) in
    'generate', the 'answer' instructions for refine_from_execution_feedback, and a double space."""
    assert signature("generate").instructions == (
        "You will be given `input` and you will respond with `output`.\n"
        "Generating executable python code that satisfies user requirements specification."
    )
    assert signature("refine_from_compilation_feedback").instructions == REFINE_CF
    assert signature("refine_from_execution_feedback").instructions == (
        "Return the final code `input`, `previous_code`, `execution_feedback` in markdown format."
    )
    assert signature("simulate_novice_feedback").instructions == (
        "You are given `input`, `previous_code`, `compilation_feedback` due to an error in"
        " previous code.\n"
        "Your task is to provide the simulated `user_feedback` that  to simulate user feedback"
        " that specifies the problem in the `previous_code`.\n"
        "- Do not generate updated code.\n"
        "- Note that the `previous_code` is generated by an LLM, not by the user that you are"
        " simulating.\n"
        "- Ensure that the `user_feedback` only includes information derived from"
        " `compilation_feedback`, without any additional details."
    )
    assert signature("execution_simulate_novice_feedback").instructions.endswith(
        "derived from `compilation_feedback`, `execution_feedback`, without any additional details."
    )
    assert signature("execution_simulate_user_feedback").instructions.startswith(
        "You are given `input`, `ground_truth_code`, `previous_code`, `execution_feedback` to"
        " simulate user feedback that compares the `previous_code` and the `ground_truth_code`.\n"
    )
    assert len(MODES) == 9


# --- rendering ----------------------------------------------------------------------------------


def test_single_line_query_of_a_three_field_signature_keeps_single_newlines() -> None:
    assert render_prompt("generate", {"input": "one line"}) == (
        "You will be given `input` and you will respond with `output`.\n"
        "Generating executable python code that satisfies user requirements specification."
        + PART
        + "Follow the following format.\n\n"
        "Input: ${input}\n"
        "Reasoning: Let's think step by step in order to ${produce the generated_code}. We ...\n"
        "Code: python code that satisfies user requirements"
        + PART
        + "Input: one line\n"
        + REASONING
    )


def test_multi_line_query_of_a_three_field_signature_switches_to_blank_lines() -> None:
    prompt = render_prompt("generate", {"input": "first\nsecond"})
    assert prompt.endswith(PART + "Input:\nfirst\nsecond\n\n" + REASONING)


def test_multi_line_values_go_below_their_label_verbatim() -> None:
    values = {
        "input": "Line one\n  indented   two",
        "previous_code": "def f(:\n    pass",
        "compilation_feedback": "Traceback\nSyntaxError\n",
    }
    assert render_prompt("refine_from_compilation_feedback", values) == (
        REFINE_CF + PART + GUIDE_REFINE_CF + PART + "Input:\nLine one\n  indented   two\n\n"
        "Previous Code:\ndef f(:\n    pass\n\n"
        # The value's own final newline stays: three newlines before the next label.
        "Compilation Feedback:\nTraceback\nSyntaxError\n\n\n" + REASONING
    )


def test_more_than_three_fields_use_blank_lines_even_for_single_line_values() -> None:
    values = {"input": "Do it.", "previous_code": "x = (", "compilation_feedback": "CF"}
    assert render_prompt("refine_from_compilation_feedback", values).endswith(
        PART + "Input: Do it.\n\nPrevious Code: x = (\n\nCompilation Feedback: CF\n\n" + REASONING
    )


def test_a_none_field_before_the_output_is_left_open_and_ends_the_prompt() -> None:
    """The novice's silence: the code model is asked to write the user feedback itself."""
    values = {"input": "Task text\nline2", "previous_code": "code\nx", "user_feedback": None}
    assert render_prompt("refine_from_user_feedback", values).endswith(
        PART + "Input:\nTask text\nline2\n\nPrevious Code:\ncode\nx\n\nUser Feedback:"
    )


def test_an_empty_last_input_is_left_open_and_ends_the_prompt() -> None:
    values = {"input": "Task text\nline2", "previous_code": "code\nx", "execution_feedback": ""}
    assert render_prompt("refine_from_execution_feedback", values).endswith(
        "\n\nPrevious Code:\ncode\nx\n\nExecution Feedback:"
    )


def test_an_empty_field_inside_the_query_keeps_its_trailing_space() -> None:
    values = {"input": "T", "previous_code": "c", "user_feedback": "", "rationale": ""}
    assert render_prompt("refine_from_user_feedback", values).endswith(
        "Input: T\n\nPrevious Code: c\n\nUser Feedback: \n\n" + REASONING
    )


def test_the_simulator_guidelines_carry_the_one_shot_example() -> None:
    example = "\n".join(
        _data("feedback_examples.json")["examples"]["EXPERT_FEEDBACK_EXAMPLE"]["text"]
    )
    values = {
        "input": "Do it.",
        "ground_truth_code": fence_for_simulator("y"),
        "previous_code": fence_for_simulator("x"),
    }
    guidelines = (
        "Follow the following format.\n\n"
        "Input: ${input}\n\n"
        "Ground Truth Code: Ground truth python code to simulate user intention\n\n"
        "Previous Code: previously-generated python code that errored\n\n"
        "Reasoning: Let's think step by step in order to ${produce the user_feedback}. We ...\n\n"
        # A description with a newline goes below its label; the part is stripped, which
        # drops the example's final newline.
        "User Feedback:\n(Simulated) User feedback from previously-generated python code\n---\n\n"
        + example.rstrip("\n")
    )
    assert render_prompt("simulate_user_feedback", values) == (
        signature("simulate_user_feedback").instructions
        + PART
        + guidelines
        + PART
        + "Input: Do it.\n\nGround Truth Code:\n```\ny\n```\n\nPrevious Code:\n```\nx\n```\n\n"
        + REASONING
    )


# --- parsing ------------------------------------------------------------------------------------


def test_a_reply_fills_the_rationale_then_the_output() -> None:
    values = {"input": "T", "previous_code": "c", "compilation_feedback": "CF"}
    out = extract_fields(
        "refine_from_compilation_feedback",
        values,
        " produce the generated_code. We fix it.\n\nCode: ```python\nx = 1\n```",
    )
    assert out["rationale"] == "produce the generated_code. We fix it."
    assert out["generated_code"] == "```python\nx = 1\n```"
    assert missing_field("refine_from_compilation_feedback", out) is None


def test_dashes_are_not_stripped_from_fields() -> None:
    """dsp.settings.release is 0 in DSPy 2.4.12, so only whitespace is stripped."""
    values = {"input": "T", "previous_code": "c", "compilation_feedback": "CF"}
    out = extract_fields("refine_from_compilation_feedback", values, " r ---\nCode: c\n---")
    assert (out["rationale"], out["generated_code"]) == ("r ---", "c\n---")


def test_with_user_feedback_none_the_reply_starts_in_the_user_feedback_field() -> None:
    values = {"input": "T", "previous_code": "c", "user_feedback": None}
    well_formed = (
        "I think\n\nReasoning: Let's think step by step in order to produce it.\n\nCode: A"
    )
    out = extract_fields("refine_from_user_feedback", values, well_formed)
    assert (out["user_feedback"], out["rationale"], out["generated_code"]) == (
        "I think",
        "produce it.",
        "A",
    )
    out = extract_fields("refine_from_user_feedback", values, "reply one")
    assert (out["user_feedback"], out["rationale"]) == ("reply one", None)
    assert missing_field("refine_from_user_feedback", out) == "rationale"


def _drive(mode, inputs, replies):
    calls = predict(mode, inputs)
    requests = [next(calls)]
    try:
        for reply in replies:
            requests.append(calls.send(reply))
    except StopIteration as done:
        return requests, done.value
    raise AssertionError("predict asked for more replies than scripted")


def test_a_reply_without_the_output_field_gets_a_follow_up_request() -> None:
    inputs = {"input": "Do it.", "previous_code": "x = (", "compilation_feedback": "CF"}
    requests, output = _drive(
        "refine_from_compilation_feedback",
        inputs,
        ["  first  line\n\n  second\tline  ", "```python\nx = 1\n```"],
    )
    assert output == "```python\nx = 1\n```"
    assert [(r.max_tokens, r.follow_up) for r in requests] == [(2048, 0), (1024, 1)]
    # The rationale is shown with its words joined by single spaces (it has no format=str).
    assert requests[1].prompt.endswith(
        PART + "Input: Do it.\n\nPrevious Code: x = (\n\nCompilation Feedback: CF\n\n"
        "Reasoning: Let's think step by step in order to first line second line\n\nCode:"
    )


def test_user_feedback_none_costs_two_requests_for_a_plain_reply() -> None:
    inputs = {"input": "Task text\nline2", "previous_code": "code\nx", "user_feedback": None}
    requests, output = _drive("refine_from_user_feedback", inputs, ["reply one", "reply two"])
    assert output == "reply two"
    assert requests[1].prompt.endswith(
        "Previous Code:\ncode\nx\n\nUser Feedback: reply one\n\n" + REASONING
    )


def test_three_empty_replies_give_an_empty_output_or_fail() -> None:
    inputs = {"input": "T\nx", "previous_code": "c\nx", "compilation_feedback": "CF\n"}
    requests, output = _drive("refine_from_compilation_feedback", inputs, ["", "", ""])
    assert output == ""
    assert [r.max_tokens for r in requests] == [2048, 1024, 512]
    assert len({r.prompt for r in requests}) == 1
    inputs = {"input": "T\nx", "previous_code": "c\nx", "user_feedback": None}
    calls = predict("refine_from_user_feedback", inputs)
    assert isinstance(next(calls), Request)
    calls.send("")
    third = calls.send("")
    assert third.prompt.endswith("User Feedback: \n\n" + REASONING)
    with pytest.raises(IncompleteError):
        calls.send("")


def test_a_reply_without_text_fails_as_dspys_attribute_error() -> None:
    calls = predict("refine_from_compilation_feedback", {"input": "T", "compilation_feedback": "x"})
    next(calls)
    with pytest.raises(NoTextError):
        calls.send(None)


# --- post-processing ----------------------------------------------------------------------------


def test_parse_code_takes_the_first_python_fence() -> None:
    assert parse_code("```python\ndef f():\n    return 1\n```") == "def f():\n    return 1"
    assert parse_code("no fence at all") == "no fence at all"
    # The cut at the first two blank lines (CCW:convcodeworld/pot.py:412).
    assert parse_code("```python\nimport os\n\n\ndef f():\n    pass\n```") == "python\nimport os"


def test_simulated_feedback_cuts() -> None:
    out = "Wrong value.\n```python\nreturn 2\n```\nMore.\n---\nignored"
    assert simulated_user_feedback(out, "expert") == "Wrong value."
    novice = simulated_user_feedback(out, "novice")
    assert novice == "Wrong value.\n```python\nreturn 2\n```\nMore.\n"
    assert simulated_user_feedback("I got an error.\n\n\nThat was all.", "novice") == (
        "I got an error."
    )
