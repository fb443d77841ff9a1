"""The frozen dataclasses of ``convtui.core`` to and from JSON text and table rows.

Every value is stored so that reading it back gives an equal dataclass: floats stay floats
(seconds are kept as REAL seconds, not rounded milliseconds), tuples come back as tuples,
``None`` stays distinct from ``""``. Decoders ignore keys they do not know and let missing
ones take the dataclass default, so rows written before a field was added still load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from convtui.core.execution.types import ExecResult, Limits, TestIssue, TestOutcome
from convtui.core.models.types import Attempt, ChatMessage, Completion, GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig, parse_feedback


def canonical_json(value: Any) -> str:
    """Compact, key-sorted JSON: equal values give equal text (and equal hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def text_hash(text: str) -> str:
    """The content address of a text in the ``blobs`` table."""
    return hashlib.sha256(text.encode()).hexdigest()


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


# --- configuration ---------------------------------------------------------------------------


def params_to_dict(params: GenerationParams) -> dict[str, Any]:
    return asdict(params)


def params_from_dict(data: Mapping[str, Any]) -> GenerationParams:
    values = _known(GenerationParams, data)
    if "stop" in values:
        values["stop"] = tuple(values["stop"])
    return GenerationParams(**values)


def config_to_json(config: SessionConfig) -> str:
    return canonical_json(config.to_dict())


def omega_from_label(label: str) -> FeedbackConfig:
    """Ω from the label the store keeps (``FeedbackConfig.label``): the one place the store
    reads a label back."""
    return parse_feedback(label)[0]


def config_from_json(text: str) -> SessionConfig:
    data = json.loads(text)
    values = _known(SessionConfig, data)
    if "feedback" in values:
        values["feedback"] = omega_from_label(values["feedback"])
    for name in ("params", "simulator_params"):
        if name in values:
            values[name] = params_from_dict(values[name])
    if "limits" in values:
        values["limits"] = Limits(**_known(Limits, values["limits"]))
    return SessionConfig(**values)


def run_config_hash(config: SessionConfig, feedback_labels: Iterable[str]) -> str:
    """The identity of a run's configuration: ``config.config_hash`` when the run covers only
    ``config.feedback``; otherwise the same hash over the config with its feedback replaced by
    the sorted labels (so ``--feedback all`` and a single Ω never share a run)."""
    labels = sorted(set(feedback_labels))
    if labels == [config.feedback.label]:
        return config.config_hash
    data = config.to_dict()
    data["feedback"] = labels
    blob = json.dumps(data, sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# --- messages and notes ----------------------------------------------------------------------


def messages_to_refs(messages: Iterable[ChatMessage]) -> tuple[str, dict[str, str]]:
    """A prompt as JSON ``[[role, blob hash], ...]`` plus the texts to store as blobs.

    Storing each message's text once by its hash keeps ``full`` context mode linear: the turn-t
    prompt repeats every earlier message, and the model call repeats the turn's prompt."""
    refs, texts = [], {}
    for message in messages:
        key = text_hash(message.content)
        texts[key] = message.content
        refs.append([message.role, key])
    return canonical_json(refs), texts


def message_hashes(refs_json: str) -> list[str]:
    return [key for _, key in json.loads(refs_json)]


def messages_from_refs(refs_json: str, texts: Mapping[str, str]) -> tuple[ChatMessage, ...]:
    return tuple(ChatMessage(role, texts[key]) for role, key in json.loads(refs_json))


def notes_to_json(notes: Iterable[str]) -> str:
    return canonical_json(list(notes))


def notes_from_json(text: str) -> tuple[str, ...]:
    return tuple(json.loads(text))


# --- model calls -----------------------------------------------------------------------------


# The model_calls columns that hold a Completion's field as it is, each column by its field
# (``response_model`` by ``model``): read from here both ways.
_SAME_NAMED = ("finish_reason", "input_tokens", "output_tokens", "latency_s", "attempts")
_COMPLETION_COLUMNS = {
    **{name: name for name in (*_SAME_NAMED, "resolved_model")},
    "response_model": "model",
}


def completion_columns(completion: Completion) -> dict[str, Any]:
    """The ``model_calls`` columns a finished call fills (its text goes to ``blobs``)."""
    columns = {column: getattr(completion, name) for column, name in _COMPLETION_COLUMNS.items()}
    return columns | {"endpoint": completion.endpoint}


def completion_from_row(row: Mapping[str, Any], text: str) -> Completion:
    return Completion(
        text=text,
        **{name: row[column] for column, name in _COMPLETION_COLUMNS.items()},
        cached=bool(row["cache_hit"]),
        endpoint=row.get("endpoint"),
    )


def attempt_columns(attempt: Attempt) -> dict[str, Any]:
    return asdict(attempt)


def attempt_from_row(row: Mapping[str, Any]) -> Attempt:
    return Attempt(
        number=row["number"],
        status=row["status"],
        latency_s=row["latency_s"],
        error=row["error"],
        retry_after_s=row["retry_after_s"],
        endpoint=row.get("endpoint"),
    )


# --- executions ------------------------------------------------------------------------------


def result_hash(result: ExecResult) -> str:
    """Identity of a whole result, tests included: tells whether a stored row holds exactly
    the result a turn saw (a flaky test can give two results for one cache key)."""
    return text_hash(canonical_json(result.to_dict()))


# The executions columns that hold an ExecResult's field of the same name as it is.
_EXECUTION_COLUMNS = ("status", "detail", "duration_s", "output", "output_bytes", "isolation")


def execution_columns(result: ExecResult) -> dict[str, Any]:
    passed, total = result.counts()
    return {
        **{name: getattr(result, name) for name in _EXECUTION_COLUMNS},
        "tests_passed": passed,
        "tests_total": total,
        "missing_module": result.missing_module,
        "tampered": int(result.tampered),
        "error_message": result.error_message,
        "error_traceback": result.error_traceback,
        "result_hash": result_hash(result),
    }


def test_columns(execution_id: int, tests: Iterable[TestOutcome]) -> list[dict[str, Any]]:
    """One row per test (positions 0 to ``tests_total`` - 1), then one per issue of the tests
    whose subtests failed (``TestOutcome.issues``), test by test, in order; an issue row's
    name starts with its test's name (the name itself, or the name, a space and the
    subtest's description), which is how :func:`exec_result_from_rows` files it back."""
    tests = list(tests)
    rows = [
        {
            "execution_id": execution_id,
            "position": position,
            "name": test.name,
            "status": test.status,
            "duration_s": test.duration_s,
            "traceback": test.traceback,
        }
        for position, test in enumerate(tests)
    ]
    for test in tests:
        for issue in test.issues:
            rows.append(
                {
                    "execution_id": execution_id,
                    "position": len(rows),
                    "name": issue.name,
                    "status": issue.status,
                    "duration_s": 0.0,
                    "traceback": issue.traceback,
                }
            )
    return rows


def _issue_test(issue: str, names: Sequence[str]) -> str:
    """The test an issue row belongs to: the longest test name that is the issue's name or
    starts it, then a space. Test methods are identifiers, so that is the issue's first word;
    a test imported from BigCodeBench's details may be named by a key with spaces in it
    (sessions/exchange/ccw_verdicts.py)."""
    owners = [name for name in names if issue == name or issue.startswith(name + " ")]
    return max(owners, key=len) if owners else issue.split(" ", 1)[0]


def exec_result_from_rows(row: Mapping[str, Any], tests: Iterable[Mapping[str, Any]]) -> ExecResult:
    ordered = sorted(tests, key=lambda t: t["position"])
    total = row["tests_total"]
    issues: dict[str, list[TestIssue]] = {}
    names = [t["name"] for t in ordered[:total]]
    for t in ordered[total:]:
        issues.setdefault(_issue_test(t["name"], names), []).append(
            TestIssue(t["name"], t["status"], t["traceback"])
        )
    outcomes = tuple(
        TestOutcome(
            name=t["name"],
            status=t["status"],
            duration_s=t["duration_s"],
            traceback=t["traceback"],
            issues=tuple(issues.get(t["name"], ())),
        )
        for t in ordered[:total]
    )
    return ExecResult(
        **{name: row[name] for name in _EXECUTION_COLUMNS},
        tests=outcomes,
        missing_module=row["missing_module"],
        tampered=bool(row["tampered"]),
        error_message=row.get("error_message") or "",
        error_traceback=row.get("error_traceback") or "",
    )
