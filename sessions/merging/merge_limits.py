"""What one source of ``sessions merge`` may add, and how long it may take.

A merged file is someone else's database, and a valid one can still cost more than the
study can afford: 150,000 empty sessions took minutes and half a gigabyte to merge, and left
``sessions list`` unusable. So each source is held to caps, each a default below that an
organiser can raise with an option: the bytes of the file (checked before it is copied),
the sessions and turns it would add (counted in SQL on its copy, before any row is read into
Python or the target is written) and the seconds its copy, checks and writing take (past
them the write transaction is rolled back). A source past a cap is refused in one line that
names the cap, what was found and the option that raises it; nothing of it is written.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from convtui.sessions.database.errors import StoreError
from convtui.sessions.database.store import Store

# A study's annotator records tens to hundreds of sessions; 2,000 is several studies of one
# person, and 75 times fewer than the 150,000 empty sessions that made a study unusable.
# Merging 2,000 sessions of 10 turns takes about 25 s here, most of it in the write
# transaction, which a served study's apps wait for (30 s at most) before they give up a write.
DEFAULT_MAX_SESSIONS = 2_000
# Turns of the sessions added: ConvCodeWorld plays at most 11 generations, CodeIF-Bench a few
# per instruction, so hundreds of sessions take a few thousand turns. Writing a turn costs
# about 1 ms (its calls, execution and texts), so 20,000 keep the write transaction near 20 s.
DEFAULT_MAX_TURNS = 20_000
# The file as handed over, with the -wal and -journal beside it. 2,000 sessions of 10 turns
# with short texts take 65 MB; real replies and prompts make a study's file tens to hundreds
# of MB. 1 GiB leaves room for that and still bounds the copy and its checks (which read
# every page) to tens of seconds and the temporary folder to one more such file.
DEFAULT_MAX_BYTES = 1024**3
# One source's copy, checks and writing. The caps above keep a merge near 25 s here, so 120 s
# only stops what they do not foresee: a slow disk, or a file of many sessions the target
# holds already (each is compared with the target's before anything is written).
DEFAULT_MAX_SECONDS = 120.0

# How often SQLite asks whether time is up: every this many virtual-machine steps of a
# statement, so one long statement (a count, a check over a whole table) is stopped too.
_PROGRESS_STEPS = 1_000
_NOTHING = "nothing merged from it"


@dataclass(frozen=True)
class MergeLimits:
    """The caps on one source (``--max-sessions``, ``--max-turns``, ``--max-bytes``,
    ``--max-seconds``)."""

    sessions: int = DEFAULT_MAX_SESSIONS
    turns: int = DEFAULT_MAX_TURNS
    bytes: int = DEFAULT_MAX_BYTES
    seconds: float = DEFAULT_MAX_SECONDS


def over_cap(shown: Path | str, what: str, found: int, option: str, cap: int) -> StoreError:
    """The one line that refuses a source past a count cap."""
    return StoreError(
        f"{shown} would add {found:,} {what}, more than {option} allows ({cap:,}): {_NOTHING}; "
        f"if that is right, give {option} {found}"
    )


def check_bytes(shown: Path, size: int, limits: MergeLimits) -> None:
    if size > limits.bytes:
        raise StoreError(
            f"{shown} takes {size:,} bytes, more than --max-bytes allows ({limits.bytes:,}): "
            f"{_NOTHING}; if the file is right, give --max-bytes {size}"
        )


def check_counts(source: Store, target: Store, limits: MergeLimits, shown: Path) -> None:
    """The sessions ``source`` holds that ``target`` lacks, and their turns, within
    ``limits``. Counted in SQL: the file's own totals first (enough when they are under the
    caps), then, over a cap, only the sessions the target lacks, a chunk of ids at a time, so
    a file of any size is refused with little memory."""
    (sessions,) = source.db.execute("SELECT count(*) FROM sessions").fetchone()
    (turns,) = source.db.execute("SELECT count(*) FROM turns").fetchone()
    if sessions <= limits.sessions and turns <= limits.turns:
        return
    new_sessions = new_turns = 0
    for new, _ in session_chunks(source, target):
        new_sessions += len(new)
        if new_sessions <= limits.sessions:
            marks = ", ".join("?" * len(new))
            sql = f"SELECT count(*) FROM turns WHERE session_id IN ({marks})"
            new_turns += source.db.execute(sql, new).fetchone()[0]
    if new_sessions > limits.sessions:
        raise over_cap(shown, "sessions", new_sessions, "--max-sessions", limits.sessions)
    if new_turns > limits.turns:
        raise over_cap(shown, "turns", new_turns, "--max-turns", limits.turns)


_CHUNK = 500


def session_chunks(source: Store, target: Store) -> Iterator[tuple[list[str], list[str]]]:
    """The ids of ``source``'s sessions, in id order, a chunk at a time: those ``target``
    lacks and those it holds (one query of each file per chunk)."""
    after = ""
    while True:
        found = source.db.execute(
            "SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?", (after, _CHUNK)
        ).fetchall()
        if not found:
            return
        ids = [row[0] for row in found]
        marks = ", ".join("?" * len(ids))
        sql = f"SELECT id FROM sessions WHERE id IN ({marks})"
        held = {row[0] for row in target.db.execute(sql, ids)}
        yield [i for i in ids if i not in held], [i for i in ids if i in held]
        after = ids[-1]


class Budget:
    """The seconds one source may take (``--max-seconds``), counted while it is worked on:
    its copy and, once every source is copied, its checks and writing. SQLite is asked to
    stop a statement once they are spent (a progress handler), and the merge asks between
    sessions; either way a ``StoreError`` names the cap, and a write transaction in progress
    is rolled back by its ``writing`` block."""

    def __init__(self, seconds: float, shown: Path) -> None:
        self.seconds = seconds
        self.shown = shown
        self.spent = 0.0
        self._since: float | None = None

    def _elapsed(self) -> float:
        running = time.monotonic() - self._since if self._since is not None else 0.0
        return self.spent + running

    def over(self) -> bool:
        return self._elapsed() > self.seconds

    def error(self) -> StoreError:
        seconds = f"{self.seconds:g}"
        return StoreError(
            f"{self.shown} took longer than --max-seconds allows ({seconds} s): stopped, and "
            f"{_NOTHING} (a write under way is rolled back); if the file is right, give a "
            f"larger --max-seconds (e.g. {max(1, round(self.seconds * 4))})"
        )

    def check(self) -> None:
        """Refuse the source once its seconds are spent."""
        if self.over():
            raise self.error()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Count the time of the block against this source. Whatever the block raised once the
        time is spent (SQLite's "interrupted", or the error a caller made of it) becomes the
        cap's line."""
        self._since = time.monotonic()
        try:
            yield
        except Exception:
            if self.over():
                raise self.error() from None
            raise
        finally:
            self.spent = self._elapsed()
            self._since = None

    @contextmanager
    def watching(self, *connections: sqlite3.Connection) -> Iterator[None]:
        """Have SQLite stop any statement on ``connections`` once the time is spent."""
        for conn in connections:
            conn.set_progress_handler(self.over, _PROGRESS_STEPS)
        try:
            yield
        finally:
            for conn in connections:
                conn.set_progress_handler(None, _PROGRESS_STEPS)
