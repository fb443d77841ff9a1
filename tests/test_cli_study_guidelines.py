"""`convtui study init` with a study file naming guidelines: the text and its SHA-256 go into
the database with the study (init and status name the digest); a guidelines file that
cannot serve is one error line naming it and the fix, exit 2, and no database is made.
The path is confined (issue 48, point 4): inside the study file's folder once symbolic links
are followed, and a regular file, so a study file someone else wrote cannot put the
organiser's /proc/self/environ in front of every annotator, nor hang init on a FIFO."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from pathlib import Path

import pytest
from support.cli import assert_one_line_error, convtui
from support.data import needs_bigcodebench

from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study

pytestmark = needs_bigcodebench

STUDY = """
name = "pilot"
guidelines = "guidelines.md"
tasks = ["BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8"]
model = "mock:replies.jsonl"
annotators = ["ana", "ben"]
"""
SAVED = "# How to give feedback\r\n\r\nName the failing test; say what it expects. Ça va.\n"


def study_folder(tmp_path: Path, guidelines: bytes | None) -> Path:
    (tmp_path / "STUDY.toml").write_text(STUDY)
    if guidelines is not None:
        (tmp_path / "guidelines.md").write_bytes(guidelines)
    return tmp_path / "STUDY.toml"


def test_init_stores_the_guidelines_text_and_digest_and_names_the_digest(tmp_path) -> None:
    spec = study_folder(tmp_path, SAVED.encode("utf-8"))
    db = tmp_path / "study.db"
    digest = hashlib.sha256(SAVED.encode("utf-8")).hexdigest()

    made = convtui("study", "init", str(spec), "--db", str(db), "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["guidelines_sha256"] == digest
    # The file may change or go: the study keeps what it was at init.
    (tmp_path / "guidelines.md").unlink()
    with Store.open(db) as store:
        stored = load_study(store).spec.guidelines
        [spec_json] = store.db.execute("SELECT spec_json FROM studies").fetchone()
    assert stored is not None and (stored.text, stored.sha256) == (SAVED, digest)
    assert json.loads(spec_json)["guidelines"] == {"sha256": digest, "text": SAVED}

    status = convtui("study", "status", "--db", str(db), columns=200)
    assert status.returncode == 0, status.stderr
    assert f"Guidelines (sha256 {digest})" in status.stdout
    as_json = convtui("study", "status", "--db", str(db), "--json")
    assert json.loads(as_json.stdout)["guidelines_sha256"] == digest

    other = tmp_path / "again"
    other.mkdir()
    spec = study_folder(other, SAVED.encode("utf-8"))
    shown = convtui("study", "init", str(spec), "--db", str(other / "study.db"), columns=200)
    assert shown.returncode == 0, shown.stderr
    assert re.search(rf"Guidelines \(sha256 {digest}\), kept in the study", shown.stdout)


def test_a_study_without_guidelines_names_none(tmp_path: Path) -> None:
    spec = tmp_path / "STUDY.toml"
    spec.write_text(STUDY.replace('guidelines = "guidelines.md"\n', ""))
    db = tmp_path / "study.db"
    made = convtui("study", "init", str(spec), "--db", str(db), "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["guidelines_sha256"] is None
    status = convtui("study", "status", "--db", str(db), columns=200)
    assert "Guidelines" not in status.stdout
    with Store.open(db) as store:
        [spec_json] = store.db.execute("SELECT spec_json FROM studies").fetchone()
    assert "guidelines" not in json.loads(spec_json)


@pytest.mark.parametrize(
    ("saved", "said"),
    [
        (None, "guidelines.md does not exist: write it, or correct the 'guidelines' path"),
        (b"\n\n", "guidelines.md is empty: write the guidelines in it, or remove"),
        (b"\xff\xfe# g\n", "guidelines.md is not UTF-8 text (byte 0): save it as UTF-8"),
        (b"#" * (128 * 1024 + 1), "guidelines.md is over 128 KiB: shorten it"),
    ],
)
def test_a_bad_guidelines_file_is_one_line_and_leaves_no_database(tmp_path, saved, said) -> None:
    spec = study_folder(tmp_path, saved)
    before = sorted(tmp_path.iterdir())
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(spec), "--db", str(db))
    assert_one_line_error(done, str(spec), str(tmp_path / "guidelines.md"), said)
    assert not db.exists() and sorted(tmp_path.iterdir()) == before


def refused_without_a_trace(tmp_path: Path, spec: Path, *said: str) -> None:
    before = sorted(tmp_path.rglob("*"))
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(spec), "--db", str(db))
    assert_one_line_error(done, str(spec), *said)
    assert not db.exists() and sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("named", "said"),
    [
        ("../outside.md", "is outside the study file's folder"),
        ("/proc/self/environ", "/proc/self/environ is outside the study file's folder"),
        ("link.md", "link.md is outside the study file's folder"),  # a link to ../outside.md
        ("environ.md", "(it leads to /proc/"),  # a link to /proc/self/environ
    ],
)
def test_guidelines_outside_the_study_files_folder_are_refused(tmp_path, named, said) -> None:
    folder = tmp_path / "study"
    folder.mkdir()
    (tmp_path / "outside.md").write_text("# Someone else's notes\n")
    (folder / "link.md").symlink_to(tmp_path / "outside.md")
    (folder / "environ.md").symlink_to("/proc/self/environ")
    spec = folder / "STUDY.toml"
    spec.write_text(STUDY.replace('"guidelines.md"', json.dumps(named)))
    refused_without_a_trace(tmp_path, spec, said, "copy the guidelines into that folder")


def test_a_link_that_stays_inside_the_folder_is_followed(tmp_path: Path) -> None:
    spec = study_folder(tmp_path, None)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_bytes(SAVED.encode("utf-8"))
    (tmp_path / "guidelines.md").symlink_to(tmp_path / "docs" / "rules.md")
    made = convtui("study", "init", str(spec), "--db", str(tmp_path / "study.db"), "--json")
    assert made.returncode == 0, made.stderr
    assert (
        json.loads(made.stdout)["guidelines_sha256"] == hashlib.sha256(SAVED.encode()).hexdigest()
    )


def test_a_fifo_is_refused_at_once_and_never_opened(tmp_path: Path) -> None:
    spec = study_folder(tmp_path, None)
    fifo = tmp_path / "guidelines.md"
    os.mkfifo(fifo)
    done = threading.Event()

    def unblock() -> None:
        # Were init to open the FIFO for reading it would wait for a writer for ever: after a
        # while, be that writer and close at once, so such an init ends (with "is empty").
        if not done.wait(5):
            with contextlib.suppress(OSError):  # no reader waiting: nothing to unblock
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    watchdog = threading.Thread(target=unblock, daemon=True)
    watchdog.start()
    try:
        refused_without_a_trace(
            tmp_path, spec, "guidelines.md is a named pipe (FIFO), not a regular file"
        )
    finally:
        done.set()
        watchdog.join()


def test_a_file_over_the_limit_is_refused_by_its_size_before_it_is_read(tmp_path) -> None:
    spec = study_folder(tmp_path, None)
    with (tmp_path / "guidelines.md").open("wb") as sparse:
        sparse.truncate(1 << 30)  # a gigabyte of holes: nothing to read in the time allowed
    refused_without_a_trace(tmp_path, spec, "guidelines.md is over 128 KiB: shorten it")
