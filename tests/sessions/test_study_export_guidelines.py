"""``convtui study export`` of a study with guidelines: the card names their SHA-256 and the
export holds their text, as the annotators were shown it, in guidelines.md beside the card;
a study without them says so and writes no such file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from store_values import turn
from support.cli import invoke
from support.studies import study_spec, write_study

from convtui.core.studies.guidelines import Guidelines
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import load_study, start_assignment

TASKS = ("BigCodeBench/0", "BigCodeBench/1")
# CRLF line endings and a non-ASCII letter: the file is their bytes, unchanged.
TEXT = "# Guidelines\r\n\r\nBe concrete: name the failing test. Ça suffit.\r\n"


def record(db: Path, guidelines: Guidelines | None) -> None:
    """ana and ben; ana records one turn of task 0."""
    write_study(db, study_spec(tasks=TASKS, annotators=("ana", "ben"), guidelines=guidelines))
    with Store.open(db) as store:
        study = load_study(store)
        sid = start_assignment(store, study.id, TASKS[0], "ana", study.config, "human")
        store.set_session_status(sid, "running")
        store.save_turn(sid, turn(0), "running", "ana-0")


def export(db: Path, out: Path) -> dict:
    done = invoke("study", "export", "--db", str(db), "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_card_names_the_guidelines_digest_and_their_text_is_beside_it(tmp_path: Path):
    db, out = tmp_path / "study.db", tmp_path / "pilot"
    record(db, Guidelines.of(TEXT))

    summary = export(db, out)

    digest = hashlib.sha256(TEXT.encode("utf-8")).hexdigest()
    written = out / "guidelines.md"
    assert summary["files"][-1] == str(written)
    assert written.read_bytes() == TEXT.encode("utf-8")
    assert hashlib.sha256(written.read_bytes()).hexdigest() == digest
    card = (out / "README.md").read_text(encoding="utf-8")
    # One line names both, so a reader of the card finds the instructions and their digest.
    [named] = [line for line in card.splitlines() if "guidelines" in line.lower()]
    assert "[`guidelines.md`](guidelines.md)" in named and f"SHA-256 `{digest}`" in named
    assert not list(out.glob(".*.partial"))


def test_a_study_without_guidelines_says_so_and_writes_no_guidelines_file(tmp_path: Path):
    db, out = tmp_path / "study.db", tmp_path / "pilot"
    record(db, None)

    summary = export(db, out)

    assert [Path(f).name for f in summary["files"]] == ["transcripts.parquet", "README.md"]
    assert not (out / "guidelines.md").exists()
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "named no guidelines" in card and "SHA-256" not in card
