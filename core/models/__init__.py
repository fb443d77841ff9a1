"""Model backends behind one interface, chosen by a spec string (docs/design.md#models).

Importing this package is cheap: the ``openai`` client, llama.cpp and vLLM are imported only
when a backend that needs them is opened."""

from convtui.core.models.base import ModelBackend
from convtui.core.models.registry import ACCEPTED_SPECS, open_backend
from convtui.core.models.retry import Retrier, RetryPolicy
from convtui.core.models.types import (
    Attempt,
    CallInfo,
    CallKind,
    CallPurpose,
    ChatMessage,
    Completion,
    GenerationParams,
    ModelError,
)

__all__ = [
    "ACCEPTED_SPECS",
    "Attempt",
    "CallInfo",
    "CallKind",
    "CallPurpose",
    "ChatMessage",
    "Completion",
    "GenerationParams",
    "ModelBackend",
    "ModelError",
    "Retrier",
    "RetryPolicy",
    "open_backend",
]
