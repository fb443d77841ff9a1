"""Content-addressed texts: each distinct reply, code and prompt message is stored once.

A turn's code is also its execution's code, its reply is its model call's response, and in
``full`` context mode every prompt repeats all earlier messages; rows refer to these texts by
SHA-256 (``*_blob`` columns) instead of holding copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sqlite_utils import Database

from convtui.sessions.database.codec import text_hash
from convtui.sessions.database.connection import rows_in


def put_text(db: Database, text: str) -> str:
    """Store ``text`` (inside the caller's write transaction) and return its hash."""
    key = text_hash(text)
    db.execute("INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", (key, text))
    return key


def put_texts(db: Database, texts: Mapping[str, str]) -> None:
    """Store texts already keyed by their hash (see ``codec.messages_to_refs``)."""
    db.conn.executemany(
        "INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", list(texts.items())
    )


def get_texts(db: Database, hashes: Iterable[str]) -> dict[str, str]:
    found = rows_in(db, "SELECT hash, text FROM blobs WHERE hash IN ({marks})", hashes)
    return {row["hash"]: row["text"] for row in found}
