"""The journals the turn loop writes through: model calls recorded before they are made and as
they finish (``CallJournal``), execution results by cache key (``ExecutionCache``), and the
identity of a model request (``request_hash``). The store implements both protocols."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Protocol

from convtui.core.execution.types import ExecResult
from convtui.core.models.types import (
    Attempt,
    CallKind,
    CallPurpose,  # defined with the model types (CallInfo), imported from here by most callers
    ChatMessage,
    Completion,
    GenerationParams,
)


@dataclass(frozen=True)
class CallRequest:
    """A model call as the journal records it before it is made: the turn it belongs to, its
    purpose, its request (hashed and whole) and the model. ``seq`` is its position among the
    turn's calls; a ``text`` call's one prompt is ``messages[0].content``."""

    turn_idx: int
    purpose: CallPurpose
    request_hash: str
    messages: tuple[ChatMessage, ...]
    params: GenerationParams
    model: str
    seq: int = 0
    kind: CallKind = "chat"


class CallJournal(Protocol):
    """Where model calls are recorded as they happen (the store implements it).

    ``session_id`` names the session the calls belong to; the loop passes it to the backend
    (``CallInfo.session``) so a scripted backend can keep one script position per session."""

    session_id: str

    def find(
        self, turn_idx: int, purpose: CallPurpose, request_hash: str, *, seq: int = 0
    ) -> Completion | None:
        """A finished call with this request, to reuse instead of calling again (recorded as
        a reuse at position ``seq`` of the turn)."""

    def started(self, call: CallRequest) -> str:
        """Record a call before it is made; returns its id."""

    def attempt(self, call_id: str, attempt: Attempt) -> None:
        """Record one attempt (retries included)."""

    def finished(self, call_id: str, completion: Completion | None, error: str = "") -> None:
        """Record the outcome of a call."""


class ExecutionCache(Protocol):
    """Results keyed by the executor's cache key (the store's executions table)."""

    def get(self, key: str) -> ExecResult | None: ...

    def put(self, key: str, task_id: str, code: str, result: ExecResult) -> None: ...


def request_hash(
    model: str,
    messages: tuple[ChatMessage, ...],
    params: GenerationParams,
    kind: CallKind = "chat",
) -> str:
    """The identity of a model request: same hash, same answer at temperature 0. A raw-text
    call (its prompt as the one message) never shares a hash with a chat call."""
    request: dict = {
        "model": model,
        "messages": [asdict(m) for m in messages],
        "params": asdict(params),
    }
    if kind != "chat":  # chat hashes stay as they were before text calls existed
        request["kind"] = kind
    blob = json.dumps(request, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def text_request_hash(model: str, prompt: str, params: GenerationParams) -> str:
    """``request_hash`` of a raw-text call (``ModelBackend.complete_text``), its prompt
    journaled as the one message: a raw prompt and a chat message of the same words are
    different requests (no chat template on one), so they never share a hash."""
    return request_hash(model, (ChatMessage("user", prompt),), params, "text")
