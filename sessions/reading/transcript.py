"""Sessions as plain JSON values: what ``convtui sessions show --json`` prints and what the
JSONL export writes, one object per session (layout in SCHEMA.md, "Static logs (export)").

Pure functions of the dataclasses the store hands back; the same session always gives the
same text (:func:`json_line` sorts keys), so two exports of one database are byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from convtui.core.execution.types import ExecResult, TestIssue, TestOutcome
from convtui.core.turns.record import Turn, TurnFeedback
from convtui.sessions.database.records import SessionRow
from convtui.sessions.reading.browse import SessionDetail

# Bumped when a field changes meaning or disappears; new fields do not bump it.
TRANSCRIPT_FORMAT = "convtui-session"
TRANSCRIPT_VERSION = 1

# Characters that JSON leaves unescaped but that line splitters such as str.splitlines()
# treat as line ends: escaped, so one record is always exactly one line.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def json_line(value: Any) -> str:
    """``value`` as one line of key-sorted JSON (UTF-8 text kept readable), newline ended."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text + "\n"


def execution_record(result: ExecResult | None) -> dict[str, Any] | None:
    """The test run of a turn: its verdict, the test counts, and each test in the order the
    executor reported them (captured output is left out: it can be large and no feedback
    reads it)."""
    if result is None:
        return None
    passed, total = result.counts()
    record: dict[str, Any] = {
        "status": result.status,
        "detail": result.detail,
        "error_message": result.error_message,
        "tests_passed": passed,
        "tests_total": total,
        "duration_s": result.duration_s,
        "isolation": result.isolation,
        "missing_module": result.missing_module,
        "tampered": result.tampered,
        "tests": [_test_record(test) for test in result.tests],
    }
    # Only where there is one, so transcripts of other runs keep their bytes.
    if result.error_traceback:
        record["error_traceback"] = result.error_traceback
    return record


def execution_from_record(record: Mapping[str, Any] | None) -> ExecResult | None:
    """The ``ExecResult`` an :func:`execution_record` was made from, less the captured output
    it leaves out."""
    if record is None:
        return None
    return ExecResult(
        status=record["status"],
        tests=tuple(
            TestOutcome(
                test["name"],
                test["status"],
                test["duration_s"],
                test["traceback"],
                tuple(
                    TestIssue(issue["name"], issue["status"], issue["traceback"])
                    for issue in test.get("issues", ())
                ),
            )
            for test in record["tests"]
        ),
        duration_s=record["duration_s"],
        isolation=record["isolation"],
        detail=record["detail"],
        missing_module=record["missing_module"],
        tampered=record["tampered"],
        error_message=record["error_message"],
        error_traceback=record.get("error_traceback", ""),
    )


def _test_record(test: TestOutcome) -> dict[str, Any]:
    """One test; ``issues`` (what unittest filed for a test whose subtests failed, in order)
    only where there are some, so transcripts of tests without them keep their bytes."""
    record: dict[str, Any] = {
        "name": test.name,
        "status": test.status,
        "duration_s": test.duration_s,
        "traceback": test.traceback,
    }
    if test.issues:
        record["issues"] = [
            {"name": issue.name, "status": issue.status, "traceback": issue.traceback}
            for issue in test.issues
        ]
    return record


def turn_record(turn: Turn) -> dict[str, Any]:
    """One turn: the reply and its code, the feedback the code received, and the exact
    prompt the model saw."""
    return {
        "idx": turn.idx,
        "reply": turn.reply,
        "code": turn.code,
        "compiled": turn.compiled,
        "compile_feedback": turn.compile_feedback,
        "execution": execution_record(turn.execution),
        "execution_feedback": turn.execution_feedback,
        "verbal_feedback": turn.verbal_feedback,
        "feedback_source": turn.feedback_source,
        "feedback_draft": turn.feedback_draft,
        "feedback_edited": turn.feedback_edited,
        "passed": turn.passed,
        "notes": list(turn.notes),
        "prompt": [{"role": m.role, "content": m.content} for m in turn.prompt],
        "prompt_hash": turn.prompt_hash,
        # Where the protocol gives feedback inside the turn (convcodeworld): what its calls
        # were given, about the previous code or a repair; null otherwise.
        "received": None if turn.received is None else asdict(turn.received),
    }


def turn_from_record(record: Mapping[str, Any], code: str) -> Turn:
    """The ``Turn`` a :func:`turn_record` was made from, less its prompt; ``code`` is given
    (the export's manifest leaves both out: sessions/exchange/static_logs.py)."""
    received = record.get("received")
    return Turn(
        idx=record["idx"],
        reply=record["reply"],
        code=code,
        compiled=record["compiled"],
        compile_feedback=record["compile_feedback"],
        execution=execution_from_record(record["execution"]),
        execution_feedback=record["execution_feedback"],
        verbal_feedback=record["verbal_feedback"],
        feedback_source=record["feedback_source"],
        notes=tuple(record["notes"]),
        feedback_draft=record["feedback_draft"],
        received=None if received is None else TurnFeedback(**received),
    )


def session_meta(row: SessionRow) -> dict[str, Any]:
    return asdict(row)


def session_record(detail: SessionDetail) -> dict[str, Any]:
    """One session: its row, its full config (and hash), the code version of its run, and
    its turns in order, a turn a person answered in the app with their time on it
    (``human_times``)."""
    turns = []
    for turn in detail.turns:
        record = turn_record(turn)
        times = detail.times.get(turn.idx)
        # Only where there are some, so transcripts of other sessions keep their bytes.
        if times is not None:
            record["human_times"] = asdict(times)
        turns.append(record)
    return {
        "format": TRANSCRIPT_FORMAT,
        "format_version": TRANSCRIPT_VERSION,
        "session": session_meta(detail.session),
        "config": detail.config.to_dict(),
        "config_hash": detail.config.config_hash,
        "code_version": detail.code_version,
        "turns": turns,
        "calls": [asdict(call) for call in detail.calls],
    }
