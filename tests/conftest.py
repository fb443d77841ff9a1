"""Shared test set-up: a test that takes an ``isolation_level`` argument runs once per
isolation level, skipped (with the reason) where this machine cannot provide it."""

from __future__ import annotations

import functools

import pytest

ISOLATION_LEVELS = ("bwrap", "namespaces", "landlock", "none")


@functools.cache
def isolation_unavailable(level: str) -> str | None:
    """Why ``level`` cannot be had here, or None when it can."""
    from convtui.core.isolation import IsolationUnavailable, detect

    try:
        got = detect(level)
    except IsolationUnavailable as exc:
        return str(exc)
    if got.level != level:
        return f"detect({level!r}) gives {got.level!r}"
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "isolation_level" in metafunc.fixturenames:
        params = []
        for level in ISOLATION_LEVELS:
            why = isolation_unavailable(level)
            marks = [pytest.mark.skip(reason=f"{level} unavailable: {why}")] if why else []
            params.append(pytest.param(level, id=level, marks=marks))
        metafunc.parametrize("isolation_level", params)
