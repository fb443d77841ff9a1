"""Turn what a run reported into a verdict, by the rules of the executor contract
(docs/design.md#executor-contract).

The child's report is evidence, not the verdict: ``pass`` requires the final record, a clean
exit, every expected test (computed by the harness) passing, nothing unexpected, and every
canary failing."""

from __future__ import annotations

import json
import re
import signal
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from convtui.core.execution.testplan import TestPlan
from convtui.core.execution.types import (
    ExecResult,
    IssueStatus,
    RunStatus,
    TestIssue,
    TestOutcome,
    TestStatus,
)


@dataclass(frozen=True)
class RawRun:
    """What the zygote sends back for one run."""

    records: tuple[str, ...]
    exit_code: int | None
    signal: int | None
    timed_out: bool
    duration_s: float
    output: str
    output_bytes: int

    @classmethod
    def from_reply(cls, reply: dict) -> RawRun:
        return cls(
            tuple(reply["records"]),
            reply["exit_code"],
            reply["signal"],
            bool(reply["timed_out"]),
            float(reply["duration_s"]),
            reply["output"],
            int(reply["output_bytes"]),
        )

    @classmethod
    def merge(cls, parts: Sequence[RawRun]) -> RawRun:
        """The evidence of one run whose tests were split into shards run side by side.

        The completion record stands only if every shard completed; durations add up."""
        if len(parts) == 1:
            return parts[0]
        records: list[str] = []
        finished = 0
        for part in parts:
            for line in part.records:
                try:
                    is_done = json.loads(line).get("t") == "done"
                except (ValueError, AttributeError):
                    is_done = False
                if is_done:
                    finished += 1
                else:
                    records.append(line)
        if finished == len(parts):
            records.append(json.dumps({"t": "done"}))
        codes = [p.exit_code for p in parts]
        return cls(
            records=tuple(records),
            # Shards agree on the exit status of a complete run; any other wins.
            exit_code=None
            if None in codes
            else next((c for c in codes if c != codes[0]), codes[0]),
            signal=next((p.signal for p in parts if p.signal is not None), None),
            timed_out=any(p.timed_out for p in parts),
            duration_s=sum(p.duration_s for p in parts),
            output="\n".join(p.output for p in parts if p.output),
            output_bytes=sum(p.output_bytes for p in parts),
        )


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _top(module: str | None) -> str | None:
    return module.split(".")[0] if module else None


# The runner compiles the candidate and the tests as one module under this file name
# (sandbox/runner.py MODULE_FILE, as BigCodeBench does); a syntax error there reads
# "msg (__test__.py, line N)", where N counts the tests' lines too.
_MODULE_LOCATION = re.compile(r" \(__test__\.py, line (\d+)\)$")
_COMPILE_ERRORS = frozenset({"SyntaxError", "IndentationError", "TabError"})


def compile_error(code: str) -> str | None:
    """Why ``code`` does not compile, as ``SyntaxError: msg (line N)`` with N a line of
    ``code`` itself; None when it compiles. Compiling runs nothing (compilation feedback
    compiles every candidate in the harness too)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # as compile_feedback: warnings are not errors
            compile(code, "<candidate>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, deep nesting
        return f"{type(exc).__name__}: {exc}"
    return None


def _not_compiling(module_error: dict, code: str | None) -> str | None:
    """The detail of a run whose module did not compile, said as such, with the line in the
    candidate rather than in the harness's module of candidate + tests; None when the
    module error is something else (a SyntaxError that the code's own eval() raised while
    running names another file, and stays a runtime error). No model reads this text as
    execution feedback: for code that does not compile the loop sends compilation feedback
    instead, so BigCodeBench's ``str(exc)`` wording need not be kept here."""
    if module_error.get("exc") not in _COMPILE_ERRORS:
        return None
    message = str(module_error.get("msg", ""))
    found = _MODULE_LOCATION.search(message)
    if found is None:
        return None
    if code is not None:
        own = compile_error(code)
        if own is not None:
            return f"the code does not compile: {own}"
        # The code compiles alone but not followed by the tests: it left something open, or
        # the tests themselves do not compile on this interpreter.
        return (
            f"the code and the tests do not compile together: {module_error['exc']}: "
            f"{message[: found.start()]} (line {found.group(1)}, counting the tests' lines "
            "after the code's)"
        )
    return (
        f"the code does not compile: {module_error['exc']}: {message[: found.start()]} "
        f"(line {found.group(1)})"
    )


_ISSUE_STATUSES: frozenset[str] = frozenset({"fail", "error", "timeout"})


def _issues(rec: dict, name: str) -> tuple[TestIssue, ...] | None:
    """The failing subtests (and own failure) the runner filed under test ``name``; None
    when the list is malformed, which an honest runner never sends. Each entry must belong to
    ``name``: the method itself, or one of its subtests (``name`` then a space)."""
    raw = rec.get("issues")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        return None
    issues = []
    for entry in raw:
        if not isinstance(entry, dict):
            return None
        issue, status, tb = entry.get("name"), entry.get("status"), entry.get("tb", "")
        if not isinstance(issue, str) or not isinstance(tb, str) or status not in _ISSUE_STATUSES:
            return None
        if issue != name and not issue.startswith(name + " "):
            return None
        issue_status: IssueStatus = status  # type: ignore[assignment]
        issues.append(TestIssue(issue, issue_status, tb))
    return tuple(issues)


@dataclass
class _Records:
    """What the runner's records of one run say, read once in the order they came."""

    done: bool  # the final record: the runner reached the end of its tests
    module_error: dict | None  # the code (with the tests) did not compile or load
    setup_error: dict | None  # the sandbox could not be set up
    reported: dict[str, dict]  # expected test or canary -> the record that counts
    unexpected: list[str]  # names of records the plan did not ask for, or malformed
    running: str | None  # a test started after the last result: running when the run ended


@dataclass(frozen=True)
class _Verdict:
    """A run's status and what its result says beside the tests."""

    status: RunStatus
    detail: str = ""
    missing_module: str | None = None
    tampered: bool = False
    error_traceback: str = ""


def decide(
    raw: RawRun,
    plan: TestPlan,
    known_modules: frozenset[str],
    isolation: str,
    wall_s: float,
    *,
    code: str | None = None,
) -> ExecResult:
    """The verdict of one run. ``code`` is the candidate that ran, when known: a module that
    did not compile is then reported with the candidate's own error and line numbers.

    Expected tests that sent no result are ``not_run`` when something outside any test
    raised (the code did not compile or load: status ``error``, or ``env_error``), else
    ``missing`` (the run ended or was cut short without them)."""
    records = _read_records(raw.records, plan)
    tests = _outcomes(records, plan, raw.timed_out, wall_s)
    # The first that holds decides: what the environment lacks before what the candidate
    # did, a run cut short before what its records say, tampering before any test's result.
    verdict = (
        _missing_library(records, known_modules)
        or _run_cut_short(raw, records, plan, wall_s)
        or _module_failed(records.module_error, code)
        or _tampering(records, plan)
        or _tests_verdict(tests)
    )
    module_error = records.module_error
    return ExecResult(
        status=verdict.status,
        detail=verdict.detail,
        error_message=str(module_error.get("msg", "")) if module_error else "",
        error_traceback=verdict.error_traceback,
        missing_module=verdict.missing_module,
        tampered=verdict.tampered,
        tests=tuple(tests),
        duration_s=raw.duration_s,
        output=raw.output,
        output_bytes=raw.output_bytes,
        isolation=isolation,
    )


def _read_records(lines: Sequence[str], plan: TestPlan) -> _Records:
    """The runner's records sorted into what :func:`decide` asks of them; a line that is not
    JSON is an unexpected record (an honest runner writes none)."""
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"t": "garbage"})
    found = _Records(
        done=any(r.get("t") == "done" for r in records),
        module_error=next((r for r in records if r.get("t") == "module_error"), None),
        setup_error=next((r for r in records if r.get("t") == "setup_error"), None),
        reported={},
        unexpected=[],
        running=None,
    )
    canary_set = set(plan.canaries)
    expected_set = set(plan.expected)
    for rec in records:
        if rec.get("t") == "start":
            found.running = rec.get("name")
        elif rec.get("t") == "test":
            name = rec.get("name", "")
            found.running = None
            if name in expected_set or name in canary_set:
                # A canary that passed in any shard is what counts.
                passed_canary = name in canary_set and rec.get("status") == "pass"
                if passed_canary or name not in found.reported:
                    found.reported[name] = rec
            else:
                found.unexpected.append(name)
            if rec.get("status") not in ("pass", "fail", "error", "timeout", "skipped"):
                found.unexpected.append(name)
        elif rec.get("t") == "garbage":
            found.unexpected.append("<unparseable record>")
    return found


def _outcomes(
    records: _Records, plan: TestPlan, timed_out: bool, wall_s: float
) -> list[TestOutcome]:
    """One outcome per expected test, in the plan's order; a test whose subtest list is
    malformed is added to ``records.unexpected``."""
    tests = []
    unreported: TestStatus = "not_run" if records.module_error is not None else "missing"
    for name in plan.expected:
        rec = records.reported.get(name)
        if rec is None:
            status: TestStatus = "timeout" if timed_out and name == records.running else unreported
            tb = (
                f"the run was stopped after {wall_s:g} s while this test was running\n"
                if status == "timeout"
                else ""
            )
            tests.append(TestOutcome(name, status, 0.0, tb))
            continue
        status = rec["status"]
        issues = _issues(rec, name)
        if issues is None:
            records.unexpected.append(name)
            issues = ()
        # Subtests are evidence attached to the expected test, never tests of their own:
        # what failed in any of them fails the test, whatever status came with it.
        if issues and status in ("pass", "skipped"):
            status = "fail"
        tests.append(
            TestOutcome(name, status, float(rec.get("dur", 0.0)), rec.get("tb", ""), issues=issues)
        )
    return tests


def _missing_library(records: _Records, known_modules: frozenset[str]) -> _Verdict | None:
    """A missing library the task itself needs is never the candidate's fault."""
    for rec in [records.module_error, *records.reported.values()]:
        module = rec.get("module") if rec else None
        if not module:
            continue
        if module.startswith("nltk:") and known_modules & {"nltk", "textblob"}:
            name = module.split(":", 1)[1]
            return _Verdict("env_error", f"missing NLTK data '{name}'", module)
        if _top(module) in known_modules:
            return _Verdict("env_error", f"missing module '{_top(module)}'", _top(module))
    return None


def _run_cut_short(
    raw: RawRun, records: _Records, plan: TestPlan, wall_s: float
) -> _Verdict | None:
    """The run did not reach the end of its tests: the sandbox failed, the clock or a
    signal stopped it, or it exited early or with another exit status."""
    if records.setup_error is not None:
        return _Verdict(
            "crash", f"the sandbox could not be set up: {records.setup_error.get('msg')}"
        )
    if raw.timed_out:
        return _Verdict("timeout", f"the run did not finish within {wall_s:g} s")
    if raw.signal is not None:
        if raw.signal == signal.SIGXCPU:
            return _Verdict("timeout", "the run used up its CPU time limit")
        return _Verdict("crash", f"the run died from {_signal_name(raw.signal)}")
    if not records.done or raw.exit_code != plan.exit_code:
        how = f"exit code {raw.exit_code}" if raw.exit_code is not None else "no exit status"
        where = f" during {records.running}" if records.running else ""
        return _Verdict("crash", f"the run ended before finishing its tests{where} ({how})")
    return None


def _module_failed(module_error: dict | None, code: str | None) -> _Verdict | None:
    """The code (with the tests) did not load: too slow, not compiling, or raising."""
    if module_error is None:
        return None
    if module_error.get("timeout"):
        return _Verdict("timeout", "the code did not finish loading in time")
    detail = _not_compiling(module_error, code)
    if detail is not None:
        # Its traceback would point into the harness's module of code + tests; the loop
        # sends compilation feedback for such code anyway.
        return _Verdict("error", detail)
    return _Verdict(
        "error", _exception_line(module_error), error_traceback=str(module_error.get("tb", ""))
    )


def _exception_line(module_error: dict) -> str:
    """``NameError: name 'x' is not defined``: the message alone hides what kind of error it
    was, which is what a person reads first (the app's Tests border, ``check``'s summary)."""
    exc, msg = str(module_error.get("exc", "")), str(module_error.get("msg", ""))
    if exc and msg and not msg.startswith(f"{exc}:"):
        return f"{exc}: {msg}"
    return msg or exc


def _tampering(records: _Records, plan: TestPlan) -> _Verdict | None:
    """A canary that passed or never reported, or a record nobody asked for: the candidate
    reached into the test machinery, so no test result of the run can be trusted."""
    tampered = [n for n in plan.canaries if records.reported.get(n, {}).get("status") == "pass"]
    silent = [n for n in plan.canaries if n not in records.reported]
    if not (tampered or silent or records.unexpected):
        return None
    what = []
    if tampered:
        what.append("assertion checks that must fail passed")
    if silent:
        what.append("harness checks did not report")
    if records.unexpected:
        shown = ", ".join(sorted(set(records.unexpected))[:3])
        what.append(f"unexpected test records ({shown})")
    return _Verdict("fail", "test machinery was tampered with: " + "; ".join(what), tampered=True)


def _tests_verdict(tests: Sequence[TestOutcome]) -> _Verdict:
    """The verdict of a run that finished cleanly: its expected tests decide."""
    if any(t.status == "timeout" for t in tests):
        return _Verdict("timeout", "a test did not finish in time")
    if tests and all(t.status == "pass" for t in tests):
        return _Verdict("pass")
    if not tests:
        return _Verdict("error", "the tests define no test to run")
    return _Verdict("fail")
