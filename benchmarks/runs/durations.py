"""Remembered run times per task, so long tasks start first next time.

With 2 workers, one 20 s task started last doubles the wall time; ordering by the last
measured duration keeps both workers busy to the end."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from convtui.core.catalog.datasets import cache_dir


def _path() -> Path:
    return cache_dir() / "durations.json"


def load() -> dict[str, float]:
    try:
        data = json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}


def save(measured: Mapping[str, float]) -> None:
    """Merge ``measured`` into the stored durations (best effort: a cache, not a record)."""
    data = load()
    data.update({k: round(v, 3) for k, v in measured.items()})
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        tmp.replace(path)
    except OSError:
        return


def longest_first(task_ids: list[str], known: Mapping[str, float]) -> list[int]:
    """Indexes of ``task_ids`` ordered by known duration, longest first; unknown ones first of
    all, since they may be long."""
    return sorted(range(len(task_ids)), key=lambda i: -known.get(task_ids[i], float("inf")))
