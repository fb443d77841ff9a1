"""A relative ``$CONVTUI_DATA_DIR`` means the directory convtui starts in: the file found is
named by an absolute path (right wherever it is used later), and a miss says which absolute
directory was looked in, so a value exported in the clone and used elsewhere shows where it
pointed."""

from __future__ import annotations

from pathlib import Path

import pytest

from convtui.core.catalog.datasets import CODEIF, ENV_DATA_DIR, locate
from convtui.core.errors import DataNotFoundError


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/clone (where convtui starts) beside tmp/shared/data (the data file)."""
    data = tmp_path / "shared" / "data"
    data.mkdir(parents=True)
    (data / CODEIF.filename).write_text("{}\n", encoding="utf-8")
    clone = tmp_path / "clone"
    clone.mkdir()
    monkeypatch.chdir(clone)
    monkeypatch.setenv(ENV_DATA_DIR, "../shared/data")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_a_relative_dir_is_found_from_where_convtui_starts_and_named_absolute(
    layout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = locate(CODEIF, offline=True)
    assert found.is_absolute()
    assert found == layout / "shared" / "data" / CODEIF.filename
    monkeypatch.chdir(layout)  # the process moves on: the path still names the file
    assert found.is_file()


def test_a_miss_names_the_absolute_directory_looked_in(
    layout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = layout / "home" / "me"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # cd out of the clone with the value still exported
    with pytest.raises(DataNotFoundError) as caught:
        locate(CODEIF, offline=True)
    message = str(caught.value)
    looked_in = layout / "home" / "shared" / "data"
    assert f"{ENV_DATA_DIR}={looked_in} (from ../shared/data)" in message, message
