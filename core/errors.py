"""Errors the library raises for bad input; front ends turn them into one clear line."""

from __future__ import annotations

from typing import TypeVar

Choice = TypeVar("Choice", bound=str)


class ConvtuiError(Exception):
    """Base for errors caused by the user's input or environment, not by a bug."""


class DataNotFoundError(ConvtuiError):
    """A dataset file was found nowhere and could not be downloaded."""


class UnknownTaskError(ConvtuiError):
    """A task id that the catalog does not hold."""


def one_of(flag: str, value: str, choices: tuple[Choice, ...]) -> Choice:
    """``value`` as the one of ``choices`` it names (so typed as that Literal), or a one-line
    error naming them all."""
    for choice in choices:
        if value == choice:
            return choice
    raise ConvtuiError(f"{flag} must be {' or '.join(choices)}, not {value!r}")
