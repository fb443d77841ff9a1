"""Model backends behind one interface, chosen by a spec string (docs/design.md#models),
and the code read out of their replies (``extract``).

Importing this package is cheap: its value types load at once, while the backends, the
registry and the retrier (asyncio, and the ``openai`` client, llama.cpp or vLLM when a
backend that needs them is opened) load on first use, so modules that only need the types
(``convtui --help`` reads its choices through them) stay light."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from convtui.core.models.base import ModelBackend
    from convtui.core.models.registry import ACCEPTED_SPECS, open_backend
    from convtui.core.models.retry import Retrier, RetryPolicy

# name -> the module that defines it, imported when the name is first read.
_LAZY = {
    "ModelBackend": "base",
    "ACCEPTED_SPECS": "registry",
    "open_backend": "registry",
    "Retrier": "retry",
    "RetryPolicy": "retry",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
