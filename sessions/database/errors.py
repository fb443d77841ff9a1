"""Errors the store raises; front ends print them as one line (they are ConvtuiErrors)."""

from __future__ import annotations

from convtui.core.errors import ConvtuiError


class StoreError(ConvtuiError):
    """The database cannot be used as asked (too old a SQLite, a schema from a newer convtui,
    a store already closed)."""


class NotFoundError(StoreError, KeyError):
    """No run or session with that id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class RunLeasedError(StoreError):
    """Another live process is driving this run."""


class AmbiguousIdError(StoreError):
    """An id prefix that names more than one row."""


class ExportError(StoreError):
    """Sessions that cannot be exported as asked (unfinished ones, a log set that would mix
    configurations, an output folder that is not a previous export)."""


class ImportFormatError(StoreError):
    """A folder that is not in ConvCodeWorld's static layout, or a file in it that cannot be
    read as that layout says."""
