"""Counts in words: ``1 task``, ``2 tasks``. Every line the CLI and the app print that
counts something says it through :func:`counted`, so no line reads "1 tasks" or "task(s)"."""

from __future__ import annotations

# Nouns whose plural is not the singular plus "s".
_IRREGULAR = {"pair of sessions": "pairs of sessions"}


def noun(n: int, singular: str) -> str:
    """``singular`` as ``n`` of it takes it: ``task`` or ``tasks``."""
    if n == 1:
        return singular
    return _IRREGULAR.get(singular, singular + "s")


def counted(n: int, singular: str) -> str:
    """``n`` and its noun: ``1 task``, ``0 tasks``, ``12 assignments``."""
    return f"{n} {noun(n, singular)}"
