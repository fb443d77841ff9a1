"""One model call, journaled: a finished identical call (same session, turn, purpose, seq
and request) is reused from the journal instead of paid for again, and every attempt is
recorded as it happens. Both the turn loop and CodeIF-Bench conversations call models this
way."""

from __future__ import annotations

from collections.abc import Callable

from convtui.core.models.base import ModelBackend
from convtui.core.models.types import (
    CallInfo,
    ChatMessage,
    Completion,
    GenerationParams,
    ModelError,
)
from convtui.core.turns.journal import CallJournal, CallKind, CallPurpose, CallRequest, request_hash


async def journaled_call(
    backend: ModelBackend,
    journal: CallJournal | None,
    session_key: str,
    turn_idx: int,
    purpose: CallPurpose,
    messages: tuple[ChatMessage, ...],
    params: GenerationParams,
    on_text: Callable[[str], None] | None = None,
    *,
    seq: int = 0,
    kind: CallKind = "chat",
) -> Completion:
    """A ``text`` call sends ``messages[0].content`` as one raw prompt (no chat template)."""
    key = request_hash(backend.spec, messages, params, kind)
    if journal is not None:
        found = journal.find(turn_idx, purpose, key, seq=seq)
        if found is not None:
            return found
        call_id = journal.started(
            CallRequest(turn_idx, purpose, key, messages, params, backend.spec, seq, kind)
        )
    on_attempt = (lambda a: journal.attempt(call_id, a)) if journal else None
    info = CallInfo(session_key, turn_idx, purpose, seq)
    try:
        if kind == "text":
            completion = await backend.complete_text(
                messages[0].content, params, on_text=on_text, on_attempt=on_attempt, call=info
            )
        else:
            completion = await backend.complete(
                messages, params, on_text=on_text, on_attempt=on_attempt, call=info
            )
    except ModelError as exc:
        if journal is not None:
            journal.finished(call_id, None, str(exc))
        raise
    if journal is not None:
        journal.finished(call_id, completion)
    return completion
