"""What the words of a feedback are (core/studies/feedback_words.py, core/studies/giveaway.py),
against values worked out by hand on two states, a person and two simulators."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from convtui.core.studies.feedback_words import (
    FeedbackText,
    StateFacts,
    candidate_names,
    describe,
    line_numbers,
    names,
    names_error,
    words_report,
)
from convtui.core.studies.giveaway import code_tokens, feedback_code, giveaway

CANDIDATE_1 = (
    "def task_func(df, column):\n    total = df[column].sum()\n    return totl / len(df)\n"
)
REFERENCE_1 = "def task_func(df, column):\n    return df[column].mean()\n"
CANDIDATE_2 = "def task_func(x):\n    return x +\n"
REFERENCE_2 = "def task_func(x):\n    return x + 1\n"

STATES = {
    "s1": StateFacts(
        "s1",
        failing_tests=("TestCases.test_mean", "TestCases.test_empty"),
        errors=("NameError",),
        candidate=CANDIDATE_1,
        reference=REFERENCE_1,
        entry_point="task_func",
    ),
    "s2": StateFacts(
        "s2",
        errors=("SyntaxError",),
        candidate=CANDIDATE_2,
        reference=REFERENCE_2,
        entry_point="task_func",
    ),
}
FEEDBACK = [
    FeedbackText(
        "s1",
        "person",
        "In line 3 you wrote totl instead of total, test_mean fails with a name error.",
    ),
    FeedbackText(
        "s1",
        "sim:expert",
        "The bug is on line 3: `totl` is undefined. Use:\n```python\nreturn df[column].mean()\n```",
    ),
    FeedbackText("s1", "sim:novice", "It does not work, please try again."),
    FeedbackText("s2", "person", "Syntax error on line 2, finish the expression: `x + 1`."),
    FeedbackText("s2", "sim:expert", "Line 2 is incomplete."),
]
REPORT = words_report(FEEDBACK, STATES)


def text(state: str, source: str):
    (found,) = [w for w in REPORT.texts if (w.state_id, w.source) == (state, source)]
    return found


def test_the_persons_words_on_the_first_state():
    """15 words; names test_mean (by its last dotted part) and NameError ("name error");
    no code; names the candidate's ``total`` and ``totl`` (of df, column, total, totl:
    task_func is the entry point, sum and len builtins) and line 3."""
    w = text("s1", "person")
    assert w.words == 15
    assert w.named_tests == ("TestCases.test_mean",)
    assert w.named_errors == ("NameError",)
    assert (w.has_code, w.giveaway, w.giveaway_beyond_candidate) == (False, 0.0, 0.0)
    assert w.identifiers == ("total", "totl")
    assert w.lines == (3,)


def test_the_expert_gives_away_the_reference():
    """The reference's 17 tokens: def task_func ( df , column ) : return df [ column ] .
    mean ( ). The code (the block and `totl`) holds return df [ column ] . mean ( ): 9 of
    17. Taking out the candidate's tokens leaves only ``mean``, which it gives: 1."""
    w = text("s1", "sim:expert")
    assert sum(code_tokens(REFERENCE_1).values()) == 17
    assert w.has_code
    assert w.giveaway == pytest.approx(9 / 17)
    assert w.giveaway_beyond_candidate == 1.0
    assert (w.named_tests, w.named_errors) == ((), ())
    assert w.identifiers == ("df", "column", "totl")
    assert w.lines == (3,)


def test_the_second_state_names_the_syntax_error_and_one_token_of_three_is_new():
    """`x + 1` holds 3 of the reference's 10 tokens; beyond the candidate only ``1`` is
    left, and given. ``x`` is one character: not an identifier that points."""
    w = text("s2", "person")
    assert w.named_errors == ("SyntaxError",)
    assert w.giveaway == pytest.approx(3 / 10)
    assert w.giveaway_beyond_candidate == 1.0
    assert (w.identifiers, w.lines) == ((), (2,))


def test_person_and_simulators_point_at_the_same_problem_lexically():
    """s1 expert: the identifier totl and line 3 (the person names test_mean, the expert
    no test); s2 expert: line 2; s1 novice: nothing."""
    pairs = {(p.state_id, p.other): p for p in REPORT.pairs}
    assert set(pairs) == {("s1", "sim:expert"), ("s1", "sim:novice"), ("s2", "sim:expert")}
    s1 = pairs[("s1", "sim:expert")]
    assert (s1.tests, s1.identifiers, s1.lines, s1.matched) == ((), ("totl",), (3,), True)
    s2 = pairs[("s2", "sim:expert")]
    assert (s2.tests, s2.identifiers, s2.lines, s2.matched) == ((), (), (2,), True)
    novice = pairs[("s1", "sim:novice")]
    assert (novice.tests, novice.identifiers, novice.lines, novice.matched) == ((), (), (), False)
    expert, lone = REPORT.pair_totals
    assert expert.other == "sim:expert"
    assert [(r.count, r.of) for r in (expert.same_test, expert.same_identifier)] == [(0, 2), (1, 2)]
    assert [(r.count, r.of) for r in (expert.same_line, expert.same_problem)] == [(2, 2), (2, 2)]
    assert expert.same_problem.rate == 1.0
    assert (lone.other, lone.same_problem.count, lone.same_problem.of) == ("sim:novice", 0, 1)


def test_per_source_means_and_counts():
    """person: naming a test 1 of 1 (only s1 has failing tests), the error 2 of 2, code 1
    of 2, giveaway (0 + 3/10)/2 and beyond (0 + 1)/2. expert: 0 of 1, 0 of 2, 1 of 2,
    (9/17 + 0)/2, (1 + 0)/2. novice: one text of 7 words, nothing named."""
    assert [s.source for s in REPORT.sources] == ["person", "sim:expert", "sim:novice"]
    person, expert, novice = REPORT.sources
    assert person.texts == 2
    assert person.mean_words == (15 + 11) / 2
    assert [(r.count, r.of) for r in (person.names_test, person.names_error)] == [(1, 1), (2, 2)]
    assert (person.with_code.count, person.with_code.of) == (1, 2)
    assert person.mean_giveaway == pytest.approx(0.15)
    assert person.mean_giveaway_beyond_candidate == 0.5
    assert [(r.count, r.of) for r in (expert.names_test, expert.names_error)] == [(0, 1), (0, 2)]
    assert expert.mean_giveaway == pytest.approx(9 / 34)
    assert expert.mean_giveaway_beyond_candidate == 0.5
    assert (novice.texts, novice.mean_words, novice.with_code.rate) == (1, 7, 0.0)
    assert novice.mean_characters == len("It does not work, please try again.")


def test_a_source_without_texts_is_absent_and_a_rate_without_cases_is_none():
    report = words_report([FEEDBACK[0]], STATES)
    assert [s.source for s in report.sources] == ["person"]
    assert report.pairs == () and report.pair_totals == ()
    alone = words_report([FEEDBACK[3]], STATES).sources[0]
    assert (alone.names_test.count, alone.names_test.of, alone.names_test.rate) == (0, 0, None)
    with pytest.raises(ValueError, match="two texts"):
        words_report([FEEDBACK[0], FEEDBACK[0]], STATES)


def test_length_counts_words_and_characters_without_surrounding_space():
    w = describe(FeedbackText("s2", "person", "  ok then \n"), STATES["s2"])
    assert (w.words, w.characters) == (2, 7)


def test_naming_a_test_or_an_error():
    assert names("the Test Mean case fails", "TestCases.test_mean")
    assert not names("the test means nothing", "test_mean")
    assert names("see TestCases.test_empty", "TestCases.test_empty")
    assert names_error("a key error at the end", "KeyError")
    assert names_error("raises KeyError: 'a'", "builtins.KeyError")
    assert not names_error("the keys are wrong", "KeyError")
    assert names_error("division by zero here", "division by zero")


def test_line_numbers_after_line_or_lines():
    assert line_numbers('File "<string>", line 4, in f') == (4,)
    assert line_numbers("lines 3-5 and Line #7, line number 12") == (3, 5, 7, 12)
    assert line_numbers("the pipeline 3 stage, the lines") == ()


def test_identifiers_that_can_point_leave_out_keywords_builtins_and_one_letter_names():
    assert candidate_names(CANDIDATE_1, "task_func") == ("df", "column", "total", "totl")
    assert candidate_names(CANDIDATE_1) == ("task_func", "df", "column", "total", "totl")
    pdf = describe(FeedbackText("s1", "x", "write the pdf out"), STATES["s1"])
    assert pdf.identifiers == ()


def test_code_in_a_text_fenced_unclosed_and_inline():
    found = feedback_code("use `a[0]` here\n~~~py\nx = 1\n~~~\nthen\n```\nif y:\n  z(")
    assert found == ("x = 1", "if y:\n  z(", "a[0]")
    assert feedback_code("no code at all, `` nor an empty span") == ()


def test_tokens_of_fragments_and_of_bad_indentation():
    assert code_tokens("f(x") == Counter({"f": 1, "(": 1, "x": 1})
    broken = "if a:\n        b = 1\n    c = 2  # note\n"  # unindent matches no outer level
    expected = Counter({"if": 1, "a": 1, ":": 1, "b": 1, "=": 2, "1": 1, "c": 1, "2": 1})
    assert code_tokens(broken) == expected


def test_no_code_or_nothing_to_give_gives_zero():
    assert giveaway((), REFERENCE_1) == 0.0
    assert giveaway(("x",), "") == 0.0
    assert giveaway(("return x",), "return x", known="return x") == 0.0
    assert giveaway((REFERENCE_1,), REFERENCE_1) == 1.0


def test_the_report_is_json():
    data = json.loads(json.dumps(REPORT.to_json()))
    assert data["sources"][0]["names_error"] == {"count": 2, "of": 2, "rate": 1.0}
    assert data["pairs"][0]["matched"] is True
    assert len(data["texts"]) == 5
