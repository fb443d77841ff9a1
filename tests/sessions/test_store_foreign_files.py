"""Opening a store on what is not one: a file of other bytes or a folder is refused in one
line and left exactly as it was; a store a failed command created holds nothing and is
removed again, while one holding anything (or one that existed before) is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from convtui.core.settings.config import SessionConfig
from convtui.sessions import Store
from convtui.sessions.database.errors import StoreError


@pytest.mark.parametrize(
    "content", [b"hello, not a database\n", b"\x00" * 4096, b"SQLite format 2\x00rest"]
)
def test_a_file_that_is_not_sqlite_is_refused_and_left_as_it_was(tmp_path, content) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(StoreError) as raised:
        Store.open(path)
    message = str(raised.value)
    assert "\n" not in message and str(path) in message and "not a SQLite database" in message
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]  # no -wal, no -shm


def test_a_folder_is_refused(tmp_path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        Store.open(tmp_path)


def test_a_store_created_by_a_block_that_fails_before_recording_anything_is_removed(
    tmp_path,
) -> None:
    path = tmp_path / "new.db"
    with pytest.raises(RuntimeError), Store.open(path):
        raise RuntimeError("the command failed")
    assert list(tmp_path.iterdir()) == []


def _record_a_run(store: Store) -> None:
    store.create_run("live", SessionConfig(model="mock:x"), "ids=1", ["BigCodeBench/1"])


def test_a_store_that_recorded_something_or_existed_before_is_kept(tmp_path) -> None:
    recorded = tmp_path / "recorded.db"
    with pytest.raises(RuntimeError), Store.open(recorded) as store:
        _record_a_run(store)
        raise RuntimeError("failed after recording a run")
    with Store.open(recorded) as store:
        assert store.db.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    existing = tmp_path / "existing.db"
    Store.open(existing).close()
    with pytest.raises(RuntimeError), Store.open(existing):
        raise RuntimeError("failed on an empty store that was already there")
    assert existing.exists()
    # A block that succeeds keeps even an empty new store (a user may open one to fill it).
    fresh = tmp_path / "fresh.db"
    with Store.open(fresh):
        pass
    assert fresh.exists()


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with Store.open(path) as store:
        _record_a_run(store)
    assert path.read_bytes().startswith(b"SQLite format 3\x00")
