"""Errors the library raises for bad input; front ends turn them into one clear line."""

from __future__ import annotations


class ConvtuiError(Exception):
    """Base for errors caused by the user's input or environment, not by a bug."""


class DataNotFoundError(ConvtuiError):
    """A dataset file was found nowhere and could not be downloaded."""


class UnknownTaskError(ConvtuiError):
    """A task id that the catalog does not hold."""
