"""Compilation and execution feedback text (f_c and f_e), exact to ConvCodeWorld.

What each piece reproduces (docs/harness-notes.md#convcodeworld-feedback, which also names the
repositories behind the CCW/BCB short names; docs/design.md#parity-with-convcodeworld):

- :func:`compile_feedback`: ``compile_code`` and ``get_compilation_feedback``
  (CCW:``convcodeworld/pot.py:21-26``, ``:437-447``), its frame with a machine-independent path.
- :func:`failure_details`: the ``details`` dict BigCodeBench's ``untrusted_check`` builds
  (BCB-fork:``bigcodebench/eval/__init__.py:158-164``), from convtui's per-test outcomes,
  one entry per failing subtest as there.
- :func:`execution_feedback`: ``get_execution_feedback`` (CCW:``convcodeworld/pot.py:449-494``): the
  ``NAME\\ntraceback`` layout, ``Passed all test runs``, partial coverage.
- :func:`visible_test_names`: ``extract_methods_from_class(test)[:3]``
  (CCW:``convcodeworld/extract_methods.py``, CCW:``convcodeworld/pot.py:17``, ``:454-459``).
- :func:`trim_feedback` / :func:`trim_schedule`: the 8,000-character trimming rule and the
  shrinking schedule on model-call failures (CCW:``convcodeworld/pot.py:471-480``, ``:633-649``).
"""

import ast
import re
import traceback
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from convtui.core.settings.omega import PartialRule
from convtui.core.syntax import parse_python

__all__ = [
    "NO_SYNTAX_ERRORS",
    "NUM_VISIBLE_TESTS",
    "PASSED_ALL_TEST_RUNS",
    "TRIM_THRESHOLD",
    "CompileCompat",
    "CompileResult",
    "Coverage",
    "ExecResultLike",
    "IssueLike",
    "OutcomeLike",
    "TrimSpec",
    "bcb_subtest_key",
    "compile_feedback",
    "declared_test_names",
    "execution_feedback",
    "failure_details",
    "render_details",
    "trim_feedback",
    "trim_schedule",
    "visible_test_names",
    "without_candidate_source",
]

NO_SYNTAX_ERRORS = "No syntax errors"
PASSED_ALL_TEST_RUNS = "Passed all test runs"
# Characters, not tokens (CCW compares len(str)).
TRIM_THRESHOLD = 8000
NUM_VISIBLE_TESTS = 3

CompileCompat = Literal["convtui", "ccw"]
Coverage = Literal["full", "partial"]

_TRACEBACK_HEAD = "Traceback (most recent call last):\n"
# CCW's first frame: its compile_code (CCW:convcodeworld/pot.py:23), under Python 3.9, whose
# tracebacks put no carets under a frame's line. The reference printed the absolute path of its
# checkout, which differs between machines; the path from the repository root stands in for
# it, the rest of the frame is the reference's.
_CCW_FRAME = (
    '  File "convcodeworld/pot.py", line 23, in compile_code\n'
    "    compile(code, 'tmp.py', mode='exec')\n"
)

# Per-test statuses BCB files under `result.failures` (assertion failures); they come first.
_FAILURE_STATUSES = frozenset({"fail"})
# Per-test statuses BCB files under `result.errors`, plus tests that never ran, which only
# convtui's executor can report.
_ERROR_STATUSES = frozenset({"error", "timeout", "missing", "not_run"})
# Tests that ran and failed. When none did, the run failed as a whole: a module-level error
# leaves every test "not_run", which BCB reports as `details["ALL"] = str(exc)`.
_RAN_AND_FAILED = frozenset({"fail", "error", "timeout"})
# Overall statuses reported as ALL when no test ran and failed. Not "timeout": BCB loses its
# details on a timeout, and CCW then shows the empty string
# (docs/harness-notes.md#execution-feedback).
_MODULE_FAILURE_STATUSES = frozenset({"error", "crash", "env_error"})
# Only used when the executor left a traceback empty, so the block still says something.
_EMPTY_TRACEBACK_TEXT = {
    "timeout": "TimeoutException: Timed out!\n",
    "missing": "The test did not run.\n",
    "not_run": "The test did not run.\n",
}


class _Reported(Protocol):
    """What a test's outcome and each entry unittest filed for it both report."""

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def traceback(self) -> str: ...


class OutcomeLike(_Reported, Protocol):
    """One test's outcome, as ``convtui.core.execution.types.TestOutcome`` provides it.

    ``status`` is one of ``pass``, ``fail``, ``error``, ``timeout``, ``skipped``, ``missing``,
    ``not_run``. An outcome may also have ``issues`` (a sequence of :class:`IssueLike`): what
    unittest filed for a test whose subtests failed; one without them stands for itself.
    """


class IssueLike(_Reported, Protocol):
    """One entry unittest filed for a test, as ``convtui.core.execution.types.TestIssue`` provides
    it: a failing subtest (``test_x (length=5)``) or the test's own failure (``test_x``).
    ``status`` is ``fail``, ``error`` or ``timeout``."""


class ExecResultLike(Protocol):
    """An execution's outcome, as ``convtui.core.execution.types.ExecResult`` provides it.

    ``status`` is one of ``pass``, ``fail``, ``error``, ``timeout``, ``crash``, ``env_error``;
    ``detail`` is convtui's message for a module-level failure; ``error_message`` the
    exception's own text, ``str(exc)``, which is what BCB stores as ``ALL`` (empty when no
    exception ended the run, or for results recorded before it was kept); ``error_traceback``
    that exception's traceback, quoting the failing line (empty likewise, and for code that
    does not compile).
    """

    @property
    def status(self) -> str: ...

    @property
    def detail(self) -> str: ...

    @property
    def error_message(self) -> str: ...

    @property
    def error_traceback(self) -> str: ...

    @property
    def tests(self) -> Sequence[OutcomeLike]: ...


@dataclass(frozen=True)
class TrimSpec:
    """Parameters of CCW's trimming (``get_execution_feedback(trim, front_trim, rear_trim)``).

    ``TrimSpec()`` is CCW's rule as applied on every call: trim only at 8,000 characters or
    more. The retry schedule (:func:`trim_schedule`) forces trimming with smaller limits.
    """

    front: int = 2000
    rear: int = 4000
    force: bool = False


# --- compilation feedback ---------------------------------------------------------------------


@dataclass(frozen=True)
class CompileResult:
    """Compilation feedback: ``text`` is exactly what the model is shown."""

    ok: bool
    text: str


def compile_feedback(code: str, *, compat: CompileCompat = "convtui") -> CompileResult:
    """Compile ``code`` as CCW does: ``compile(code, 'tmp.py', 'exec')``.

    CCW compiles the parsed code *without* the import header; pass it that way for parity.
    The failure text is ``traceback.format_exc()``'s shape: the traceback head, then (``ccw``
    compat only) the reference's own frame, then the ``File "tmp.py"`` part with the
    error. Caret lines follow the running Python version, as they did for CCW.
    """
    try:
        # Warnings are silenced because a `-W error` interpreter would turn a SyntaxWarning
        # (e.g. an invalid escape) into a SyntaxError that CCW never reported.
        # dont_inherit keeps this module's compiler flags out of the candidate's compilation.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "tmp.py", "exec", dont_inherit=True)
    except Exception as exc:  # CCW catches everything: ValueError for null bytes, RecursionError
        # format_exception_only leaves out our own frame (the path that leaked in CCW) and any
        # exception the caller happened to be handling, so the text is byte-stable.
        tail = "".join(traceback.format_exception_only(type(exc), exc))
        frame = _CCW_FRAME if compat == "ccw" else ""
        return CompileResult(ok=False, text=_TRACEBACK_HEAD + frame + tail)
    return CompileResult(ok=True, text=NO_SYNTAX_ERRORS)


# --- execution feedback -----------------------------------------------------------------------


def failure_details(
    result: ExecResultLike, *, sort_by_name: bool = True, bcb_messages: bool = False
) -> dict[str, str]:
    """The ``details`` dict BigCodeBench would have produced for ``result``.

    Assertion failures first, then errors (including per-test timeouts and tests that never
    ran), each group in run order; unittest's ``TestLoader`` runs methods sorted by name
    (``test_case_10`` before ``test_case_2``). Snippet suites (CodeIF) run in list order: pass
    ``sort_by_name=False``. Tests that never ran are listed among the errors only when some
    test ran and failed; otherwise a failed run is module-level and the dict is
    ``{"ALL": detail}`` (empty for a timeout, as BCB's was), or, where the code raised while
    loading, ``{"ALL": traceback}`` (the exception's type and the line it came from). A test
    whose subtests failed gives one entry per failing subtest, then one for its own failure
    if it had one, each in its group (see :func:`_issues`).

    ``bcb_messages``: the entries read as BigCodeBench's: the ALL entry is the exception's own
    text where there is one (``invalid syntax (__test__.py, line 4)`` or ``name 'x' is not
    defined``, never a traceback), and a subtest's entry is named by BigCodeBench's key
    (:func:`bcb_subtest_key`, ``test_x (length=5)``, mangled where the description holds a
    dot); without it, the subtest's full name. Tracebacks are normalised to end with a
    newline, as unittest's do.
    """
    return {key: text for key, (_, text) in _entries(result, sort_by_name, bcb_messages).items()}


def bcb_subtest_key(name: str) -> str:
    """BigCodeBench's key for the subtest that unittest names ``__test__.TestCases.`` +
    ``name``: ``details[test.id().split(".")[-1]]`` (bigcode-project/bigcodebench and
    ConvCodeWorld's fork sfc-gh-hhan/bigcodebench: bigcodebench/eval/__init__.py,
    ``unsafe_execute``). A ``_SubTest``'s id is its test's id, a space and its description, so
    the key is ``test_x (length=5)``, unless the description holds a dot: ``test_x
    (value=12.5)`` is keyed ``5)`` (the method name itself never holds one)."""
    return name.split(".")[-1]


def _entries(result: ExecResultLike, sort_by_name: bool, bcb: bool) -> dict[str, tuple[str, str]]:
    """:func:`failure_details` with each entry's test: key -> (test name, traceback text);
    ``bcb`` is its ``bcb_messages``."""
    tests = sorted(result.tests, key=lambda t: t.name) if sort_by_name else list(result.tests)
    details: dict[str, tuple[str, str]] = {}
    if any(test.status in _RAN_AND_FAILED for test in tests):
        for group in (_FAILURE_STATUSES, _ERROR_STATUSES):
            for test in tests:
                for name, status, traceback_text in _issues(test):
                    if status not in group:
                        continue
                    key = bcb_subtest_key(name) if bcb and name != test.name else name
                    # Plain assignment, as BCB's loop over failures + errors: a repeated key
                    # (two subtests alike, or mangled alike) keeps its first position and
                    # takes the last traceback.
                    details[key] = (test.name, _traceback_text(status, traceback_text))
    elif result.status in _MODULE_FAILURE_STATUSES or (result.status == "fail" and result.detail):
        # A "fail" with no failing test is convtui's own verdict (tampering detected); its
        # detail is the only thing worth showing.
        if bcb:
            text = result.error_message or result.detail
        else:
            # convtui's protocol: what a person would see running the code, the exception's
            # type and the line that raised it, not a bare "name 'x' is not defined".
            text = result.error_traceback or result.detail
        details["ALL"] = ("ALL", text)
    return details


def _issues(test: OutcomeLike) -> list[tuple[str, str, str]]:
    """(name, status, traceback) of what unittest filed for ``test``, in order.

    A test whose subtests failed carries them as ``issues`` (core/execution/types.py
    ``TestOutcome``): unittest's ``TestResult.addSubTest`` files each failing subtest under
    ``failures`` (an assertion) or ``errors`` (anything else) as the subtest runs, and files
    nothing for the test itself unless it also failed outside its subtests (CPython
    Lib/unittest/result.py and case.py). BigCodeBench's ``details`` loop over ``failures +
    errors`` therefore holds one entry per failing subtest, and none for the method."""
    issues: Sequence[IssueLike] = getattr(test, "issues", ())
    if issues:
        return [(issue.name, issue.status, issue.traceback) for issue in issues]
    return [(test.name, test.status, test.traceback)]


def _traceback_text(status: str, traceback_text: str) -> str:
    text = traceback_text or _EMPTY_TRACEBACK_TEXT.get(status, "")
    return text if text.endswith("\n") else text + "\n"


def render_details(details: Mapping[str, str]) -> str:
    """CCW's layout: ``"\\n".join(f"{NAME.upper()}\\n{traceback}\\n")`` over the entries."""
    return "\n".join(f"{name.upper()}\n{text}\n" for name, text in details.items())


def execution_feedback(
    result: ExecResultLike,
    *,
    coverage: Coverage,
    partial_rule: PartialRule = "ccw",
    test_source: str = "",
    trim: TrimSpec | None = None,
    visible: Collection[str] | None = None,
    sort_by_name: bool = True,
    source_lines: bool = True,
    bcb_messages: bool = False,
) -> str:
    """Execution feedback text for ``result``, as CCW's ``get_execution_feedback`` renders it.

    - overall ``pass``: ``Passed all test runs``;
    - ``full``: every entry of :func:`failure_details` (the empty string for a timeout in
      which no test ran and failed, CCW's quirk);
    - ``partial``: only entries whose name is visible (``visible`` when given, e.g. for
      snippet suites, else :func:`visible_test_names` of ``test_source`` under
      ``partial_rule``); nothing visible left gives ``Passed all test runs`` even though the
      code failed, CCW's quirk, and a module-level ``ALL`` entry is never visible. A failing
      subtest's entry is never visible with ``bcb_messages`` (its key is not a name, as in
      CCW), and visible with its test otherwise;
    - ``trim``: apply :func:`trim_feedback` with these parameters (``None``: no trimming, the
      text to store or show in full; ``TrimSpec()``: CCW's rule);
    - ``source_lines=False``: frames in the candidate's module show no source line, as in
      BigCodeBench's tracebacks (:func:`without_candidate_source`);
    - ``bcb_messages``: a module-level failure reads as BigCodeBench's ``str(exc)`` and a
      failing subtest is named by BigCodeBench's key (:func:`failure_details`).
    """
    if result.status == "pass":
        return PASSED_ALL_TEST_RUNS
    entries = _entries(result, sort_by_name, bcb_messages)
    if coverage == "partial":
        shown = (
            set(visible)
            if visible is not None
            else set(visible_test_names(test_source, partial_rule))
        )
        # CCW keeps an entry whose key is one of the visible names (``tc_id in
        # unit_test_names``, sfc-gh-hhan/convcodeworld: convcodeworld/pot.py,
        # get_execution_feedback): a list membership test, so a subtest's key ``test_x
        # (length=5)`` never matches, and the reference shows no failing subtest even of a
        # visible test. convtui's own protocol shows what failed inside a visible test: an
        # entry is visible when its test is.
        entries = {
            key: entry
            for key, entry in entries.items()
            if (key if bcb_messages else entry[0]) in shown
        }
        if not entries:
            return PASSED_ALL_TEST_RUNS
    elif coverage != "full":
        raise ValueError(f"unknown coverage: {coverage!r}")
    details = {key: text for key, (_, text) in entries.items()}
    if not source_lines:
        details = {name: without_candidate_source(text) for name, text in details.items()}
    text = render_details(details)
    if trim is not None:
        text = trim_feedback(text, front=trim.front, rear=trim.rear, force=trim.force)
    return text


# The frame header of code in the candidate's module (sandbox/runner.py MODULE_FILE).
_CANDIDATE_FRAME = re.compile(r'^  File "__test__\.py", line \d+, in ')


def without_candidate_source(text: str) -> str:
    """``text`` with the source (and caret) lines under the candidate module's frames left
    out. BigCodeBench runs the candidate from a module that has no file on disk, so its
    tracebacks name the line but cannot quote it; library frames keep their source lines.
    The executor's traceback quotes every line, which helps a person reading it."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if skipping and line.startswith("    "):
            continue
        skipping = bool(_CANDIDATE_FRAME.match(line))
        kept.append(line)
    return "".join(kept)


# --- partial coverage -------------------------------------------------------------------------


class _FunctionNames(ast.NodeVisitor):
    """CCW's ``MethodExtractor``: every ``FunctionDef`` name below the visited node, in
    source (pre-)order. ``async def`` names are skipped, as CCW's visitor has no
    ``visit_AsyncFunctionDef``, but functions nested inside them are still found."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.append(node.name)
        self.generic_visit(node)


def visible_test_names(test_source: str, rule: PartialRule = "ccw") -> tuple[str, ...]:
    """Names whose failures partial coverage shows (three at most).

    ``ccw``: the first three function names found under any class of the module, visiting
    classes in ``ast.walk`` (breadth-first) order; ``setUp``, ``tearDown``, helpers and nested
    functions count, and methods of a nested class count twice (once per enclosing class).
    ``first-tests``: the first three ``test*`` methods of ``TestCases``.
    Raises ``SyntaxError`` if ``test_source`` does not parse (neither would CCW's).
    """
    if rule == "first-tests":
        return declared_test_names(test_source)[:NUM_VISIBLE_TESTS]
    if rule != "ccw":
        raise ValueError(f"unknown partial rule: {rule!r}")
    collector = _FunctionNames()
    for node in ast.walk(_parse_quietly(test_source)):
        if isinstance(node, ast.ClassDef):
            collector.visit(node)
    return tuple(collector.names[:NUM_VISIBLE_TESTS])


def _parse_quietly(source: str) -> ast.Module:
    # Test modules are full of regexes like "\d" in plain strings; their escape warnings are
    # noise here, not news.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return parse_python(source)


def declared_test_names(test_source: str) -> tuple[str, ...]:
    """The ``test*`` methods defined in the body of the module-level class ``TestCases``, in
    source order (the last definition of the class wins, as at import time). Inherited tests
    are not seen; no BigCodeBench task has any."""
    classes = [
        node
        for node in _parse_quietly(test_source).body
        if isinstance(node, ast.ClassDef) and node.name == "TestCases"
    ]
    if not classes:
        return ()
    names: dict[str, None] = {}
    for node in classes[-1].body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            names.setdefault(node.name)
    return tuple(names)


# --- trimming ---------------------------------------------------------------------------------


def trim_feedback(text: str, front: int = 2000, rear: int = 4000, force: bool = False) -> str:
    """CCW's trimming of long execution feedback, slicing quirks included.

    Applies when ``len(text) >= 8000`` or ``force``: keep the first and last ``w`` lines
    (``w`` = 5 for 10+ lines, 1 for one line, else half), cut to ``front`` / ``rear``
    characters, joined by ``"\\n...\\n"``. As in CCW, ``rear == 0`` keeps the whole rear part
    (``s[-0:]`` is ``s``), an empty text becomes ``"\\n...\\n"`` and a single long line shows
    up twice.
    """
    if len(text) < TRIM_THRESHOLD and not force:
        return text
    lines = text.splitlines()
    if len(lines) >= 10:
        window = 5
    elif len(lines) == 1:
        window = 1
    else:
        window = len(lines) // 2
    head = "\n".join(lines[:window])[:front]
    tail = "\n".join(lines[-window:])[-rear:]
    return head + "\n...\n" + tail


def trim_schedule() -> Iterator[tuple[int, int]]:
    """The ``(front, rear)`` limits CCW tries, in order, each time a model call fails on the
    EF path: start at (2000, 4000), then take 1000 from the larger-front side or else from the
    rear, until either would go negative (CCW then aborts the task with an assertion)."""
    front, rear = 2000, 4000
    while front >= 0 and rear >= 0:
        yield front, rear
        if front > rear:
            front -= 1000
        else:
            rear -= 1000
