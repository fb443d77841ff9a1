"""What a test reads back from a SQLite file: one query's rows, the connection closed after."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any


def fetchall(db: Path | str, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
    """Every row ``sql`` answers in the SQLite file ``db``, as tuples."""
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, params).fetchall()
