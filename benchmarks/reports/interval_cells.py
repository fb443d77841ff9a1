"""How ``convtui report`` shows an interval (core/metrics/stats.py ``Estimate``) in a table cell,
a CSV cell, a JSON key and the lines under a table. It imports no numpy: the tables import it
whether or not intervals were computed, and ``--no-intervals`` must cost nothing.

The cells are compact so that nine feedback settings fit a 120-column terminal (ten
characters a column): the value on its line, ``low–high`` on the next (``87.5–100.0`` at the
widest); where a table holds no interval at all, nothing changes. An estimate without an
interval shows ``n/a``, and its reason is said once below the table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the classes only: importing stats imports numpy
    from rich.table import Table

    from convtui.core.metrics.stats import Estimate

NOT_AVAILABLE = "n/a"


RANGE = "low–high"  # how the lines under a table name the bounds


def bounds(estimate: Estimate, scale: float = 100.0, digits: int = 1) -> str:
    """``8.1–16.0``, or ``n/a`` where the estimate has no interval."""
    if estimate.low is None or estimate.high is None:
        return NOT_AVAILABLE
    return f"{scale * estimate.low:.{digits}f}–{scale * estimate.high:.{digits}f}"


def cell(value: str, estimate: Estimate | None, scale: float = 100.0, digits: int = 1) -> str:
    """A table cell: ``value`` with the interval on a line of its own (``value`` alone when no
    interval was computed)."""
    return value if estimate is None else f"{value}\n{bounds(estimate, scale, digits)}"


def csv_bounds(estimate: Estimate | None, scale: float = 100.0, digits: int = 1) -> list[str]:
    """The two CSV cells low and high, blank where there is no interval."""
    if estimate is None or estimate.low is None or estimate.high is None:
        return ["", ""]
    return [f"{scale * estimate.low:.{digits}f}", f"{scale * estimate.high:.{digits}f}"]


def bound_headers(names: Sequence[str]) -> list[str]:
    """The CSV headings of the bounds of the columns ``names``: ``<name> low``, ``<name> high``."""
    return [f"{name} {side}" for name in names for side in ("low", "high")]


def interval_json(estimate: Estimate, scale: float = 100.0, digits: int = 1) -> dict[str, object]:
    """An ``*_interval`` key's value: low, high, units and (where there is no interval) the
    reason. The value itself stays under its own key, unchanged."""
    data = estimate.to_json(scale, digits)
    del data["value"]
    return data


def notes(method: str, estimates: Iterable[Estimate | None]) -> list[str]:
    """The lines under a table of ``estimates``: what ``low–high`` is, and each reason for an
    ``n/a`` once, in the order first met. None when the table holds no interval."""
    shown = [e for e in estimates if e is not None]
    if not shown:
        return []
    reasons = list(dict.fromkeys(e.reason for e in shown if e.reason))
    lines = [f"{RANGE}: {method}."]
    if reasons:
        lines.append(f"{NOT_AVAILABLE}: {'; '.join(reasons)}.")
    return lines


def caption(lines: Sequence[str]) -> str | None:
    """A table's caption of ``lines``, its brackets shown as written (not read as markup)."""
    from rich.markup import escape

    return escape("\n".join(lines)) or None


def compact(table: Table, intervals: bool) -> Table:
    """``table``, a table with a column per setting, made narrower where it shows intervals:
    no vertical rules and one space of padding (left) instead of two, which gives nine
    settings' ``low–high`` (ten characters) room in 120 columns."""
    if intervals:
        from rich import box

        table.box = box.SIMPLE_HEAD
        table.padding = (0, 0, 0, 1)
    return table


def fitted_width(column: Iterable[str]) -> int:
    """The width of a table column holding the cells ``column``: its widest line. As a
    column's minimum it keeps a narrow console folding the headings, never the bounds: left
    to rich, the width is shared by the headings' longest words (a model's path) and
    ``87.5–100.0`` folds in two."""
    return max((len(line) for cell in column for line in cell.split("\n")), default=1)
