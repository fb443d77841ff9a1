"""What the words of a feedback are (issue 32, point 3), without a judge model: per text, its
length, whether it names a failing test or the error, how much of the reference solution its
code gives away (core/studies/giveaway.py); per person/other pair on the same state, whether
they point at the same problem; and the means and counts per source.

Everything here is **lexical**: a name or number appearing in the text. "Pointing at the same
problem" means both texts name the same failing test, the same identifier of the candidate
code, or the same line number. It is overlap of words, not agreement of meaning: two texts can
name the same test for opposite reasons, or describe one bug in different words and match on
nothing. The control (no feedback) has no words, so it has no row here."""

from __future__ import annotations

import builtins
import io
import keyword
import math
import re
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from convtui.core.studies.fidelity import PERSON
from convtui.core.studies.giveaway import feedback_code, giveaway

_BUILTINS = frozenset(dir(builtins))
_LINE = re.compile(r"\blines?\s*(?:#|no\.?|number)?\s*(\d+)(?:\s*(?:-|–|to)\s*(\d+))?", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class FeedbackText:
    """The words ``source`` (``"person"`` or a simulator's identity) gave on ``state_id``."""

    state_id: str
    source: str
    text: str


@dataclass(frozen=True)
class StateFacts:
    """What a state showed: the names of its failing tests, its errors (exception type
    names such as ``KeyError``, or messages), the candidate code the feedback was about,
    the task's reference solution, and its entry point (a name both sides see in the task,
    so never counted as pointing at a problem)."""

    state_id: str
    failing_tests: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    candidate: str = ""
    reference: str = ""
    entry_point: str = ""


@dataclass(frozen=True)
class Words:
    """One text, read against its state.

    - ``words``: whitespace-separated words; ``characters``: characters of the text with
      surrounding whitespace removed;
    - ``named_tests``: the state's failing tests the text names (:func:`names`);
      ``named_errors``: the state's errors it names (:func:`names_error`);
    - ``has_code``: whether it holds code (fenced or inline, :func:`feedback_code`);
      ``giveaway``: the share of the reference's tokens in that code, 0 with none;
      ``giveaway_beyond_candidate``: the same, leaving out tokens the candidate code holds;
    - ``identifiers``: the candidate code's identifiers it names (:func:`candidate_names`);
      ``lines``: the line numbers it names ("line 12", "lines 3-5": 3 and 5)."""

    state_id: str
    source: str
    words: int
    characters: int
    named_tests: tuple[str, ...]
    named_errors: tuple[str, ...]
    has_code: bool
    giveaway: float
    giveaway_beyond_candidate: float
    identifiers: tuple[str, ...]
    lines: tuple[int, ...]


def describe(feedback: FeedbackText, state: StateFacts) -> Words:
    """The :class:`Words` of ``feedback`` on ``state``."""
    text = feedback.text
    code = feedback_code(text)
    return Words(
        state_id=feedback.state_id,
        source=feedback.source,
        words=len(text.split()),
        characters=len(text.strip()),
        named_tests=tuple(t for t in state.failing_tests if names(text, t)),
        named_errors=tuple(e for e in state.errors if names_error(text, e)),
        has_code=bool(code),
        giveaway=giveaway(code, state.reference),
        giveaway_beyond_candidate=giveaway(code, state.reference, known=state.candidate),
        identifiers=tuple(
            n for n in candidate_names(state.candidate, state.entry_point) if _says(text, n)
        ),
        lines=line_numbers(text),
    )


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("_", " ").split())


def names(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (a test such as ``test_empty`` or
    ``TestCases.test_empty``): the name, or its last dotted part, as whole words, ignoring
    case and reading ``_`` as a space ("test empty" names ``test_empty``)."""
    wanted = {_normal(name), _normal(name.rsplit(".", 1)[-1])} - {""}
    said = _normal(text)
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", said) for w in wanted)


def names_error(text: str, error: str) -> bool:
    """Whether ``text`` names ``error``: as :func:`names` does, and an exception type
    also spelt as words ("key error" names ``KeyError``)."""
    last = error.rsplit(".", 1)[-1]
    return names(text, error) or (last.isidentifier() and names(text, _CAMEL.sub(" ", last)))


def candidate_names(code: str, entry_point: str = "") -> tuple[str, ...]:
    """The identifiers of ``code`` that can point at something, in first-seen order:
    Python names that are not keywords, soft keywords or builtins, longer than one
    character, and not ``entry_point``. Code that does not tokenize gives those read
    before the error."""
    found: dict[str, None] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            name = token.string
            if token.type == tokenize.NAME and _can_point(name, entry_point):
                found[name] = None
    except (tokenize.TokenError, SyntaxError):
        pass
    return tuple(found)


def _can_point(name: str, entry_point: str) -> bool:
    reserved = keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _BUILTINS
    return len(name) > 1 and name != entry_point and not reserved


def _says(text: str, name: str) -> bool:
    """``name`` in ``text`` as a whole word, case kept (``df`` in ``df.apply``, not in
    ``pdf``)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def line_numbers(text: str) -> tuple[int, ...]:
    """The numbers written after "line" or "lines" (optionally "#", "no.", "number"), a
    range's two ends included, sorted and once each; ignoring case."""
    found = {int(n) for m in _LINE.finditer(text) for n in m.groups() if n is not None}
    return tuple(sorted(found))


@dataclass(frozen=True)
class SameProblem:
    """Whether the person's words and ``other``'s on ``state_id`` point at the same
    problem, lexically: the failing tests both name, the candidate's identifiers both name,
    the line numbers both name; ``matched`` when any of the three is non-empty."""

    state_id: str
    other: str
    tests: tuple[str, ...]
    identifiers: tuple[str, ...]
    lines: tuple[int, ...]
    matched: bool


def same_problem(person: Words, other: Words) -> SameProblem:
    """What ``person`` and ``other`` (the same state) both point at."""
    if person.state_id != other.state_id:
        raise ValueError(f"{person.state_id} and {other.state_id} are different states")
    tests = tuple(t for t in person.named_tests if t in other.named_tests)
    identifiers = tuple(n for n in person.identifiers if n in other.identifiers)
    lines = tuple(n for n in person.lines if n in other.lines)
    matched = bool(tests or identifiers or lines)
    return SameProblem(person.state_id, other.source, tests, identifiers, lines, matched)


@dataclass(frozen=True)
class Rate:
    """``count`` of ``of`` texts (or pairs); ``rate`` = count / of, None when ``of`` is 0."""

    count: int
    of: int
    rate: float | None


def _rate(count: int, of: int) -> Rate:
    return Rate(count, of, count / of if of else None)


@dataclass(frozen=True)
class SourceWords:
    """The texts of one source: how many, their mean length in words and characters,
    how many name a failing test (of the texts whose state had one), name the error (of
    those whose state had one), hold code (of all); the mean giveaway over all its texts
    (0 for a text without code), plain and beyond the candidate."""

    source: str
    texts: int
    mean_words: float
    mean_characters: float
    names_test: Rate
    names_error: Rate
    with_code: Rate
    mean_giveaway: float
    mean_giveaway_beyond_candidate: float


@dataclass(frozen=True)
class PairWords:
    """The person against ``other`` over the states where both gave words: how many pairs
    point at the same problem by each route and by any (:class:`SameProblem`)."""

    other: str
    same_test: Rate
    same_identifier: Rate
    same_line: Rate
    same_problem: Rate


@dataclass(frozen=True)
class WordsReport:
    """Per-text readings, per-state pairs, and the per-source and per-pair aggregates."""

    texts: tuple[Words, ...]
    pairs: tuple[SameProblem, ...]
    sources: tuple[SourceWords, ...]
    pair_totals: tuple[PairWords, ...]

    def to_json(self) -> dict[str, object]:
        """Plain dicts, lists, strings and numbers (``json.dumps`` takes it as it is)."""
        return asdict(self)


def words_report(feedback: Iterable[FeedbackText], states: Mapping[str, StateFacts]) -> WordsReport:
    """Read every text of ``feedback`` against its state in ``states`` (KeyError when it
    is missing); one text per (state, source), else ValueError. Sources in order: the
    person first, the rest sorted; a source with no text is absent."""
    texts: dict[tuple[str, str], Words] = {}
    for f in feedback:
        if (f.state_id, f.source) in texts:
            raise ValueError(f"two texts of {f.source} on state {f.state_id}")
        texts[(f.state_id, f.source)] = describe(f, states[f.state_id])
    present = {source for _, source in texts}
    order = [PERSON] * (PERSON in present) + sorted(present - {PERSON})
    pairs = tuple(
        same_problem(texts[(state, PERSON)], w)
        for (state, source), w in sorted(texts.items())
        if source != PERSON and (state, PERSON) in texts
    )
    return WordsReport(
        texts=tuple(texts.values()),
        pairs=pairs,
        sources=tuple(
            _source_words(s, [w for w in texts.values() if w.source == s], states) for s in order
        ),
        pair_totals=tuple(
            _pair_words(other, [p for p in pairs if p.other == other])
            for other in order
            if any(p.other == other for p in pairs)
        ),
    )


def _source_words(
    source: str, texts: Sequence[Words], states: Mapping[str, StateFacts]
) -> SourceWords:
    with_tests = [w for w in texts if states[w.state_id].failing_tests]
    with_errors = [w for w in texts if states[w.state_id].errors]
    n = len(texts)
    return SourceWords(
        source=source,
        texts=n,
        mean_words=math.fsum(w.words for w in texts) / n,
        mean_characters=math.fsum(w.characters for w in texts) / n,
        names_test=_rate(sum(bool(w.named_tests) for w in with_tests), len(with_tests)),
        names_error=_rate(sum(bool(w.named_errors) for w in with_errors), len(with_errors)),
        with_code=_rate(sum(w.has_code for w in texts), n),
        mean_giveaway=math.fsum(w.giveaway for w in texts) / n,
        mean_giveaway_beyond_candidate=math.fsum(w.giveaway_beyond_candidate for w in texts) / n,
    )


def _pair_words(other: str, pairs: Sequence[SameProblem]) -> PairWords:
    n = len(pairs)
    return PairWords(
        other=other,
        same_test=_rate(sum(bool(p.tests) for p in pairs), n),
        same_identifier=_rate(sum(bool(p.identifiers) for p in pairs), n),
        same_line=_rate(sum(bool(p.lines) for p in pairs), n),
        same_problem=_rate(sum(p.matched for p in pairs), n),
    )
